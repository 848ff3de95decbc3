import ChorusAPI
import Foundation

/// The pure state machine of one call's media bridge: Twilio Media Streams ⇄ OpenAI Realtime.
///
/// The bridge feeds it what happens (frames received, timers) with a monotonic time in milliseconds and performs the
/// actions it returns; it owns no sockets and no clock, so every rule is tested without I/O. What it decides:
/// - when the AI speaks first (the callee answered *and* the realtime session is configured *and*, with
///   answering-machine detection, the ``OpeningGate`` released the first words);
/// - what happens when a machine answers: hang up without a word, or leave the scenario's message and then hang up;
/// - how much assistant audio the callee has really heard, from the marks Twilio acknowledges, interpolated in real
///   time between acknowledgements and never above what was generated;
/// - barge-in: on the callee's speech, clear Twilio's buffer and truncate the assistant item at the audio played;
///   audio of an interrupted item that still arrives is dropped;
/// - why the call ended (the first cause wins) and the call's transcript and latency figures.
public struct MediaStreamBridgeMachine: Sendable {
    /// Who said a transcript line.
    public enum Speaker: String, Sendable, Codable, CaseIterable {
        /// The person called.
        case callee
        /// The AI persona.
        case assistant
    }

    /// One line of the call's transcript.
    public struct TranscriptLine: Sendable, Equatable {
        public var speaker: Speaker
        public var text: String
        /// Milliseconds since the media stream started.
        public var atMilliseconds: Int
        /// The callee interrupted this assistant line: only part of it was heard.
        public var interrupted: Bool

        public init(speaker: Speaker, text: String, atMilliseconds: Int, interrupted: Bool = false) {
            self.speaker = speaker
            self.text = text
            self.atMilliseconds = atMilliseconds
            self.interrupted = interrupted
        }
    }

    /// What the bridge must do.
    public enum Action: Sendable, Equatable {
        /// Ask the realtime model to speak (`response.create`).
        case startResponse
        /// Drop every buffered outbound audio frame at Twilio (`clear`).
        case clearTwilio
        /// `conversation.item.truncate` of `itemID` at `audioEndMs`.
        case truncate(itemID: String, audioEndMs: Int)
        /// End the call: hang up through the telephony API and close both sockets.
        case end(EndedReason)
        /// Let the model answer the callee's turns by itself from now on (`session.update` with turn detection's
        /// `create_response` on): it was off while the first words were held.
        case enableTurnResponses
        /// Cancel the response in progress (`response.cancel`).
        case cancelResponse
        /// Ask the model for the voicemail message (`response.create` with ``VoicemailInstructions``).
        case leaveMessage
        /// Ask the model to say the call's disclosure word for word (`response.create` with
        /// ``CallDisclosure/speakInstructions(_:language:)``): the first words of every call.
        case speakDisclosure
        /// The callee opted out: add the number to the do-not-call list.
        case recordOptOut(CallOptOut.Source)
        /// Stop the model answering the callee's turns by itself (`session.update`): after an opt-out only the goodbye
        /// is said.
        case disableTurnResponses
        /// Ask the model for the goodbye after an opt-out (`response.create` with
        /// ``CallOptOut/goodbyeInstructions(language:)``), after returning the tool call's output when it came from
        /// the `opt_out` tool (`functionCallID`).
        case sayOptOutGoodbye(functionCallID: String?)
    }

    /// Where the call's disclosure is: not part of this call, waiting for the first words, being said, or said.
    public enum DisclosureState: Sendable, Equatable {
        case none
        case pending
        case speaking
        case said
    }

    /// Whether the AI's first words are held, free, or a message is being left on a machine.
    public enum Opening: Sendable, Equatable {
        case holding
        case released
        case leavingMessage
    }

    /// What to do with one chunk of assistant audio.
    public enum AudioDisposition: Sendable, Equatable {
        /// Send it to Twilio followed by a mark with this name.
        case forward(markName: String)
        /// Drop it (its item was interrupted, or the call has ended).
        case drop
    }

    /// Where the call is.
    public enum Phase: Sendable, Equatable {
        /// The realtime session may be open; Twilio's stream has not started.
        case awaitingStream
        /// Audio flows both ways.
        case streaming
        /// The call is over for this reason; nothing more is sent.
        case ended(EndedReason)
    }

    /// The call's duration limit in milliseconds.
    public let durationLimitMilliseconds: Int
    /// How long before the limit the bridge hangs up, so the billed duration stays within the limit.
    public let hangUpMarginMilliseconds: Int

