import AsyncHTTPClient
import ChorusCore
import ChorusProviders
import ChorusSandbox
import Crypto
import Fluent
import FluentPostgresDriver
import FluentSQLiteDriver
import Foundation
import Prometheus
import SQLKit
import Vapor

/// The composition root: databases, migrations, providers (live or sandbox), middleware, routes, jobs.
public enum ChorusApp {
    /// Knobs tests use; production always takes the defaults.
    public struct Options: Sendable {
        /// The time source.
        public var clock: @Sendable () -> Date = { Date() }
        /// bcrypt cost (12 in production; tests use the minimum, 4).
        public var bcryptCost: Int = 12
        /// Run the durable job worker in this instance.
        public var runsJobs: Bool = true
        /// Sandbox timing override (tests run simulated calls faster than real time).
        public var sandboxTimeScale: Double = 1
        /// Where the media bridges report their figures (the benchmark reads them).
        public var bridgeMetrics = BridgeMetrics()
        /// Where Realtime speech counts its verbatim retries (the benchmarks read them).
        public var speechVerbatim = SpeechVerbatimStatistics()
        /// The MP3 encoder of Realtime speech: libmp3lame when this machine has it; `nil` serves WAV (tests of the
        /// fallback).
        public var speechEncoder: MP3Encoder? = MP3Encoder.system

        public init() {}
    }

