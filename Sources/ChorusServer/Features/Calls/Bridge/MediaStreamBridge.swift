import ChorusAPI
import ChorusCore
import ChorusProviders
import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Tracing

/// Bridges one call's Twilio Media Stream to its OpenAI Realtime session.
///
/// One object per Twilio socket. Until a valid `start` frame arrives with an unused call token, nothing reaches the
/// model; callee audio received meanwhile is buffered (up to 2 s). The rules (when the AI speaks, marks, barge-in,
/// endings) live in ``MediaStreamBridgeMachine``; this class feeds it the frames and performs its actions. Frames
/// are relayed without decoding the audio: Twilio's μ-law payload goes to `input_audio_buffer.append` as is, and
/// the model's `audio/pcmu` deltas go to Twilio as is, each followed by a mark in the same write. Both sockets are
/// ``MediaWebSocket``s: messages are handled as the received bytes, never as `String`s.
final class MediaStreamBridge: @unchecked Sendable {
    /// Callee audio kept while the session is not ready: 100 frames of 20 ms.
    static let maximumBufferedFrames = 100
    /// A socket that sends no valid `start` within this time is closed.
    static let startTimeout: TimeAmount = .seconds(10)

    private let twilio: MediaWebSocket
    private let services: ChorusServices
    private let store: ChorusStore
    private let logger: Logger
    private let allocator = ByteBufferAllocator()
    private let lock = NIOLock()
    /// The bridge's lifetime as a span (issue 18), from the socket's registration to the end of the work its ending
    /// leaves (hang-up, outcome); the claim, the realtime session and that work are its children.
    private let span: any Span

    // Guarded by `lock`.
    private var machine: MediaStreamBridgeMachine?
    private var call: CallRecord?
    private var streamSid = ""
    private var realtime: RealtimeSession?
    private var realtimeSince: ContinuousClock.Instant?
    private var startReceived = false
    private var buffered: [ByteBuffer] = []
    private var figures = BridgeFigures()
    private var durationTimer: Scheduled<Void>?
    /// Fires at the machine's ``MediaStreamBridgeMachine/nextDeadline`` (held first words, a message on a machine).
    private var gateTimer: Scheduled<Void>?
    private var startTimer: Scheduled<Void>?
    private var finished = false
    /// Why the stream ended before it was accepted (the callee hung up, the socket closed) — recorded once the
    /// call's token has been claimed.
    private var earlyEnd: EndedReason?
    /// The call's language and disclosure (issue 17), known once the stream is accepted.
    private var language: CallLanguage = .english
    private var disclosureText: String?

    init(twilio: MediaWebSocket, services: ChorusServices, store: ChorusStore, logger: Logger) {
        self.twilio = twilio
        self.services = services
        self.store = store
        self.logger = logger
        self.span = services.tracing.tracer.startSpan("call.bridge", context: ServiceContext.current ?? .topLevel, ofKind: .server)
    }

    /// `services.background.track` with the bridge's span as the work's parent.
    private func trackInSpan(_ work: @escaping @Sendable () async -> Void) {
        let context = span.context
        services.background.track { await ServiceContext.withValue(context) { await work() } }
    }

    /// Starts handling the socket's frames.
    func run() {
        guard services.bridges.register(self) else {
            twilio.close(code: .goingAway)
            span.end()
            return
        }
        services.bridges.metrics.bridgeOpened()
        startTimer = twilio.eventLoop.scheduleTask(in: Self.startTimeout) { [self] in
            let waiting = lock.withLock { !startReceived || call == nil }
            if waiting { reject("no valid start frame in time") }
        }
        twilio.onText { [self] text in twilioFrame(text) }
        twilio.onClose.whenComplete { [self] _ in twilioClosed() }
    }

    private static func now() -> UInt64 { NIODeadline.now().uptimeNanoseconds / 1_000_000 }
    private static func microseconds(since start: NIODeadline) -> UInt64 {
        (NIODeadline.now().uptimeNanoseconds &- start.uptimeNanoseconds) / 1_000
    }

    // MARK: - Twilio → model

