import ChorusCore
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Vapor

/// A local emulator of the OpenAI Realtime API (GA WebSocket protocol, `wss://api.openai.com/v1/realtime?model=…`).
///
/// Each WebSocket is one session. It speaks the GA events of the official spec (`RealtimeClientEvent` in,
/// `RealtimeServerEvent` out): `session.created` with the GA defaults, validated `session.update`,
/// `input_audio_buffer.append|commit|clear` with an energy-based server VAD, `conversation.item.*`
/// (create, retrieve, delete, truncate), `response.create|cancel`, and `error` events for invalid requests.
/// Replies are the configured ``Behavior/replyLines`` spoken by ``SandboxSpeech`` and streamed as
/// `response.output_audio.delta` faster than real time. Everything is deterministic except ids.
///
/// **Turn detection.** Input audio is analysed in 20 ms windows. A window is speech when its RMS level
/// (``MuLaw/rms(_:)`` for `audio/pcmu`) reaches ``vadLevel(threshold:)``: `turn_detection.threshold` 0…1 maps
/// linearly onto −60…−10 dBFS, so the default 0.5 is −35 dBFS (RMS ≈ 583 of 32,767). Speech starts after three
/// consecutive speech windows (60 ms); `audio_start_ms` is the first of them minus `prefix_padding_ms` (never below
/// 0). Speech stops after `silence_duration_ms` of non-speech windows; `audio_end_ms` is the end of that silence.
/// `semantic_vad` runs the same detector with a silence of 1,500 / 800 / 400 ms for eagerness low / medium (auto) /
/// high. `idle_timeout_ms` is accepted but not emulated.
///
/// **Pacing.** After `response.create` the first audio delta follows ``Behavior/firstAudioDelayMs``; then one delta of
/// ``Behavior/chunkMs`` of audio is sent every `chunkMs / speed` milliseconds, with the transcript deltas spread over
/// them in proportion. One timer per session paces everything; a client close cancels it, and ``shutdown()`` closes
/// every session.
///
/// Mount with ``register(on:)`` (the socket) and ``registerControl(on:)`` (behavior and session inspection).
public final class SandboxRealtime: Sendable {
    /// How an injected failure ends a session.
    public enum Failure: String, Codable, Sendable {
        /// An `error` event of type `server_error`, then a close with code 1011.
        case error
        /// A close with code 1011 and no event.
        case close
    }

    /// What the emulated model says and how fast, plus fault injection. Read when a session connects: changes apply to
    /// sessions connecting afterwards.
    public struct Behavior: Sendable, Codable, Equatable {
        /// Delay between `response.create` (or the end of the caller's turn) and the first audio delta, in wall-clock
        /// milliseconds. Default 250.
        public var firstAudioDelayMs: Int
        /// How many times faster than real time audio is generated. Default 4.
        public var speed: Double
        /// Milliseconds of audio in each `response.output_audio.delta`. Default 100.
        public var chunkMs: Int
        /// How many times faster than real time a text is read aloud (a session without turn detection answering a
        /// user `input_text` message: speech synthesis, where nobody listens live). Default 100.
        public var readingSpeed: Double
        /// What the model says: response *n* of a session speaks line *n* (cycling), so the first line is the greeting.
        public var replyLines: [String]
        /// Transcripts of the caller's turns, in order, when input transcription is on; afterwards (or when empty) a
        /// turn is transcribed as the simulated callee's line when the sandbox's Twilio emulator spoke it (see
        /// ``SandboxCalleeLines``), otherwise as `(caller speech, 1.4 s)`.
        public var callerTranscripts: [String]
        /// Milliseconds after the session starts at which it fails; `nil` never.
        public var failAfterMs: Int?
        /// How the session fails at ``failAfterMs``.
        public var failure: Failure
        /// Refuse every upgrade with HTTP 503.
        public var rejectConnections: Bool

