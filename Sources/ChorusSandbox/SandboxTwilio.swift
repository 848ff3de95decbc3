import AsyncHTTPClient
import ChorusCore
import ChorusProviders
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Vapor

/// A local emulator of Twilio's Programmable Voice Calls API (`2010-04-01`).
///
/// It accepts `CreateCall`, `UpdateCall` and `FetchCall` exactly as Twilio does (form bodies, basic
/// auth, Twilio's JSON resources and error bodies) and then plays the call out on a simulated
/// callee: status callbacks (`initiated`, `ringing`, `in-progress`, then a terminal status) are posted
/// to the call's `StatusCallback` with a genuine `X-Twilio-Signature`. How each callee behaves is
/// configurable per number. Callback delivery failures are recorded on the call, never fatal.
///
/// When a call is answered the emulator fetches its TwiML (a signed POST, or GET, to the call's `Url`). A
/// `<Connect><Stream url>` is played over the real bidirectional Media Streams protocol: the emulator opens a signed
/// WebSocket to the stream URL, sends `connected`, `start` and the callee's microphone as a `media` frame every 20 ms
/// (real time), plays the application's `media` out of a playback queue, echoes `mark`s when playback reaches them and
/// honours `clear`. The call ends when the application closes the socket, on a REST hang-up, at the call's `TimeLimit` or
/// when the callee hangs up (the last three send `stop` first). Any other TwiML keeps the simulated conversation of
/// `talk_seconds`; TwiML that cannot be fetched or parsed ends the call at once, as on Twilio (errors 11200/12100).
/// What the callee says on a stream, and when, is its ``CalleeScript``.
public final class SandboxTwilio: Sendable {
    /// How the simulated callee reacts to a call.
    public enum CalleeBehavior: String, Codable, Sendable {
        /// Picks up after the ring delay, talks, then hangs up.
        case answer
        /// Lets the phone ring until the call's `Timeout`.
        case noAnswer = "no-answer"
        /// Rejects the call as busy after the ring delay.
        case busy
        /// The call cannot be connected (e.g. an unreachable number).
        case fail = "failed"
        /// An answering machine picks up after the ring delay: its greeting (the script's first line, or a default),
        /// a beep (unless the script's `beep` is `false`), then it records silence until `hangup_after_seconds`
        /// (default: 20 s after the greeting).
        case voicemail
        /// A fax machine picks up and sends its calling tone until `hangup_after_seconds` (default 30 s).
        case fax
    }

    /// The pace of simulated calls.
    ///
    /// `ringDelay` and `talkDuration` are simulated time; durations reported to Twilio clients
    /// (`CallDuration`, `duration`) are simulated seconds. `timeScale` converts simulated time to wall-clock
    /// time: `1` is real time, `0.01` plays a 5 s conversation in 50 ms. Media Streams always run in real time, so a
    /// call whose TwiML connects a stream counts wall-clock seconds from answer to end (and its `TimeLimit` and the
    /// callee's `hangupAfterSeconds` are wall-clock seconds too).
    public struct Timing: Sendable, Equatable {
        /// How long the phone rings before the callee answers, is busy, or the call fails.
        public var ringDelay: Duration
        /// How long an answered call lasts unless the callee has its own talk time or `TimeLimit` is shorter.
        public var talkDuration: Duration
        /// Wall-clock seconds per simulated second.
        public var timeScale: Double

        /// Creates a timing; the defaults are real time with a 1 s ring and a 5 s conversation.
        public init(ringDelay: Duration = .seconds(1), talkDuration: Duration = .seconds(5), timeScale: Double = 1) {
            self.ringDelay = ringDelay
            self.talkDuration = talkDuration
            self.timeScale = timeScale
        }
    }

    /// How much of the calls that are over the emulator keeps for inspection (``calls()``, ``recording(sid:)``, ...).
    /// Calls in progress are always kept; once more ended calls than ``endedCalls`` are kept, or their audio
    /// (recordings and played audio) exceeds ``audioBytes``, the oldest ended calls are forgotten entirely (the most
    /// recent one is always kept; if its audio alone exceeds ``audioBytes``, the end of it is dropped to fit).
    public struct Retention: Sendable, Equatable {
        /// The default ``endedCalls``.
        public static let defaultEndedCalls = 100
        /// The default ``audioBytes`` (32 MiB, about 35 minutes of a call's recording and played audio).
        public static let defaultAudioBytes = 32 << 20

        /// Ended calls kept at most.
        public var endedCalls: Int
        /// Bytes of audio (recordings and played audio) of ended calls kept at most.
        public var audioBytes: Int

        /// Creates a retention; values below 1 count as 1.
        public init(endedCalls: Int = defaultEndedCalls, audioBytes: Int = defaultAudioBytes) {
            self.endedCalls = max(1, endedCalls)
            self.audioBytes = max(1, audioBytes)
        }
    }

    /// The account SID the emulator accepts.
    public let accountSID: String
    /// The pace of simulated calls.
    public let timing: Timing
    /// How Media Streams are run.
    public let mediaStreams: MediaStreamOptions
    /// How much of the ended calls is kept.
    public let retention: Retention
    let authToken: String
    let httpClient: HTTPClient
    private let defaultBehavior: CalleeBehavior
    let validator: TwilioRequestValidator
    let logger: Logger
    let state = NIOLockedValueBox(State())
    let recorder: NIOLockedValueBox<SandboxRecorder?>
    let calleeLines = NIOLockedValueBox<SandboxCalleeLines?>(nil)

    /// Creates an emulator for one account.
    ///
    /// - Parameters:
    ///   - httpClient: The client used to fetch TwiML, post status callbacks and (its event loops) open Media Streams.
    ///   - defaultBehavior: How callees without an override behave.
    ///   - mediaStreams: How Media Streams are run (message recording, kept audio, callee voice).
    ///   - recorder: Where messages received on Media Streams are recorded (see also ``attach(recorder:)``).
    ///   - retention: How many ended calls (and how much of their audio) are kept for inspection.
    public init(
        accountSID: String,
        authToken: String,
        httpClient: HTTPClient,
        timing: Timing = Timing(),
        defaultBehavior: CalleeBehavior = .answer,
        logger: Logger = Logger(label: "chorus.sandbox.twilio"),
        mediaStreams: MediaStreamOptions = MediaStreamOptions(),
        recorder: SandboxRecorder? = nil,
        retention: Retention = Retention()
    ) {
        self.accountSID = accountSID
        self.authToken = authToken
        self.httpClient = httpClient
        self.timing = timing
        self.defaultBehavior = defaultBehavior
        self.validator = TwilioRequestValidator(authToken: authToken)
        self.logger = logger
        self.mediaStreams = mediaStreams
        self.retention = retention
        self.recorder = NIOLockedValueBox(recorder)
    }

