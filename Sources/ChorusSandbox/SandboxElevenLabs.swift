import ChorusCore
import ChorusProviders
import Foundation
import Logging
import NIOConcurrencyHelpers
import Vapor

/// A local emulator of ElevenLabs' API for voice messages: instant voice cloning, voices, text to speech and the
/// subscription, with the real wire shapes and error bodies. Deterministic except for ids and timestamps.
///
/// Endpoints (``register(on:)``, relative to the routes given, e.g. `sandbox/elevenlabs`):
/// - `POST /v1/voices/add` (multipart: `name` and one or more `files` required; `remove_background_noise`,
///   `description`, `labels` optional) → `{"voice_id","requires_verification":false}` (`true` when a sample's embedded
///   text contains ``requiresVerificationMarker``, as ElevenLabs answers for a voice it holds for verification). Every
///   file must be audio the sandbox can measure (WAV, MP3, MP4/M4A), else 400 `invalid_audio_file`; together at least
///   ``minimumSampleSeconds`` long, else 400 `voice_sample_too_short`; one voice slot per cloned voice, at most
///   ``voiceLimit``, else 400 `voice_limit_reached` (ElevenLabs' wording). Missing fields are FastAPI 422 lists.
/// - `GET /v1/voices/{voice_id}` (a `VoiceResponseModel` subset), `DELETE /v1/voices/{voice_id}` → `{"status":"ok"}`;
///   premade voices cannot be deleted (400 `voice_not_deletable`).
/// - `POST /v1/text-to-speech/{voice_id}` and `…/stream` (chunked), JSON `{text, model_id?, voice_settings?}` with
///   `output_format` (default `mp3_44100_128`), exactly the API reference's enum: `mp3_*` →
///   ``SandboxAudioFiles/speechMP3(text:voice:)``, `pcm_<rate>` → audible 16-bit little-endian PCM at that rate, without
///   a header (as the API sends it), `ulaw_8000` → μ-law; `alaw_8000` and `opus_*` are refused with 400 (no encoder in
///   the sandbox); anything else, `wav_*` included (the API has no WAV output), is a 422 enum error. The voice id
///   picks the pitch, so different cloned voices sound different. Text
///   over the model's limit (``modelCharacterLimits``) → 400 `max_character_limit_exceeded`; an unknown model → 400
///   `model_not_found`; `stability` / `similarity_boost` outside 0…1 → 422. Answers carry `request-id` and
///   `character-cost`.
/// - `GET /v1/user/subscription`: character and voice-slot usage.
///
/// Errors use ElevenLabs' current shape `{"detail":{"type","code","message","status","request_id"}}` (`status`
/// repeating `code`): an unknown voice is 404 `voice_not_found`; a missing or wrong `xi-api-key` (when the emulator has
/// a key) is 401 `needs_authorization` / `invalid_api_key`; text beyond ``characterLimit`` is 401 `quota_exceeded`.
///
/// Control (``registerControl(on:)``): `GET|PUT|DELETE elevenlabs/behavior` (a JSON ``Behavior`` injecting failures
/// and latency) and `GET|DELETE elevenlabs/voices` (the cloned voices; deleting forgets them and the character usage).
///
/// Mount ``register(on:)`` behind a ``SandboxRecorder``: the emulator replaces the `xi-api-key` header of every request
/// with `[REDACTED]` before the recorder stores it, whatever the key.
public final class SandboxElevenLabs: Sendable {
    /// One emulated endpoint, as named in ``Behavior/endpoint``.
    public enum Endpoint: String, Sendable, Codable, CaseIterable {
        case voicesAdd = "voices/add"
        case voices
        case textToSpeech = "text-to-speech"
        case subscription = "user/subscription"
    }

    /// Injected failures and latency. Absent members take their defaults when decoded.
    public struct Behavior: Sendable, Codable, Equatable {
        /// How many of the next requests fail (each injected failure counts one down). Default 0.
        public var failNext: Int
        /// The status of injected failures: 400, 401, 402, 429, 500, 502 or 503. Default 429.
        public var status: Int
        /// The error code; by default `too_many_concurrent_requests` for 429, `quota_exceeded` for 401,
        /// `insufficient_credits` for 402, `invalid_request` for 400 and none for 5xx.
        public var code: String?
        /// Sent as `Retry-After` (whole seconds, rounded up) on injected 429s.
        public var retryAfterSeconds: Double?
        /// Milliseconds every request waits before it is answered. Default 0.
        public var delayMs: Int
        /// Only requests to this endpoint fail; `nil` (default) any endpoint.
        public var endpoint: Endpoint?