        /// Friendly, persona-neutral lines; the first one greets.
        public static let defaultReplyLines = [
            "Hello! Thanks for picking up. Do you have a moment to talk?",
            "That makes sense. Could you tell me a little more about it?",
            "I see, that is really helpful to know. Thank you.",
            "Great. Is there anything else you would like to add?",
        ]

        /// Creates a behavior; every parameter has the documented default.
        public init(
            firstAudioDelayMs: Int = 250,
            speed: Double = 4,
            chunkMs: Int = 100,
            readingSpeed: Double = 100,
            replyLines: [String] = Behavior.defaultReplyLines,
            callerTranscripts: [String] = [],
            failAfterMs: Int? = nil,
            failure: Failure = .error,
            rejectConnections: Bool = false
        ) {
            self.firstAudioDelayMs = firstAudioDelayMs
            self.speed = speed
            self.chunkMs = chunkMs
            self.readingSpeed = readingSpeed
            self.replyLines = replyLines
            self.callerTranscripts = callerTranscripts
            self.failAfterMs = failAfterMs
            self.failure = failure
            self.rejectConnections = rejectConnections
        }

        enum CodingKeys: String, CodingKey {
            case firstAudioDelayMs = "first_audio_delay_ms"
            case speed
            case chunkMs = "chunk_ms"
            case readingSpeed = "reading_speed"
            case replyLines = "reply_lines"
            case callerTranscripts = "caller_transcripts"
            case failAfterMs = "fail_after_ms"
            case failure
            case rejectConnections = "reject_connections"
        }

        /// Decodes a partial behavior: absent members take their defaults.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let defaults = Behavior()
            firstAudioDelayMs = try container.decodeIfPresent(Int.self, forKey: .firstAudioDelayMs) ?? defaults.firstAudioDelayMs
            speed = try container.decodeIfPresent(Double.self, forKey: .speed) ?? defaults.speed
            chunkMs = try container.decodeIfPresent(Int.self, forKey: .chunkMs) ?? defaults.chunkMs
            readingSpeed = try container.decodeIfPresent(Double.self, forKey: .readingSpeed) ?? defaults.readingSpeed
            replyLines = try container.decodeIfPresent([String].self, forKey: .replyLines) ?? defaults.replyLines
            callerTranscripts = try container.decodeIfPresent([String].self, forKey: .callerTranscripts) ?? defaults.callerTranscripts
            failAfterMs = try container.decodeIfPresent(Int.self, forKey: .failAfterMs)
            failure = try container.decodeIfPresent(Failure.self, forKey: .failure) ?? defaults.failure
            rejectConnections = try container.decodeIfPresent(Bool.self, forKey: .rejectConnections) ?? defaults.rejectConnections
        }