    /// Configures `app` for `configuration`: everything `chorus serve` runs.
    public static func configure(_ app: Application, configuration: ChorusConfiguration, options: Options = Options()) async throws {
        app.http.server.configuration.hostname = configuration.hostname
        app.http.server.configuration.port = configuration.port
        // A connection on which nothing is read or written for this long is closed: headers that stop arriving, a body
        // that stops making progress, a kept-alive connection nobody uses. Event streams and /ws write more often.
        app.http.server.configuration.idleTimeout = .milliseconds(Int64(configuration.idleTimeoutSeconds * 1_000))
        app.routes.defaultMaxBodySize = ByteCount(value: configuration.maxBodySize)
        app.routes.caseInsensitive = false
        try FileManager.default.createDirectory(at: configuration.dataDirectory, withIntermediateDirectories: true)
        // Blocking work (SQLite statements, bcrypt) gets its own pool instead of the process-wide one of 2 threads.
        app.threadPool = NIOThreadPool(numberOfThreads: configuration.blockingThreads)

        try configureDatabase(app, configuration)
        app.migrations.add(ChorusMigrations.all)
        try await app.autoMigrate()
        if case .sqlite = configuration.database {
            _ = try await (app.db as! any SQLDatabase).raw("PRAGMA journal_mode=WAL").all()
        }

        let secret = try jwtSecret(configuration, logger: app.logger)
        let tokens = await TokenIssuer.make(
            secret: secret, accessTokenLifetime: configuration.accessTokenLifetime, refreshTokenLifetime: configuration.refreshTokenLifetime
        )

        // Providers: live Twilio when configured, otherwise the Twilio and App Store emulators mounted on this server.
        let telephony: any Telephony
        let fromNumber: String
        let twilioToken: String
        var providerNames = ["telephony": "twilio", "app_store": "sandbox"]
        let httpClient = app.http.client.shared
        // The App Store: StoreKit 2 data verified against Apple Root CA - G3 (and, outside production, the sandbox
        // App Store's own root from the data directory); legacy receipts through verifyReceipt — Apple's when a shared
        // secret is configured, otherwise the emulator mounted under /sandbox.
        let appStoreSettings = configuration.appStore
        let sandboxAuthority = configuration.isProduction ? nil : try AppStoreTestAuthority.loadOrCreate(directory: configuration.dataDirectory)
        let roots =
            try AppleRootCertificates.roots(extraFiles: appStoreSettings.extraRootCertificatePaths)
            + [sandboxAuthority?.rootCertificate].compactMap { $0 }
        let receiptEmulator = configuration.loopbackURL.appendingPathComponent("sandbox/app-store/verifyReceipt")
        let purchases = AppStorePurchaseVerifier(
            signedData: AppStoreSignedDataVerifier(
                rootCertificates: roots, bundleID: appStoreSettings.bundleID, appAppleID: appStoreSettings.appAppleID,
                acceptedEnvironments: appStoreSettings.acceptedEnvironments),
            receipts: AppStoreReceiptVerifier(
                httpClient: httpClient, productionURL: appStoreSettings.verifyReceiptURL ?? receiptEmulator.appendingPathComponent("production"),
                sandboxURL: appStoreSettings.verifyReceiptSandboxURL ?? receiptEmulator.appendingPathComponent("sandbox"),
                sharedSecret: appStoreSettings.sharedSecret, bundleID: appStoreSettings.bundleID,
                acceptedEnvironments: appStoreSettings.acceptedEnvironments, logger: app.logger)
        )
        providerNames["app_store"] = appStoreSettings.verifyReceiptURL == nil ? "sandbox" : "apple"
        let providerHealth = ProviderHealth(clock: options.clock)
        let sandboxAccountSID = "AC" + randomHex(32)
        if let twilio = configuration.twilio {
            telephony = TwilioRESTClient(
                accountSID: twilio.accountSID, authToken: twilio.authToken, baseURL: twilio.apiBaseURL, httpClient: httpClient,
                observer: providerHealth, logger: app.logger
            )
            fromNumber = twilio.fromNumber
            twilioToken = twilio.authToken
        } else {
            providerNames["telephony"] = "sandbox"
            twilioToken = randomHex(32)
            telephony = TwilioRESTClient(
                accountSID: sandboxAccountSID, authToken: twilioToken, baseURL: configuration.loopbackURL.appendingPathComponent("sandbox"),
                httpClient: httpClient, observer: providerHealth, logger: app.logger
            )
            fromNumber = ChorusConfiguration.sandboxCallerID
        }
        let realtimeKey = configuration.openAI?.apiKey ?? randomHex(40)
        let elevenLabsKey = configuration.elevenLabs?.apiKey ?? randomHex(40)
        // The emulators are mounted under /sandbox outside production: the App Store emulator signs what the sandbox
        // purchase verifier accepts, and the Twilio emulator serves calls when no Twilio account is configured.
        if let sandboxAuthority {
            let timing = SandboxTwilio.Timing(
                ringDelay: .milliseconds(Int(configuration.sandboxTiming.ringSeconds * 1000)),
                talkDuration: .milliseconds(Int(configuration.sandboxTiming.talkSeconds * 1000)),
                timeScale: options.sandboxTimeScale
            )
            let retention = configuration.sandboxRetention
            let sandbox = SandboxServices(
                twilio: SandboxTwilio(
                    accountSID: sandboxAccountSID, authToken: configuration.twilio == nil ? twilioToken : randomHex(32), httpClient: httpClient,
                    timing: timing, logger: app.logger,
                    retention: SandboxTwilio.Retention(endedCalls: retention.keptCalls, audioBytes: retention.keptAudioBytes)
                ),
                appStore: SandboxAppStore(
                    authority: sandboxAuthority,
                    receipts: SandboxReceiptValidator(
                        sharedSecret: appStoreSettings.sharedSecret, bundleID: appStoreSettings.bundleID, now: options.clock),
                    bundleID: appStoreSettings.bundleID, appAppleID: appStoreSettings.appAppleID, now: options.clock),
                realtime: SandboxRealtime(
                    apiKey: configuration.openAI == nil ? realtimeKey : randomHex(40), keptSessions: retention.keptCalls, logger: app.logger),
                openAI: SandboxOpenAI(apiKey: configuration.openAI == nil ? realtimeKey : randomHex(40), logger: app.logger),
                elevenLabs: SandboxElevenLabs(apiKey: configuration.elevenLabs == nil ? elevenLabsKey : randomHex(40), logger: app.logger),
                requestLogEntries: retention.requestLogEntries, requestLogBytes: retention.requestLogBytes
            )
            sandbox.register(on: app.grouped("sandbox"))
            app.lifecycle.use(SandboxShutdown(services: sandbox))
            addQuiesceStep(app) { sandbox.shutdown() }
        }

        // The calls' AI voice: OpenAI when configured, otherwise the Realtime emulator mounted under /sandbox.
        if configuration.openAI == nil { providerNames["realtime"] = "sandbox" } else { providerNames["realtime"] = "openai" }
        let realtime = try OpenAIRealtimeConnector(
            baseURL: configuration.openAI?.baseURL ?? configuration.loopbackURL.appendingPathComponent("sandbox/openai/v1"),
            apiKey: realtimeKey, logger: app.logger)
        let bridges = CallBridgeRegistry(
            connector: realtime, eventLoopGroup: app.eventLoopGroup, metrics: options.bridgeMetrics,
            expiry: .seconds(CallPlacement.ringTimeoutSeconds + 60), observer: providerHealth, logger: app.logger)
        app.lifecycle.use(BridgeShutdown(bridges: bridges))
        addQuiesceStep(app) { await bridges.shutdown() }

        var readPool: SQLiteReadPool?
        if case .sqlite(let path) = configuration.database {
            let pool = SQLiteReadPool(
                path: path, connectionsPerEventLoop: configuration.sqliteReadersPerEventLoop, threadPool: app.threadPool,
                eventLoopGroup: app.eventLoopGroup, logger: app.logger
            )
            app.lifecycle.use(ReadPoolShutdown(pool: pool))
            readPool = pool
        }
        // Voice messages: blobs under the data directory, transcription by OpenAI when configured, otherwise by the
        // OpenAI emulator mounted under /sandbox; realtime events across instances through PostgreSQL when configured.
        let hub = RealtimeHub(limits: configuration.connections)
        let fanout: any RealtimeFanout
        if case .postgres(let url) = configuration.database {
            let postgres = PostgresFanout(
                hub: hub, configuration: try SQLPostgresConfiguration(url: url), logger: app.logger)
            app.lifecycle.use(postgres)
            fanout = postgres
        } else {
            fanout = LocalFanout(hub: hub)
        }
        app.lifecycle.use(RealtimeShutdown(hub: hub))
        addQuiesceStep(app) { await hub.closeAll() }
        let openAIConnection = OpenAIConnection(
            apiKey: realtimeKey, baseURL: configuration.openAI?.baseURL ?? configuration.loopbackURL.appendingPathComponent("sandbox/openai/v1"),
            httpClient: httpClient, observer: providerHealth, logger: app.logger)
        // The model lifecycle check (issue 22): OpenAI's model list at startup and every interval. Production refuses to
        // start with a configured model that is shut down or not offered; a list that cannot be read only warns.
        let metrics = PrometheusCollectorRegistry()
        let modelLifecycle = ModelLifecycleWatch(
            models: configuration.openAIModels,
            catalog: OpenAIModelCatalog(
                connection: OpenAIConnection(
                    apiKey: realtimeKey, baseURL: openAIConnection.baseURL, httpClient: httpClient, timeout: .seconds(10), retry: .none,
                    observer: providerHealth, logger: app.logger)),
            interval: configuration.modelCheckInterval, clock: options.clock, registry: metrics, logger: app.logger)
        // Without an OpenAI account the provider is the emulator on this very server, which answers once it listens.
        if configuration.isProduction, configuration.openAI != nil {
            let unusable = await modelLifecycle.checkBeforeServing().unusable
            guard unusable.isEmpty else { throw ConfigurationError(problems: unusable.map(\.summary)) }
        }
        app.lifecycle.use(modelLifecycle)
        let spool = configuration.dataDirectory.appendingPathComponent("spool")
        try FileManager.default.createDirectory(at: spool, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        providerNames["transcription"] = configuration.openAI == nil ? "sandbox" : "openai"
        providerNames["voice_cloning"] = configuration.elevenLabs == nil ? "sandbox" : "elevenlabs"
        let elevenLabsConnection = ElevenLabsConnection(
            apiKey: elevenLabsKey,
            baseURL: configuration.elevenLabs?.baseURL ?? configuration.loopbackURL.appendingPathComponent("sandbox/elevenlabs"),
            httpClient: httpClient, observer: providerHealth, logger: app.logger)
        var blobs: any BlobStore
        if let objectStorage = configuration.objectStorage {
            blobs = try S3BlobStore(
                configuration: objectStorage, httpClient: httpClient, threadPool: app.threadPool, observer: providerHealth, logger: app.logger)
            providerNames["storage"] = "s3"
        } else {
            blobs = try FileBlobStore(root: configuration.dataDirectory.appendingPathComponent("blobs"), threadPool: app.threadPool)
            providerNames["storage"] = "filesystem"
        }
        if configuration.blobMemoryCacheBytes > 0 {
            blobs = MemoryCachedBlobStore(base: blobs, capacityBytes: configuration.blobMemoryCacheBytes)
        }
        // Every provider call is metered for the feature it works for (users and request ids from the task's context).
        let meterStore: @Sendable () -> ChorusStore = { [unowned app] in app.chorus.store(app.db as! any SQLDatabase, on: app.eventLoopGroup.any()) }
        func meter(_ feature: MeteredFeature, limits: ProductLimits) -> UsageMeter {
            UsageMeter(feature: feature, prices: configuration.prices, limits: limits, store: meterStore, clock: options.clock, logger: app.logger)
        }
        let openAIName = configuration.openAI == nil ? "sandbox-openai" : "openai"
        // OpenAI speech: the `/v1/audio/speech` models over HTTP, any other model (gpt-realtime-2.1-mini, the default)
        // on the Realtime API through the calls' connector (the emulator when no key is configured), MP3 by libmp3lame.
        let speechEncoder = MP3Encoder.announce(options.speechEncoder, logger: app.logger)
        func openAISpeech(_ model: String) -> any SpeechSynthesizer {
            if OpenAISpeechSynthesizer.serves(model: model) { return OpenAISpeechSynthesizer(connection: openAIConnection) }
            return OpenAIRealtimeSpeechSynthesizer(
                connector: realtime, eventLoopGroup: app.eventLoopGroup, encoder: speechEncoder, statistics: options.speechVerbatim,
                logger: app.logger)
        }
        let elevenLabsName = configuration.elevenLabs == nil ? "sandbox-elevenlabs" : "elevenlabs"
        let voiceMeter = meter(.voiceMessages, limits: configuration.voiceMessages.limits)
        let messaging = MessagingServices(
            blobs: blobs,
            transcriber: OpenAITranscriber(connection: openAIConnection, model: configuration.voiceMessages.transcriptionModel), meter: voiceMeter,
            spoolDirectory: spool, hub: hub, fanout: fanout,
            audioURLs: AudioURLSigner(secret: secret, lifetime: configuration.voiceMessages.audioURLLifetime),
            cloner: MeteredVoiceCloner(base: ElevenLabsVoiceCloner(connection: elevenLabsConnection), provider: elevenLabsName, meter: voiceMeter),
            clonedSpeech: MeteredSpeechSynthesizer(
                base: ElevenLabsSpeechSynthesizer(
                    connection: elevenLabsConnection,
                    maxInputCharacters: ElevenLabsSpeechSynthesizer.maxInputCharacters(model: configuration.voiceMessages.cloneSpeechModel)),
                provider: elevenLabsName, meter: voiceMeter),
            cloneProvider: "elevenlabs",
            defaultSpeech: MeteredSpeechSynthesizer(
                base: openAISpeech(configuration.voiceMessages.speechModel), provider: openAIName, meter: voiceMeter),
            speech: SpeechService(blobs: blobs, settings: configuration.voiceMessages, clock: options.clock),
            textGenerator: MeteredTextGenerator(base: OpenAITextGenerator(connection: openAIConnection, reasoningEffort: configuration.textReasoningEffort), provider: openAIName, meter: voiceMeter))
        // Stories: pictures through their own connection (the illustration timeout, no transport retries: the
        // illustration queue retries and records each attempt).
        let storyMeter = meter(.stories, limits: configuration.stories.limits)
        let storySettings = configuration.stories
        let imageConnection = OpenAIConnection(
            apiKey: realtimeKey, baseURL: openAIConnection.baseURL, httpClient: httpClient,
            timeout: .milliseconds(Int64(storySettings.illustrationTimeout * 1000)), retry: .none, observer: providerHealth, logger: app.logger)
        let stories = StoriesServices(
            settings: storySettings,
            text: MeteredTextGenerator(base: OpenAITextGenerator(connection: openAIConnection, reasoningEffort: configuration.textReasoningEffort), provider: openAIName, meter: storyMeter),
            images: MeteredImageGenerator(base: OpenAIImageGenerator(connection: imageConnection), provider: openAIName, meter: storyMeter),
            speech: MeteredSpeechSynthesizer(base: openAISpeech(storySettings.speechModel), provider: openAIName, meter: storyMeter),
            moderator: storySettings.moderationModel == nil
                ? nil : MeteredModerator(base: OpenAIModerator(connection: openAIConnection), provider: openAIName, meter: storyMeter),
            meter: storyMeter, blobs: blobs,
            files: AudioURLSigner(secret: "stories|" + secret, lifetime: configuration.voiceMessages.audioURLLifetime),
            publicURL: configuration.publicURL)
        // Custom personas: the persona policy and the moderation model, metered for calls (issue 17).
        let personas = PersonaScreening(
            policy: .standard,
            moderator: configuration.callsModerationModel == nil
                ? nil
                : MeteredModerator(
                    base: OpenAIModerator(connection: openAIConnection), provider: openAIName, meter: meter(.calls, limits: .unlimited)),
            model: configuration.callsModerationModel)
        let jobSignal = JobSignal()

        let services = ChorusServices(
            configuration: configuration,
            tokens: tokens,
            passwords: try PasswordHasher(cost: options.bcryptCost),
            rateLimiter: RateLimiter(),
            telephony: telephony,
            fromNumber: fromNumber,
            twilioSignatures: TwilioRequestValidator(authToken: twilioToken),
            purchases: purchases,
            scenarios: .standard,
            voices: .standard,
            policy: CallPermissionPolicy(catalog: configuration.plans),
            clock: options.clock,
            providerNames: providerNames,
            readPool: readPool,
            realtime: realtime,
            bridges: bridges,
            messaging: messaging,
            stories: stories,
            personas: personas,
            jobSignal: jobSignal,
            providerHealth: providerHealth,
            numberHasher: PhoneNumberHasher(secret: configuration.numberHashSecret ?? secret)
        )
        app.storage[ChorusServicesKey.self] = services

        // Middleware: CORS outermost so even errors carry its headers; then request ids, security headers, errors.
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
        app.middleware.use(RequestIDMiddleware())
        app.middleware.use(SecurityHeadersMiddleware(strictTransportSecurity: configuration.publicURL.scheme == "https"))
        app.middleware.use(ChorusErrorMiddleware())
        app.middleware.use(DeclaredBodyLimitMiddleware(defaultLimit: configuration.maxBodySize))

        try app.register(collection: SystemController(services: services, openAPIDocument: try SystemController.loadDocument()))
        try app.register(collection: AuthController(services: services))
        try app.register(collection: CallsController(services: services))
        try app.register(collection: ReportsController(services: services))
        try app.register(collection: PurchasesController(services: services))
        try app.register(collection: TwilioWebhookController(services: services))
        try app.register(collection: MediaStreamController(services: services))
        try app.register(collection: ConversationsController(services: services))
        try app.register(collection: InvitationsController(services: services))
        try app.register(collection: AudioController(services: services))
        try app.register(collection: RealtimeController(services: services))
        try app.register(collection: VoiceController(services: services))
        try app.register(collection: PrivacyController(services: services))
        try app.register(collection: UsageController(services: services))
        try app.register(collection: ConversationAudioController(services: services))
        try app.register(collection: StoriesController(services: services))
        try app.register(collection: WebAssetsController(assets: try WebAssets.load()))
        try app.register(collection: ConsoleController(services: services, modelLifecycle: modelLifecycle))
        try app.register(collection: MetricsController(registry: metrics, token: configuration.metricsToken))
        try app.register(collection: PlaygroundController(services: services))
        if !configuration.isProduction {
            try app.register(collection: DevelopmentController(services: services))
        }

        if options.runsJobs {
            app.lifecycle.use(RetentionSweeper(interval: configuration.voiceMessages.retentionSweepInterval))
            let scheduled = ScheduledCallJob(services: services)
            let reconciliation = CallReconciliationJob(services: services)
            let notifications = AppStoreNotificationJob(services: services)
            let transcriptions = MessageTranscriptionJob(services: services)
            let digests = DigestJob(services: services)
            let urgency = MessageUrgency(services: services)
            let storyPipeline = StoryPipeline(services: services)
            let storyJob: JobRunner.Handler = { job, store, logger in try await storyPipeline.run(job, store: store, logger: logger) }
            let runner = JobRunner(
                handlers: [
                    JobKind.scheduledCall: { job, store, logger in try await scheduled.run(job, store: store, logger: logger) },
                    JobKind.reconcileCall: { job, store, logger in try await reconciliation.run(job, store: store, logger: logger) },
                    JobKind.applyAppStoreNotification: { job, store, logger in
                        try await notifications.run(job, store: store, logger: logger)
                    },
                    JobKind.conversationDigest: { job, store, logger in try await digests.run(job, store: store, logger: logger) },
                    JobKind.deleteProviderVoice: { job, _, _ in try await services.messaging.cloner.deleteVoice(id: job.payload) },
                    JobKind.classifyMessageUrgency: { job, store, logger in try await urgency.run(job, store: store, logger: logger) },
                    JobKind.transcribeMessageAudio: { job, store, logger in
                        try await transcriptions.run(job, store: store, logger: logger)
                    },
                    JobKind.storyText: storyJob, JobKind.storyScenes: storyJob, JobKind.storyNarration: storyJob,
                    JobKind.storyIllustrations: storyJob,
                    JobKind.purgeTranscript: { job, store, _ in
                        guard let callID = Int(job.payload) else { return }
                        try await store.deleteTranscript(callID: callID, now: options.clock())
                    },
                ],
                pollInterval: configuration.jobPollInterval, concurrency: configuration.jobConcurrency, signal: jobSignal, clock: options.clock,
                logger: app.logger
            )
            app.lifecycle.use(runner)
            addQuiesceStep(app) { [unowned app] in await runner.shutdownAsync(app) }
        }
        // Last: what the steps above left running (a call's outcome being saved, presence being announced).
        addQuiesceStep(app) { await services.background.drain() }
        // Registered last, so it runs first when the application shuts down: the steps above in their order, before
        // any connection pool closes.
        app.lifecycle.use(QuiesceOnShutdown())
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

    private static func addQuiesceStep(_ app: Application, _ step: @escaping @Sendable () async -> Void) {
        app.storage[QuiesceSteps.self] = (app.storage[QuiesceSteps.self] ?? []) + [step]
    }

    /// Runs the migrations alone (`chorus migrate`).
    public static func migrate(_ app: Application, configuration: ChorusConfiguration) async throws {
        try configureDatabase(app, configuration)
        app.migrations.add(ChorusMigrations.all)
        try await app.autoMigrate()
    }

    /// Gives (`admin: true`) or takes away the operator console's admin role of the account with `email`, after
    /// running the migrations (`chorus admin grant|revoke`). Taking it away ends the account's console sessions at
    /// their next request. Returns `false` when no account has that email.
    public static func setAdmin(_ app: Application, configuration: ChorusConfiguration, email: String, admin: Bool) async throws -> Bool {
        try await migrate(app, configuration: configuration)
        let sql = app.db as! any SQLDatabase
        let store = ChorusStore(sql: sql, reader: nil, writeGate: WriteGate())
        return try await store.setRole(email: email.trimmingCharacters(in: .whitespaces).lowercased(), role: admin ? "admin" : "user")
    }

    private static func configureDatabase(_ app: Application, _ configuration: ChorusConfiguration) throws {
        switch configuration.database {
        case .sqlite(let path):
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true
            )
            app.databases.use(.sqlite(.file(path)), as: .sqlite)
        case .postgres(let url):
            app.databases.use(.postgres(configuration: try SQLPostgresConfiguration(url: url), maxConnectionsPerEventLoop: 4), as: .psql)
        }
    }

    /// The configured secret, or (development) one generated once and kept in the data directory.
    private static func jwtSecret(_ configuration: ChorusConfiguration, logger: Logger) throws -> String {
        if let secret = configuration.jwtSecret { return secret }
        let file = configuration.dataDirectory.appendingPathComponent("jwt-secret")
        if let stored = try? String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), stored.count >= 32 {
            return stored
        }
        let secret = randomHex(64)
        try secret.write(to: file, atomically: true, encoding: .utf8)
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        logger.notice("generated a development JWT secret", metadata: ["file": .string(file.path)])
        return secret
    }