    public private(set) var phase: Phase = .awaitingStream
    public private(set) var streamStartedAt: UInt64?
    public private(set) var realtimeReady = false
    private var responseRequested = false

    // Answering-machine detection and the first words.
    public let gate: OpeningGate
    public let voicemail: VoicemailPolicy
    public private(set) var opening: Opening
    /// What detection reported (the first report counts).
    public private(set) var answeredBy: AnsweredBy?
    private var turnResponsesEnabled: Bool
    private var calleeSpeakingSince: UInt64?
    private var lastSpeechStoppedAt: UInt64?
    private var heardSpeech = false
    private var heardLongUtterance = false
    private var messageStartedAt: UInt64?
    private var messageItem: String?
    private var messageGenerated = false
    /// Milliseconds from the answer to the moment the first words were released, and why.
    public private(set) var releasedAfterMilliseconds: Int?
    public private(set) var releaseCause: ReleaseCause?

    /// Why the first words were released.
    public enum ReleaseCause: String, Sendable, Equatable {
        case detectedHuman = "detected_human"
        case detectedUnknown = "detected_unknown"
        case utteranceEnded = "utterance_ended"
        case silentAnswer = "silent_answer"
        case holdTimeout = "hold_timeout"
    }

    // The disclosure (issue 17): said before the persona; the persona's first response waits until it has played.
    public private(set) var disclosure: DisclosureState
    /// The assistant item that carries the disclosure.
    public private(set) var disclosureItem: String?
    private var disclosureGenerated = false
    private var disclosureAttempts = 0

    // Opt-out (issue 17): how, when, and the goodbye's item.
    public private(set) var optOutSource: CallOptOut.Source?
    private var optOutAt: UInt64?
    private var goodbyeRequested = false
    private var goodbyeItem: String?
    private var goodbyeGenerated = false
    private var pendingToolCallID: String?
    private var responseActive = false

    // Assistant audio: the item being played, what was sent of it, and what Twilio acknowledged.
    public private(set) var currentItem: String?
    public private(set) var currentItemSentMilliseconds = 0
    private var acknowledgedMilliseconds = 0
    /// When the audio after the last acknowledgement started playing.
    private var playbackAnchor: UInt64 = 0
    private var pendingMarks: [PendingMark] = []
    private var pendingHead = 0
    private var markCounter = 0
    private var interruptedItems: Set<String> = []

    // Figures.
    public private(set) var transcript: [TranscriptLine] = []
    public private(set) var firstAudioLatencyMilliseconds: Int?
    public private(set) var turnLatenciesMilliseconds: [Int] = []
    public private(set) var bargeIns = 0
    private var calleeStoppedAt: UInt64?

    private struct PendingMark: Sendable {
        let name: String
        let itemID: String
        let endMilliseconds: Int
    }

    /// Creates the machine of a call limited to `durationLimitSeconds`; `gate` says whether the first words wait for
    /// answering-machine detection, `voicemail` what a machine gets, `disclosure` whether the call opens with the
    /// disclosure (then the model answers the callee's turns only once it has played).
    public init(
        durationLimitSeconds: Int, hangUpMarginMilliseconds: Int = 1_000, gate: OpeningGate = .immediate,
        voicemail: VoicemailPolicy = .hangUp, disclosure: Bool = false
    ) {
        self.disclosure = disclosure ? .pending : .none
        self.durationLimitMilliseconds = durationLimitSeconds * 1_000
        self.hangUpMarginMilliseconds = hangUpMarginMilliseconds
        self.gate = gate
        self.voicemail = voicemail
        self.opening = gate.holdsForDetection ? .holding : .released
        // Without detection or a disclosure the session is opened with `create_response` on.
        self.turnResponsesEnabled = !gate.holdsForDetection && !disclosure
    }

    /// Whether the call is over.
    public var isEnded: Bool {
        if case .ended = phase { return true }
        return false
    }

    /// When the bridge must end the call for its duration limit, in milliseconds after the stream started.
    public var durationTimerMilliseconds: Int { max(0, durationLimitMilliseconds - hangUpMarginMilliseconds) }

    // MARK: - Session and stream