        /// Encodes every member (`fail_after_ms` as `null` when unset).
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(firstAudioDelayMs, forKey: .firstAudioDelayMs)
            try container.encode(speed, forKey: .speed)
            try container.encode(chunkMs, forKey: .chunkMs)
            try container.encode(readingSpeed, forKey: .readingSpeed)
            try container.encode(replyLines, forKey: .replyLines)
            try container.encode(callerTranscripts, forKey: .callerTranscripts)
            try container.encode(failAfterMs, forKey: .failAfterMs)
            try container.encode(failure, forKey: .failure)
            try container.encode(rejectConnections, forKey: .rejectConnections)
        }

        /// Why the behavior cannot be used, or `nil` when it is valid.
        public var problem: String? {
            // Every number here becomes a NIO `TimeAmount` in nanoseconds: bounded so that it cannot overflow one.
            if !(0...Self.longestDelayMs).contains(firstAudioDelayMs) { return "first_audio_delay_ms must be between 0 and 600000." }
            if !(speed >= Self.slowestSpeed && speed <= 1_000) { return "speed must be between 0.01 and 1000." }
            if !(10...5_000).contains(chunkMs) { return "chunk_ms must be between 10 and 5000." }
            if !(readingSpeed >= Self.slowestSpeed && readingSpeed <= 1_000) { return "reading_speed must be between 0.01 and 1000." }
            if replyLines.isEmpty { return "reply_lines must not be empty." }
            if let failAfterMs, !(0...Self.longestFailAfterMs).contains(failAfterMs) { return "fail_after_ms must be between 0 and 3600000." }
            return nil
        }

        /// The longest ``firstAudioDelayMs``: ten minutes.
        static let longestDelayMs = 600_000
        /// The latest ``failAfterMs``: an hour.
        static let longestFailAfterMs = 3_600_000
        /// The slowest ``speed`` (a chunk of 5 s then takes 500 s to generate).
        static let slowestSpeed = 0.01

        /// The behavior with out-of-range values brought into range (what sessions use).
        var sanitized: Behavior {
            var behavior = self
            behavior.firstAudioDelayMs = min(max(0, firstAudioDelayMs), Self.longestDelayMs)
            behavior.speed = speed > 0 ? min(max(speed, Self.slowestSpeed), 1_000) : 1
            behavior.chunkMs = min(max(chunkMs, 10), 5_000)
            behavior.readingSpeed = readingSpeed > 0 ? min(max(readingSpeed, Self.slowestSpeed), 1_000) : 100
            if replyLines.isEmpty { behavior.replyLines = Behavior.defaultReplyLines }
            behavior.failAfterMs = failAfterMs.map { min(max(0, $0), Self.longestFailAfterMs) }
            return behavior
        }
    }

    /// The path recorded for every received message (the path of the real API).
    public static let recordedPath = "/openai/v1/realtime"

    /// The API key every connection must present as `Authorization: Bearer <key>`; `nil` accepts any.
    public let apiKey: String?
    /// Whether received messages are passed to the recorder.
    public let recordsMessages: Bool
    private let logger: Logger
    private let initialBehavior: Behavior
    private let behaviorBox: NIOLockedValueBox<Behavior>
    private let recorderBox: NIOLockedValueBox<SandboxRecorder?>
    private let calleeLinesBox = NIOLockedValueBox<SandboxCalleeLines?>(nil)
    let state = NIOLockedValueBox(State())
    let speechCache = RealtimeSpeechCache()
    /// Read-aloud responses still to deviate from their text (``deviateReadings(_:)``), shared by every session.
    let deviations = RealtimeDeviations()

    struct State {
        var open: [String: RealtimeConnection] = [:]
        var logs: [RealtimeSessionLog] = []
    }

    /// The default ``keptSessions``.
    public static let defaultKeptSessions = 100
    /// The most records of closed sessions kept (``sessions()``); the oldest are dropped first. Open sessions are
    /// always listed.
    public let keptSessions: Int

    /// Creates an emulator.
    ///
    /// - Parameters:
    ///   - apiKey: The key connections must present; `nil` accepts connections without checking.
    ///   - recorder: Where received messages are recorded (``SandboxServices`` attaches its recorder otherwise).
    ///   - recordsMessages: `false` skips recording (benchmarks push 50 appends per second per session through it).
    ///   - behavior: The initial behavior (also what ``resetBehavior()`` restores).
    ///   - keptSessions: The most records of closed sessions kept (at least 1).
    public init(
        apiKey: String? = nil,
        recorder: SandboxRecorder? = nil,
        recordsMessages: Bool = true,
        behavior: Behavior = Behavior(),
        keptSessions: Int = defaultKeptSessions,
        logger: Logger = Logger(label: "chorus.sandbox.realtime")
    ) {
        self.keptSessions = max(1, keptSessions)
        self.apiKey = apiKey.flatMap { $0.isEmpty ? nil : $0 }
        self.recordsMessages = recordsMessages
        self.initialBehavior = behavior
        self.behaviorBox = NIOLockedValueBox(behavior)
        self.recorderBox = NIOLockedValueBox(recorder)
        self.logger = logger
    }

    // MARK: - Configuration and inspection

    /// The behavior new sessions get.
    public var behavior: Behavior {
        behaviorBox.withLockedValue { $0 }
    }

    /// Replaces the behavior for sessions connecting from now on (out-of-range values are brought into range).
    public func setBehavior(_ behavior: Behavior) {
        behaviorBox.withLockedValue { $0 = behavior }
    }

    /// Restores the behavior given at creation.
    public func resetBehavior() {
        behaviorBox.withLockedValue { $0 = initialBehavior }
    }

    /// Records received messages in `recorder` from now on, unless a recorder is already attached.
    public func attach(recorder: SandboxRecorder) {
        recorderBox.withLockedValue { $0 = $0 ?? recorder }
    }

    /// Transcribes the callers' turns of sessions opened from now on as the lines in `calleeLines` their audio
    /// belongs to (when the behavior gives no ``Behavior/callerTranscripts``).
    public func attach(calleeLines: SandboxCalleeLines) {
        calleeLinesBox.withLockedValue { $0 = calleeLines }
    }

    /// Makes the next `count` read-aloud responses (of any session) deviate from the text they were given, as a speech
    /// model that paraphrases would: the *n*-th deviating reading (from 0, counted since this call) drops every
    /// (*n* + 2)-th word, so the first drops half of the words, the next a third, then a quarter… (each closer to the
    /// text than the one before). `0` stops deviating.
    public func deviateReadings(_ count: Int) {
        deviations.set(count)
    }

    /// Read-aloud responses still to deviate, and how many did since ``deviateReadings(_:)``.
    public var readingDeviations: (remaining: Int, made: Int) {
        deviations.state
    }

    /// Every session (open and closed), oldest first.
    public func sessions() -> [SandboxRealtimeSessionRecord] {
        state.withLockedValue { $0.logs }.map(\.snapshot)
    }

    /// One session, or `nil` when there is no session with that id.
    public func session(id: String) -> SandboxRealtimeSessionRecord? {
        state.withLockedValue { state in state.logs.first { $0.id == id } }?.snapshot
    }

    /// The number of sessions currently connected.
    public var openSessionCount: Int {
        state.withLockedValue { $0.open.count }
    }

    /// Forgets the records of closed sessions.
    public func forgetClosedSessions() {
        state.withLockedValue { state in state.logs.removeAll { state.open[$0.id] == nil } }
    }

    /// Closes every open session (code 1001, going away) and cancels its timers and tasks.
    public func shutdown() {
        let open = state.withLockedValue { Array($0.open.values) }
        for connection in open {
            connection.eventLoop.execute { connection.terminate(code: .goingAway, reason: nil) }
        }
    }

    /// The 8 kHz μ-law audio the emulator speaks for `text` in `voice` (before conversion to the session's output
    /// format): what the `response.output_audio.delta`s of an `audio/pcmu` session add up to.
    public static func speechAudio(for text: String, voice: String = "alloy") -> [UInt8] {
        SandboxSpeech.speak(text, voice: voiceNumber(voice))
    }

    /// The RMS level (0…32,767) at which a 20 ms window counts as speech for a `turn_detection.threshold`:
    /// 0…1 maps linearly onto −60…−10 dBFS.
    public static func vadLevel(threshold: Double) -> Double {
        let clamped = min(max(threshold, 0), 1)
        return 32_768 * pow(10, (-60 + 50 * clamped) / 20)
    }

    /// The sandbox pitch of a Realtime voice (``SandboxAudioFiles/pitchIndex(_:)``: each pitch used by two voices).
    static func voiceNumber(_ voice: String) -> Int {
        SandboxAudioFiles.pitchIndex(voice)
    }

    // MARK: - Routes

    /// Mounts the Realtime WebSocket, `GET realtime?model=…`, on `routes` (e.g. a group at `openai/v1`).
    public func register(on routes: any RoutesBuilder) {
        routes.on(.GET, "realtime") { request -> Response in
            self.upgrade(request)
        }
    }

    /// Mounts the control API on `routes`:
    /// - `GET|PUT|DELETE openai/realtime/behavior`: read, replace (a JSON ``Behavior``, snake_case; absent members
    ///   take their defaults) or reset the behavior;
    /// - `GET|DELETE openai/realtime/sessions`: list every session (``SandboxRealtimeSessionRecord``) or forget the
    ///   closed ones;
    /// - `GET|PUT openai/realtime/deviations`: read (`{"remaining": n, "made": m}`) or set (`{"responses": n}`, 0…1,000)
    ///   how many of the next read-aloud responses deviate from their text (``deviateReadings(_:)``).
    public func registerControl(on routes: any RoutesBuilder) {
        let control = routes.grouped("openai", "realtime")
        control.get("behavior") { _ -> Response in
            SandboxJSON.response(self.behavior)
        }
        control.put("behavior") { request -> Response in
            let behavior: Behavior
            do {
                behavior = try SandboxJSON.decode(Behavior.self, from: request)
            } catch {
                return SandboxJSON.detail(
                    "Body must be a JSON object with any of first_audio_delay_ms, speed, chunk_ms, reply_lines, "
                        + "caller_transcripts, fail_after_ms, failure (error|close), reject_connections.",
                    status: .badRequest)
            }
            if let problem = behavior.problem { return SandboxJSON.detail(problem, status: .badRequest) }
            self.setBehavior(behavior)
            return SandboxJSON.response(behavior)
        }
        control.delete("behavior") { _ -> Response in
            self.resetBehavior()
            return SandboxJSON.response(self.behavior)
        }
        control.get("deviations") { _ -> Response in
            let state = self.readingDeviations
            return SandboxJSON.response(RealtimeDeviationsBody(remaining: state.remaining, made: state.made))
        }
        control.put("deviations") { request -> Response in
            guard let body = try? SandboxJSON.decode(RealtimeDeviationsRequest.self, from: request), (0...1_000).contains(body.responses) else {
                return SandboxJSON.detail("Body must be {\"responses\": n} with n between 0 and 1000.", status: .badRequest)
            }
            self.deviateReadings(body.responses)
            let state = self.readingDeviations
            return SandboxJSON.response(RealtimeDeviationsBody(remaining: state.remaining, made: state.made))
        }
        control.get("sessions") { _ -> Response in
            SandboxJSON.response(RealtimeSessionList(sessions: self.sessions()))
        }
        control.delete("sessions") { _ -> Response in
            self.forgetClosedSessions()
            return Response(status: .noContent)
        }
    }

    private func upgrade(_ request: Request) -> Response {
        let behavior = self.behavior.sanitized
        if behavior.rejectConnections {
            return Self.apiError(
                .serviceUnavailable, type: "server_error", code: nil, param: nil,
                message: "The server is temporarily unable to accept Realtime connections. Please retry later.")
        }
        if let apiKey {
            guard let presented = request.headers.bearerAuthorization?.token else {
                return Self.apiError(
                    .unauthorized, type: "invalid_request_error", code: nil, param: nil,
                    message:
                        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
                )
            }
            guard ConstantTime.equals(presented, apiKey) else {
                return Self.apiError(
                    .unauthorized, type: "invalid_request_error", code: "invalid_api_key", param: nil,
                    message: "Incorrect API key provided: \(Self.masked(presented)).")
            }
        }
        // `?intent=transcription` opens a transcription session (no model in the URL: its `session.update` names the
        // transcription model); anything else is a conversation session of `?model=`.
        let transcription = request.query[String.self, at: "intent"] == "transcription"
        let model = request.query[String.self, at: "model"] ?? ""
        guard transcription || !model.isEmpty else {
            return Self.apiError(
                .badRequest, type: "invalid_request_error", code: "missing_required_parameter", param: "model",
                message: "Missing required parameter: 'model'.")
        }
        let recorder = recordsMessages ? recorderBox.withLockedValue { $0 } : nil
        return request.webSocket(
            maxFrameSize: WebSocketMaxFrameSize(integerLiteral: 16 << 20),
            shouldUpgrade: { $0.eventLoop.makeSucceededFuture([:]) },
            onUpgrade: { _, socket in
                if socket.eventLoop.inEventLoop {
                    self.accept(socket, model: model, transcription: transcription, behavior: behavior, recorder: recorder)
                } else {
                    socket.eventLoop.execute { self.accept(socket, model: model, transcription: transcription, behavior: behavior, recorder: recorder) }
                }
            }
        )
    }

    /// Starts a session on a freshly upgraded socket (on its event loop).
    private func accept(_ socket: WebSocket, model: String, transcription: Bool, behavior: Behavior, recorder: SandboxRecorder?) {
        let id = RealtimeIdentifier.make("sess")
        let log = RealtimeSessionLog(id: id, model: transcription ? "transcription" : model)
        let connection = RealtimeConnection(
            id: id, model: model, transcription: transcription, socket: socket, behavior: behavior, log: log, recorder: recorder, cache: speechCache, deviations: deviations,
            calleeLines: calleeLinesBox.withLockedValue { $0 }, logger: logger,
            onClose: { [weak self] id in
                guard let self else { return }
                self.state.withLockedValue { state in
                    _ = state.open.removeValue(forKey: id)
                    self.forgetOldSessions(&state)
                }
            }
        )
        state.withLockedValue { state in
            state.open[id] = connection
            state.logs.append(log)
        }
        connection.start()
    }

    /// Drops the oldest records of closed sessions beyond ``keptSessions``.
    private func forgetOldSessions(_ state: inout State) {
        var excess = state.logs.count - state.open.count - keptSessions
        guard excess > 0 else { return }
        let open = state.open
        state.logs.removeAll { log in
            guard excess > 0, open[log.id] == nil else { return false }
            excess -= 1
            return true
        }
    }

    // MARK: - Helpers

    /// An OpenAI REST error body (`{"error": {message, type, param, code}}`).
    private static func apiError(
        _ status: HTTPResponseStatus, type: String, code: String?, param: String?, message: String
    ) -> Response {
        let body: RealtimeJSON = [
            "error": [
                "message": .string(message), "type": .string(type), "param": param.map(RealtimeJSON.string) ?? .null,
                "code": code.map(RealtimeJSON.string) ?? .null,
            ]
        ]
        var headers = HTTPHeaders()
        headers.contentType = .json
        return Response(status: status, headers: headers, body: .init(string: body.text))
    }

    private static func masked(_ key: String) -> String {
        key.count <= 8 ? String(repeating: "*", count: key.count) : key.prefix(3) + "*****" + key.suffix(4)
    }

}

