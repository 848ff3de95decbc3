import ChorusCore
import ChorusProviders
import FluentPostgresDriver
import Foundation
import Prometheus
import SQLKit
import Tracing
import Vapor

extension ChorusServices {
    /// Builds everything the controllers and jobs use for `configuration`, before ``ChorusApp/configure(_:services:options:)``
    /// wires it: the live providers (``ProviderSet``; the `embedded` emulators for each provider without a configured
    /// account), adjusted by `options.overrideProviders`, then what the server runs on them.
    ///
    /// Uses `app`'s event loops, HTTP client and logger, and gives `app` the configured pool of blocking threads (SQLite
    /// statements, bcrypt, files). In production a configured OpenAI model that is shut down or not offered is refused
    /// (``ConfigurationError``).
    public static func live(
        _ app: Application, configuration: ChorusConfiguration, embedded: (any EmbeddedProviders)?,
        options: ChorusApp.Options = ChorusApp.Options()
    ) async throws -> ChorusServices {
        try FileManager.default.createDirectory(at: configuration.dataDirectory, withIntermediateDirectories: true)
        // Blocking work (SQLite statements, bcrypt) gets its own pool instead of the process-wide one of 2 threads.
        app.threadPool = NIOThreadPool(numberOfThreads: configuration.blockingThreads)
        let secret = try jwtSecret(configuration, logger: app.logger)
        let tokens = await TokenIssuer.make(
            secret: secret, accessTokenLifetime: configuration.accessTokenLifetime, refreshTokenLifetime: configuration.refreshTokenLifetime
        )
        // Every metric of `/metrics`, on this app's own registry (tests run many apps in one process).
        let metrics = PrometheusCollectorRegistry()
        let instruments = ChorusMetrics(
            registry: metrics,
            budgets: [
                .calls: configuration.callCosts.budget, .voiceMessages: configuration.voiceMessages.limits.budget,
                .stories: configuration.stories.limits.budget,
            ])
        let providerHealth = ProviderHealth(clock: options.clock, metrics: instruments)
        // Traces (issue 18): exported while the application runs (stopped by one of its last handlers) when configured.
        let tracing = try ChorusTracing.make(configuration.tracing, logger: app.logger)
        tracing.start()
        app.lifecycle.use(Stopping { await tracing.shutdown() })
        var providers = try ProviderSet.live(
            app, configuration: configuration, embedded: embedded, observer: providerHealth, options: options,
            tracer: tracing.isExporting ? tracing.tracer : nil)
        options.overrideProviders(&providers)

        // The model lifecycle check (issue 22): OpenAI's model list at startup and every interval. Production refuses to
        // start with a configured model that is shut down or not offered; a list that cannot be read only warns.
        let modelLifecycle = ModelLifecycleWatch(
            models: configuration.openAIModels, catalog: providers.models, interval: configuration.modelCheckInterval, clock: options.clock,
            registry: metrics, logger: app.logger)
        // Without an OpenAI account the provider is the emulator on this very server, which answers once it listens.
        // Checked before anything that needs shutting down is made (the SQLite read pool), so a refusal leaves nothing open.
        if configuration.isProduction, configuration.openAI != nil {
            let unusable = await modelLifecycle.checkBeforeServing().unusable
            guard unusable.isEmpty else { throw ConfigurationError(problems: unusable.map(\.summary)) }
        }
        let bridges = CallBridgeRegistry(
            connector: providers.realtime, eventLoopGroup: app.eventLoopGroup, metrics: options.bridgeMetrics,
            expiry: .seconds(CallPlacement.ringTimeoutSeconds + 60), observer: providerHealth, logger: app.logger)
        var readPool: SQLiteReadPool?
        if case .sqlite(let path) = configuration.database {
            readPool = SQLiteReadPool(
                path: path, connectionsPerEventLoop: configuration.sqliteReadersPerEventLoop, threadPool: app.threadPool,
                eventLoopGroup: app.eventLoopGroup, logger: app.logger, waits: instruments.connectionWaits(.sqliteRead)
            )
            // Closed when the application shuts down, even if configure never runs (a start that fails later), and
            // last of the handlers, after the work that reads through it has stopped.
            app.lifecycle.use(Stopping { [readPool] in try? await readPool?.shutdown() })
        }
        // Realtime events across instances through PostgreSQL when configured.
        let hub = RealtimeHub(limits: configuration.connections)
        let fanout: any RealtimeFanout
        if case .postgres(let url) = configuration.database {
            fanout = PostgresFanout(hub: hub, configuration: try SQLPostgresConfiguration(url: url), logger: app.logger)
        } else {
            fanout = LocalFanout(hub: hub)
        }
        let spool = configuration.dataDirectory.appendingPathComponent("spool")
        try FileManager.default.createDirectory(at: spool, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])