    private func twilioFrame(_ text: ByteBuffer) {
        let received = NIODeadline.now()
        guard let frame = TwilioMediaStreamFrame.parse(text) else {
            logger.debug("ignored an unreadable media stream frame")
            return
        }
        switch frame {
        case .media(let payload, _):
            lock.withLock {
                guard let machine, machine.forwardsCalleeAudio, let realtime else {
                    guard !finished else { return }
                    if buffered.count >= Self.maximumBufferedFrames {
                        buffered.removeFirst()
                        figures.framesDropped += 1
                    }
                    // A copy: the payload is a slice of the socket's read buffer.
                    buffered.append(ByteBuffer(buffer: payload))
                    return
                }
                realtime.send(frame: RealtimeClientEvent.append(audio: payload, allocator: allocator))
                figures.framesToRealtime += 1
                figures.relayToRealtime.record(microseconds: Self.microseconds(since: received))
            }
        case .mark(let name):
            let actions = lock.withLock { machine?.markAcknowledged(name, at: Self.now()) ?? [] }
            if !actions.isEmpty { perform(actions) }
        case .start(let start):
            started(start)
        case .stop:
            let actions = lock.withLock { () -> [MediaStreamBridgeMachine.Action]? in
                guard machine != nil else { return nil }
                return machine!.streamStopped(at: Self.now())
            }
            if let actions {
                perform(actions)
            } else {
                // The callee hung up while the stream was being accepted: the outcome is saved once the call is known.
                lock.withLock { earlyEnd = earlyEnd ?? .calleeHangup }
                finish(reason: nil)
            }
        case .dtmf(let digit):
            let actions = lock.withLock { machine?.keyPressed(digit, at: Self.now()) ?? [] }
            guard !actions.isEmpty else { return }
            logger.info("callee pressed the opt-out key")
            perform(actions)
            rescheduleGateTimer()
        case .connected, .other:
            break
        }
    }

    private func started(_ start: TwilioStreamStart) {
        let startedAt = Self.now()
        let first = lock.withLock { () -> Bool in
            defer { startReceived = true }
            return !startReceived
        }
        guard first else { return }
        guard Self.isPlainIdentifier(start.streamSid), let token = start.customParameters["token"], !token.isEmpty else {
            reject("start frame without a call token")
            return
        }
        trackInSpan { [self] in
            do {
                guard let call = try await store.callBridge.claimStream(tokenHash: Self.hash(token), now: services.now()) else {
                    reject("invalid or already used call token")
                    return
                }
                await accept(call, start: start, startedAt: startedAt)
            } catch {
                logger.error("could not accept the media stream", metadata: ["error": .string(String(describing: type(of: error)))])
                reject("database unavailable")
            }
        }
    }

    private func accept(_ call: CallRecord, start: TwilioStreamStart, startedAt: UInt64) async {
        let voicemail = await voicemailPolicy(call)
        let (language, disclosure) = await disclosure(call)
        var logger = logger
        logger[metadataKey: "call_id"] = .stringConvertible(call.id)
        logger[metadataKey: "call_sid"] = .string(call.callSid ?? start.callSid)
        span.attributes["chorus.call_id"] = call.id
        enum Acceptance {
            case proceed([MediaStreamBridgeMachine.Action])
            case endedEarly(EndedReason)
        }
        let acceptance = lock.withLock { () -> Acceptance in
            guard !finished else { return .endedEarly(earlyEnd ?? .errorStream) }
            self.call = call
            self.streamSid = start.streamSid
            self.language = language
            self.disclosureText = disclosure
            var machine = MediaStreamBridgeMachine(
                durationLimitSeconds: call.durationLimit, gate: services.configuration.callBridge.machineDetection ? .detection : .immediate,
                voicemail: voicemail, disclosure: disclosure != nil)
            // The TwiML request marked the answer; the stream starts a little later (at most 10 s is believed).
            let sinceAnswer = call.answeredAt.map { Int(services.now().timeIntervalSince($0) * 1000) } ?? 0
            let actions = machine.streamStarted(at: startedAt, answeredMillisecondsAgo: min(max(0, sinceAnswer), 10_000))
            self.machine = machine
            return .proceed(actions)
        }
        guard case .proceed(let actions) = acceptance else {
            if case .endedEarly(let reason) = acceptance {
                services.bridges.discard(callID: call.id)
                await saveOutcome(call: call, reason: reason, machine: nil, logger: logger)
                await services.publishCallStatus(callID: call.id, store: store)
            }
            return
        }
        services.bridges.attach(self, callID: call.id)
        perform(actions)
        scheduleDurationTimer()
        rescheduleGateTimer()
        startTimer?.cancel()

        // The session opened while the phone rang, or a new one (the stream reached another instance, or it failed).
        var session = await services.bridges.take(callID: call.id)
        if session == nil {
            do {
                let configuration = try await services.realtimeSession(forCall: call, store: store)
                session = try await RealtimeSession.open(
                    connector: services.realtime, session: configuration, on: twilio.eventLoop, observer: services.providerHealth)
            } catch {
                logger.error("could not open the realtime session", metadata: ["error": .string(String(describing: error))])
            }
        }
        guard let session else {
            perform(lock.withLock { machine?.realtimeFailed() ?? [] })
            return
        }
        let proceed = lock.withLock { () -> [MediaStreamBridgeMachine.Action]? in
            guard !finished else { return nil }
            realtime = session
            realtimeSince = .now
            for payload in buffered {
                session.send(frame: RealtimeClientEvent.append(audio: payload, allocator: allocator))
                figures.framesToRealtime += 1
            }
            buffered = []
            return machine?.realtimeConfigured() ?? []
        }
        guard let proceed else {
            session.close()
            return
        }
        session.attach(onText: { [self] text in realtimeEvent(text) }, onClose: { [self] in realtimeClosed() })
        perform(proceed)
        logger.info("media stream bridged", metadata: ["stream_sid": .string(start.streamSid)])
    }