// MARK: - Session records

/// One Realtime session as the emulator saw it, listed by `GET openai/realtime/sessions`.
public struct SandboxRealtimeSessionRecord: Sendable, Codable, Equatable {
    /// One caller turn found by the server VAD (or committed by the client).
    public struct SpeechTurn: Sendable, Codable, Equatable {
        /// The user item the turn became.
        public internal(set) var itemID: String
        /// `audio_start_ms` of `input_audio_buffer.speech_started` (`nil` for a manual commit without VAD).
        public internal(set) var audioStartMs: Int?
        /// `audio_end_ms` of `input_audio_buffer.speech_stopped`, once it stopped.
        public internal(set) var audioEndMs: Int?
        /// Whether the buffer was committed into a user item.
        public internal(set) var committed: Bool
        /// The transcript sent, when input transcription is on.
        public internal(set) var transcript: String?

        enum CodingKeys: String, CodingKey {
            case itemID = "item_id"
            case audioStartMs = "audio_start_ms"
            case audioEndMs = "audio_end_ms"
            case committed
            case transcript
        }
    }

    /// One model response.
    public struct Response: Sendable, Codable, Equatable {
        /// The response id (`resp_…`).
        public internal(set) var id: String
        /// The assistant item it produced.
        public internal(set) var itemID: String
        /// `in_progress`, `completed` or `cancelled`.
        public internal(set) var status: String
        /// Why it was cancelled: `turn_detected`, `client_cancelled`, or `connection_closed`.
        public internal(set) var reason: String?
        /// What started it: `client` (`response.create`) or `turn_detection`.
        public internal(set) var trigger: String
        /// The reply line.
        public internal(set) var text: String
        /// The item's transcript now: the line, what was spoken before a cancel, or what a truncation left.
        public internal(set) var transcript: String
        /// Milliseconds of audio sent in deltas.
        public internal(set) var generatedMs: Int
        /// Milliseconds of audio of the whole line.
        public internal(set) var lineMs: Int
        /// Audio deltas sent.
        public internal(set) var deltas: Int