    /// Records every message received on Media Streams started from now on in `recorder` (unless
    /// ``MediaStreamOptions/recordsMessages`` is off).
    public func attach(recorder: SandboxRecorder) {
        self.recorder.withLockedValue { $0 = recorder }
    }

    /// Registers every line callees speak from now on in `calleeLines`, so a Realtime emulator sharing it transcribes
    /// them.
    public func attach(calleeLines: SandboxCalleeLines) {
        self.calleeLines.withLockedValue { $0 = calleeLines }
    }

    // MARK: - Configuration and inspection

    /// Makes calls to `number` behave as `behavior`; `talkSeconds` (simulated) overrides the default
    /// conversation length for answered calls whose TwiML has no `<Connect><Stream>`; `sendsCallbacks: false` drops
    /// the call's status callbacks, as if they were lost on the way (the call still plays out and can be fetched);
    /// `script` is what the callee says on a Media Stream and when it hangs up.
    public func setBehavior(
        _ behavior: CalleeBehavior, for number: String, talkSeconds: Int? = nil, sendsCallbacks: Bool = true,
        script: CalleeScript = CalleeScript()
    ) {
        let key = Self.normalized(number)
        state.withLockedValue {
            $0.callees[key] = CalleeOverride(behavior: behavior, talkSeconds: talkSeconds, sendsCallbacks: sendsCallbacks, script: script)
        }
    }

    /// Restores the default behavior for `number`.
    public func resetBehavior(for number: String) {
        let key = Self.normalized(number)
        _ = state.withLockedValue { $0.callees.removeValue(forKey: key) }
    }

    /// Every call placed so far, oldest first, with its status history and callback deliveries.
    public func calls() -> [SandboxCallRecord] {
        state.withLockedValue { state in state.order.compactMap { state.calls[$0]?.record } }
    }

    /// One call, or `nil` if there is no call with that SID.
    public func call(sid: String) -> SandboxCallRecord? {
        state.withLockedValue { $0.calls[sid]?.record }
    }

    /// The Media Stream statistics and event timeline of a call, or `nil` if the call has (had) no stream.
    public func mediaStream(sid: String) -> SandboxMediaStreamStats? {
        let session = state.withLockedValue { $0.calls[sid]?.stream }
        return session?.statistics()
    }

    /// The application's audio that actually played on a call's stream (8 kHz μ-law, in order; cleared audio is not
    /// included), or `nil` if the call has no stream. Empty when ``MediaStreamOptions/keepsPlayedAudio`` is off.
    public func playedAudio(sid: String) -> [UInt8]? {
        let session = state.withLockedValue { $0.calls[sid]?.stream }
        return session?.playedAudio()
    }

    /// The call's recording — what the callee heard and said, mixed, as 8 kHz μ-law — or `nil` if the call has no
    /// stream. Empty when ``MediaStreamOptions/recordsCalls`` is off.
    public func recording(sid: String) -> [UInt8]? {
        let session = state.withLockedValue { $0.calls[sid]?.stream }
        return session?.recording()
    }

    /// Waits until the call has ended and its stream (if any) is closed, and returns it; `nil` if there is no such
    /// call, or it has not ended within `timeout`, or the waiting task is cancelled.
    public func waitUntilEnded(sid: String, timeout: Duration = .seconds(30)) async -> SandboxCallRecord? {
        await withTaskGroup(of: SandboxCallRecord?.self) { group in
            group.addTask { await self.ended(sid: sid) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    private func ended(sid: String) async -> SandboxCallRecord? {
        let id = UUID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<SandboxCallRecord?, Never>) in
                let immediate = state.withLockedValue { state -> SandboxCallRecord?? in
                    guard let call = state.calls[sid] else { return .some(nil) }
                    if call.finished { return .some(call.record) }
                    if state.cancelledWaiters.remove(id) != nil { return .some(nil) }
                    state.waiters[sid, default: [:]][id] = continuation
                    return .none
                }
                if case .some(let record) = immediate { continuation.resume(returning: record) }
            }
        } onCancel: {
            let continuation = state.withLockedValue { state -> CheckedContinuation<SandboxCallRecord?, Never>? in
                if let waiter = state.waiters[sid]?.removeValue(forKey: id) { return waiter }
                state.cancelledWaiters.insert(id)
                return nil
            }
            continuation?.resume(returning: nil)
        }
    }

    /// Stops every call still in progress without sending further callbacks (used at shutdown); Media Streams get
    /// `stop` and their sockets are closed by their (cancelled) tasks.
    public func cancelPendingCalls() {
        _ = cancelAll()
    }

    /// Like ``cancelPendingCalls()``, then waits until every call's task has finished (sockets closed).
    public func shutdown() async {
        for task in cancelAll() { await task.value }
    }

    private func cancelAll() -> [Task<Void, Never>] {
        let tasks = state.withLockedValue { state -> [Task<Void, Never>] in
            var tasks: [Task<Void, Never>] = []
            for sid in state.order {
                guard var call = state.calls[sid] else { continue }
                call.outbox.finish()
                call.stream?.requestEnd(.shutdown)
                tasks += [call.lifecycle, call.delivery].compactMap { $0 }
                call.lifecycle = nil
                call.delivery = nil
                state.calls[sid] = call
            }
            return tasks
        }
        tasks.forEach { $0.cancel() }
        return tasks
    }

    // MARK: - Routes