    /// What a machine gets on this call: the scenario's choice (custom scenarios), hang up otherwise.
    private func voicemailPolicy(_ call: CallRecord) async -> VoicemailPolicy {
        guard services.configuration.callBridge.machineDetection, CustomScenarioRecord.rowID(fromPublicID: call.scenario) != nil else {
            return .hangUp
        }
        let placement = CallPlacement(services: services, store: store, logger: logger)
        return (try? await placement.resolveScenario(call.scenario, userID: call.userID))?.voicemail ?? .hangUp
    }

    /// The call's language (its scenario's persona) and its disclosure, from the caller's first name (their messaging
    /// display name, when it is one) — `nil` when the deployment has none (development only).
    private func disclosure(_ call: CallRecord) async -> (CallLanguage, String?) {
        let placement = CallPlacement(services: services, store: store, logger: logger)
        let persona = (try? await placement.resolveScenario(call.scenario, userID: call.userID))?.persona ?? ""
        let language = CallLanguage.detect(persona)
        guard let disclosure = services.configuration.callDisclosure else { return (language, nil) }
        let displayName = (try? await store.messaging.explicitDisplayName(userID: call.userID)) ?? nil
        return (language, disclosure.text(language: language, callerName: CallDisclosure.firstName(from: displayName)))
    }

    /// Twilio's answering-machine detection reported who answered (its callback reached this instance). `false` when
    /// this bridge has not accepted its stream yet.
    func machineDetected(_ answeredBy: AnsweredBy) -> Bool {
        let actions = lock.withLock { () -> [MediaStreamBridgeMachine.Action]? in
            guard machine != nil, !finished else { return nil }
            return machine!.machineDetected(answeredBy, at: Self.now())
        }
        guard let actions else { return false }
        logger.info("answering-machine detection", metadata: ["answered_by": .string(answeredBy.rawValue)])
        perform(actions)
        rescheduleGateTimer()
        return true
    }

    /// Arms the timer for the machine's next deadline (held first words, a message that plays too long).
    private func rescheduleGateTimer() {
        lock.withLock {
            gateTimer?.cancel()
            gateTimer = nil
            guard !finished, let deadline = machine?.nextDeadline else { return }
            let now = Self.now()
            let wait = deadline > now ? Int64(clamping: deadline - now) : 0
            gateTimer = twilio.eventLoop.scheduleTask(in: .milliseconds(wait)) { [self] in
                perform(lock.withLock { self.machine?.deadlineReached(at: Self.now()) ?? [] })
                rescheduleGateTimer()
            }
        }
    }

    private func scheduleDurationTimer() {
        lock.withLock {
            guard let machine, let startedAt = machine.streamStartedAt, !finished else { return }
            let elapsed = Int64(Self.now() &- startedAt)
            let remaining = Int64(machine.durationTimerMilliseconds) - elapsed
            durationTimer = twilio.eventLoop.scheduleTask(in: .milliseconds(max(0, remaining))) { [self] in
                perform(lock.withLock { self.machine?.durationLimitReached() ?? [] })
            }
        }
    }