        enum CodingKeys: String, CodingKey {
            case id
            case itemID = "item_id"
            case status
            case reason
            case trigger
            case text
            case transcript
            case generatedMs = "generated_ms"
            case lineMs = "line_ms"
            case deltas
        }
    }

    /// One `conversation.item.truncate` received.
    public struct Truncation: Sendable, Codable, Equatable {
        /// The item named.
        public internal(set) var itemID: String
        /// The content index named.
        public internal(set) var contentIndex: Int
        /// The `audio_end_ms` asked for.
        public internal(set) var audioEndMs: Int
        /// Milliseconds of the item's audio generated when the truncate arrived (`nil` for an unknown item).
        public internal(set) var generatedMs: Int?
        /// Whether it was applied (`conversation.item.truncated`) rather than refused with an `error`.
        public internal(set) var accepted: Bool
        /// The error code when refused.
        public internal(set) var errorCode: String?

        enum CodingKeys: String, CodingKey {
            case itemID = "item_id"
            case contentIndex = "content_index"
            case audioEndMs = "audio_end_ms"
            case generatedMs = "generated_ms"
            case accepted
            case errorCode = "error_code"
        }
    }

    /// One `error` event sent.
    public struct ErrorEvent: Sendable, Codable, Equatable {
        /// `invalid_request_error` or `server_error`.
        public internal(set) var type: String
        /// The error code.
        public internal(set) var code: String?
        /// The message.
        public internal(set) var message: String
        /// The parameter concerned.
        public internal(set) var param: String?
        /// The client event id it answers.
        public internal(set) var clientEventID: String?