    /// Mounts the Calls API (`/2010-04-01/Accounts/:sid/Calls…`) and the control API
    /// (`PUT|DELETE /callees/:number`, `GET /calls`, `GET /calls/:call_sid/recording.wav`) on `routes`.
    ///
    /// `PUT /callees/:number` takes JSON with every member optional: `behavior` (`answer|no-answer|busy|failed`),
    /// `talk_seconds`, `callbacks` (`false` drops status callbacks) and the ``CalleeScript``: `lines`,
    /// `first_line_after_ms`, `reply_after_ms`, `hangup_after_seconds`, `interrupt_after_ms`, `press_key` and
    /// `press_key_after_ms` (a key pressed that long after the AI's audio first played). `GET /calls` lists
    /// ``SandboxCallRecord``s, with their Media Stream counters; `GET /calls/{call_sid}/media-stream` one stream's
    /// ``SandboxMediaStreamStats`` and event timeline.
    public func register(on routes: any RoutesBuilder) {
        let calls = routes.grouped("2010-04-01", "Accounts", ":accountSid")
        calls.post("Calls.json") { request async -> Response in
            self.createCall(request)
        }
        calls.post("Calls", ":callFile") { request async -> Response in
            self.updateCall(request)
        }
        calls.get("Calls", ":callFile") { request async -> Response in
            self.fetchCall(request)
        }
        routes.put("callees", ":number") { request async -> Response in
            self.configureCallee(request)
        }
        routes.delete("callees", ":number") { request async -> Response in
            let number = Self.normalized(request.parameters.get("number") ?? "")
            self.resetBehavior(for: number)
            return SandboxJSON.response(
                CalleeSettings(number: number, behavior: self.defaultBehavior, talkSeconds: nil, callbacks: true, script: CalleeScript()))
        }
        routes.get("calls") { _ async -> Response in
            SandboxJSON.response(CallList(calls: self.calls()))
        }
        routes.get("calls", ":call_sid", "media-stream") { request async -> Response in
            guard let sid = request.parameters.get("call_sid"), let stats = self.mediaStream(sid: sid) else {
                return SandboxJSON.detail("No call with a media stream has this sid.", status: .notFound)
            }
            return SandboxJSON.response(stats)
        }
        routes.get("calls", ":call_sid", "recording.wav") { request async -> Response in
            guard let sid = request.parameters.get("call_sid"), let recording = self.recording(sid: sid) else {
                return SandboxJSON.detail("No call with a media stream has this sid.", status: .notFound)
            }
            var headers = HTTPHeaders()
            headers.replaceOrAdd(name: .contentType, value: "audio/wav")
            headers.replaceOrAdd(name: .cacheControl, value: "no-store")
            return Response(
                status: .ok, headers: headers,
                body: .init(data: WAVSplicer.encode(PCM16Audio(samples: MuLaw.decode(recording), sampleRate: MuLaw.sampleRate))))
        }
    }

    // MARK: - Calls API

    private func createCall(_ request: Request) -> Response {
        if let failure = authenticate(request) { return failure }
        let form = TwilioFormEncoding.decode(request.body.string ?? "")
        func value(_ name: String) -> String? {
            guard let found = form.first(where: { $0.0 == name })?.1.trimmingCharacters(in: .whitespaces), !found.isEmpty
            else { return nil }
            return found
        }
        guard let to = value("To") else {
            return Self.twilioError(.badRequest, code: 21201, message: "No 'To' number is specified")
        }
        guard let from = value("From") else {
            return Self.twilioError(.badRequest, code: 21213, message: "No 'From' number is specified")
        }
        guard Self.isE164(to) else {
            return Self.twilioError(.badRequest, code: 21211, message: "The 'To' number \(to) is not a valid phone number.")
        }
        guard Self.isE164(from) else {
            return Self.twilioError(
                .badRequest, code: 21212,
                message: "The 'From' number \(from) is not a valid phone number, shortcode, or alphanumeric sender ID."
            )
        }
        guard let url = value("Url") else {
            return Self.twilioError(.badRequest, code: 21205, message: "Url parameter is required.")
        }
        guard Self.isHTTPURL(url) else {
            return Self.twilioError(.badRequest, code: 21205, message: "Url is not a valid URL: \(url)")
        }
        let statusCallback = value("StatusCallback")
        if let statusCallback, !Self.isHTTPURL(statusCallback) {
            return Self.twilioError(.badRequest, code: 21609, message: "StatusCallback is not a valid URL: \(statusCallback)")
        }
        let method = value("StatusCallbackMethod")?.uppercased() ?? "POST"
        guard method == "POST" || method == "GET" else {
            return Self.twilioError(.badRequest, code: 21210, message: "StatusCallbackMethod must be GET or POST")
        }
        let twimlMethod = value("Method")?.uppercased() ?? "POST"
        guard twimlMethod == "POST" || twimlMethod == "GET" else {
            return Self.twilioError(.badRequest, code: 21210, message: "Method must be GET or POST")
        }
        var events: Set<String> = ["completed"]
        for (name, raw) in form where name == "StatusCallbackEvent" {
            events.formUnion(raw.split(separator: " ").map { String($0).lowercased() })
        }
        let detection: MachineDetection?
        switch MachineDetection.parse(value) {
        case .success(let parsed): detection = parsed
        case .failure(let error): return Self.twilioError(.badRequest, code: 21210, message: error.message)
        }
        if let callback = detection?.callback, !Self.isHTTPURL(callback) {
            return Self.twilioError(.badRequest, code: 21609, message: "AsyncAmdStatusCallback is not a valid URL: \(callback)")
        }
        let timeLimit = value("TimeLimit").flatMap(Int.init).map { min(max(1, $0), 86_400) } ?? 14_400
        let ringTimeout = value("Timeout").flatMap(Int.init).map { min(max(1, $0), 600) } ?? 60

        let now = Date()
        let sid = Self.makeCallSID()
        let (outbox, continuation) = AsyncStream.makeStream(of: PendingCallback.self)
        let call = state.withLockedValue { state -> CallState in
            let callee = state.callees[Self.normalized(to)]
            let talk = callee?.talkSeconds.map(Double.init) ?? Self.seconds(timing.talkDuration)
            var call = CallState(
                sid: sid, accountSID: accountSID, to: to, from: from, url: url, statusCallback: statusCallback,
                statusCallbackMethod: method, events: events, timeLimit: timeLimit, ringTimeout: ringTimeout,
                behavior: callee?.behavior ?? defaultBehavior, talkSeconds: min(talk, Double(timeLimit)),
                dateCreated: now, outbox: continuation
            )
            call.twimlMethod = twimlMethod
            call.machineDetection = detection
            call.script = callee?.script ?? CalleeScript()
            state.calls[sid] = call
            state.order.append(sid)
            return call
        }
        logger.debug("sandbox.twilio.call created", metadata: ["call_sid": "\(sid)", "to": "\(PhoneNumberMask.mask(to))"])
        let sendsCallbacks = state.withLockedValue { $0.callees[Self.normalized(to)]?.sendsCallbacks ?? true }
        let delivery = Task { [self] in
            for await callback in outbox where sendsCallbacks {
                await deliver(callback, callSID: sid)
            }
        }
        let (behavior, talkSeconds) = (call.behavior, call.talkSeconds)
        let lifecycle = Task { [self] in
            await runLifecycle(sid: sid, behavior: behavior, talkSeconds: talkSeconds, ringTimeout: ringTimeout)
            lifecycleFinished(sid)
        }
        state.withLockedValue { state in
            state.calls[sid]?.delivery = delivery
            state.calls[sid]?.lifecycle = lifecycle
        }
        return SandboxJSON.response(call.resource, status: .created)
    }