    // MARK: - Model → Twilio

    private func realtimeEvent(_ text: ByteBuffer) {
        let received = NIODeadline.now()
        guard let event = RealtimeServerEvent.parse(text) else { return }
        switch event {
        case .audioDelta(let itemID?, let delta):
            lock.withLock {
                guard machine != nil else { return }
                let padding = delta.readableBytesView.suffix(2).filter { $0 == UInt8(ascii: "=") }.count
                let milliseconds = MuLaw.milliseconds(base64Length: delta.readableBytes, padding: padding)
                guard case .forward(let mark) = machine!.assistantAudio(itemID: itemID, milliseconds: milliseconds, at: Self.now())
                else { return }
                // A write that fails (Twilio already closed the socket: the callee hung up) is counted as such.
                let written = twilio.eventLoop.makePromise(of: Void.self)
                let metrics = services.bridges.metrics
                written.futureResult.whenFailure { _ in metrics.frameUndeliverable() }
                twilio.send(
                    TwilioMediaStreamOutbound.media(streamSid: streamSid, payload: delta, allocator: allocator),
                    TwilioMediaStreamOutbound.mark(streamSid: streamSid, name: mark, allocator: allocator), promise: written)
                figures.framesToTwilio += 1
                figures.relayToTwilio.record(microseconds: Self.microseconds(since: received))
            }
        case .speechStarted:
            let (actions, holding) = lock.withLock { (machine?.calleeStartedSpeaking(at: Self.now()) ?? [], machine?.opening == .holding) }
            perform(actions)
            if !actions.isEmpty {
                lock.withLock { figures.bargeInReaction.record(microseconds: Self.microseconds(since: received)) }
            }
            if holding { rescheduleGateTimer() }
        case .speechStopped:
            let holding = lock.withLock { () -> Bool in
                machine?.calleeStoppedSpeaking(at: Self.now())
                return machine?.opening == .holding
            }
            if holding { rescheduleGateTimer() }
        case .responseDone(let outcome):
            let (actions, current, model) = lock.withLock { () -> ([MediaStreamBridgeMachine.Action], CallRecord?, String?) in
                (machine?.responseDone() ?? [], call, realtime?.configuration.model)
            }
            if let usage = outcome.usage, let current, let model { meter(usage, model: model, call: current) }
            if !actions.isEmpty { perform(actions) }
        case .responseCreated:
            lock.withLock { machine?.responseCreated() }
        case .functionCall(let callID, let name, _):
            guard name == CallOptOut.toolName else {
                logger.warning("the model called an undeclared function", metadata: ["name": .string(String(name.prefix(64)))])
                return
            }
            let actions = lock.withLock { machine?.optOutToolCalled(callID: callID, at: Self.now()) ?? [] }
            guard !actions.isEmpty else { return }
            logger.info("callee opted out by speech")
            perform(actions)
            rescheduleGateTimer()
        case .calleeTranscript(let itemID, let text):
            transcribed(.callee, text: text, itemID: itemID)
        case .assistantTranscript(let itemID, let text):
            transcribed(.assistant, text: text ?? "", itemID: itemID)
        case .error(let detail):
            logger.warning(
                "realtime error", metadata: ["type": .string(detail.type), "code": .string(detail.code ?? "-"), "message": .string(detail.message)])
            if !detail.isRecoverable {
                perform(lock.withLock { machine?.realtimeFailed() ?? [] })
            }
        case .sessionCreated, .sessionUpdated, .audioDelta(nil, _), .malformed, .assistantTranscriptDelta, .other:
            break
        }
    }

    /// Records what one response cost (issue 18), as it arrives; recording never holds up the call.
    private func meter(_ usage: RealtimeUsage, model: String, call: CallRecord) {
        let services = services
        let store = store
        let logger = logger
        services.background.track { await services.callCosts.recordRealtime(usage, model: model, call: call, store: store, logger: logger) }
    }