    /// The realtime session is open and configured.
    public mutating func realtimeConfigured() -> [Action] {
        guard !isEnded else { return [] }
        realtimeReady = true
        // A key pressed before the session was ready: the goodbye waited for it.
        if optOutSource != nil, !goodbyeRequested {
            goodbyeRequested = true
            return [.disableTurnResponses, .sayOptOutGoodbye(functionCallID: pendingToolCallID)]
        }
        if opening == .leavingMessage { return [.leaveMessage] }
        return requestFirstResponseIfPossible()
    }

    /// Twilio's `start` frame: the callee answered and the stream is up. `answeredMillisecondsAgo` is how long ago
    /// the call was answered (Twilio fetched the TwiML): the call's clock — duration limit, first-audio latency,
    /// transcript times — runs from the answer, as Twilio's `TimeLimit` and billing do.
    public mutating func streamStarted(at now: UInt64, answeredMillisecondsAgo: Int = 0) -> [Action] {
        guard phase == .awaitingStream else { return [] }
        phase = .streaming
        streamStartedAt = now &- UInt64(max(0, min(answeredMillisecondsAgo, Int(now))))
        // Detection may have reported before the stream was accepted.
        if let answeredBy {
            self.answeredBy = nil
            return machineDetected(answeredBy, at: now)
        }
        return requestFirstResponseIfPossible()
    }

    private mutating func requestFirstResponseIfPossible() -> [Action] {
        guard phase == .streaming, opening == .released, realtimeReady, optOutSource == nil else { return [] }
        // The disclosure comes first; the persona's first words (and its answers to the callee) once it has played.
        switch disclosure {
        case .pending:
            disclosure = .speaking
            disclosureAttempts += 1
            return [.speakDisclosure]
        case .speaking:
            return []
        case .none, .said:
            break
        }
        var actions: [Action] = []
        if !turnResponsesEnabled {
            turnResponsesEnabled = true
            actions.append(.enableTurnResponses)
        }
        // A callee in mid-sentence gets the model's answer when they stop (turn detection now responds).
        if !responseRequested {
            responseRequested = true
            if calleeSpeakingSince == nil { actions.append(.startResponse) }
        }
        return actions
    }

    // MARK: - Answering-machine detection

    /// Releases the first words for `cause` while they are held.
    private mutating func release(_ cause: ReleaseCause, at now: UInt64) -> [Action] {
        guard phase == .streaming, opening == .holding else { return [] }
        opening = .released
        releaseCause = cause
        if let started = streamStartedAt { releasedAfterMilliseconds = now >= started ? Int(clamping: now - started) : 0 }
        return requestFirstResponseIfPossible()
    }

    /// Twilio's asynchronous detection reported who answered.
    public mutating func machineDetected(_ result: AnsweredBy, at now: UInt64) -> [Action] {
        guard !isEnded, answeredBy == nil else { return [] }
        answeredBy = result
        guard phase == .streaming else { return [] }  // applied when the stream starts
        switch result {
        case .human: return release(.detectedHuman, at: now)
        case .unknown: return release(.detectedUnknown, at: now)
        case .machineStart: return []  // `DetectMessageEnd` reports the end of the greeting later
        case .fax: return end(.fax)
        case .machineEndBeep, .machineEndSilence, .machineEndOther:
            guard voicemail == .leaveMessage else { return end(.voicemail) }
            var actions: [Action] = []
            // Whatever the AI was saying to the greeting stops; its late audio is dropped.
            if let item = currentItem {
                interruptedItems.insert(item)
                if hasPendingMarks {
                    actions += [.clearTwilio, .truncate(itemID: item, audioEndMs: min(playedMilliseconds(at: now), currentItemSentMilliseconds))]
                }
                pendingMarks.removeAll(keepingCapacity: true)
                pendingHead = 0
            }
            if responseRequested { actions.append(.cancelResponse) }
            opening = .leavingMessage
            messageStartedAt = now
            responseRequested = true
            if realtimeReady { actions.append(.leaveMessage) }
            return actions
        }
    }

    /// When the machine next needs ``deadlineReached(at:)``: while the first words are held, a message plays, or the
    /// goodbye after an opt-out plays.
    public var nextDeadline: UInt64? {
        let goodbye = optOutAt.map { $0 &+ UInt64(clamping: CallOptOut.goodbyeLimitMilliseconds) }
        guard let gate = gateDeadline else { return isEnded ? nil : goodbye }
        return goodbye.map { min($0, gate) } ?? gate
    }

