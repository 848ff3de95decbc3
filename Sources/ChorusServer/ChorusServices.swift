import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Prometheus
import SQLKit
import Vapor

/// The dependencies of every controller and job, built once at start-up by ``live(_:configuration:embedded:options:)``
/// and wired into an application by ``ChorusApp/configure(_:services:options:)``.
public struct ChorusServices: Sendable {
    let configuration: ChorusConfiguration
    let tokens: TokenIssuer
    let passwords: PasswordHasher
    /// The per-instance rate limits (`user` and the per-user stories limits).
    let rateLimiter: RateLimiter
    /// The rate limits that guard money or accounts, counted across instances in the database (`auth`, `calls`).
    let sharedRateLimiter = SharedRateLimiter()
    let telephony: any Telephony
    /// The number calls are placed from.
    let fromNumber: String
    /// Validates `X-Twilio-Signature` with the account's auth token.
    let twilioSignatures: TwilioRequestValidator
    let purchases: any PurchaseVerifier
    let scenarios: ScenarioCatalog
    let voices: VoiceCatalog
    let policy: CallPermissionPolicy
    /// The time source; tests substitute a clock they control.
    let clock: @Sendable () -> Date
    let providerNames: [String: String]
    /// One SQLite write transaction at a time in this process.
    let writeGate = WriteGate()
    /// Read connections (SQLite only).
    let readPool: SQLiteReadPool?
    /// Opens the calls' realtime voice sessions.
    let realtime: any RealtimeConnector
    /// Sessions opened while calls ring, and the bridges in progress.
    let bridges: CallBridgeRegistry
    /// Voice messages: storage, transcription, realtime delivery.
    let messaging: MessagingServices
    /// Stories: text, pictures, narration, moderation.
    let stories: StoriesServices
    /// Checks custom personas when saved and before each call (issue 17).
    let personas: PersonaScreening
    /// Wakes the job runner when work is enqueued.
    let jobSignal: JobSignal
    /// Work that finishes on its own after a request or connection ended; drained before shutdown.
    let background = BackgroundWork()
    /// Whether this instance drains (SIGTERM) and the requests it still handles.
    let drain = DrainState()
    /// Whether access tokens' sign-in sessions still hold (checked per request, remembered for seconds).
    let sessions = SessionCheck()
    /// Every exchange with a provider over the last 15 minutes on this instance (the console's provider health).
    let providerHealth: ProviderHealth
    /// Phone numbers as keyed hashes, for the tables that must recognise a number without storing it.
    let numberHasher: PhoneNumberHasher
    /// The configured OpenAI models' lifecycle (checked at startup and every interval; the console shows it).
    let modelLifecycle: ModelLifecycleWatch
    /// This instance's metrics (`/metrics`).
    let metrics: PrometheusCollectorRegistry
    /// The metrics the server records into ``metrics`` (``ChorusMetrics``: every definition in one place).
    let instruments: ChorusMetrics
    /// The provider emulators served by this server under `/sandbox`, if any.
    let embedded: (any EmbeddedProviders)?
    /// This instance's tracer and span exporter (``ChorusTracing``).
    let tracing: ChorusTracing

    /// The database as seen from `eventLoop`.
    func store(_ database: any SQLDatabase, on eventLoop: any EventLoop) -> ChorusStore {
        var store = ChorusStore(
            sql: database, reader: readPool?.database(on: eventLoop), writeGate: writeGate,
            connectionWaits: instruments.writeTransactionWaits)
        store.tracer = tracing.tracer
        return store
    }

    /// `app`'s database on `eventLoop`. Throws 503 once the application's databases have shut down (work that reached
    /// a stopping instance after its shutdown timeout): an answer, never Fluent's force unwrap of a missing database.
    func store(of app: Application, on eventLoop: any EventLoop, logger: Logger) throws -> ChorusStore {
        guard let database = app.databases.database(logger: logger, on: eventLoop) as? any SQLDatabase else {
            throw APIError.unavailable(retryAfter: 5, detail: "The server is stopping. Retry in 5 seconds.")
        }
        return store(database, on: eventLoop)
    }

    func now() -> Date { clock() }

    /// Derives plans from stored subscriptions with the configured catalog.
    var entitlements: EntitlementEvaluator { EntitlementEvaluator(catalog: configuration.plans) }

    func checkRateLimit(_ key: String, _ limit: ChorusConfiguration.RateLimit) throws {
        if let retryAfter = rateLimiter.consume(key, limit: limit.limit, window: limit.window, now: now().timeIntervalSince1970) {
            throw APIError.rateLimited(retryAfter: retryAfter, limit: limit.limit, window: Int(limit.window))
        }
    }

    /// Like ``checkRateLimit(_:_:)`` for a limit that guards money or accounts: counted in `store`, shared by every
    /// instance on that database (``SharedRateLimiter``). Sweeps ended windows in the background now and then.
    func checkSharedRateLimit(_ key: String, _ limit: ChorusConfiguration.RateLimit, store: ChorusStore, logger: Logger) async throws {
        let now = now()
        if let retryAfter = await sharedRateLimiter.consume(key, limit: limit, now: now, store: store, logger: logger) {
            throw APIError.rateLimited(retryAfter: retryAfter, limit: limit.limit, window: Int(limit.window))
        }
        if sharedRateLimiter.claimSweep(at: now) {
            background.track { [sharedRateLimiter] in await sharedRateLimiter.sweep(store: store, now: now, logger: logger) }
        }
    }