    private func updateCall(_ request: Request) -> Response {
        if let failure = authenticate(request) { return failure }
        guard let sid = Self.callSID(request) else { return notFound(request) }
        let form = TwilioFormEncoding.decode(request.body.string ?? "")
        let requested = form.first { $0.0 == "Status" }?.1.lowercased()
        if let requested, requested != "completed", requested != "canceled" {
            return Self.twilioError(.badRequest, code: 21218, message: "Invalid Status: \(requested)")
        }
        enum Outcome { case missing, alreadyEnded, unchanged(CallState), hungUp(CallState, Task<Void, Never>?) }
        let now = Date()
        let outcome = state.withLockedValue { state -> Outcome in
            guard var call = state.calls[sid] else { return .missing }
            guard !call.isEnded else { return .alreadyEnded }
            guard let requested else { return .unchanged(call) }
            let terminal: String
            let duration: Int
            var lifecycle = call.lifecycle
            if call.status == "in-progress" {
                guard requested == "completed" else { return .unchanged(call) }
                terminal = "completed"
                if let stream = call.stream {
                    // Media is real time: the call's time is wall-clock time. Its task sends `stop` and closes.
                    let elapsed = call.answeredAt.map { Self.seconds(ContinuousClock.now - $0) } ?? 0
                    duration = min(Int(elapsed.rounded(.up)), call.timeLimit)
                    stream.requestEnd(.restHangup)
                    lifecycle = nil
                } else {
                    let elapsed = call.answeredAt.map { Self.seconds(ContinuousClock.now - $0) / timing.timeScale } ?? 0
                    duration = Int(min(elapsed, call.talkSeconds).rounded(.up))
                    call.lifecycle = nil
                }
            } else {
                terminal = "canceled"
                duration = 0
                call.lifecycle = nil
            }
            call.endedBy = "rest_hangup"
            call.transition(to: terminal, event: "completed", at: now, duration: duration, signer: validator)
            state.calls[sid] = call
            return .hungUp(call, lifecycle)
        }
        switch outcome {
        case .missing:
            return notFound(request)
        case .alreadyEnded:
            return Self.twilioError(.badRequest, code: 21220, message: "Call is not in-progress. Cannot redirect.")
        case .unchanged(let call):
            return SandboxJSON.response(call.resource)
        case .hungUp(let call, let lifecycle):
            lifecycle?.cancel()
            return SandboxJSON.response(call.resource)
        }
    }

    private func fetchCall(_ request: Request) -> Response {
        if let failure = authenticate(request) { return failure }
        guard let sid = Self.callSID(request), let call = state.withLockedValue({ $0.calls[sid] }) else {
            return notFound(request)
        }
        return SandboxJSON.response(call.resource)
    }

    private func configureCallee(_ request: Request) -> Response {
        let number = Self.normalized(request.parameters.get("number") ?? "")
        guard !number.isEmpty else { return SandboxJSON.detail("A callee number is required.", status: .badRequest) }
        let settings: CalleeSettingsBody
        do {
            settings = try JSONDecoder().decode(CalleeSettingsBody.self, from: Data((request.body.string ?? "").utf8))
        } catch {
            return SandboxJSON.detail(
                "Body must be {\"behavior\": \"answer|no-answer|busy|failed|voicemail|fax\", \"talk_seconds\": n, \"callbacks\": bool, "
                    + "\"lines\": [text], \"first_line_after_ms\": n, \"reply_after_ms\": n, \"hangup_after_seconds\": n, "
                    + "\"interrupt_after_ms\": n, \"beep\": bool, \"press_key\": \"9\", \"press_key_after_ms\": n} (every member optional).",
                status: .badRequest)
        }
        // At most a day: the values become durations and deadlines (`hangup_after_seconds: 1e300` trapped converting).
        let numbers: [(String, Double?, Double)] = [
            ("talk_seconds", settings.talkSeconds.map(Double.init), 86_400),
            ("first_line_after_ms", settings.firstLineAfterMs.map(Double.init), 86_400_000),
            ("reply_after_ms", settings.replyAfterMs.map(Double.init), 86_400_000),
            ("hangup_after_seconds", settings.hangupAfterSeconds, 86_400),
            ("interrupt_after_ms", settings.interruptAfterMs.map(Double.init), 86_400_000),
            ("press_key_after_ms", settings.pressKeyAfterMs.map(Double.init), 86_400_000),
        ]
        for (name, number, limit) in numbers {
            guard let number else { continue }
            if !(number >= 0 && number <= limit) {
                return SandboxJSON.detail("\(name) must be between 0 and \(Int(limit)).", status: .badRequest)
            }
        }
        if let key = settings.pressKey, key.count != 1 || !"0123456789*#".contains(key) {
            return SandboxJSON.detail("press_key must be one of 0-9, * and #.", status: .badRequest)
        }
        let behavior = settings.behavior ?? defaultBehavior
        let script = CalleeScript(
            lines: settings.lines, firstLineAfterMs: settings.firstLineAfterMs, replyAfterMs: settings.replyAfterMs,
            hangupAfterSeconds: settings.hangupAfterSeconds, interruptAfterMs: settings.interruptAfterMs, beep: settings.beep,
            pressKey: settings.pressKey, pressKeyAfterMs: settings.pressKeyAfterMs
        )
        let callbacks = settings.callbacks ?? true
        setBehavior(behavior, for: number, talkSeconds: settings.talkSeconds, sendsCallbacks: callbacks, script: script)
        return SandboxJSON.response(
            CalleeSettings(number: number, behavior: behavior, talkSeconds: settings.talkSeconds, callbacks: callbacks, script: script))
    }

    // MARK: - Lifecycle