    private var gateDeadline: UInt64? {
        guard phase == .streaming, let started = streamStartedAt else { return nil }
        switch opening {
        case .released:
            return nil
        case .leavingMessage:
            return messageStartedAt.map { $0 &+ UInt64(clamping: gate.longestMessageMilliseconds) }
        case .holding:
            var deadline = started &+ UInt64(clamping: gate.maximumHoldMilliseconds)
            if !heardSpeech { deadline = min(deadline, started &+ UInt64(clamping: gate.silentAnswerMilliseconds)) }
            if calleeSpeakingSince == nil, !heardLongUtterance, let stopped = lastSpeechStoppedAt {
                deadline = min(deadline, stopped &+ UInt64(clamping: gate.quietAfterUtteranceMilliseconds))
            }
            return deadline
        }
    }

    /// Time passed: releases held first words, ends a message that played too long, or hangs up on a goodbye that
    /// did not finish in time.
    public mutating func deadlineReached(at now: UInt64) -> [Action] {
        if let optOutAt, now &- optOutAt >= UInt64(clamping: CallOptOut.goodbyeLimitMilliseconds) { return end(.optedOut) }
        guard phase == .streaming, let started = streamStartedAt else { return [] }
        switch opening {
        case .released:
            return []
        case .leavingMessage:
            guard let begun = messageStartedAt, now &- begun >= UInt64(clamping: gate.longestMessageMilliseconds) else { return [] }
            return end(.voicemailMessage)
        case .holding:
            let sinceAnswer = now &- started
            if sinceAnswer >= UInt64(clamping: gate.maximumHoldMilliseconds) { return release(.holdTimeout, at: now) }
            if !heardSpeech, sinceAnswer >= UInt64(clamping: gate.silentAnswerMilliseconds) { return release(.silentAnswer, at: now) }
            if calleeSpeakingSince == nil, !heardLongUtterance, let stopped = lastSpeechStoppedAt,
                now &- stopped >= UInt64(clamping: gate.quietAfterUtteranceMilliseconds)
            {
                return release(.utteranceEnded, at: now)
            }
            return []
        }
    }

    /// The model finished a response (`response.done`): a left message ends the call once it has played; after the
    /// disclosure's response the persona's first words follow once it has played; after the goodbye of an opt-out the
    /// call ends once it has played.
    public mutating func responseDone() -> [Action] {
        responseActive = false
        guard !isEnded else { return [] }
        if optOutSource != nil {
            if !goodbyeRequested, realtimeReady {
                goodbyeRequested = true
                defer { pendingToolCallID = nil }
                return [.sayOptOutGoodbye(functionCallID: pendingToolCallID)]
            }
            guard goodbyeItem != nil else { return [] }
            goodbyeGenerated = true
            return hasPendingMarks ? [] : end(.optedOut)
        }
        if disclosure == .speaking, opening == .released {
            guard disclosureItem != nil else {
                // No audio came (the response failed or was cancelled): ask once more, then give up on the call
                // rather than let the persona speak undisclosed.
                guard disclosureAttempts < 2 else { return end(.errorOpenAI) }
                disclosureAttempts += 1
                return [.speakDisclosure]
            }
            disclosureGenerated = true
            return disclosureFinishedIfPlayed()
        }
        guard opening == .leavingMessage, messageItem != nil, !isEnded else { return [] }
        messageGenerated = true
        return hasPendingMarks ? [] : end(.voicemailMessage)
    }

    /// Whether inbound (callee) audio should go to the model now; before the session is ready the bridge buffers it.
    public var forwardsCalleeAudio: Bool { phase == .streaming && realtimeReady }

    // MARK: - Assistant audio

    /// A chunk of assistant audio (`response.output_audio.delta`) lasting `milliseconds`.
    public mutating func assistantAudio(itemID: String, milliseconds: Int, at now: UInt64) -> AudioDisposition {
        guard phase == .streaming, !interruptedItems.contains(itemID) else { return .drop }
        if itemID != currentItem {
            if disclosure == .speaking, disclosureItem == nil { disclosureItem = itemID }
            if goodbyeRequested, goodbyeItem == nil { goodbyeItem = itemID }
            if opening == .leavingMessage, messageItem == nil { messageItem = itemID }
            currentItem = itemID
            currentItemSentMilliseconds = 0
            acknowledgedMilliseconds = 0
            if firstAudioLatencyMilliseconds == nil, let started = streamStartedAt {
                firstAudioLatencyMilliseconds = Int(now &- started)
            }
            if let stopped = calleeStoppedAt {
                turnLatenciesMilliseconds.append(Int(now &- stopped))
                calleeStoppedAt = nil
            }
        }
        if !hasPendingMarks { playbackAnchor = now }
        currentItemSentMilliseconds += milliseconds
        markCounter += 1
        let name = "a\(markCounter)"
        pendingMarks.append(PendingMark(name: name, itemID: itemID, endMilliseconds: currentItemSentMilliseconds))
        return .forward(markName: name)
    }

