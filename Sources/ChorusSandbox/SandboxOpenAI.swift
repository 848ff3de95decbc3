import ChorusCore
import Foundation
import Logging
import NIOConcurrencyHelpers
import Vapor

/// A local emulator of OpenAI's HTTP API for voice messages and stories: `POST /audio/transcriptions`,
/// `POST /audio/speech`, `POST /chat/completions`, `POST /images/generations` and `POST /moderations` (see
/// `SandboxOpenAIImages.swift`), `GET /models` and `GET /models/{model}`, with the real wire shapes and the real error
/// envelope (`{"error":{"message","type","param","code"}}`). Deterministic except for ids and timestamps.
///
/// **Transcriptions** (multipart/form-data, the whole body at most 26,214,400 bytes, else 413 `Maximum content size
/// limit (26214400) exceeded (N bytes read)`; `model` and `file` required; file extensions flac, m4a, mp3, mp4, mpeg,
/// mpga, oga, ogg, wav, webm). What is "heard":
/// - audio made by the sandbox speech engines (``SandboxAudioFiles``) carries its text, which is returned exactly;
/// - a 16-bit PCM WAV whose level stays below −50 dBFS is silence: Whisper's hallucination `Thank you.` with
///   `no_speech_prob` 0.9 and `avg_logprob` −1.3 (token logprobs −1.3), so silence detection can be exercised;
/// - anything else: `This is a sandbox transcription of N seconds of audio.` (the duration read from WAV, MP3 or MP4,
///   else estimated from the size at 32 kbit/s).
///
/// `verbose_json` has one segment per sentence with times in proportion to its length, `avg_logprob` ≈ −0.2,
/// `compression_ratio` ≈ 1.3, `no_speech_prob` ≈ 0.01; `json` adds `logprobs` with `include[]=logprobs`
/// (gpt-4o(-mini)-transcribe only); `text`, `srt`, `vtt` and `diarized_json` (gpt-4o-transcribe-diarize) are served
/// too. Model and format combinations the API refuses are refused the same way (400).
///
/// **Speech** (JSON, `CreateSpeechRequest`: unknown members, an input over 4,096 characters, an unknown voice or a
/// speed outside 0.25–4 are refused with 400): `mp3` (default) is silent MPEG-1 Layer III frames of the speech's
/// duration, `wav` is audible 24 kHz PCM16 mono (``SandboxSpeech`` resampled), `pcm` the same samples without a
/// header; MP3 and WAV carry the text (see ``SandboxAudioFiles``). `opus`, `aac`, `flac` and `stream_format: sse`
/// are refused with 400 (the sandbox has no encoder for them).
///
/// **Chat completions**: structured output with `response_format.type` `json_schema` (strict-mode rules checked like
/// the API: every object needs `additionalProperties: false` and every property in `required`), `json_object` or
/// text, filled extractively from the user messages (property names choose the content: decisions, action items with owners, dates, urgent items, an overview). `max_completion_tokens` below the
/// answer's size cuts it off with `finish_reason: length`; a message containing `[sandbox:refuse]` gets a refusal and
/// one containing `[sandbox:content_filter]` `finish_reason: content_filter`. `stream: true` answers with
/// `chat.completion.chunk` server-sent events (usage last with `stream_options.include_usage`). Stories prompts, recognised
/// by their wording and read as a model reads them, get the storyteller's answers (``SandboxStories``).
///
/// **Control** (``registerControl(on:)``): `GET|PUT|DELETE openai/behavior` (a JSON ``Behavior``: inject failures,
/// per-request ``Fault``s matched on the body, add latency, announce model shutdown dates) and `GET|DELETE openai/request-counts` (requests received per endpoint).
///
/// When created with an API key, every request must present it as `Authorization: Bearer <key>` (401 otherwise).
/// Every response carries an `x-request-id`.
public final class SandboxOpenAI: Sendable {
    /// One emulated endpoint, as counted by ``requestCounts()`` and named in ``Behavior/endpoint``.
    public enum Endpoint: String, Sendable, Codable, CaseIterable {
        case transcriptions = "audio/transcriptions"
        case speech = "audio/speech"
        case chatCompletions = "chat/completions"
        case images = "images/generations"
        case moderations
        case models
    }