    /// Adds a line to the call's transcript and shows it to the caller (and the console) while the call goes on.
    private func transcribed(_ speaker: MediaStreamBridgeMachine.Speaker, text: String, itemID: String?) {
        let added = lock.withLock { () -> (CallRecord, MediaStreamBridgeMachine.TranscriptLine)? in
            guard machine != nil, let call else { return nil }
            let count = machine!.transcript.count
            machine!.transcribed(speaker, text: text, itemID: itemID, at: Self.now())
            guard machine!.transcript.count > count, let line = machine!.transcript.last else { return nil }
            return (call, line)
        }
        guard let (call, line) = added, let sid = call.callSid else { return }
        let services = services
        let progress = CallProgressDTO(
            type: "transcript", callSid: sid,
            line: CallTranscriptLine(
                speaker: .init(rawValue: line.speaker.rawValue), text: line.text, atMs: line.atMilliseconds, interrupted: line.interrupted))
        services.background.track { await services.publishCallProgress(progress, userID: call.userID) }
    }

    // MARK: - Endings

    private func realtimeClosed() {
        perform(lock.withLock { machine?.realtimeFailed() ?? [] })
    }

    private func twilioClosed() {
        let actions = lock.withLock { () -> [MediaStreamBridgeMachine.Action] in
            guard machine != nil else {
                earlyEnd = earlyEnd ?? .errorStream
                return []
            }
            return machine!.streamClosed()
        }
        perform(actions)
        // A socket that closed before its stream was accepted has nothing else to clean up.
        finish(reason: nil)
    }

    /// The server is stopping: end the call as a stream error so it is settled like one.
    func shutdown() {
        perform(lock.withLock { machine?.end(.errorStream) ?? [] })
        finish(reason: nil)
    }

    private func reject(_ why: String) {
        logger.warning("rejected media stream", metadata: ["reason": .string(why)])
        twilio.close(code: .policyViolation)
        finish(reason: nil)
    }

    private func perform(_ actions: [MediaStreamBridgeMachine.Action]) {
        for action in actions {
            switch action {
            case .startResponse:
                lock.withLock { realtime }?.send(RealtimeClientEvent.responseCreate())
            case .clearTwilio:
                let sid = lock.withLock { streamSid }
                twilio.send(TwilioMediaStreamOutbound.clear(streamSid: sid, allocator: allocator))
            case .truncate(let itemID, let audioEndMs):
                lock.withLock { realtime }?.send(RealtimeClientEvent.truncate(itemID: itemID, audioEndMs: audioEndMs))
            case .end(let reason):
                finish(reason: reason)
            case .enableTurnResponses:
                if let realtime = lock.withLock({ realtime }) {
                    realtime.send(RealtimeClientEvent.enableTurnResponses(realtime.configuration))
                }
            case .cancelResponse:
                lock.withLock { realtime }?.send(RealtimeClientEvent.responseCancel())
            case .leaveMessage:
                let (session, disclosure) = lock.withLock { (realtime, disclosureText) }
                session?.send(RealtimeClientEvent.responseCreate(instructions: VoicemailInstructions.leaveMessage(disclosure: disclosure)))
            case .speakDisclosure:
                let (session, text, spoken) = lock.withLock { () -> (RealtimeSession?, String?, CallLanguage) in (realtime, disclosureText, language) }
                if let text { session?.send(RealtimeClientEvent.responseCreate(instructions: CallDisclosure.speakInstructions(text, language: spoken))) }
            case .recordOptOut(let source):
                recordOptOut(source)
            case .disableTurnResponses:
                if let realtime = lock.withLock({ realtime }) {
                    realtime.send(RealtimeClientEvent.disableTurnResponses(realtime.configuration))
                }
            case .sayOptOutGoodbye(let functionCallID):
                let (session, spoken) = lock.withLock { () -> (RealtimeSession?, CallLanguage) in (realtime, language) }
                if let functionCallID {
                    session?.send(RealtimeClientEvent.functionCallOutput(callID: functionCallID, output: CallOptOut.toolOutput))
                }
                session?.send(RealtimeClientEvent.responseCreate(instructions: CallOptOut.goodbyeInstructions(language: spoken)))
            }
        }
    }

    /// Puts the call's number on the do-not-call list (its keyed hash) at once, so a callee who hangs up during the
    /// goodbye is not called again.
    private func recordOptOut(_ source: CallOptOut.Source) {
        guard let call = lock.withLock({ call }) else { return }
        let services = services
        let store = store
        let logger = logger
        services.background.track {
            do {
                try await store.destinations.addOptOut(hash: services.numberHasher.hash(call.phoneNumber), source: source, now: services.now())
            } catch {
                logger.error("could not record an opt-out", metadata: ["call_id": .stringConvertible(call.id), "error": .string(String(describing: error))])
            }
        }
    }