    private func runLifecycle(sid: String, behavior: CalleeBehavior, talkSeconds: Double, ringTimeout: Int) async {
        guard advance(sid, callStatus: "initiated", event: "initiated") else { return }
        if behavior != .fail {
            guard advance(sid, callStatus: "ringing", event: "ringing") else { return }
        }
        let ring = Self.seconds(timing.ringDelay)
        switch behavior {
        case .answer where ring < Double(ringTimeout), .voicemail where ring < Double(ringTimeout), .fax where ring < Double(ringTimeout):
            guard await sleep(simulated: ring), advance(sid, callStatus: "in-progress", event: "answered") else { return }
            await runAnsweredCall(sid: sid, talkSeconds: talkSeconds)
        case .answer, .noAnswer, .voicemail, .fax:
            guard await sleep(simulated: Double(ringTimeout)) else { return }
            _ = advance(sid, callStatus: "no-answer", event: "completed", duration: 0)
        case .busy:
            guard await sleep(simulated: ring) else { return }
            _ = advance(sid, callStatus: "busy", event: "completed", duration: 0)
        case .fail:
            guard await sleep(simulated: ring) else { return }
            _ = advance(sid, callStatus: "failed", event: "completed", duration: 0)
        }
    }

    /// Moves a call to `callStatus` and queues the matching callback; `false` if the call had already ended.
    /// `endedBy` and `error` are recorded when the call ends.
    func advance(
        _ sid: String, callStatus: String, event: String, duration: Int? = nil, endedBy: String? = nil, error: String? = nil
    ) -> Bool {
        let now = Date()
        return state.withLockedValue { state in
            guard var call = state.calls[sid], !call.isEnded else { return false }
            if CallState.terminalStatuses.contains(callStatus) {
                call.endedBy = endedBy
                call.twimlError = error
            }
            call.transition(to: callStatus, event: event, at: now, duration: duration, signer: validator)
            if callStatus == "in-progress" { call.answeredAt = .now }
            if call.isEnded { call.lifecycle = nil }
            state.calls[sid] = call
            return true
        }
    }

    /// Marks the call's task as finished, wakes those waiting for the call to end, and forgets the oldest ended calls
    /// beyond the ``retention``.
    private func lifecycleFinished(_ sid: String) {
        // The call's audio is counted once and for all: no later frame adds to it, and one call alone keeps at most
        // the whole cap (the newest call is always kept, so its audio is cut to fit rather than exceed the cap).
        let audioBytes = state.withLockedValue { $0.calls[sid]?.stream }?.sealKeptAudio(limit: retention.audioBytes) ?? 0
        let (waiters, record) = state.withLockedValue { state -> ([CheckedContinuation<SandboxCallRecord?, Never>], SandboxCallRecord?) in
            let waiters = state.waiters.removeValue(forKey: sid).map { Array($0.values) } ?? []
            guard state.calls[sid] != nil else { return (waiters, nil) }
            state.calls[sid]?.finished = true
            state.calls[sid]?.lifecycle = nil
            let record = state.calls[sid]?.record
            state.ended.append((sid, audioBytes))
            state.endedAudioBytes += audioBytes
            var forgotten: Set<String> = []
            while state.ended.count > retention.endedCalls || (state.endedAudioBytes > retention.audioBytes && state.ended.count > 1) {
                let oldest = state.ended.removeFirst()
                state.endedAudioBytes -= oldest.audioBytes
                state.calls[oldest.sid] = nil
                forgotten.insert(oldest.sid)
            }
            if !forgotten.isEmpty { state.order.removeAll { forgotten.contains($0) } }
            return (waiters, record)
        }
        waiters.forEach { $0.resume(returning: record) }
    }

    func sleep(simulated seconds: Double) async -> Bool {
        let nanoseconds = max(0, seconds * timing.timeScale * 1_000_000_000)
        do {
            try await Task.sleep(for: .nanoseconds(Int64(clampingRounded: nanoseconds)))
            return true
        } catch {
            return false
        }
    }

    // MARK: - Callback delivery

    private func deliver(_ callback: PendingCallback, callSID: String) async {
        var request: HTTPClientRequest
        let signature: String
        if callback.method == "GET" {
            let separator = callback.url.contains("?") ? "&" : "?"
            let url = callback.url + separator + TwilioFormEncoding.encode(callback.parameters)
            request = HTTPClientRequest(url: url)
            request.method = .GET
            signature = validator.signature(url: url, parameters: [])
        } else {
            request = HTTPClientRequest(url: callback.url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: TwilioFormEncoding.encode(callback.parameters)))
            signature = validator.signature(url: callback.url, parameters: callback.parameters)
        }
        request.headers.add(name: "X-Twilio-Signature", value: signature)
        request.headers.add(name: "User-Agent", value: "TwilioProxy/1.1")
        request.headers.add(name: "I-Twilio-Idempotency-Token", value: UUID().uuidString.lowercased())

        var delivery = SandboxCallbackDelivery(
            sequenceNumber: callback.sequenceNumber, callStatus: callback.callStatus, url: callback.url,
            delivered: false, httpStatus: nil, error: nil, sentAt: Date()
        )
        do {
            let response = try await httpClient.execute(request, timeout: .seconds(10))
            _ = try? await response.body.collect(upTo: 1 << 20)
            delivery.httpStatus = Int(response.status.code)
            delivery.delivered = (200..<300).contains(Int(response.status.code))
            if !delivery.delivered { delivery.error = "HTTP \(response.status.code)" }
        } catch {
            delivery.error = "\(error)"
        }
        if !delivery.delivered {
            logger.warning(
                "sandbox.twilio.callback failed",
                metadata: ["call_sid": "\(callSID)", "status": "\(callback.callStatus)", "error": "\(delivery.error ?? "")"]
            )
        }
        state.withLockedValue { $0.calls[callSID]?.deliveries.append(delivery) }
    }

    // MARK: - Helpers

    private func authenticate(_ request: Request) -> Response? {
        guard let basic = request.headers.basicAuthorization,
            basic.username == accountSID,
            ConstantTime.equals(basic.password, authToken),
            request.parameters.get("accountSid") == accountSID
        else {
            return Self.twilioError(.unauthorized, code: 20003, message: "Authenticate")
        }
        return nil
    }

    private func notFound(_ request: Request) -> Response {
        Self.twilioError(.notFound, code: 20404, message: "The requested resource \(request.url.path) was not found")
    }

    static func twilioError(_ status: HTTPResponseStatus, code: Int, message: String) -> Response {
        let body = TwilioErrorBody(
            code: code, message: message, moreInfo: "https://www.twilio.com/docs/errors/\(code)", status: Int(status.code)
        )
        return SandboxJSON.response(body, status: status)
    }

    private static func callSID(_ request: Request) -> String? {
        guard let file = request.parameters.get("callFile"), file.hasSuffix(".json") else { return nil }
        return String(file.dropLast(5))
    }

    static func normalized(_ number: String) -> String {
        (number.removingPercentEncoding ?? number).trimmingCharacters(in: .whitespaces)
    }

    static func isE164(_ number: String) -> Bool {
        let digits = number.utf8.dropFirst()
        return number.hasPrefix("+") && (2...15).contains(digits.count)
            && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } && digits.first != UInt8(ascii: "0")
    }

    private static func isHTTPURL(_ text: String) -> Bool {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else { return false }
        return (scheme == "http" || scheme == "https") && !(components.host ?? "").isEmpty
    }

    private static func makeCallSID() -> String {
        let uuid = UUID().uuid
        let bytes = [
            uuid.0, uuid.1, uuid.2, uuid.3, uuid.4, uuid.5, uuid.6, uuid.7,
            uuid.8, uuid.9, uuid.10, uuid.11, uuid.12, uuid.13, uuid.14, uuid.15,
        ]
        return "CA" + bytes.map { String(format: "%02x", $0) }.joined()
    }

    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

}

