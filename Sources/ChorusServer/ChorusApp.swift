import ChorusProviders
import Foundation
import Vapor

/// The composition root. Whoever starts a server builds its ``ChorusServices`` first
/// (``ChorusServices/live(_:configuration:embedded:options:)``: the providers, live or embedded, and what runs on them),
/// then ``configure(_:services:options:)`` wires them into the application: the HTTP server's settings, the database,
/// middleware, routes (`Routes.swift`), jobs (`Jobs.swift`) and the order things stop in.
public enum ChorusApp {
    /// Knobs tests use; production always takes the defaults.
    public struct Options: Sendable {
        /// The time source.
        public var clock: @Sendable () -> Date = { Date() }
        /// bcrypt cost (12 in production; tests use the minimum, 4).
        public var bcryptCost: Int = 12
        /// Run the durable job worker in this instance.
        public var runsJobs: Bool = true
        /// Where the media bridges report their figures (the benchmark reads them).
        public var bridgeMetrics = BridgeMetrics()
        /// Where Realtime speech counts its verbatim retries (the benchmarks read them).
        public var speechVerbatim = SpeechVerbatimStatistics()
        /// The MP3 encoder of Realtime speech: libmp3lame when this machine has it; `nil` serves WAV (tests of the
        /// fallback).
        public var speechEncoder: MP3Encoder? = MP3Encoder.system
        /// Replaces providers of the live set before anything is built on them (tests' in-process fakes).
        public var overrideProviders: @Sendable (inout ProviderSet) -> Void = { _ in }

        public init() {}
    }

    /// Wires `services` into `app`: everything `chorus serve` runs.
    public static func configure(_ app: Application, services: ChorusServices, options: Options = Options()) async throws {
        let configuration = services.configuration
        app.http.server.configuration.hostname = configuration.hostname
        app.http.server.configuration.port = configuration.port
        // A connection on which nothing is read or written for this long is closed: headers that stop arriving, a body
        // that stops making progress, a kept-alive connection nobody uses. Event streams and /ws write more often.
        app.http.server.configuration.idleTimeout = .milliseconds(Int64(configuration.idleTimeoutSeconds * 1_000))
        // Vapor refuses a collected body of `defaultMaxBodySize` bytes or more: one more, so that a body of exactly
        // CHORUS_MAX_BODY_BYTES is accepted, as documented (and as nginx's client_max_body_size of the same value does).
        let (collectLimit, overflow) = configuration.maxBodySize.addingReportingOverflow(1)
        app.routes.defaultMaxBodySize = ByteCount(value: overflow ? Int.max : collectLimit)
        app.routes.caseInsensitive = false
        try await prepareDatabase(app, configuration)
        app.storage[ChorusServicesKey.self] = services

        // What runs beside the requests, stopped when the server stops (handlers stop in reverse order) and, earlier, by
        // ``quiesce(_:)`` (its steps in this order).
        if let embedded = services.embedded {
            embedded.register(on: app.grouped("sandbox"))
            app.lifecycle.use(Stopping { embedded.shutdown() })
            addQuiesceStep(app) { embedded.shutdown() }
        }
        app.lifecycle.use(Stopping { await services.bridges.shutdown() })
        addQuiesceStep(app) { await services.bridges.shutdown() }
        if let fanout = services.messaging.fanout as? any LifecycleHandler { app.lifecycle.use(fanout) }
        app.lifecycle.use(Stopping { await services.messaging.hub.closeAll() })
        addQuiesceStep(app) { await services.messaging.hub.closeAll() }
        app.lifecycle.use(services.modelLifecycle)

        useMiddleware(app, configuration, drain: services.drain)
        try registerRoutes(app, services: services)
        if options.runsJobs { startJobs(app, services: services) }
        // Last: what the steps above left running (a call's outcome being saved, presence being announced).
        addQuiesceStep(app) { await services.background.drain() }
        // Registered last, so it runs first when the application shuts down: the steps above in their order, before
        // any connection pool closes.
        app.lifecycle.use(Stopping { application in await ChorusApp.quiesce(application) })
    }

    /// CORS outermost so even errors carry its headers; then the request's span, request ids, security headers, errors,
    /// the drain's refusals, body limits.
    private static func useMiddleware(_ app: Application, _ configuration: ChorusConfiguration, drain: DrainState) {
        app.middleware = Middlewares()
        if !configuration.corsOrigins.isEmpty {
            app.middleware.use(
                CORSMiddleware(
                    configuration: .init(
                        allowedOrigin: .any(configuration.corsOrigins), allowedMethods: [.GET, .POST, .PUT, .PATCH, .DELETE, .OPTIONS],
                        allowedHeaders: [.accept, .authorization, .contentType, .origin, "X-App-Type", "X-Request-ID", "Idempotency-Key"],
                        allowCredentials: false, exposedHeaders: [HTTPHeaders.Name("X-Request-ID"), .retryAfter]
                    )),
                at: .beginning
            )
        }
        app.middleware.use(RequestTracingMiddleware(tracer: app.chorus.tracing.tracer))
        app.middleware.use(RequestIDMiddleware())
        app.middleware.use(HTTPMetricsMiddleware(metrics: app.chorus.instruments))
        app.middleware.use(SecurityHeadersMiddleware(strictTransportSecurity: configuration.publicURL.scheme == "https"))
        app.middleware.use(ChorusErrorMiddleware())
        app.middleware.use(DrainMiddleware(state: drain))
        app.middleware.use(DeclaredBodyLimitMiddleware(defaultLimit: configuration.maxBodySize))
    }

    /// Stops the work that keeps connections to this server open or talks to it — the job runner, the sandbox's
    /// simulated calls, the realtime WebSockets — so that stopping the HTTP server right after does not wait for
    /// them. Idempotent; `asyncShutdown` does the same later anyway. Test harnesses and the benchmark call it before
    /// `app.server.shutdown()`.
    public static func quiesce(_ app: Application) async {
        for step in app.storage[QuiesceSteps.self] ?? [] { await step() }
    }

    private struct QuiesceSteps: StorageKey {
        typealias Value = [@Sendable () async -> Void]
    }

    static func addQuiesceStep(_ app: Application, _ step: @escaping @Sendable () async -> Void) {
        app.storage[QuiesceSteps.self] = (app.storage[QuiesceSteps.self] ?? []) + [step]
    }

    static func randomHex(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in "0123456789abcdef".randomElement(using: &generator)! })
    }
}

/// Runs `stop` when the application shuts down.
struct Stopping: LifecycleHandler {
    let stop: @Sendable (Application) async -> Void

    init(_ stop: @escaping @Sendable () async -> Void) { self.stop = { _ in await stop() } }

    init(_ stop: @escaping @Sendable (Application) async -> Void) { self.stop = stop }

    func shutdownAsync(_ application: Application) async {
        await stop(application)
    }
}