    /// A failure injected into the requests it matches, `times` times: the way to make one illustration of a story
    /// fail while the others succeed.
    public struct Fault: Sendable, Codable, Equatable {
        public enum Kind: String, Sendable, Codable {
            /// 429 `rate_limit_exceeded` with `Retry-After` / `retry-after-ms` (``retryAfterSeconds``, default 1).
            case rateLimit = "rate_limit"
            /// The answer is held for ``delayMs`` (default 35,000) before it is given normally: clients with a shorter
            /// deadline time out.
            case timeout
            /// 500 `server_error`.
            case serverError = "server_error"
        }

        public var kind: Kind
        /// Only requests to this endpoint; `nil` any.
        public var endpoint: Endpoint?
        /// Only requests whose body contains this text; `nil` any.
        public var match: String?
        /// How many matching requests fail (default 1).
        public var times: Int
        public var retryAfterSeconds: Double?
        public var delayMs: Int?

        public init(
            kind: Kind, endpoint: Endpoint? = nil, match: String? = nil, times: Int = 1, retryAfterSeconds: Double? = nil, delayMs: Int? = nil
        ) {
            self.kind = kind
            self.endpoint = endpoint
            self.match = match
            self.times = times
            self.retryAfterSeconds = retryAfterSeconds
            self.delayMs = delayMs
        }

        enum CodingKeys: String, CodingKey {
            case kind, endpoint, match, times
            case retryAfterSeconds = "retry_after_seconds"
            case delayMs = "delay_ms"
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            kind = try container.decode(Kind.self, forKey: .kind)
            endpoint = try container.decodeIfPresent(Endpoint.self, forKey: .endpoint)
            match = try container.decodeIfPresent(String.self, forKey: .match)
            times = try container.decodeIfPresent(Int.self, forKey: .times) ?? 1
            retryAfterSeconds = try container.decodeIfPresent(Double.self, forKey: .retryAfterSeconds)
            delayMs = try container.decodeIfPresent(Int.self, forKey: .delayMs)
        }
    }

    /// Injected failures and latency. Absent members take their defaults when decoded.
    public struct Behavior: Sendable, Codable, Equatable {
        /// How many of the next requests fail (each injected failure counts one down). Default 0.
        public var failNext: Int
        /// The status of injected failures: 429, 500, 502 or 503. Default 429.
        public var status: Int
        /// For 429: `rate_limit_exceeded` (default, retryable, with `Retry-After` when ``retryAfterSeconds`` is set)
        /// or `insufficient_quota` (not retryable, never with `Retry-After`).
        public var code: String?
        /// Sent as `Retry-After` (whole seconds, rounded up) and `retry-after-ms` on injected 429 rate limits.
        public var retryAfterSeconds: Double?
        /// Milliseconds every request waits before it is answered. Default 0.
        public var delayMs: Int
        /// Only requests to this endpoint fail; `nil` (default) any endpoint.
        public var endpoint: Endpoint?
        /// `shutdown_date`s (`YYYY-MM-DD`) the model list announces, by model id, over
        /// ``SandboxOpenAI/announcedShutdownDates`` (other models have `null`). Default none.
        public var shutdownDates: [String: String]
        /// Failures injected into matching requests (checked before ``failNext``). Default none.
        public var faults: [Fault]

        /// Creates a behavior; every parameter has the documented default.
        public init(
            failNext: Int = 0, status: Int = 429, code: String? = nil, retryAfterSeconds: Double? = nil, delayMs: Int = 0,
            endpoint: Endpoint? = nil, shutdownDates: [String: String] = [:], faults: [Fault] = []
        ) {
            self.faults = faults
            self.failNext = failNext
            self.status = status
            self.code = code
            self.retryAfterSeconds = retryAfterSeconds
            self.delayMs = delayMs
            self.endpoint = endpoint
            self.shutdownDates = shutdownDates
        }

        enum CodingKeys: String, CodingKey {
            case failNext = "fail_next"
            case status
            case code
            case retryAfterSeconds = "retry_after_seconds"
            case delayMs = "delay_ms"
            case endpoint
            case shutdownDates = "shutdown_dates"
            case faults
        }