// MARK: - State

extension SandboxTwilio {
    struct State {
        var calls: [String: CallState] = [:]
        var order: [String] = []
        var callees: [String: CalleeOverride] = [:]
        var waiters: [String: [UUID: CheckedContinuation<SandboxCallRecord?, Never>]] = [:]
        var cancelledWaiters: Set<UUID> = []
        /// Ended calls (their task finished), oldest first, with the bytes of audio each keeps.
        var ended = CircularBuffer<(sid: String, audioBytes: Int)>()
        var endedAudioBytes = 0
    }

    struct CalleeOverride {
        var behavior: CalleeBehavior
        var talkSeconds: Int?
        /// `false` simulates status callbacks that never reach the application (lost in transit).
        var sendsCallbacks = true
        var script = CalleeScript()
    }

    struct PendingCallback: Sendable {
        let sequenceNumber: Int
        let callStatus: String
        let url: String
        let method: String
        let parameters: [(String, String)]
    }

    struct CallState {
        static let terminalStatuses: Set<String> = ["completed", "busy", "failed", "no-answer", "canceled"]

        let sid: String
        let accountSID: String
        let to: String
        let from: String
        let url: String
        let statusCallback: String?
        let statusCallbackMethod: String
        let events: Set<String>
        let timeLimit: Int
        let ringTimeout: Int
        let behavior: CalleeBehavior
        let talkSeconds: Double
        let dateCreated: Date
        var outbox: AsyncStream<PendingCallback>.Continuation
        var status = "queued"
        var dateUpdated: Date
        var startTime: Date?
        var endTime: Date?
        var duration: Int?
        var answeredAt: ContinuousClock.Instant?
        var nextSequenceNumber = 0
        var history: [SandboxCallStatusChange] = []
        var deliveries: [SandboxCallbackDelivery] = []
        var lifecycle: Task<Void, Never>?
        var delivery: Task<Void, Never>?
        /// `GET` or `POST` for the TwiML `Url`.
        var twimlMethod = "POST"
        var script = CalleeScript()
        var stream: MediaStreamSession?
        var endedBy: String?
        var twimlError: String?
        /// The answering-machine detection the call asked for, what it reported, and the receiver's HTTP status.
        var machineDetection: MachineDetection?
        var answeredBy: String?
        var machineDetectionStatus: Int?
        /// The call's task has returned (its stream, if any, is closed).
        var finished = false

        init(
            sid: String, accountSID: String, to: String, from: String, url: String, statusCallback: String?,
            statusCallbackMethod: String, events: Set<String>, timeLimit: Int, ringTimeout: Int,
            behavior: CalleeBehavior, talkSeconds: Double, dateCreated: Date,
            outbox: AsyncStream<PendingCallback>.Continuation
        ) {
            self.sid = sid
            self.accountSID = accountSID
            self.to = to
            self.from = from
            self.url = url
            self.statusCallback = statusCallback
            self.statusCallbackMethod = statusCallbackMethod
            self.events = events
            self.timeLimit = timeLimit
            self.ringTimeout = ringTimeout
            self.behavior = behavior
            self.talkSeconds = talkSeconds
            self.dateCreated = dateCreated
            self.dateUpdated = dateCreated
            self.outbox = outbox
            self.history = [SandboxCallStatusChange(status: "queued", at: dateCreated)]
        }

        var isEnded: Bool { Self.terminalStatuses.contains(status) }

        /// Records a status change and queues its callback when the event was requested.
        /// `initiated` is reported in callbacks and history while the resource stays `queued`, as on Twilio.
        mutating func transition(to callStatus: String, event: String, at now: Date, duration: Int?, signer: TwilioRequestValidator) {
            if callStatus != "initiated" { status = callStatus }
            if callStatus == "initiated" { startTime = now }
            dateUpdated = now
            history.append(SandboxCallStatusChange(status: callStatus, at: now))
            if isEnded {
                endTime = now
                self.duration = duration ?? 0
            }
            if events.contains(event), let statusCallback {
                var parameters: [(String, String)] = [
                    ("AccountSid", accountSID),
                    ("ApiVersion", "2010-04-01"),
                    ("CallSid", sid),
                    ("CallStatus", callStatus),
                    ("CallbackSource", "call-progress-events"),
                    ("Called", to),
                    ("Caller", from),
                    ("Direction", "outbound-api"),
                    ("From", from),
                    ("SequenceNumber", String(nextSequenceNumber)),
                    ("Timestamp", RFC2822.string(from: now)),
                    ("To", to),
                ]
                if isEnded {
                    let seconds = self.duration ?? 0
                    parameters.append(("CallDuration", String(seconds)))
                    parameters.append(("Duration", String((seconds + 59) / 60)))
                }
                outbox.yield(
                    PendingCallback(
                        sequenceNumber: nextSequenceNumber, callStatus: callStatus, url: statusCallback,
                        method: statusCallbackMethod, parameters: parameters
                    )
                )
                nextSequenceNumber += 1
            }
            if isEnded { outbox.finish() }
        }