        /// Creates a behavior; every parameter has the documented default.
        public init(
            failNext: Int = 0, status: Int = 429, code: String? = nil, retryAfterSeconds: Double? = nil, delayMs: Int = 0,
            endpoint: Endpoint? = nil
        ) {
            self.failNext = failNext
            self.status = status
            self.code = code
            self.retryAfterSeconds = retryAfterSeconds
            self.delayMs = delayMs
            self.endpoint = endpoint
        }

        enum CodingKeys: String, CodingKey {
            case failNext = "fail_next"
            case status
            case code
            case retryAfterSeconds = "retry_after_seconds"
            case delayMs = "delay_ms"
            case endpoint
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
        }

        /// Why the behavior cannot be used, or `nil` when it is valid.
        public var problem: String? {
            if failNext < 0 { return "fail_next must not be negative." }
            if ![400, 401, 402, 429, 500, 502, 503].contains(status) { return "status must be 400, 401, 402, 429, 500, 502 or 503." }
            if let code, code.isEmpty || !code.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) {
                return "code must be a snake_case error code."
            }
            if let retryAfterSeconds, !(retryAfterSeconds >= 0 && retryAfterSeconds <= 3_600) {
                return "retry_after_seconds must be between 0 and 3600."
            }
            if !(0...60_000).contains(delayMs) { return "delay_ms must be between 0 and 60000." }
            return nil
        }

