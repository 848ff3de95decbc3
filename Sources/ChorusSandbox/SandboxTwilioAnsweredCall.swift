import AsyncHTTPClient
import ChorusCore
import ChorusProviders
import Foundation
import NIOCore
import Vapor

// What happens once a sandbox call is answered: the TwiML fetch, then either a Media Stream or the simulated
// conversation.
extension SandboxTwilio {
    /// What the TwiML request needs to know about a call.
    struct AnsweredCall {
        let sid: String
        let to: String
        let from: String
        let url: String
        let method: String
        let timeLimit: Int
        let script: CalleeScript
        let answeredAt: ContinuousClock.Instant
        let behavior: CalleeBehavior
        let machineDetection: MachineDetection?
    }

    /// Runs an answered call: fetches its TwiML, then plays a `<Connect><Stream>` or, for any other TwiML, the
    /// simulated conversation of `talkSeconds` (already capped by `TimeLimit`). Returns when the call has ended.
    func runAnsweredCall(sid: String, talkSeconds: Double) async {
        let answered = state.withLockedValue { state -> AnsweredCall? in
            guard let call = state.calls[sid], !call.isEnded else { return nil }
            return AnsweredCall(
                sid: sid, to: call.to, from: call.from, url: call.url, method: call.twimlMethod, timeLimit: call.timeLimit,
                script: call.script, answeredAt: call.answeredAt ?? .now, behavior: call.behavior, machineDetection: call.machineDetection
            )
        }
        guard let answered else { return }
        let twiml: SandboxTwiML
        do {
            twiml = try await fetchTwiML(answered)
        } catch {
            guard !Task.isCancelled else { return }
            let failure = error as? SandboxTwiML.Failure ?? SandboxTwiML.Failure(code: 11200, message: "HTTP retrieval failure: \(error)")
            logger.warning("sandbox.twilio.twiml failed", metadata: ["call_sid": "\(sid)", "error": "\(failure)"])
            // Twilio ends the call at once (an application error) and reports it completed.
            _ = advance(sid, callStatus: "completed", event: "completed", duration: 0, endedBy: "twiml_error", error: failure.description)
            return
        }
        guard !Task.isCancelled else { return }
        if let stream = twiml.stream {
            await runStream(answered, stream: stream, talkSeconds: talkSeconds)
            return
        }
        var talk = talkSeconds
        var endedBy = talkSeconds >= Double(answered.timeLimit) ? "time_limit" : "twiml_ended"
        if let hangup = answered.script.hangupAfterSeconds, hangup < talk {
            talk = hangup
            endedBy = "callee_hangup"
        }
        guard await sleep(simulated: talk) else { return }
        _ = advance(sid, callStatus: "completed", event: "completed", duration: Int(talk.rounded(.up)), endedBy: endedBy)
    }

    // MARK: - TwiML