        var record: SandboxCallRecord {
            let media = stream?.statistics()
            return SandboxCallRecord(
                sid: sid, to: to, from: from, status: status, behavior: behavior, url: url,
                statusCallback: statusCallback, statusCallbackEvents: events.sorted(), timeLimit: timeLimit,
                timeout: ringTimeout, duration: duration, history: history, callbacks: deliveries,
                endedBy: endedBy, twimlError: twimlError, streamSid: media?.streamSid, streamURL: media?.streamURL,
                customParameters: media?.customParameters, framesSent: media?.framesSent, mediaFramesSent: media?.mediaFramesSent,
                mediaFramesReceived: media?.mediaFramesReceived, marksReceived: media?.marksReceived,
                marksEchoed: media?.marksEchoed, clearsReceived: media?.clearsReceived, aiAudioPlayedMs: media?.aiAudioPlayedMs,
                answeredBy: answeredBy, machineDetectionHTTPStatus: machineDetectionStatus
            )
        }

        var resource: CallResource {
            CallResource(
                sid: sid, accountSID: accountSID, to: to, from: from, status: status, dateCreated: dateCreated,
                dateUpdated: dateUpdated, startTime: startTime, endTime: endTime, duration: duration, answeredBy: answeredBy
            )
        }
    }
}

// MARK: - Wire types

/// One status a sandbox call went through.
public struct SandboxCallStatusChange: Sendable, Codable, Equatable {
    /// The Twilio call status (`queued`, `initiated`, `ringing`, `in-progress`, `completed`, ...).
    public let status: String
    /// When the call reached it.
    public let at: Date

    enum CodingKeys: String, CodingKey {
        case status
        case at
    }
}

/// One status callback the sandbox tried to deliver.
public struct SandboxCallbackDelivery: Sendable, Codable, Equatable {
    /// The callback's `SequenceNumber`.
    public let sequenceNumber: Int
    /// The callback's `CallStatus`.
    public let callStatus: String
    /// Where it was sent.
    public let url: String
    /// Whether the receiver answered 2xx.
    public var delivered: Bool
    /// The receiver's HTTP status, if it answered.
    public var httpStatus: Int?
    /// Why delivery failed, if it did.
    public var error: String?
    /// When it was sent.
    public let sentAt: Date

    enum CodingKeys: String, CodingKey {
        case sequenceNumber = "sequence_number"
        case callStatus = "call_status"
        case url
        case delivered
        case httpStatus = "http_status"
        case error
        case sentAt = "sent_at"
    }
}

/// A sandbox call as listed by `GET /calls`.
public struct SandboxCallRecord: Sendable, Codable, Equatable {
    /// The Call SID.
    public let sid: String
    /// The callee.
    public let to: String
    /// The caller id.
    public let from: String
    /// The current Twilio call status.
    public let status: String
    /// How the simulated callee behaved.
    public let behavior: SandboxTwilio.CalleeBehavior
    /// The TwiML `Url` given at creation.
    public let url: String
    /// The `StatusCallback` given at creation.
    public let statusCallback: String?
    /// The events reported to `statusCallback` (`completed` is always included).
    public let statusCallbackEvents: [String]
    /// The `TimeLimit` in seconds.
    public let timeLimit: Int
    /// The ring `Timeout` in seconds.
    public let timeout: Int
    /// The call's duration in simulated seconds, once it has ended.
    public let duration: Int?
    /// Every status the call went through, in order.
    public let history: [SandboxCallStatusChange]
    /// Every status callback delivery attempted, in order.
    public let callbacks: [SandboxCallbackDelivery]
    /// Why an answered call ended: `server_closed_stream`, `rest_hangup`, `time_limit`, `callee_hangup`, `twiml_error`,
    /// `stream_connect_failed`, `twiml_ended` (a call without a stream ran its talk time) or `shutdown`.
    public let endedBy: String?
    /// Why the call's TwiML could not be used (`11200: HTTP retrieval failure ...`, `12100: Document parse failure
    /// ...`, `31920: Stream - WebSocket - Handshake Error ...`).
    public let twimlError: String?
    /// The Media Stream's `streamSid`, if the TwiML connected one.
    public let streamSid: String?
    /// The `<Stream url>`.
    public let streamURL: String?
    /// The `<Parameter>`s sent in `start.customParameters`.
    public let customParameters: [String: String]?
    /// Frames sent on the stream (`connected`, `start`, `media`, `mark`, `stop`).
    public let framesSent: Int?
    /// `media` frames sent (the callee's microphone, one per 20 ms).
    public let mediaFramesSent: Int?
    /// `media` frames received from the application.
    public let mediaFramesReceived: Int?
    /// `mark` frames the application sent.
    public let marksReceived: Int?
    /// Marks echoed back to the application.
    public let marksEchoed: Int?
    /// `clear` frames the application sent.
    public let clearsReceived: Int?
    /// Milliseconds of the application's audio actually played.
    public let aiAudioPlayedMs: Int?
    /// What answering-machine detection reported (`human`, `machine_end_beep`, `fax`, …), when the call asked for it.
    public var answeredBy: String? = nil
    /// The HTTP status the application answered to the detection callback.
    public var machineDetectionHTTPStatus: Int? = nil

    enum CodingKeys: String, CodingKey {
        case sid
        case to
        case from
        case status
        case behavior
        case url
        case statusCallback = "status_callback"
        case statusCallbackEvents = "status_callback_events"
        case timeLimit = "time_limit"
        case timeout
        case duration
        case history
        case callbacks
        case endedBy = "ended_by"
        case twimlError = "twiml_error"
        case streamSid = "stream_sid"
        case streamURL = "stream_url"
        case customParameters = "custom_parameters"
        case framesSent = "frames_sent"
        case mediaFramesSent = "media_frames_sent"
        case mediaFramesReceived = "media_frames_received"
        case marksReceived = "marks_received"
        case marksEchoed = "marks_echoed"
        case clearsReceived = "clears_received"
        case aiAudioPlayedMs = "ai_audio_played_ms"
        case answeredBy = "answered_by"
        case machineDetectionHTTPStatus = "machine_detection_http_status"
    }
}

struct CallList: Encodable {
    let calls: [SandboxCallRecord]

    enum CodingKeys: String, CodingKey {
        case calls
    }
}