        enum CodingKeys: String, CodingKey {
            case type
            case code
            case message
            case param
            case clientEventID = "client_event_id"
        }
    }

    /// The session id (`sess_…`).
    public internal(set) var id: String
    /// The `model` query parameter.
    public internal(set) var model: String
    /// When the socket was upgraded.
    public internal(set) var connectedAt: Date
    /// When the socket closed.
    public internal(set) var closedAt: Date?
    /// The close code, once closed.
    public internal(set) var closeCode: Int?
    /// The failure injected into this session (`error` or `close`), if any.
    public internal(set) var injectedFailure: String?
    /// Client events received, by `type` (unparseable messages count as `invalid`).
    public internal(set) var eventsReceived: [String: Int]
    /// Server events sent, by `type`.
    public internal(set) var eventsSent: [String: Int]
    /// Milliseconds of input audio appended.
    public internal(set) var inputAudioMs: Int
    /// The session's `instructions`.
    public internal(set) var instructions: String
    /// The output voice.
    public internal(set) var voice: String
    /// The input audio format (`audio/pcm`, `audio/pcmu`, `audio/pcma`).
    public internal(set) var inputAudioFormat: String
    /// The output audio format.
    public internal(set) var outputAudioFormat: String
    /// `server_vad`, `semantic_vad`, or `nil` (manual turns).
    public internal(set) var turnDetection: String?
    /// Whether input transcription is on.
    public internal(set) var transcription: Bool
    /// Caller turns, in order.
    public internal(set) var speechTurns: [SpeechTurn]
    /// Responses, in order.
    public internal(set) var responses: [Response]
    /// Truncations received, in order.
    public internal(set) var truncations: [Truncation]
    /// `error` events sent, in order.
    public internal(set) var errors: [ErrorEvent]
    /// The functions the emulated model called (`function_call` items), by name, in order.
    public internal(set) var functionCalls: [String] = []

