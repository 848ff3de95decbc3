import Foundation

/// The pure state machine of one call's media bridge: Twilio Media Streams ⇄ OpenAI Realtime.
///
/// The bridge feeds it what happens (frames received, timers) with a monotonic time in milliseconds and performs the
/// actions it returns; it owns no sockets and no clock, so every rule is tested without I/O. What it decides:
/// - when the AI speaks first (the callee answered *and* the realtime session is configured);
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

    /// Creates the machine of a call limited to `durationLimitSeconds`.
    public init(durationLimitSeconds: Int, hangUpMarginMilliseconds: Int = 1_000) {
        self.durationLimitMilliseconds = durationLimitSeconds * 1_000
        self.hangUpMarginMilliseconds = hangUpMarginMilliseconds
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
        return requestFirstResponseIfPossible()
    }

    /// Twilio's `start` frame: the callee answered and the stream is up. `answeredMillisecondsAgo` is how long ago
    /// the call was answered (Twilio fetched the TwiML): the call's clock — duration limit, first-audio latency,
    /// transcript times — runs from the answer, as Twilio's `TimeLimit` and billing do.
    public mutating func streamStarted(at now: UInt64, answeredMillisecondsAgo: Int = 0) -> [Action] {
        guard phase == .awaitingStream else { return [] }
        phase = .streaming
        streamStartedAt = now &- UInt64(max(0, min(answeredMillisecondsAgo, Int(now))))
        return requestFirstResponseIfPossible()
    }

    private mutating func requestFirstResponseIfPossible() -> [Action] {
        guard phase == .streaming, realtimeReady, !responseRequested else { return [] }
        responseRequested = true
        return [.startResponse]
    }

    /// Whether inbound (callee) audio should go to the model now; before the session is ready the bridge buffers it.
    public var forwardsCalleeAudio: Bool { phase == .streaming && realtimeReady }

    // MARK: - Assistant audio

    /// A chunk of assistant audio (`response.output_audio.delta`) lasting `milliseconds`.
    public mutating func assistantAudio(itemID: String, milliseconds: Int, at now: UInt64) -> AudioDisposition {
        guard phase == .streaming, !interruptedItems.contains(itemID) else { return .drop }
        if itemID != currentItem {
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

    /// Twilio acknowledged the mark `name`: the audio before it has played.
    public mutating func markAcknowledged(_ name: String, at now: UInt64) {
        guard let index = pendingMarks[pendingHead...].firstIndex(where: { $0.name == name }) else { return }
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