    /// Twilio acknowledged the mark `name`: the audio before it has played. A left message that has played out ends
    /// the call.
    @discardableResult
    public mutating func markAcknowledged(_ name: String, at now: UInt64) -> [Action] {
        guard let index = pendingMarks[pendingHead...].firstIndex(where: { $0.name == name }) else { return [] }
        let mark = pendingMarks[index]
        pendingHead = index + 1
        if pendingHead == pendingMarks.count {
            pendingMarks.removeAll(keepingCapacity: true)
            pendingHead = 0
        }
        if mark.itemID == currentItem {
            acknowledgedMilliseconds = mark.endMilliseconds
        }
        playbackAnchor = now
        if opening == .leavingMessage, messageGenerated, !hasPendingMarks { return end(.voicemailMessage) }
        if optOutSource != nil, goodbyeGenerated, !hasPendingMarks { return end(.optedOut) }
        if disclosure == .speaking, disclosureGenerated { return disclosureFinishedIfPlayed() }
        return []
    }

    /// The disclosure's audio has all played: the persona speaks (and answers the callee) from now on.
    private mutating func disclosureFinishedIfPlayed() -> [Action] {
        guard disclosure == .speaking, disclosureGenerated, let item = disclosureItem,
            !pendingMarks[pendingHead...].contains(where: { $0.itemID == item })
        else { return [] }
        disclosure = .said
        return requestFirstResponseIfPossible()
    }

    // MARK: - Opt-out

    /// The callee pressed `digit` (Media Streams `dtmf`): the opt-out key opts out; other keys do nothing.
    public mutating func keyPressed(_ digit: String, at now: UInt64) -> [Action] {
        guard digit == CallOptOut.key else { return [] }
        return optOut(.key, functionCallID: nil, at: now)
    }

    /// The model called the `opt_out` tool (`response.function_call_arguments.done`).
    public mutating func optOutToolCalled(callID: String, at now: UInt64) -> [Action] {
        optOut(.speech, functionCallID: callID, at: now)
    }

    /// The callee opted out: the number is recorded, whatever plays stops, the model's own answers stop, and the
    /// goodbye is asked for; the call ends once it has played (at most ``CallOptOut/goodbyeLimitMilliseconds``).
    /// A machine's recording (a message being left) cannot opt out.
    private mutating func optOut(_ source: CallOptOut.Source, functionCallID: String?, at now: UInt64) -> [Action] {
        guard phase == .streaming, optOutSource == nil, opening != .leavingMessage else { return [] }
        optOutSource = source
        optOutAt = now
        if disclosure == .speaking || disclosure == .pending { disclosure = .said }
        opening = .released
        responseRequested = true
        var actions: [Action] = [.recordOptOut(source)]
        if let item = currentItem, hasPendingMarks {
            interruptedItems.insert(item)
            actions += [.clearTwilio, .truncate(itemID: item, audioEndMs: min(playedMilliseconds(at: now), currentItemSentMilliseconds))]
            pendingMarks.removeAll(keepingCapacity: true)
            pendingHead = 0
        }
        guard realtimeReady else { return actions }  // the goodbye follows when the session is ready
        actions.append(.disableTurnResponses)
        // One response at a time: a key pressed while one is generated cancels it; the tool's own response is ending.
        // The goodbye is asked for once it is done.
        if responseActive {
            pendingToolCallID = functionCallID
            if source == .key { actions.append(.cancelResponse) }
            return actions
        }
        goodbyeRequested = true
        actions.append(.sayOptOutGoodbye(functionCallID: functionCallID))
        return actions
    }

    /// The model started a response (`response.created`).
    public mutating func responseCreated() {
        responseActive = true
    }

    private var hasPendingMarks: Bool { pendingHead < pendingMarks.count }