    enum CodingKeys: String, CodingKey {
        case id
        case model
        case connectedAt = "connected_at"
        case closedAt = "closed_at"
        case closeCode = "close_code"
        case injectedFailure = "injected_failure"
        case eventsReceived = "events_received"
        case eventsSent = "events_sent"
        case inputAudioMs = "input_audio_ms"
        case instructions
        case voice
        case inputAudioFormat = "input_audio_format"
        case outputAudioFormat = "output_audio_format"
        case turnDetection = "turn_detection"
        case transcription
        case speechTurns = "speech_turns"
        case responses
        case truncations
        case errors
        case functionCalls = "function_calls"
    }

    /// Whether the socket is still open.
    public var isOpen: Bool { closedAt == nil }
}

/// The read-aloud deviations still to make (shared by every session of an emulator).
final class RealtimeDeviations: Sendable {
    private let box = NIOLockedValueBox((remaining: 0, made: 0))

    var state: (remaining: Int, made: Int) { box.withLockedValue { $0 } }

    func set(_ count: Int) {
        box.withLockedValue { $0 = (max(0, count), 0) }
    }

    /// The index of the next deviation (0 for the first since ``set(_:)``), or `nil` when none is left.
    func take() -> Int? {
        box.withLockedValue { state in
            guard state.remaining > 0 else { return nil }
            state.remaining -= 1
            state.made += 1
            return state.made - 1
        }
    }