        /// Decodes a partial behavior: absent members take their defaults.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            failNext = try container.decodeIfPresent(Int.self, forKey: .failNext) ?? 0
            status = try container.decodeIfPresent(Int.self, forKey: .status) ?? 429
            code = try container.decodeIfPresent(String.self, forKey: .code)
            retryAfterSeconds = try container.decodeIfPresent(Double.self, forKey: .retryAfterSeconds)
            delayMs = try container.decodeIfPresent(Int.self, forKey: .delayMs) ?? 0
            endpoint = try container.decodeIfPresent(Endpoint.self, forKey: .endpoint)
            shutdownDates = try container.decodeIfPresent([String: String].self, forKey: .shutdownDates) ?? [:]
            faults = try container.decodeIfPresent([Fault].self, forKey: .faults) ?? []
        }

        /// Encodes every member (unset optionals as `null`).
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(failNext, forKey: .failNext)
            try container.encode(status, forKey: .status)
            try container.encode(code, forKey: .code)
            try container.encode(retryAfterSeconds, forKey: .retryAfterSeconds)
            try container.encode(delayMs, forKey: .delayMs)
            try container.encode(endpoint, forKey: .endpoint)
            try container.encode(shutdownDates, forKey: .shutdownDates)
            try container.encode(faults, forKey: .faults)
        }

        /// Why the behavior cannot be used, or `nil` when it is valid.
        public var problem: String? {
            if failNext < 0 { return "fail_next must not be negative." }
            if ![429, 500, 502, 503].contains(status) { return "status must be 429, 500, 502 or 503." }
            if let code {
                guard status == 429, code == "rate_limit_exceeded" || code == "insufficient_quota" else {
                    return "code must be rate_limit_exceeded or insufficient_quota, with status 429."
                }
            }
            if let retryAfterSeconds, !(retryAfterSeconds >= 0 && retryAfterSeconds <= 3_600) {
                return "retry_after_seconds must be between 0 and 3600."
            }
            if !(0...60_000).contains(delayMs) { return "delay_ms must be between 0 and 60000." }
            for fault in faults {
                if fault.times < 1 { return "faults[].times must be at least 1." }
                if let delay = fault.delayMs, !(0...120_000).contains(delay) { return "faults[].delay_ms must be between 0 and 120000." }
                if let wait = fault.retryAfterSeconds, !(wait >= 0 && wait <= 3_600) {
                    return "faults[].retry_after_seconds must be between 0 and 3600."
                }
            }
            for (model, date) in shutdownDates where !Self.isDate(date) {
                return "shutdown_dates[\(model)] must be a date like 2027-02-26."
            }
            return nil
        }

        private static func isDate(_ text: String) -> Bool {
            let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            return parts.count == 3 && parts.map(\.count) == [4, 2, 2] && parts.allSatisfy { $0.allSatisfy(\.isASCII) && Int($0) != nil }
        }
    }

    /// The models `GET /models` lists by default: the current ones and those with an announced shutdown.
    public static let defaultModels = [
        "whisper-1", "gpt-transcribe", "gpt-live-transcribe", "gpt-4o-transcribe", "gpt-4o-mini-transcribe",
        "gpt-4o-mini-transcribe-2025-12-15", "gpt-4o-transcribe-diarize", "tts-1", "tts-1-hd", "gpt-4o-mini-tts",
        "gpt-4o-mini-tts-2025-12-15", "gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-5", "gpt-5-mini",
        "gpt-5-nano", "gpt-5.4-mini", "gpt-5.5", "gpt-realtime", "gpt-realtime-mini", "gpt-realtime-2.1", "gpt-realtime-2.1-mini",
        "gpt-image-1-mini", "gpt-image-1.5", "gpt-image-2", "omni-moderation-latest",
    ]

    /// The shutdown dates OpenAI announced (deprecations page and guides as of 2026-11-26), which `GET /models` reports
    /// as `shutdown_date` unless the behavior's ``Behavior/shutdownDates`` names another; unlisted models have `null`.
    public static let announcedShutdownDates: [String: String] = {
        var dates: [String: String] = [:]
        for model in ["tts-1", "tts-1-hd", "gpt-4o-mini-tts", "gpt-4o-mini-tts-2025-12-15"] { dates[model] = "2027-01-06" }
        for model in ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini"] { dates[model] = "2027-01-14" }
        for model in ["gpt-realtime", "gpt-realtime-mini"] { dates[model] = "2027-01-20" }
        for model in [
            "whisper-1", "gpt-4o-transcribe", "gpt-4o-mini-transcribe", "gpt-4o-mini-transcribe-2025-12-15", "gpt-4o-transcribe-diarize",
        ] { dates[model] = "2027-02-26" }
        for model in ["gpt-5", "gpt-5-mini", "gpt-5-nano"] { dates[model] = "2026-12-11" }
        for model in ["gpt-image-1-mini", "gpt-image-1.5"] { dates[model] = "2026-12-01" }
        return dates
    }()

    /// The API key every request must present as `Authorization: Bearer <key>`; `nil` accepts any request.
    public let apiKey: String?
    /// The models `GET /models` lists (chat completions accept any model id; transcription and speech only theirs).
    public let models: [String]
    private let initialBehavior: Behavior
    private let state: NIOLockedValueBox<State>
    private let logger: Logger

    private struct State {
        var behavior: Behavior
        var counts: [Endpoint: Int] = [:]
        /// Requests being answered now, since when at least one has been, and the time with at least one in flight.
        var active = 0
        var busySince: ContinuousClock.Instant?
        var busy: Duration = .zero
    }

    /// Creates an emulator.
    ///
    /// - Parameters:
    ///   - apiKey: The key requests must present; `nil` (or empty) accepts requests without checking.
    ///   - models: The model list of `GET /models`.
    ///   - behavior: The initial behavior (also what ``resetBehavior()`` restores).
    public init(
        apiKey: String? = nil, models: [String] = SandboxOpenAI.defaultModels, behavior: Behavior = Behavior(),
        logger: Logger = Logger(label: "chorus.sandbox.openai")
    ) {
        self.apiKey = apiKey.flatMap { $0.isEmpty ? nil : $0 }
        self.models = models
        self.initialBehavior = behavior
        self.state = NIOLockedValueBox(State(behavior: behavior))
        self.logger = logger
    }

    // MARK: - Configuration and inspection

    /// The current behavior.
    public var behavior: Behavior {
        state.withLockedValue { $0.behavior }
    }

    /// Replaces the behavior.
    public func setBehavior(_ behavior: Behavior) {
        state.withLockedValue { $0.behavior = behavior }
    }

    /// Restores the behavior given at creation.
    public func resetBehavior() {
        state.withLockedValue { $0.behavior = initialBehavior }
    }

    /// Requests received per endpoint (rejected and failed ones included), keyed by ``Endpoint`` raw value; every
    /// endpoint is present. `busy_ms` is the time, in milliseconds, during which at least one request was being
    /// answered (what a benchmark subtracts to find the caller's own overhead).
    public func requestCounts() -> [String: Int] {
        let (counts, busy) = state.withLockedValue { state in
            (state.counts, state.busy + (state.busySince.map { ContinuousClock.now - $0 } ?? .zero))
        }
        var result = Dictionary(uniqueKeysWithValues: Endpoint.allCases.map { ($0.rawValue, counts[$0] ?? 0) })
        result["busy_ms"] = Int(busy.components.seconds * 1_000 + busy.components.attoseconds / 1_000_000_000_000_000)
        return result
    }

    /// Sets every request count back to zero.
    public func resetRequestCounts() {
        state.withLockedValue {
            $0.counts = [:]
            $0.busy = .zero
        }
    }

    // MARK: - Routes

    /// The most bytes a transcription request may carry (the API's 25 MiB limit on the whole multipart body).
    public static let maxUploadBytes = 26_214_400

    /// Mounts the API on `routes` (a group at `openai/v1`): `POST audio/transcriptions`, `POST audio/speech`,
    /// `POST chat/completions`, `GET models`, `GET models/:model`.
    public func register(on routes: any RoutesBuilder) {
        routes.on(.POST, "audio", "transcriptions", body: .stream) { request async throws -> Response in
            self.count(.transcriptions)
            let collected = try await Self.collect(request.body, limit: Self.maxUploadBytes)
            guard let body = collected.body else {
                return Self.stamped(
                    Self.apiError(
                        .payloadTooLarge, type: "server_error",
                        message: "Maximum content size limit (\(Self.maxUploadBytes)) exceeded (\(collected.bytesRead) bytes read)"))
            }
            return try await self.serve(.transcriptions, request) { self.transcribe(request, body: body) }
        }
        routes.on(.POST, "audio", "speech", body: .collect(maxSize: "1mb")) { request async throws -> Response in
            self.count(.speech)
            return try await self.serve(.speech, request) { self.speech(request) }
        }
        routes.on(.POST, "chat", "completions", body: .collect(maxSize: "32mb")) { request async throws -> Response in
            self.count(.chatCompletions)
            return try await self.serve(.chatCompletions, request) { self.chatCompletion(request) }
        }
        routes.on(.POST, "images", "generations", body: .collect(maxSize: "1mb")) { request async throws -> Response in
            self.count(.images)
            return try await self.serve(.images, request) { self.imageGeneration(request) }
        }
        routes.on(.POST, "moderations", body: .collect(maxSize: "4mb")) { request async throws -> Response in
            self.count(.moderations)
            return try await self.serve(.moderations, request) { self.moderation(request) }
        }
        routes.get("models") { request async throws -> Response in
            self.count(.models)
            return try await self.serve(.models, request) {
                let dates = Self.announcedShutdownDates.merging(self.behavior.shutdownDates) { $1 }
                return Self.json(["object": "list", "data": .array(self.models.map { Self.modelObject($0, dates: dates) })])
            }
        }
        routes.get("models", ":model") { request async throws -> Response in
            self.count(.models)
            return try await self.serve(.models, request) {
                let id = request.parameters.get("model") ?? ""
                guard self.models.contains(id) else { return Self.modelNotFound(id) }
                return Self.json(Self.modelObject(id, dates: Self.announcedShutdownDates.merging(self.behavior.shutdownDates) { $1 }))
            }
        }
    }

    /// Mounts the control API on `routes`:
    /// - `GET|PUT|DELETE openai/behavior`: read, replace (a JSON ``Behavior``, snake_case: `fail_next`, `status`,
    ///   `code`, `retry_after_seconds`, `delay_ms`, `endpoint`, `shutdown_dates`; absent members take their defaults)
    ///   or reset the behavior;
    /// - `GET|DELETE openai/request-counts`: requests received per endpoint, or set them back to zero.
    public func registerControl(on routes: any RoutesBuilder) {
        let control = routes.grouped("openai")
        control.get("behavior") { _ -> Response in
            SandboxJSON.response(self.behavior)
        }
        control.put("behavior") { request -> Response in
            let behavior: Behavior
            do {
                behavior = try SandboxJSON.decode(Behavior.self, from: request)
            } catch {
                return SandboxJSON.detail(
                    "Body must be a JSON object with any of fail_next, status (429|500|502|503), code "
                        + "(rate_limit_exceeded|insufficient_quota), retry_after_seconds, delay_ms, endpoint "
                        + "(\(Endpoint.allCases.map(\.rawValue).joined(separator: "|"))), shutdown_dates.",
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
        control.get("request-counts") { _ -> Response in
            SandboxJSON.response(self.requestCounts())
        }
        control.delete("request-counts") { _ -> Response in
            self.resetRequestCounts()
            return Response(status: .noContent)
        }
    }

    // MARK: - Request pipeline

    private func count(_ endpoint: Endpoint) {
        state.withLockedValue { $0.counts[endpoint, default: 0] += 1 }
    }

    /// Delay, key check, injected failure, then the endpoint; every answer gets an `x-request-id`.
    private func serve(_ endpoint: Endpoint, _ request: Request, _ handler: () -> Response) async throws -> Response {
        state.withLockedValue { state in
            state.active += 1
            if state.active == 1 { state.busySince = .now }
        }
        defer {
            state.withLockedValue { state in
                state.active -= 1
                if state.active == 0, let since = state.busySince {
                    state.busy += ContinuousClock.now - since
                    state.busySince = nil
                }
            }
        }
        let delayMs = behavior.delayMs
        if delayMs > 0 { try await Task.sleep(for: .milliseconds(delayMs)) }
        let response: Response
        if let rejection = authenticate(request) {
            response = rejection
        } else if let fault = matchingFault(for: endpoint, body: request.body.string), let failure = try await inject(fault, endpoint: endpoint) {
            response = failure
        } else if let failure = injectedFailure(for: endpoint) {
            response = failure
        } else {
            response = handler()
        }
        return Self.stamped(response)
    }

    /// `response` with an `x-request-id` and the `openai-version` header.
    private static func stamped(_ response: Response) -> Response {
        response.headers.replaceOrAdd(name: "x-request-id", value: "req_" + randomHex(32))
        response.headers.replaceOrAdd(name: "openai-version", value: "2020-10-01")
        return response
    }

    private func authenticate(_ request: Request) -> Response? {
        guard let apiKey else { return nil }
        guard let presented = request.headers.bearerAuthorization?.token else {
            return Self.apiError(
                .unauthorized, type: "invalid_request_error",
                message:
                    "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys."
            )
        }
        guard ConstantTime.equals(presented, apiKey) else {
            return Self.apiError(
                .unauthorized, type: "invalid_request_error", code: "invalid_api_key",
                message:
                    "Incorrect API key provided: \(Self.masked(presented)). You can find your API key at https://platform.openai.com/account/api-keys."
            )
        }
        return nil
    }

    /// The first fault matching the request, counted down (and removed when used up).
    private func matchingFault(for endpoint: Endpoint, body: String?) -> Fault? {
        state.withLockedValue { state -> Fault? in
            guard
                let index = state.behavior.faults.firstIndex(where: { fault in
                    (fault.endpoint == nil || fault.endpoint == endpoint) && (fault.match.map { body?.contains($0) ?? false } ?? true)
                })
            else { return nil }
            let fault = state.behavior.faults[index]
            state.behavior.faults[index].times -= 1
            if state.behavior.faults[index].times <= 0 { state.behavior.faults.remove(at: index) }
            return fault
        }
    }

    /// The failure a fault answers with; `nil` for a timeout, whose answer comes late but normally.
    private func inject(_ fault: Fault, endpoint: Endpoint) async throws -> Response? {
        logger.info("sandbox.openai injected fault", metadata: ["endpoint": "\(endpoint.rawValue)", "kind": "\(fault.kind.rawValue)"])
        switch fault.kind {
        case .timeout:
            try await Task.sleep(for: .milliseconds(fault.delayMs ?? 35_000))
            return nil
        case .serverError:
            return Self.apiError(
                .internalServerError, type: "server_error", message: "The server had an error while processing your request. Sorry about that!")
        case .rateLimit:
            var behavior = Behavior(failNext: 1, status: 429, retryAfterSeconds: fault.retryAfterSeconds ?? 1)
            behavior.endpoint = endpoint
            return Self.failure(behavior)
        }
    }

    private func injectedFailure(for endpoint: Endpoint) -> Response? {
        let failing = state.withLockedValue { state -> Behavior? in
            guard state.behavior.failNext > 0, state.behavior.endpoint == nil || state.behavior.endpoint == endpoint else { return nil }
            state.behavior.failNext -= 1
            return state.behavior
        }
        guard let failing else { return nil }
        logger.info(
            "sandbox.openai injected failure",
            metadata: [
                "endpoint": "\(endpoint.rawValue)", "status": "\(failing.status)", "code": "\(failing.code ?? "-")",
                "remaining": "\(failing.failNext)",
            ])
        return Self.failure(failing)
    }

    /// The answer of an injected failure with `failing`'s status and code.
    private static func failure(_ failing: Behavior) -> Response {
        switch failing.status {
        case 429 where failing.code == "insufficient_quota":
            return Self.apiError(
                .tooManyRequests, type: "insufficient_quota", code: "insufficient_quota",
                message:
                    "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."
            )
        case 429:
            let wait = failing.retryAfterSeconds ?? 1
            let response = Self.apiError(
                .tooManyRequests, type: "requests", code: "rate_limit_exceeded",
                message:
                    "Rate limit reached for requests in organization org-sandbox on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in \(Self.seconds(wait)). Visit https://platform.openai.com/account/rate-limits to learn more."
            )
            response.headers.replaceOrAdd(name: "x-ratelimit-limit-requests", value: "3")
            response.headers.replaceOrAdd(name: "x-ratelimit-remaining-requests", value: "0")
            response.headers.replaceOrAdd(name: "x-ratelimit-reset-requests", value: Self.seconds(wait))
            if let seconds = failing.retryAfterSeconds {
                response.headers.replaceOrAdd(name: "retry-after", value: String(Int(seconds.rounded(.up))))
                response.headers.replaceOrAdd(name: "retry-after-ms", value: String(Int((seconds * 1_000).rounded())))
            }
            return response
        case 502:
            return Self.apiError(.badGateway, type: "server_error", message: "Bad gateway.")
        case 503:
            return Self.apiError(.serviceUnavailable, type: "server_error", message: "The server is overloaded or not ready yet.")
        default:
            return Self.apiError(
                .internalServerError, type: "server_error",
                message: "The server had an error while processing your request. Sorry about that!")
        }
    }

    /// The body, or only how many bytes were read when it exceeds `limit` (the rest is drained, so the client can read
    /// the answer).
    private static func collect(_ body: Request.Body, limit: Int) async throws -> (body: ByteBuffer?, bytesRead: Int) {
        var buffer = ByteBuffer()
        var bytesRead = 0
        for try await chunk in body {
            bytesRead += chunk.readableBytes
            if bytesRead <= limit {
                var chunk = chunk
                buffer.writeBuffer(&chunk)
            } else if buffer.readableBytes > 0 {
                buffer = ByteBuffer()
            }
        }
        return (bytesRead <= limit ? buffer : nil, bytesRead)
    }

    // MARK: - Responses

    /// An OpenAI error envelope.
    static func apiError(
        _ status: HTTPResponseStatus, type: String = "invalid_request_error", param: String? = nil, code: String? = nil,
        message: String
    ) -> Response {
        let body: RealtimeJSON = [
            "error": [
                "message": .string(message), "type": .string(type), "param": param.map(RealtimeJSON.string) ?? .null,
                "code": code.map(RealtimeJSON.string) ?? .null,
            ]
        ]
        return json(body, status: status)
    }

    /// 400 `invalid_request_error`.
    static func invalid(_ message: String, param: String? = nil, code: String? = nil) -> Response {
        apiError(.badRequest, param: param, code: code, message: message)
    }

    static func modelNotFound(_ model: String) -> Response {
        apiError(
            .notFound, param: "model", code: "model_not_found",
            message: "The model `\(model)` does not exist or you do not have access to it.")
    }

    /// The answer to a body that is not JSON (the API's wording).
    static func unparsableJSON() -> Response {
        invalid(
            "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)"
        )
    }

    static func json(_ value: RealtimeJSON, status: HTTPResponseStatus = .ok) -> Response {
        var headers = HTTPHeaders()
        headers.contentType = .json
        return Response(status: status, headers: headers, body: .init(string: value.text))
    }

    private static func modelObject(_ id: String, dates: [String: String]) -> RealtimeJSON {
        [
            "id": .string(id), "object": "model", "created": 1_698_785_189,
            "owned_by": id.hasPrefix("whisper") || id.hasPrefix("tts") ? "openai-internal" : "system",
            "shutdown_date": dates[id].map(RealtimeJSON.string) ?? .null,
        ]
    }

    static func randomHex(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in Array("0123456789abcdef")[Int(generator.next(upperBound: UInt(16)))] })
    }

    /// `1.5s`, `20s`, `250ms`: the API's duration spelling in rate-limit messages and headers.
    private static func seconds(_ value: Double) -> String {
        value < 1 ? "\(Int((value * 1_000).rounded()))ms" : (value.rounded() == value ? "\(Int(value))s" : "\(value)s")
    }

    private static func masked(_ key: String) -> String {
        key.count <= 8 ? String(repeating: "*", count: key.count) : key.prefix(3) + "*****" + key.suffix(4)
    }

}