    /// How much of the current assistant item the callee has heard at `now`: the acknowledged audio plus the time
    /// since playback continued, never more than was sent.
    public func playedMilliseconds(at now: UInt64) -> Int {
        guard currentItem != nil else { return 0 }
        guard hasPendingMarks else { return currentItemSentMilliseconds }
        let elapsed = now >= playbackAnchor ? Int(now - playbackAnchor) : 0
        return min(currentItemSentMilliseconds, acknowledgedMilliseconds + elapsed)
    }

    /// Whether assistant audio sent to Twilio has not finished playing.
    public var isAssistantSpeaking: Bool { hasPendingMarks }

    // MARK: - Callee speech

    /// The model detected the callee speaking (`input_audio_buffer.speech_started`): barge-in if audio is playing.
    public mutating func calleeStartedSpeaking(at now: UInt64) -> [Action] {
        guard phase == .streaming else { return [] }
        if opening == .holding {
            calleeSpeakingSince = now
            heardSpeech = true
        }
        // A machine's recording is not a conversation: nothing interrupts the message. Nor the disclosure, nor the
        // goodbye after an opt-out: they are heard to the end.
        guard opening != .leavingMessage, disclosure != .speaking, optOutSource == nil else { return [] }
        calleeStoppedAt = nil
        guard let item = currentItem, hasPendingMarks else { return [] }
        let played = playedMilliseconds(at: now)
        interruptedItems.insert(item)
        pendingMarks.removeAll(keepingCapacity: true)
        pendingHead = 0
        bargeIns += 1
        if let index = transcript.lastIndex(where: { $0.speaker == .assistant }), transcriptItem == item {
            transcript[index].interrupted = true
        }
        return [.clearTwilio, .truncate(itemID: item, audioEndMs: min(played, currentItemSentMilliseconds))]
    }

    /// The model detected the end of the callee's speech (`input_audio_buffer.speech_stopped`): the turn's response
    /// latency is measured from here to the first audio of the next assistant item.
    public mutating func calleeStoppedSpeaking(at now: UInt64) {
        guard phase == .streaming else { return }
        if let since = calleeSpeakingSince {
            if now &- since > UInt64(clamping: gate.longestHumanGreetingMilliseconds) { heardLongUtterance = true }
            calleeSpeakingSince = nil
            lastSpeechStoppedAt = now
        }
        calleeStoppedAt = now
    }

    // MARK: - Transcript

    private var transcriptItem: String?

    /// A finished transcript: the callee's (input transcription) or the assistant's (output audio transcript).
    public mutating func transcribed(_ speaker: Speaker, text: String, itemID: String?, at now: UInt64) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, let started = streamStartedAt else { return }
        let interrupted = speaker == .assistant && itemID.map { interruptedItems.contains($0) } == true
        transcript.append(
            TranscriptLine(speaker: speaker, text: trimmed, atMilliseconds: Int(now &- started), interrupted: interrupted))
        if speaker == .assistant { transcriptItem = itemID }
    }

    // MARK: - Endings

    /// The duration timer fired.
    public mutating func durationLimitReached() -> [Action] { end(.maxDuration) }

    /// Twilio's `stop`: the call ended on the phone side (the callee hung up, or Twilio's `TimeLimit` backstop).
    public mutating func streamStopped(at now: UInt64) -> [Action] {
        if let started = streamStartedAt, Int(now &- started) >= durationTimerMilliseconds {
            return end(.maxDuration)
        }
        // The machine hung up on the message (its recording time was over).
        if opening == .leavingMessage { return end(.voicemailMessage) }
        return end(phase == .awaitingStream ? .errorStream : .calleeHangup)
    }

    /// Twilio's socket closed without `stop`.
    public mutating func streamClosed() -> [Action] { end(.errorStream) }

    /// The realtime session failed (a fatal `error` event) or its socket closed.
    public mutating func realtimeFailed() -> [Action] { end(.errorOpenAI) }

    /// Ends the call for `reason` unless it has already ended.
    public mutating func end(_ reason: EndedReason) -> [Action] {
        guard !isEnded else { return [] }
        phase = .ended(reason)
        pendingMarks.removeAll()
        pendingHead = 0
        return [.end(reason)]
    }

    /// Why the call ended, once it has.
    public var endedReason: EndedReason? {
        if case .ended(let reason) = phase { return reason }
        return nil
    }
}

/// Percentiles of a list of latencies (nearest rank).
public enum LatencyPercentile {
    /// The `percentile` (0–100) of `values`, or `nil` when there are none.
    public static func of(_ values: [Int], _ percentile: Double) -> Int? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((percentile / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