    /// A URL on this server as the outside world sees it.
    func publicURL(_ path: String, query: [URLQueryItem] = []) -> URL {
        var components = URLComponents(url: configuration.publicURL, resolvingAgainstBaseURL: false)!
        components.path = (components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path) + path
        components.queryItems = query.isEmpty ? nil : query
        return components.url!
    }
}

struct ChorusServicesKey: StorageKey {
    typealias Value = ChorusServices
}

extension Application {
    var chorus: ChorusServices {
        guard let services = storage[ChorusServicesKey.self] else { fatalError("ChorusApp.configure was not called") }
        return services
    }
}

extension Request {
    /// The database, for this request's event loop. Throws 503 once the application's databases have shut down (a
    /// request that reached a stopping instance after its shutdown timeout): an answer, never Fluent's force unwrap.
    var store: ChorusStore {
        get throws {
            try application.chorus.store(of: application, on: eventLoop, logger: logger)
        }
    }

    /// Decodes a JSON body with the contract's date format; failures become 422 with field errors.
    func decodeJSON<T: Decodable>(_ type: T.Type) throws -> T {
        guard let buffer = body.data, buffer.readableBytes > 0 else {
            throw APIError.invalid("body", "A JSON body is required")
        }
        if let contentType = headers.contentType, contentType != .json, contentType.subType != "json" {
            throw APIError.detail(.unsupportedMediaType, "Content-Type must be application/json")
        }
        let data = Data(buffer.readableBytesView)
        let decoder = ChorusJSON.makeDecoder()
        do {
            return try decoder.decode(T.self, from: data)
        } catch let error as DecodingError {
            // Every bad field, not only the first the decoder met.
            throw APIError.validation(
                summary: "Validation error", errors: BodyFieldErrors.all(T.self, body: data, first: error, decoder: decoder))
        }
    }

    /// Like ``decodeJSON(_:)`` but an empty body is `nil`.
    func decodeOptionalJSON<T: Decodable>(_ type: T.Type) throws -> T? {
        guard let buffer = body.data, buffer.readableBytes > 0 else { return nil }
        return try decodeJSON(type)
    }

    /// Encodes `value` as the answer.
    func json<T: Encodable>(_ value: T, status: HTTPResponseStatus = .ok) throws -> Response {
        try Response.json(value, status: status)
    }

    /// The client address: the connecting peer, or, when the peer is one of `CHORUS_TRUSTED_PROXIES`, the address its
    /// `X-Forwarded-For` names (``TrustedProxies``).
    var clientIP: String {
        let peer = remoteAddress?.ipAddress ?? "unknown"
        return application.chorus.configuration.trustedProxies.clientAddress(
            peer: peer, forwardedFor: headers[.xForwardedFor])
    }
}

extension Response {
    /// One encoder for every answer (encoding does not mutate it).
    private static let encoder = ChorusJSON.makeEncoder()

    static func json<T: Encodable>(_ value: T, status: HTTPResponseStatus = .ok) throws -> Response {
        let data = try Self.encoder.encode(value)
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "application/json; charset=utf-8")
        return Response(status: status, headers: headers, body: .init(data: data))
    }
}

extension ChorusServices {
    /// The realtime session of a call with `scenario`: its persona as outbound-call instructions, its voice.
    func realtimeSession(for scenario: ResolvedScenario) -> RealtimeSessionConfiguration {
        var instructions = CallInstructions.outboundCall(persona: scenario.persona, temperature: scenario.temperature)
        // Issue 17: the disclosure is said first; the callee can opt out by saying so (the `opt_out` tool).
        if configuration.callDisclosure != nil { instructions += "\n\n" + CallOptOut.disclosureRule }
        instructions += "\n\n" + CallOptOut.sessionRule
        return RealtimeSessionConfiguration(
            model: configuration.callBridge.realtimeModel, instructions: instructions,
            voice: scenario.voice, transcriptionModel: configuration.callBridge.transcriptionModel,
            // While answering-machine detection holds the first words, a greeting gets no answer, and while the
            // disclosure plays nothing answers or interrupts it (the bridge turns the model's own answers on after).
            respondsToTurns: !configuration.callBridge.machineDetection && configuration.callDisclosure == nil,
            tools: [RealtimeFunctionTool(name: CallOptOut.toolName, description: CallOptOut.toolDescription)])
    }

    /// The realtime session of a recorded call (its scenario resolved again; a deleted custom scenario falls back to
    /// the default persona so the answered call still has a voice).
    func realtimeSession(forCall call: CallRecord, store: ChorusStore) async throws -> RealtimeSessionConfiguration {
        let placement = CallPlacement(services: self, store: store, logger: Logger(label: "chorus.bridge"))
        let scenario: ResolvedScenario
        do {
            scenario = try await placement.resolveScenario(call.scenario, userID: call.userID)
        } catch {
            scenario = try await placement.resolveScenario("default", userID: call.userID)
        }
        return realtimeSession(for: scenario)
    }
}