/// `PUT /callees/:number`; every member is optional.
struct CalleeSettingsBody: Decodable {
    /// Default: the emulator's default behaviour.
    let behavior: SandboxTwilio.CalleeBehavior?
    let talkSeconds: Int?
    /// `false`: the call's status callbacks are dropped (default `true`).
    let callbacks: Bool?
    let lines: [String]?
    let firstLineAfterMs: Int?
    let replyAfterMs: Int?
    let hangupAfterSeconds: Double?
    let interruptAfterMs: Int?
    let beep: Bool?
    let pressKey: String?
    let pressKeyAfterMs: Int?

    enum CodingKeys: String, CodingKey {
        case behavior
        case talkSeconds = "talk_seconds"
        case callbacks
        case lines
        case firstLineAfterMs = "first_line_after_ms"
        case replyAfterMs = "reply_after_ms"
        case hangupAfterSeconds = "hangup_after_seconds"
        case interruptAfterMs = "interrupt_after_ms"
        case beep
        case pressKey = "press_key"
        case pressKeyAfterMs = "press_key_after_ms"
    }
}

struct CalleeSettings: Encodable {
    let number: String
    let behavior: SandboxTwilio.CalleeBehavior
    let talkSeconds: Int?
    let callbacks: Bool
    let script: SandboxTwilio.CalleeScript

    enum CodingKeys: String, CodingKey {
        case number
        case behavior
        case talkSeconds = "talk_seconds"
        case callbacks
        case lines
        case firstLineAfterMs = "first_line_after_ms"
        case replyAfterMs = "reply_after_ms"
        case hangupAfterSeconds = "hangup_after_seconds"
        case interruptAfterMs = "interrupt_after_ms"
        case beep
        case pressKey = "press_key"
        case pressKeyAfterMs = "press_key_after_ms"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(number, forKey: .number)
        try container.encode(behavior, forKey: .behavior)
        try container.encode(talkSeconds, forKey: .talkSeconds)
        try container.encode(callbacks, forKey: .callbacks)
        try container.encode(script.lines, forKey: .lines)
        try container.encode(script.firstLineAfterMs, forKey: .firstLineAfterMs)
        try container.encode(script.replyAfterMs, forKey: .replyAfterMs)
        try container.encode(script.hangupAfterSeconds, forKey: .hangupAfterSeconds)
        try container.encode(script.interruptAfterMs, forKey: .interruptAfterMs)
        try container.encode(script.beep, forKey: .beep)
        try container.encode(script.pressKey, forKey: .pressKey)
        try container.encode(script.pressKeyAfterMs, forKey: .pressKeyAfterMs)
    }
}

/// Twilio's REST error body.
struct TwilioErrorBody: Encodable {
    let code: Int
    let message: String
    let moreInfo: String
    let status: Int

    enum CodingKeys: String, CodingKey {
        case code
        case message
        case moreInfo = "more_info"
        case status
    }
}

/// Twilio's call resource, with every field of the `api.v2010.account.call` schema (absent values are `null`).
struct CallResource: Encodable {
    let sid: String
    let accountSID: String
    let to: String
    let from: String
    let status: String
    let dateCreated: Date
    let dateUpdated: Date
    let startTime: Date?
    let endTime: Date?
    let duration: Int?
    var answeredBy: String? = nil

    enum CodingKeys: String, CodingKey {
        case sid
        case dateCreated = "date_created"
        case dateUpdated = "date_updated"
        case parentCallSID = "parent_call_sid"
        case accountSID = "account_sid"
        case to
        case toFormatted = "to_formatted"
        case from
        case fromFormatted = "from_formatted"
        case phoneNumberSID = "phone_number_sid"
        case status
        case startTime = "start_time"
        case endTime = "end_time"
        case duration
        case price
        case priceUnit = "price_unit"
        case direction
        case answeredBy = "answered_by"
        case apiVersion = "api_version"
        case forwardedFrom = "forwarded_from"
        case groupSID = "group_sid"
        case callerName = "caller_name"
        case queueTime = "queue_time"
        case trunkSID = "trunk_sid"
        case uri
        case subresourceURIs = "subresource_uris"
    }

    func encode(to encoder: any Encoder) throws {
        let none: String? = nil
        let base = "/2010-04-01/Accounts/\(accountSID)/Calls/\(sid)"
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sid, forKey: .sid)
        try container.encode(RFC2822.string(from: dateCreated), forKey: .dateCreated)
        try container.encode(RFC2822.string(from: dateUpdated), forKey: .dateUpdated)
        try container.encode(none, forKey: .parentCallSID)
        try container.encode(accountSID, forKey: .accountSID)
        try container.encode(to, forKey: .to)
        try container.encode(Self.formatted(to), forKey: .toFormatted)
        try container.encode(from, forKey: .from)
        try container.encode(Self.formatted(from), forKey: .fromFormatted)
        try container.encode(none, forKey: .phoneNumberSID)
        try container.encode(status, forKey: .status)
        try container.encode(startTime.map(RFC2822.string(from:)), forKey: .startTime)
        try container.encode(endTime.map(RFC2822.string(from:)), forKey: .endTime)
        try container.encode(duration.map(String.init), forKey: .duration)
        try container.encode(none, forKey: .price)
        try container.encode("USD", forKey: .priceUnit)
        try container.encode("outbound-api", forKey: .direction)
        try container.encode(answeredBy, forKey: .answeredBy)
        try container.encode("2010-04-01", forKey: .apiVersion)
        try container.encode(none, forKey: .forwardedFrom)
        try container.encode(none, forKey: .groupSID)
        try container.encode(none, forKey: .callerName)
        try container.encode("0", forKey: .queueTime)
        try container.encode(none, forKey: .trunkSID)
        try container.encode(base + ".json", forKey: .uri)
        let subresources = ["notifications", "recordings", "payments", "events", "siprec", "streams", "transcriptions"]
        let uris = Dictionary(
            uniqueKeysWithValues: subresources.map { name in
                (name, "\(base)/\(name.prefix(1).uppercased() + name.dropFirst()).json")
            })
        try container.encode(uris, forKey: .subresourceURIs)
    }

    /// `(415) 867-5309` for North American numbers, the number itself otherwise.
    static func formatted(_ number: String) -> String {
        let digits = Array(number.dropFirst(2))
        guard number.hasPrefix("+1"), digits.count == 10 else { return number }
        return "(\(String(digits[0..<3]))) \(String(digits[3..<6]))-\(String(digits[6..<10]))"
    }
}