    /// `text` with every (`index` + 2)-th word left out.
    static func deviate(_ text: String, index: Int) -> String {
        let step = index + 2
        return text.split(separator: " ").enumerated().filter { ($0.offset + 1) % step != 0 }.map { String($0.element) }.joined(separator: " ")
    }
}

struct RealtimeDeviationsRequest: Decodable {
    let responses: Int

    enum CodingKeys: String, CodingKey {
        case responses
    }
}

struct RealtimeDeviationsBody: Encodable {
    let remaining: Int
    let made: Int

    enum CodingKeys: String, CodingKey {
        case remaining, made
    }
}

struct RealtimeSessionList: Encodable {
    let sessions: [SandboxRealtimeSessionRecord]

    enum CodingKeys: String, CodingKey {
        case sessions
    }
}

/// The inspectable record of one session, shared between its event loop and the control API.
final class RealtimeSessionLog: Sendable {
    let id: String
    private let record: NIOLockedValueBox<SandboxRealtimeSessionRecord>

    init(id: String, model: String) {
        self.id = id
        self.record = NIOLockedValueBox(
            SandboxRealtimeSessionRecord(
                id: id, model: model, connectedAt: Date(), closedAt: nil, closeCode: nil, injectedFailure: nil, eventsReceived: [:],
                eventsSent: [:], inputAudioMs: 0, instructions: "", voice: "alloy", inputAudioFormat: "audio/pcm",
                outputAudioFormat: "audio/pcm", turnDetection: "server_vad", transcription: false, speechTurns: [], responses: [],
                truncations: [], errors: []
            ))
    }

    var snapshot: SandboxRealtimeSessionRecord {
        record.withLockedValue { $0 }
    }

    func update(_ body: (inout SandboxRealtimeSessionRecord) -> Void) {
        record.withLockedValue { body(&$0) }
    }

    func updateResponse(_ id: String, _ body: (inout SandboxRealtimeSessionRecord.Response) -> Void) {
        record.withLockedValue { record in
            guard let index = record.responses.lastIndex(where: { $0.id == id }) else { return }
            body(&record.responses[index])
        }
    }

    func updateTurn(_ itemID: String, _ body: (inout SandboxRealtimeSessionRecord.SpeechTurn) -> Void) {
        record.withLockedValue { record in
            guard let index = record.speechTurns.lastIndex(where: { $0.itemID == itemID }) else { return }
            body(&record.speechTurns[index])
        }
    }
}