        // Every provider call is metered for the feature it works for (users and request ids from the task's context).
        let meterStore: @Sendable () throws -> ChorusStore = { [unowned app] in
            try app.chorus.store(of: app, on: app.eventLoopGroup.any(), logger: app.logger)
        }
        func meter(_ feature: MeteredFeature, limits: ProductLimits) -> UsageMeter {
            UsageMeter(feature: feature, prices: configuration.prices, limits: limits, store: meterStore, clock: options.clock, logger: app.logger)
        }
        let voiceMeter = meter(.voiceMessages, limits: configuration.voiceMessages.limits)
        let messaging = MessagingServices(
            blobs: providers.blobs, transcriber: providers.transcriber, meter: voiceMeter, spoolDirectory: spool, hub: hub, fanout: fanout,
            audioURLs: AudioURLSigner(secret: secret, lifetime: configuration.voiceMessages.audioURLLifetime),
            cloner: MeteredVoiceCloner(base: providers.cloner, provider: providers.elevenLabsName, meter: voiceMeter),
            clonedSpeech: MeteredSpeechSynthesizer(base: providers.clonedSpeech, provider: providers.elevenLabsName, meter: voiceMeter),
            cloneProvider: "elevenlabs",
            defaultSpeech: MeteredSpeechSynthesizer(base: providers.messageSpeech, provider: providers.openAIName, meter: voiceMeter),
            speech: SpeechService(blobs: providers.blobs, settings: configuration.voiceMessages, clock: options.clock),
            textGenerator: MeteredTextGenerator(base: providers.text, provider: providers.openAIName, meter: voiceMeter))
        let storyMeter = meter(.stories, limits: configuration.stories.limits)
        let stories = StoriesServices(
            settings: configuration.stories,
            text: MeteredTextGenerator(base: providers.text, provider: providers.openAIName, meter: storyMeter),
            images: MeteredImageGenerator(base: providers.images, provider: providers.openAIName, meter: storyMeter),
            speech: MeteredSpeechSynthesizer(base: providers.storySpeech, provider: providers.openAIName, meter: storyMeter),
            moderator: configuration.stories.moderationModel == nil
                ? nil : MeteredModerator(base: providers.moderator, provider: providers.openAIName, meter: storyMeter),
            meter: storyMeter, blobs: providers.blobs,
            files: AudioURLSigner(secret: "stories|" + secret, lifetime: configuration.voiceMessages.audioURLLifetime),
            publicURL: configuration.publicURL)
        // Custom personas: the persona policy and the moderation model, metered for calls (issue 17).
        let personas = PersonaScreening(
            policy: .standard,
            moderator: configuration.callsModerationModel == nil
                ? nil
                : MeteredModerator(base: providers.moderator, provider: providers.openAIName, meter: meter(.calls, limits: .unlimited)),
            model: configuration.callsModerationModel)

        return ChorusServices(
            configuration: configuration, tokens: tokens, passwords: try PasswordHasher(cost: options.bcryptCost), rateLimiter: RateLimiter(),
            telephony: providers.telephony, fromNumber: providers.callerID, twilioSignatures: providers.webhookSignatures,
            purchases: providers.purchases, scenarios: .standard, voices: .standard, policy: CallPermissionPolicy(catalog: configuration.plans),
            clock: options.clock, providerNames: providers.names, readPool: readPool, realtime: providers.realtime, bridges: bridges,
            messaging: messaging, stories: stories, personas: personas, jobSignal: JobSignal(), providerHealth: providerHealth,
            numberHasher: PhoneNumberHasher(secret: configuration.numberHashSecret ?? secret), modelLifecycle: modelLifecycle,
            metrics: metrics, instruments: instruments, embedded: embedded, tracing: tracing)
    }

    /// The configured secret, or (development) one generated once and kept in the data directory.
    private static func jwtSecret(_ configuration: ChorusConfiguration, logger: Logger) throws -> String {
        if let secret = configuration.jwtSecret { return secret }
        let file = configuration.dataDirectory.appendingPathComponent("jwt-secret")
        if let stored = try? String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), stored.count >= 32 {
            return stored
        }
        let secret = ChorusApp.randomHex(64)
        try secret.write(to: file, atomically: true, encoding: .utf8)
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        logger.notice("generated a development JWT secret", metadata: ["file": .string(file.path)])
        return secret
    }
}