        /// The code an injected failure carries.
        var effectiveCode: String? {
            if let code { return code }
            switch status {
            case 429: return "too_many_concurrent_requests"
            case 401: return "quota_exceeded"
            case 402: return "insufficient_credits"
            case 400: return "invalid_request"
            default: return nil
            }
        }
    }

    /// A voice the emulator knows.
    public struct Voice: Sendable, Codable, Equatable {
        public let voiceID: String
        public let name: String
        /// `cloned` or `premade`.
        public let category: String
        public let description: String?
        public let labels: [String: String]
        /// The samples it was cloned from (empty for premade voices).
        public let samples: [Sample]
        public let removeBackgroundNoise: Bool
        public let createdAtUnix: Int

        /// One uploaded sample.
        public struct Sample: Sendable, Codable, Equatable {
            public let sampleID: String
            public let fileName: String
            public let mimeType: String
            public let sizeBytes: Int
            public let durationSeconds: Double

            enum CodingKeys: String, CodingKey {
                case sampleID = "sample_id"
                case fileName = "file_name"
                case mimeType = "mime_type"
                case sizeBytes = "size_bytes"
                case durationSeconds = "duration_secs"
            }
        }

        enum CodingKeys: String, CodingKey {
            case voiceID = "voice_id"
            case name
            case category
            case description
            case labels
            case samples
            case removeBackgroundNoise = "remove_background_noise"
            case createdAtUnix = "created_at_unix"
        }
    }

    /// Premade voices every account has (id → name): ElevenLabs' long-standing default voices.
    public static let defaultPremadeVoices: [String: String] = [
        "21m00Tcm4TlvDq8ikWAM": "Rachel", "JBFqnCBsd6RMkjVDRZzb": "George", "EXAVITQu4vr4xnSDxMaL": "Sarah",
        "pNInz6obpgDQGcFmaJgB": "Adam", "onwK4e9ZLuTAKqWW03F9": "Daniel",
    ]

    /// Characters one text-to-speech request may carry, by model id (the models the emulator knows).
    public static let modelCharacterLimits: [String: Int] = [
        "eleven_multilingual_v2": 10_000, "eleven_flash_v2_5": 40_000, "eleven_turbo_v2_5": 40_000, "eleven_flash_v2": 30_000,
        "eleven_turbo_v2": 30_000, "eleven_v3": 5_000,
    ]

    /// The model used when a request names none.
    public static let defaultModel = "eleven_multilingual_v2"

    /// The key every request must present as `xi-api-key`; `nil` accepts any request.
    public let apiKey: String?
    /// Voice slots: cloned voices the account may hold at once.
    public let voiceLimit: Int
    /// Characters the account may synthesise in total; `nil` for no limit.
    public let characterLimit: Int?
    /// The shortest total sample duration accepted for cloning, in seconds.
    public let minimumSampleSeconds: Double
    /// The premade voices (id → name).
    public let premadeVoices: [String: String]
    private let initialBehavior: Behavior
    private let state: NIOLockedValueBox<State>
    private let logger: Logger

    private struct State {
        var behavior: Behavior
        var voices: [String: Voice] = [:]
        var charactersUsed = 0
    }

    /// Creates an emulator.
    ///
    /// - Parameters:
    ///   - apiKey: The key requests must present; `nil` (or empty) accepts requests without checking.
    ///   - voiceLimit: Voice slots (ElevenLabs' Creator plan has 30).
    ///   - characterLimit: Total characters before `quota_exceeded`; `nil` for none.
    ///   - minimumSampleSeconds: The shortest total sample duration cloning accepts.
    ///   - behavior: The initial behavior (also what ``resetBehavior()`` restores).
    public init(
        apiKey: String? = nil, voiceLimit: Int = 30, characterLimit: Int? = nil, minimumSampleSeconds: Double = 10,
        premadeVoices: [String: String] = SandboxElevenLabs.defaultPremadeVoices, behavior: Behavior = Behavior(),
        logger: Logger = Logger(label: "chorus.sandbox.elevenlabs")
    ) {
        self.apiKey = apiKey.flatMap { $0.isEmpty ? nil : $0 }
        self.voiceLimit = max(0, voiceLimit)
        self.characterLimit = characterLimit.map { max(0, $0) }
        self.minimumSampleSeconds = max(0, minimumSampleSeconds)
        self.premadeVoices = premadeVoices
        self.initialBehavior = behavior
        self.state = NIOLockedValueBox(State(behavior: behavior))
        self.logger = logger
    }

    /// The secrets a ``SandboxRecorder`` in front of the emulator should redact (the API key, when there is one).
    public var redactedSecrets: [String] { apiKey.map { [$0] } ?? [] }

    // MARK: - Configuration and inspection

    /// The current behavior.
    public var behavior: Behavior { state.withLockedValue { $0.behavior } }

    /// Replaces the behavior.
    public func setBehavior(_ behavior: Behavior) { state.withLockedValue { $0.behavior = behavior } }

    /// Restores the behavior given at creation.
    public func resetBehavior() { state.withLockedValue { $0.behavior = initialBehavior } }

    /// The cloned voices, oldest first.
    public func clonedVoices() -> [Voice] {
        state.withLockedValue { Array($0.voices.values) }.sorted { ($0.createdAtUnix, $0.voiceID) < ($1.createdAtUnix, $1.voiceID) }
    }

    /// Characters synthesised so far.
    public var charactersUsed: Int { state.withLockedValue { $0.charactersUsed } }

    /// Forgets every cloned voice and the character usage.
    public func resetAccount() {
        state.withLockedValue { state in
            state.voices.removeAll()
            state.charactersUsed = 0
        }
    }

    // MARK: - Routes

    /// The largest `voices/add` body accepted.
    static let maxUploadBytes = 64 * 1024 * 1024

    /// Mounts the API on `routes` (e.g. `app.grouped("sandbox", "elevenlabs")`, the clients' base URL):
    /// `POST v1/voices/add`, `GET|DELETE v1/voices/:voice_id`, `POST v1/text-to-speech/:voice_id`,
    /// `POST v1/text-to-speech/:voice_id/stream`, `GET v1/user/subscription`.
    public func register(on routes: any RoutesBuilder) {
        let v1 = routes.grouped("v1")
        v1.on(.POST, "voices", "add", body: .collect(maxSize: ByteCount(value: Self.maxUploadBytes))) { request async throws -> Response in
            try await self.serve(.voicesAdd, request) { self.addVoice(request, requestID: $0) }
        }
        v1.get("voices", ":voice_id") { request async throws -> Response in
            try await self.serve(.voices, request) { self.getVoice(request.parameters.get("voice_id") ?? "", requestID: $0) }
        }
        v1.delete("voices", ":voice_id") { request async throws -> Response in
            try await self.serve(.voices, request) { self.deleteVoice(request.parameters.get("voice_id") ?? "", requestID: $0) }
        }
        v1.on(.POST, "text-to-speech", ":voice_id", body: .collect(maxSize: "1mb")) { request async throws -> Response in
            try await self.serve(.textToSpeech, request) { self.textToSpeech(request, streaming: false, requestID: $0) }
        }
        v1.on(.POST, "text-to-speech", ":voice_id", "stream", body: .collect(maxSize: "1mb")) { request async throws -> Response in
            try await self.serve(.textToSpeech, request) { self.textToSpeech(request, streaming: true, requestID: $0) }
        }
        v1.get("user", "subscription") { request async throws -> Response in
            try await self.serve(.subscription, request) { _ in self.subscription() }
        }
    }

    /// Mounts the control API on `routes`:
    /// - `GET|PUT|DELETE elevenlabs/behavior`: read, replace (a JSON ``Behavior``, snake_case: `fail_next`, `status`,
    ///   `code`, `retry_after_seconds`, `delay_ms`, `endpoint`; absent members take their defaults) or reset it;
    /// - `GET elevenlabs/voices`: the cloned voices (`{"voices":[…], "characters_used"}`); `DELETE` forgets them and
    ///   the character usage.
    public func registerControl(on routes: any RoutesBuilder) {
        let control = routes.grouped("elevenlabs")
        control.get("behavior") { _ -> Response in SandboxJSON.response(self.behavior) }
        control.put("behavior") { request -> Response in
            let behavior: Behavior
            do {
                behavior = try SandboxJSON.decode(Behavior.self, from: request)
            } catch {
                return SandboxJSON.detail(
                    "Body must be a JSON object with any of fail_next, status (400|401|402|429|500|502|503), code, "
                        + "retry_after_seconds, delay_ms, endpoint (\(Endpoint.allCases.map(\.rawValue).joined(separator: "|"))).",
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
        control.get("voices") { _ -> Response in
            SandboxJSON.response(VoiceListing(voices: self.clonedVoices(), charactersUsed: self.charactersUsed))
        }
        control.delete("voices") { _ -> Response in
            self.resetAccount()
            return Response(status: .noContent)
        }
    }

    // MARK: - Request pipeline

    /// Delay, key check (then the key is redacted for the recorder), injected failure, then the endpoint; every answer
    /// gets a `request-id`.
    private func serve(_ endpoint: Endpoint, _ request: Request, _ handler: (_ requestID: String) -> Response) async throws -> Response {
        let delayMs = behavior.delayMs
        if delayMs > 0 { try await Task.sleep(for: .milliseconds(delayMs)) }
        let requestID = Self.randomID(20)
        let response: Response
        if let rejection = authenticate(request, requestID: requestID) {
            response = rejection
        } else if let failure = injectedFailure(for: endpoint, requestID: requestID) {
            response = failure
        } else {
            response = handler(requestID)
        }
        if request.headers.contains(name: "xi-api-key") {
            request.headers.replaceOrAdd(name: "xi-api-key", value: "[REDACTED]")
        }
        response.headers.replaceOrAdd(name: "request-id", value: requestID)
        return response
    }

    private func authenticate(_ request: Request, requestID: String) -> Response? {
        guard let apiKey else { return nil }
        guard let presented = request.headers.first(name: "xi-api-key"), !presented.isEmpty else {
            if request.headers.bearerAuthorization != nil {
                return Self.error(
                    .unauthorized, code: "invalid_authorization_header", type: "authentication_error",
                    message: "Invalid authorization header. Send your API key in the xi-api-key header.", requestID: requestID)
            }
            return Self.error(
                .unauthorized, code: "needs_authorization", type: "authentication_error",
                message: "Neither authorization header nor xi-api-key received, please provide one.", requestID: requestID)
        }
        guard ConstantTime.equals(presented, apiKey) else {
            return Self.error(.unauthorized, code: "invalid_api_key", type: "authentication_error", message: "Invalid API key", requestID: requestID)
        }
        return nil
    }

    private func injectedFailure(for endpoint: Endpoint, requestID: String) -> Response? {
        let failing = state.withLockedValue { state -> Behavior? in
            guard state.behavior.failNext > 0, state.behavior.endpoint == nil || state.behavior.endpoint == endpoint else { return nil }
            state.behavior.failNext -= 1
            return state.behavior
        }
        guard let failing else { return nil }
        let status = HTTPResponseStatus(statusCode: failing.status)
        let code = failing.effectiveCode
        let response: Response
        switch code {
        case "too_many_concurrent_requests", "concurrent_limit_exceeded":
            response = Self.error(
                status, code: code ?? "", type: "rate_limit_error",
                message:
                    "Too many concurrent requests. Your current subscription is associated with a maximum of 5 concurrent requests.",
                requestID: requestID)
        case "system_busy":
            response = Self.error(
                status, code: "system_busy", type: "rate_limit_error",
                message: "We're experiencing a high volume of requests. Please try again in a few seconds.", requestID: requestID)
        case "quota_exceeded":
            response = Self.error(
                status, code: "quota_exceeded", type: "payment_required",
                message: "This request exceeds your quota of 10000. You have 0 credits remaining, while 1 credits are required for this request.",
                requestID: requestID)
        case "voice_limit_reached":
            response = voiceLimitReached(status: status, requestID: requestID)
        case .some(let code):
            response = Self.error(
                status, code: code, type: "invalid_request_error", message: "Sandbox injected failure: \(code).", requestID: requestID)
        case nil:
            response = Self.error(
                status, code: "internal_server_error", type: "server_error", message: "An internal server error occurred.", requestID: requestID)
        }
        if failing.status == 429, let seconds = failing.retryAfterSeconds {
            response.headers.replaceOrAdd(name: "retry-after", value: String(Int(seconds.rounded(.up))))
        }
        return response
    }

    // MARK: - Voices

    /// A sample whose embedded text (``SandboxAudioFiles/embeddedText(in:)``) contains this makes `voices/add` answer
    /// `requires_verification: true`.
    public static let requiresVerificationMarker = "[sandbox:requires_verification]"

    private func addVoice(_ request: Request, requestID: String) -> Response {
        guard let boundary = MultipartForm.boundary(contentType: request.headers.first(name: .contentType) ?? ""),
            let body = request.body.data, let parts = MultipartForm(bytes: Array(body.readableBytesView), boundary: boundary)?.parts
        else {
            return Self.validation([("missing", ["body", "name"], "Field required"), ("missing", ["body", "files"], "Field required")])
        }
        let name = parts.first { $0.name == "name" && $0.filename == nil }.map { String(decoding: $0.body, as: UTF8.self) }
        let files = parts.filter { $0.name == "files" || $0.name == "files[]" }
        var missing: [(String, [String], String)] = []
        if name == nil || name?.isEmpty == true { missing.append(("missing", ["body", "name"], "Field required")) }
        if files.isEmpty { missing.append(("missing", ["body", "files"], "Field required")) }
        guard missing.isEmpty, let name else { return Self.validation(missing) }
        let removeNoiseText = parts.first { $0.name == "remove_background_noise" }.map { String(decoding: $0.body, as: UTF8.self).lowercased() }
        guard removeNoiseText == nil || removeNoiseText == "true" || removeNoiseText == "false" else {
            return Self.validation([("bool_parsing", ["body", "remove_background_noise"], "Input should be a valid boolean")])
        }
        var labels: [String: String] = [:]
        if let labelsText = parts.first(where: { $0.name == "labels" }).map({ String(decoding: $0.body, as: UTF8.self) }), !labelsText.isEmpty {
            guard let decoded = try? JSONDecoder().decode([String: String].self, from: Data(labelsText.utf8)) else {
                return Self.error(
                    .badRequest, code: "invalid_labels", type: "validation_error",
                    message: "Labels must be a JSON object of string values.", requestID: requestID)
            }
            labels = decoded
        }
        var samples: [Voice.Sample] = []
        for file in files {
            let data = Data(file.body)
            let fileName = file.filename ?? "sample"
            guard let seconds = SandboxAudioFiles.durationSeconds(of: data), seconds > 0 else {
                return Self.error(
                    .badRequest, code: "invalid_audio_file", type: "validation_error",
                    message: "The file \(fileName) could not be read as audio. Upload mp3, wav or m4a recordings.", requestID: requestID)
            }
            samples.append(
                Voice.Sample(
                    sampleID: Self.randomID(20), fileName: fileName, mimeType: file.contentType ?? "application/octet-stream",
                    sizeBytes: data.count, durationSeconds: seconds))
        }
        let total = samples.reduce(0) { $0 + $1.durationSeconds }
        guard total >= minimumSampleSeconds else {
            return Self.error(
                .badRequest, code: "voice_sample_too_short", type: "validation_error",
                message: String(
                    format: "The samples are %.1f seconds long in total; instant voice cloning needs at least %.0f seconds.", total,
                    minimumSampleSeconds),
                requestID: requestID)
        }
        let voice = Voice(
            voiceID: Self.randomID(20), name: name,
            category: "cloned", description: parts.first { $0.name == "description" }.map { String(decoding: $0.body, as: UTF8.self) }, labels: labels,
            samples: samples, removeBackgroundNoise: removeNoiseText == "true", createdAtUnix: Int(Date().timeIntervalSince1970))
        let added = state.withLockedValue { state -> Bool in
            guard state.voices.count < voiceLimit else { return false }
            state.voices[voice.voiceID] = voice
            return true
        }
        guard added else { return voiceLimitReached(status: .badRequest, requestID: requestID) }
        logger.info("sandbox.elevenlabs.voice_added", metadata: ["voice_id": "\(voice.voiceID)", "samples": "\(samples.count)"])
        let requiresVerification = files.contains {
            SandboxAudioFiles.embeddedText(in: Data($0.body))?.contains(Self.requiresVerificationMarker) == true
        }
        return SandboxJSON.response(AddVoiceResponse(voiceID: voice.voiceID, requiresVerification: requiresVerification))
    }

    private func voiceLimitReached(status: HTTPResponseStatus, requestID: String) -> Response {
        Self.error(
            status, code: "voice_limit_reached", type: "validation_error",
            message:
                "You have reached your maximum amount of custom voices (\(voiceLimit) / \(voiceLimit)). You can upgrade your subscription to increase your custom voice limit.",
            requestID: requestID)
    }

    private func getVoice(_ id: String, requestID: String) -> Response {
        guard let voice = voice(id) else { return voiceNotFound(id, requestID: requestID) }
        return SandboxJSON.response(VoiceResponse(voice))
    }

    private func deleteVoice(_ id: String, requestID: String) -> Response {
        if premadeVoices[id] != nil {
            return Self.error(
                .badRequest, code: "voice_not_deletable", type: "invalid_request_error",
                message: "Premade voices cannot be deleted.", requestID: requestID)
        }
        let removed = state.withLockedValue { $0.voices.removeValue(forKey: id) }
        guard removed != nil else { return voiceNotFound(id, requestID: requestID) }
        return SandboxJSON.response(["status": "ok"])
    }

    private func voice(_ id: String) -> Voice? {
        if let name = premadeVoices[id] {
            return Voice(
                voiceID: id, name: name, category: "premade", description: nil, labels: [:], samples: [], removeBackgroundNoise: false,
                createdAtUnix: 0)
        }
        return state.withLockedValue { $0.voices[id] }
    }

    private func voiceNotFound(_ id: String, requestID: String) -> Response {
        Self.error(
            .notFound, code: "voice_not_found", type: "not_found", message: "A voice with voice_id '\(id)' was not found.",
            requestID: requestID)
    }

    private func subscription() -> Response {
        let (voices, characters) = state.withLockedValue { ($0.voices.count, $0.charactersUsed) }
        return SandboxJSON.response(
            SubscriptionResponse(
                tier: "sandbox", characterCount: characters, characterLimit: characterLimit ?? Int(Int32.max), voiceLimit: voiceLimit,
                voiceSlotsUsed: voices, canUseInstantVoiceCloning: true, status: "active"))
    }

    // MARK: - Text to speech

    private func textToSpeech(_ request: Request, streaming: Bool, requestID: String) -> Response {
        let voiceID = request.parameters.get("voice_id") ?? ""
        let outputFormat = (try? request.query.get(String.self, at: "output_format")) ?? "mp3_44100_128"
        guard let format = OutputFormat(outputFormat) else {
            return Self.validation([("enum", ["query", "output_format"], "Input should be a valid output format")])
        }
        guard let data = request.body.data.map({ Data(buffer: $0) }),
            let body = try? JSONDecoder().decode(SpeechBody.self, from: data)
        else {
            return Self.validation([("missing", ["body", "text"], "Field required")])
        }
        if let settings = body.voiceSettings {
            var problems: [(String, [String], String)] = []
            if let stability = settings.stability, !(0...1).contains(stability) {
                problems.append(("value_error", ["body", "voice_settings", "stability"], "Value error, stability must be between 0 and 1"))
            }
            if let similarity = settings.similarityBoost, !(0...1).contains(similarity) {
                problems.append(
                    ("value_error", ["body", "voice_settings", "similarity_boost"], "Value error, similarity_boost must be between 0 and 1"))
            }
            if !problems.isEmpty { return Self.validation(problems) }
        }
        let model = body.modelID ?? Self.defaultModel
        guard let limit = Self.modelCharacterLimits[model] else {
            return Self.error(
                .badRequest, code: "model_not_found", type: "invalid_request_error",
                message: "A model with model ID \(model) does not exist.", requestID: requestID)
        }
        guard body.text.count <= limit else {
            return Self.error(
                .badRequest, code: "max_character_limit_exceeded", type: "validation_error",
                message: "You are sending \(body.text.count) characters with \(model); the limit is \(limit) characters per request.",
                requestID: requestID)
        }
        guard voice(voiceID) != nil else { return voiceNotFound(voiceID, requestID: requestID) }
        guard let encoder = format.encoder else {
            return Self.error(
                .badRequest, code: "unsupported_output_format", type: "invalid_request_error",
                message: "The sandbox cannot encode \(outputFormat); use an mp3_*, pcm_* or ulaw_8000 format.", requestID: requestID)
        }
        let cost = body.text.count
        let allowed = state.withLockedValue { state -> Int? in
            if let characterLimit, state.charactersUsed + cost > characterLimit { return characterLimit - state.charactersUsed }
            state.charactersUsed += cost
            return nil
        }
        if let remaining = allowed {
            return Self.error(
                .unauthorized, code: "quota_exceeded", type: "payment_required",
                message:
                    "This request exceeds your quota of \(characterLimit ?? 0). You have \(max(0, remaining)) credits remaining, while \(cost) credits are required for this request.",
                requestID: requestID)
        }
        let audio = encoder(body.text, voiceID)
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: format.contentType)
        headers.replaceOrAdd(name: "character-cost", value: String(cost))
        guard streaming else { return Response(status: .ok, headers: headers, body: .init(data: audio)) }
        let chunkSize = 4_096
        return Response(
            status: .ok, headers: headers,
            body: .init(managedAsyncStream: { writer in
                var offset = 0
                while offset < audio.count {
                    let end = min(offset + chunkSize, audio.count)
                    try await writer.writeBuffer(ByteBuffer(data: audio.subdata(in: offset..<end)))
                    offset = end
                }
            }))
    }

    /// An `output_format` the API accepts, with what the sandbox makes of it.
    struct OutputFormat {
        let contentType: String
        /// `nil` when the sandbox has no encoder for the format.
        let encoder: (@Sendable (String, String) -> Data)?

        /// The `pcm_<rate>` rates and `mp3_<rate>_<bitrate>` variants of the API reference's `output_format` enum.
        static let sampleRates = [8_000, 16_000, 22_050, 24_000, 44_100, 48_000]
        static let mp3Variants = ["22050_32", "44100_32", "44100_64", "44100_96", "44100_128", "44100_192"]

        init?(_ name: String) {
            let parts = name.split(separator: "_", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return nil }
            switch parts[0] {
            case "mp3" where Self.mp3Variants.contains(parts[1]):
                contentType = "audio/mpeg"
                encoder = { SandboxAudioFiles.speechMP3(text: $0, voice: $1) }
            case "pcm":
                guard let rate = Int(parts[1]), Self.sampleRates.contains(rate) else { return nil }
                contentType = "audio/pcm"
                encoder = { text, voice in
                    var data = Data()
                    for sample in Self.samples(text, voice: voice, rate: rate) {
                        data.append(UInt8(truncatingIfNeeded: UInt16(bitPattern: sample)))
                        data.append(UInt8(truncatingIfNeeded: UInt16(bitPattern: sample) >> 8))
                    }
                    return data
                }
            case "ulaw" where parts[1] == "8000":
                contentType = "audio/basic"
                encoder = { Data(SandboxSpeech.speak($0, voice: SandboxAudioFiles.pitchIndex($1))) }
            case "alaw" where parts[1] == "8000":
                contentType = "audio/basic"
                encoder = nil
            case "opus" where ["48000_32", "48000_64", "48000_96", "48000_128", "48000_192"].contains(parts[1]):
                contentType = "audio/opus"
                encoder = nil
            default:
                return nil
            }
        }

        /// The sandbox voice for `text` as PCM16 at `rate`.
        static func samples(_ text: String, voice: String, rate: Int) -> [Int16] {
            WAV.resample(MuLaw.decode(SandboxSpeech.speak(text, voice: SandboxAudioFiles.pitchIndex(voice))), from: MuLaw.sampleRate, to: rate)
        }
    }

    // MARK: - Wire types

    struct AddVoiceResponse: Encodable {
        let voiceID: String
        let requiresVerification: Bool

        enum CodingKeys: String, CodingKey {
            case voiceID = "voice_id"
            case requiresVerification = "requires_verification"
        }
    }

    /// The `VoiceResponseModel` members the sandbox knows.
    struct VoiceResponse: Encodable {
        let voiceID: String
        let name: String
        let category: String
        let description: String?
        let labels: [String: String]
        let samples: [Voice.Sample]?
        let availableForTiers: [String] = []
        let highQualityBaseModelIDs: [String] = ["eleven_multilingual_v2", "eleven_flash_v2_5"]
        let createdAtUnix: Int?
        let isOwner: Bool

        init(_ voice: Voice) {
            voiceID = voice.voiceID
            name = voice.name
            category = voice.category
            description = voice.description
            labels = voice.labels
            samples = voice.category == "cloned" ? voice.samples : nil
            createdAtUnix = voice.category == "cloned" ? voice.createdAtUnix : nil
            isOwner = voice.category == "cloned"
        }

        enum CodingKeys: String, CodingKey {
            case voiceID = "voice_id"
            case name, category, description, labels, samples
            case availableForTiers = "available_for_tiers"
            case highQualityBaseModelIDs = "high_quality_base_model_ids"
            case createdAtUnix = "created_at_unix"
            case isOwner = "is_owner"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(voiceID, forKey: .voiceID)
            try container.encode(name, forKey: .name)
            try container.encode(category, forKey: .category)
            try container.encode(description, forKey: .description)
            try container.encode(labels, forKey: .labels)
            try container.encode(samples, forKey: .samples)
            try container.encode(availableForTiers, forKey: .availableForTiers)
            try container.encode(highQualityBaseModelIDs, forKey: .highQualityBaseModelIDs)
            try container.encode(createdAtUnix, forKey: .createdAtUnix)
            try container.encode(isOwner, forKey: .isOwner)
        }
    }

    struct SubscriptionResponse: Encodable {
        let tier: String
        let characterCount: Int
        let characterLimit: Int
        let voiceLimit: Int
        let voiceSlotsUsed: Int
        let canUseInstantVoiceCloning: Bool
        let status: String

        enum CodingKeys: String, CodingKey {
            case tier
            case characterCount = "character_count"
            case characterLimit = "character_limit"
            case voiceLimit = "voice_limit"
            case voiceSlotsUsed = "voice_slots_used"
            case canUseInstantVoiceCloning = "can_use_instant_voice_cloning"
            case status
        }
    }

    struct VoiceListing: Encodable {
        let voices: [Voice]
        let charactersUsed: Int

        enum CodingKeys: String, CodingKey {
            case voices
            case charactersUsed = "characters_used"
        }
    }

    struct SpeechBody: Decodable {
        let text: String
        let modelID: String?
        let voiceSettings: Settings?

        struct Settings: Decodable {
            let stability: Double?
            let similarityBoost: Double?

            enum CodingKeys: String, CodingKey {
                case stability
                case similarityBoost = "similarity_boost"
            }
        }

        enum CodingKeys: String, CodingKey {
            case text
            case modelID = "model_id"
            case voiceSettings = "voice_settings"
        }
    }

    // MARK: - Errors and helpers

    /// ElevenLabs' current error shape.
    static func error(_ status: HTTPResponseStatus, code: String, type: String, message: String, requestID: String) -> Response {
        SandboxJSON.response(
            ["detail": ["type": type, "code": code, "message": message, "status": code, "request_id": requestID]], status: status)
    }

    /// FastAPI's 422 list: `(type, loc, msg)` per problem.
    static func validation(_ problems: [(String, [String], String)]) -> Response {
        struct Item: Encodable {
            let type: String
            let loc: [String]
            let msg: String
            let input: String?

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(type, forKey: .type)
                try container.encode(loc, forKey: .loc)
                try container.encode(msg, forKey: .msg)
                try container.encode(input, forKey: .input)
            }

            enum CodingKeys: String, CodingKey {
                case type, loc, msg, input
            }
        }
        return SandboxJSON.response(
            ["detail": problems.map { Item(type: $0.0, loc: $0.1, msg: $0.2, input: nil) }], status: .unprocessableEntity)
    }

    /// A random id of letters and digits, like ElevenLabs' voice ids.
    static func randomID(_ length: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<length).map { _ in alphabet.randomElement() ?? "a" })
    }

}