    /// Releases everything the bridge holds, once: timers, both sockets, the registry entry; hangs up the phone call
    /// unless the callee already has, and saves the outcome.
    private func finish(reason: EndedReason?) {
        let released = lock.withLock { () -> (RealtimeSession?, CallRecord?, MediaStreamBridgeMachine?, BridgeFigures)? in
            guard !finished else { return nil }
            finished = true
            durationTimer?.cancel()
            gateTimer?.cancel()
            startTimer?.cancel()
            buffered = []
            defer { realtime = nil }
            return (realtime, call, machine, figures)
        }
        guard let (session, call, machine, figures) = released else { return }
        session?.close()
        let reason = reason ?? machine?.endedReason ?? .errorStream
        span.attributes["chorus.call.ended_reason"] = reason.rawValue
        if session != nil, let since = lock.withLock({ realtimeSince }) {
            // A realtime session that failed mid-call counts against the provider; any other ending does not.
            services.providerHealth.providerCall(
                provider: RealtimeSession.provider, operation: "session", failure: reason == .errorOpenAI ? "session_failed" : nil,
                duration: ContinuousClock.now - since)
        }
        if !twilio.isClosed { twilio.close(code: .normalClosure) }
        services.bridges.unregister(self)
        var closing = figures
        if let firstAudio = machine?.firstAudioLatencyMilliseconds, firstAudio >= 0 {
            closing.answerToFirstAudio.record(microseconds: UInt64(firstAudio).multipliedReportingOverflow(by: 1_000).partialValue)
        }
        services.bridges.metrics.bridgeClosed(closing)
        guard let call else {
            span.end()
            return
        }
        if session == nil { services.bridges.discard(callID: call.id) }
        var logger = logger
        logger[metadataKey: "call_id"] = .stringConvertible(call.id)
        logger.info(
            "media stream ended",
            metadata: [
                "reason": .string(reason.rawValue), "answered_by": .string(machine?.answeredBy?.rawValue ?? "-"),
                // When and why the first words were released (answering-machine detection).
                "first_words_ms": .string(machine?.releasedAfterMilliseconds.map(String.init) ?? "-"),
                "first_words_cause": .string(machine?.releaseCause?.rawValue ?? "-"),
            ])
        let services = services
        trackInSpan { [self, logger] in
            defer { span.end() }
            if reason != .calleeHangup, let sid = call.callSid {
                do {
                    try await services.telephony.hangUp(callSid: sid)
                } catch {
                    logger.warning("could not hang up the call", metadata: ["error": .string(String(describing: type(of: error)))])
                }
            }
            guard let machine else { return }
            await self.saveOutcome(call: call, reason: reason, machine: machine, logger: logger)
            await services.publishCallStatus(callID: call.id, store: self.store)
        }
    }

    /// Saves why the call ended, with the machine's transcript and figures when the stream was bridged.
    private func saveOutcome(call: CallRecord, reason: EndedReason, machine: MediaStreamBridgeMachine?, logger: Logger) async {
        let turns = machine?.turnLatenciesMilliseconds ?? []
        let outcome = BridgeOutcome(
            reason: reason, firstAudioMilliseconds: machine?.firstAudioLatencyMilliseconds,
            turnLatencyP50Milliseconds: LatencyPercentile.of(turns, 50), turnLatencyP90Milliseconds: LatencyPercentile.of(turns, 90),
            turns: turns.count, bargeIns: machine?.bargeIns ?? 0, transcript: machine?.transcript ?? [])
        do {
            try await store.callBridge.recordBridgeOutcome(
                callID: call.id, outcome: outcome,
                retention: TimeInterval(services.configuration.callBridge.transcriptRetentionDays * 86_400), now: services.now())
        } catch {
            logger.error("could not save the call's outcome", metadata: ["error": .string(String(describing: error))])
        }
    }

    // MARK: - Helpers

    /// The stored form of a call token.
    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Stream SIDs are written into JSON frames verbatim: letters and digits only.
    static func isPlainIdentifier(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) }
    }
}