extension ProviderSet {
    /// The providers `configuration` names: Twilio, OpenAI, ElevenLabs, the App Store's verifyReceipt and S3 when
    /// configured, otherwise the `embedded` emulators at `<loopback>/sandbox/...` (their credentials; fresh random ones
    /// without emulators, as in production, where nothing answers there). Clients report to `observer`, and trace
    /// their exchanges with `tracer` when there is one.
    static func live(
        _ app: Application, configuration: ChorusConfiguration, embedded: (any EmbeddedProviders)?, observer: ProviderHealth,
        options: ChorusApp.Options, tracer: (any Tracer)? = nil
    ) throws -> ProviderSet {
        let observer: any ProviderCallObserver = tracer.map { TracedProviderCalls(base: observer, tracer: $0) } ?? observer
        let httpClient = app.http.client.shared
        let sandbox = configuration.loopbackURL.appendingPathComponent("sandbox")
        let credentials = embedded?.credentials ?? .random()
        var names = ["telephony": "twilio", "app_store": "sandbox"]

        // Calls: live Twilio when configured, otherwise the Twilio emulator.
        let telephony: any Telephony
        let callerID: String
        let twilioToken: String
        if let twilio = configuration.twilio {
            telephony = TwilioRESTClient(
                accountSID: twilio.accountSID, authToken: twilio.authToken, baseURL: twilio.apiBaseURL, httpClient: httpClient,
                observer: observer, logger: app.logger)
            callerID = twilio.fromNumber
            twilioToken = twilio.authToken
        } else {
            names["telephony"] = "sandbox"
            telephony = TwilioRESTClient(
                accountSID: credentials.twilioAccountSID, authToken: credentials.twilioAuthToken, baseURL: sandbox, httpClient: httpClient,
                observer: observer, logger: app.logger)
            callerID = ChorusConfiguration.sandboxCallerID
            twilioToken = credentials.twilioAuthToken
        }

        // The App Store: StoreKit 2 data verified against Apple Root CA - G3 (and the embedded App Store's own root);
        // legacy receipts through verifyReceipt — Apple's when configured, otherwise the emulator's.
        let appStore = configuration.appStore
        let roots = try AppleRootCertificates.roots(extraFiles: appStore.extraRootCertificatePaths) + (embedded?.appStoreRootCertificates ?? [])
        let receiptEmulator = sandbox.appendingPathComponent("app-store/verifyReceipt")
        let purchases = AppStorePurchaseVerifier(
            signedData: AppStoreSignedDataVerifier(
                rootCertificates: roots, bundleID: appStore.bundleID, appAppleID: appStore.appAppleID,
                acceptedEnvironments: appStore.acceptedEnvironments),
            receipts: AppStoreReceiptVerifier(
                httpClient: httpClient, productionURL: appStore.verifyReceiptURL ?? receiptEmulator.appendingPathComponent("production"),
                sandboxURL: appStore.verifyReceiptSandboxURL ?? receiptEmulator.appendingPathComponent("sandbox"),
                sharedSecret: appStore.sharedSecret, bundleID: appStore.bundleID, acceptedEnvironments: appStore.acceptedEnvironments,
                logger: app.logger))
        names["app_store"] = appStore.verifyReceiptURL == nil ? "sandbox" : "apple"

        // OpenAI (the calls' voice, transcription, text, pictures, speech, moderation), otherwise its emulators.
        let openAIKey = configuration.openAI?.apiKey ?? credentials.openAIKey
        let openAIURL = configuration.openAI?.baseURL ?? sandbox.appendingPathComponent("openai/v1")
        names["realtime"] = configuration.openAI == nil ? "sandbox" : "openai"
        names["transcription"] = configuration.openAI == nil ? "sandbox" : "openai"
        let realtime = try OpenAIRealtimeConnector(baseURL: openAIURL, apiKey: openAIKey, logger: app.logger)
        let openAI = OpenAIConnection(apiKey: openAIKey, baseURL: openAIURL, httpClient: httpClient, observer: observer, logger: app.logger)
        // Pictures through their own connection (the illustration timeout, no transport retries: the illustration queue
        // retries and records each attempt).
        let imageConnection = OpenAIConnection(
            apiKey: openAIKey, baseURL: openAIURL, httpClient: httpClient,
            timeout: .milliseconds(Int64(configuration.stories.illustrationTimeout * 1000)), retry: .none, observer: observer, logger: app.logger)
        let catalogConnection = OpenAIConnection(
            apiKey: openAIKey, baseURL: openAIURL, httpClient: httpClient, timeout: .seconds(10), retry: .none, observer: observer,
            logger: app.logger)
        // Speech: the `/v1/audio/speech` models over HTTP, any other model (gpt-realtime-2.1-mini, the default) on the
        // Realtime API through the calls' connector, MP3 by libmp3lame.
        let speechEncoder = MP3Encoder.announce(options.speechEncoder, logger: app.logger)
        func openAISpeech(_ model: String) -> any SpeechSynthesizer {
            if OpenAISpeechSynthesizer.serves(model: model) { return OpenAISpeechSynthesizer(connection: openAI) }
            return OpenAIRealtimeSpeechSynthesizer(
                connector: realtime, eventLoopGroup: app.eventLoopGroup, encoder: speechEncoder, statistics: options.speechVerbatim,
                logger: app.logger)
        }

        // ElevenLabs (cloned voices), otherwise its emulator.
        names["voice_cloning"] = configuration.elevenLabs == nil ? "sandbox" : "elevenlabs"
        let elevenLabs = ElevenLabsConnection(
            apiKey: configuration.elevenLabs?.apiKey ?? credentials.elevenLabsKey,
            baseURL: configuration.elevenLabs?.baseURL ?? sandbox.appendingPathComponent("elevenlabs"), httpClient: httpClient,
            observer: observer, logger: app.logger)

        // Blobs: S3 when configured, otherwise files under the data directory; an optional memory cache in front.
        var blobs: any BlobStore
        if let objectStorage = configuration.objectStorage {
            blobs = try S3BlobStore(
                configuration: objectStorage, httpClient: httpClient, threadPool: app.threadPool, observer: observer, logger: app.logger)
            names["storage"] = "s3"
        } else {
            blobs = try FileBlobStore(root: configuration.dataDirectory.appendingPathComponent("blobs"), threadPool: app.threadPool)
            names["storage"] = "filesystem"
        }
        if configuration.blobMemoryCacheBytes > 0 {
            blobs = MemoryCachedBlobStore(base: blobs, capacityBytes: configuration.blobMemoryCacheBytes)
        }

        return ProviderSet(
            telephony: telephony, callerID: callerID, webhookSignatures: TwilioRequestValidator(authToken: twilioToken), realtime: realtime,
            purchases: purchases, transcriber: OpenAITranscriber(connection: openAI, model: configuration.voiceMessages.transcriptionModel),
            text: OpenAITextGenerator(connection: openAI, reasoningEffort: configuration.textReasoningEffort),
            images: OpenAIImageGenerator(connection: imageConnection),
            messageSpeech: openAISpeech(configuration.voiceMessages.speechModel), storySpeech: openAISpeech(configuration.stories.speechModel),
            clonedSpeech: ElevenLabsSpeechSynthesizer(
                connection: elevenLabs,
                maxInputCharacters: ElevenLabsSpeechSynthesizer.maxInputCharacters(model: configuration.voiceMessages.cloneSpeechModel)),
            cloner: ElevenLabsVoiceCloner(connection: elevenLabs), moderator: OpenAIModerator(connection: openAI), blobs: blobs,
            models: OpenAIModelCatalog(connection: catalogConnection), names: names,
            openAIName: configuration.openAI == nil ? "sandbox-openai" : "openai",
            elevenLabsName: configuration.elevenLabs == nil ? "sandbox-elevenlabs" : "elevenlabs")
    }
}