    /// Requests the call's TwiML as Twilio does (signed form POST, or GET with the parameters in the query) and parses it.
    private func fetchTwiML(_ call: AnsweredCall) async throws -> SandboxTwiML {
        let parameters: [(String, String)] = [
            ("AccountSid", accountSID),
            ("ApiVersion", "2010-04-01"),
            ("CallSid", call.sid),
            ("CallStatus", "in-progress"),
            ("Called", call.to),
            ("Caller", call.from),
            ("Direction", "outbound-api"),
            ("From", call.from),
            ("To", call.to),
        ]
        var request: HTTPClientRequest
        let signature: String
        if call.method == "GET" {
            let url = call.url + (call.url.contains("?") ? "&" : "?") + TwilioFormEncoding.encode(parameters)
            request = HTTPClientRequest(url: url)
            request.method = .GET
            signature = validator.signature(url: url, parameters: [])
        } else {
            request = HTTPClientRequest(url: call.url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: TwilioFormEncoding.encode(parameters)))
            signature = validator.signature(url: call.url, parameters: parameters)
        }
        request.headers.add(name: "X-Twilio-Signature", value: signature)
        request.headers.add(name: "User-Agent", value: "TwilioProxy/1.1")
        request.headers.add(name: "Accept", value: "*/*")
        request.headers.add(name: "I-Twilio-Idempotency-Token", value: UUID().uuidString.lowercased())
        let body: ByteBuffer
        do {
            let response = try await httpClient.execute(request, timeout: .seconds(15))
            body = try await response.body.collect(upTo: 1 << 20)
            guard (200..<300).contains(Int(response.status.code)) else {
                throw SandboxTwiML.Failure(code: 11200, message: "HTTP retrieval failure: \(call.url) answered HTTP \(response.status.code)")
            }
        } catch let failure as SandboxTwiML.Failure {
            throw failure
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw SandboxTwiML.Failure(code: 11200, message: "HTTP retrieval failure: \(error)")
        }
        return try SandboxTwiML.parse(String(buffer: body))
    }

    // MARK: - Media Stream

    /// Connects the stream and plays it until it ends, then completes the call.
    /// Without `hangup_after_seconds`, the callee hangs up after the call's talk time (wall-clock seconds: media is
    /// real time).
    private func runStream(_ call: AnsweredCall, stream: SandboxTwiML.Stream, talkSeconds: Double) async {
        let options = mediaStreams
        let directory = calleeLines.withLockedValue { $0 }
        // A machine says one thing as soon as it answers: its greeting (and beep), or its calling tone.
        var firstLineAfterMs = call.script.firstLineAfterMs
        var greetingMs = 0
        var hangupAfterSeconds = call.script.hangupAfterSeconds
        let lines: [MediaStreamSession.Line]
        switch call.behavior {
        case .voicemail:
            let greeting = call.script.lines?.first ?? CalleeSounds.greeting
            let speech = CalleeAudio.frames(greeting, voice: 2)
            directory?.register(greeting, frames: speech)
            greetingMs = speech.count * MediaStreamSession.frameMs
            lines = [MediaStreamSession.Line(text: greeting, frames: speech + (call.script.beep ?? true ? CalleeSounds.beepFrames : []))]
            firstLineAfterMs = firstLineAfterMs ?? 400
            hangupAfterSeconds = hangupAfterSeconds ?? Double(400 + greetingMs) / 1_000 + 20
        case .fax:
            hangupAfterSeconds = hangupAfterSeconds ?? 30
            lines = [MediaStreamSession.Line(text: "(fax tone)", frames: CalleeSounds.faxFrames(seconds: hangupAfterSeconds ?? 30))]
            firstLineAfterMs = firstLineAfterMs ?? 200
        case .answer, .noAnswer, .busy, .fail:
            lines = (call.script.lines ?? CalleeScript.defaultLines).map { text in
                let line = MediaStreamSession.Line(text: text, frames: CalleeAudio.frames(text, voice: 1))
                directory?.register(text, frames: line.frames)
                return line
            }
        }
        let script = MediaStreamSession.Script(
            lines: lines, firstLineAfterMs: firstLineAfterMs,
            replyAfterMs: call.script.replyAfterMs ?? CalleeScript.defaultReplyAfterMs, interruptAfterMs: call.script.interruptAfterMs,
            pressKey: call.script.pressKey.map { ($0, call.script.pressKeyAfterMs ?? 1_000) }
        )
        let session = MediaStreamSession(
            callSID: call.sid, accountSID: accountSID, streamSID: Self.makeStreamSID(), url: stream.url,
            parameters: stream.parameters.map { ($0.name, $0.value) }, script: script, options: options,
            recorder: recorder.withLockedValue { $0 }
        )
        let registered = state.withLockedValue { state -> Bool in
            guard var record = state.calls[call.sid], !record.isEnded else { return false }
            record.stream = session
            state.calls[call.sid] = record
            return true
        }
        guard registered, !Task.isCancelled else { return }

        var headers = HTTPHeaders()
        headers.add(name: "X-Twilio-Signature", value: validator.signature(url: stream.url, parameters: []))
        headers.add(name: "User-Agent", value: "Twilio.TmeWs/1.0")
        // websocket-kit completes `connect` before it hands over the socket, so the call waits for the socket itself;
        // the wait ends early on a connect error, after `streamConnectTimeout`, or when the call's task is cancelled.
        let eventLoop = httpClient.eventLoopGroup.next()
        let attached = eventLoop.makePromise(of: Void.self)
        let onUpgrade: @Sendable (WebSocket) -> Void = { socket in
            session.attach(socket)
            attached.succeed(())
        }
        let timeout = eventLoop.scheduleTask(in: Self.streamConnectTimeout) {
            attached.fail(WebSocketConnectTimeout())
        }
        do {
            let connected: EventLoopFuture<Void> = WebSocket.connect(
                to: stream.url, headers: headers, configuration: .init(maxFrameSize: 1 << 24), on: eventLoop, onUpgrade: onUpgrade
            )
            connected.whenFailure { attached.fail($0) }
            try await withTaskCancellationHandler {
                try await attached.futureResult.get()
            } onCancel: {
                attached.fail(CancellationError())
            }
            timeout.cancel()
        } catch {
            timeout.cancel()
            // A socket that opens after all is closed at once.
            session.abandon()
            guard !Task.isCancelled else { return }
            logger.warning("sandbox.twilio.stream connect failed", metadata: ["call_sid": "\(call.sid)", "error": "\(error)"])
            // Twilio continues with the TwiML after <Connect>; there is none, so the call ends.
            let elapsed = Self.seconds(ContinuousClock.now - call.answeredAt)
            _ = advance(
                call.sid, callStatus: "completed", event: "completed", duration: min(Int(elapsed.rounded(.up)), call.timeLimit),
                endedBy: "stream_connect_failed", error: "31920: Stream - WebSocket - Handshake Error: \(error)"
            )
            return
        }
        // Answering-machine detection listens from the start of the stream and reports on its own.
        var detectionTask: Task<Void, Never>?
        if let detection = call.machineDetection {
            let callee: DetectedCallee =
                switch call.behavior {
                case .voicemail: .voicemail(beep: call.script.beep ?? true)
                case .fax: .fax
                default: .person
                }
            let firstLineMs = lines.first.map { $0.frames.count * MediaStreamSession.frameMs }
            let (answeredBy, afterMs) = detection.outcome(
                callee: callee, firstLineAfterMs: firstLineAfterMs, firstLineMs: firstLineMs, greetingMs: greetingMs)
            let streamStart = ContinuousClock.now
            detectionTask = Task { [self] in
                guard (try? await Task.sleep(until: streamStart + .milliseconds(afterMs), clock: .continuous)) != nil else { return }
                await reportMachineDetection(sid: call.sid, answeredBy: answeredBy, afterMs: afterMs)
            }
        }
        defer { detectionTask?.cancel() }
        let timeLimitAt = call.answeredAt + .seconds(call.timeLimit)
        let hangupAfter = hangupAfterSeconds ?? talkSeconds
        let hangupAt: ContinuousClock.Instant? = call.answeredAt + .milliseconds(Int64(clampingRounded: hangupAfter * 1_000))
        let (reason, endedAt) = await session.run(timeLimitAt: timeLimitAt, hangupAt: hangupAt)
        // Media is real time, so the call's duration is wall-clock time from answer to end, partial seconds rounded up.
        let elapsed = Self.seconds(endedAt - call.answeredAt)
        _ = advance(
            call.sid, callStatus: "completed", event: "completed", duration: min(Int(elapsed.rounded(.up)), call.timeLimit),
            endedBy: reason.rawValue
        )
    }

    /// How long a Media Stream WebSocket may take to open before the call gives up on it.
    static let streamConnectTimeout = TimeAmount.seconds(10)

    struct WebSocketConnectTimeout: Error, CustomStringConvertible {
        var description: String { "the WebSocket upgrade did not complete within 10 s" }
    }

    /// `MZ` + 32 lowercase hex digits.
    static func makeStreamSID() -> String {
        var generator = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef")
        return "MZ" + String((0..<32).map { _ in hex[Int(generator.next() % 16)] })
    }
}