    static func randomHex(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<count).map { _ in "0123456789abcdef".randomElement(using: &generator)! })
    }
}

/// Closes the SQLite read connections when the server stops.
private struct ReadPoolShutdown: LifecycleHandler {
    let pool: SQLiteReadPool

    func shutdownAsync(_ application: Application) async {
        try? await pool.shutdown()
    }
}

/// Ends the calls' media bridges and closes prepared realtime sessions when the server stops.
private struct BridgeShutdown: LifecycleHandler {
    let bridges: CallBridgeRegistry

    func shutdownAsync(_ application: Application) async {
        await bridges.shutdown()
    }
}

/// Closes the realtime WebSockets when the server stops.
private struct RealtimeShutdown: LifecycleHandler {
    let hub: RealtimeHub

    func shutdownAsync(_ application: Application) async {
        await hub.closeAll()
    }
}

/// Runs ``ChorusApp/quiesce(_:)`` first when the application shuts down.
private struct QuiesceOnShutdown: LifecycleHandler {
    func shutdownAsync(_ application: Application) async {
        await ChorusApp.quiesce(application)
    }
}

/// Stops the sandbox's simulated calls when the server stops.
private struct SandboxShutdown: LifecycleHandler {
    let services: SandboxServices

    func shutdownAsync(_ application: Application) async {
        services.shutdown()
    }
}
