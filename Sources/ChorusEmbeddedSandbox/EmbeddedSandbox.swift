import ChorusSandbox
import ChorusServer
import Foundation
import Vapor
import X509

/// ChorusSandbox's emulators — Twilio, the App Store, OpenAI Realtime and HTTP, ElevenLabs, and the request log —
/// embedded in a development server under `/sandbox`, as `chorus serve`, the benchmark and the tests' servers compose
/// them in (``forServer(_:configuration:clock:timeScale:)``). The server uses them for every provider without a configured
/// account; the App Store emulator's authority (kept in the data directory) is trusted besides Apple's roots.
public struct EmbeddedSandbox: EmbeddedProviders {
    /// The emulators.
    public let services: SandboxServices
    /// The accounts the emulators accept (fresh at every start).
    public let credentials: EmbeddedProviderCredentials
    /// The sandbox App Store authority's root.
    public let appStoreRootCertificates: [Certificate]

    /// The sandbox a server for `configuration` embeds: none in production, where nothing under `/sandbox` is served
    /// and the sandbox authority is not trusted. `clock` is the server's (``ChorusApp/Options/clock``); `timeScale`
    /// runs simulated calls faster than real time (tests: 0.02 passes a 30 s ring timeout in 0.6 s).
    public static func forServer(
        _ app: Application, configuration: ChorusConfiguration, clock: @escaping @Sendable () -> Date = { Date() }, timeScale: Double = 1
    ) throws -> EmbeddedSandbox? {
        configuration.isProduction ? nil : try EmbeddedSandbox(app, configuration: configuration, clock: clock, timeScale: timeScale)
    }

    /// The emulators for a server with `configuration`: its sandbox timing and retention, its App Store bundle and
    /// shared secret; the App Store's `clock`, the simulated calls' `timeScale`; `app`'s HTTP client and logger.
    public init(
        _ app: Application, configuration: ChorusConfiguration, clock: @escaping @Sendable () -> Date = { Date() }, timeScale: Double = 1
    ) throws {
        let authority = try AppStoreTestAuthority.loadOrCreate(directory: configuration.dataDirectory)
        let credentials = EmbeddedProviderCredentials.random()
        let timing = SandboxTwilio.Timing(
            ringDelay: .milliseconds(Int(configuration.sandboxTiming.ringSeconds * 1000)),
            talkDuration: .milliseconds(Int(configuration.sandboxTiming.talkSeconds * 1000)),
            timeScale: timeScale
        )
        let retention = configuration.sandboxRetention
        let appStore = configuration.appStore
        services = SandboxServices(
            twilio: SandboxTwilio(
                accountSID: credentials.twilioAccountSID, authToken: credentials.twilioAuthToken, httpClient: app.http.client.shared,
                timing: timing, logger: app.logger,
                retention: SandboxTwilio.Retention(endedCalls: retention.keptCalls, audioBytes: retention.keptAudioBytes)
            ),
            appStore: SandboxAppStore(
                authority: authority,
                receipts: SandboxReceiptValidator(sharedSecret: appStore.sharedSecret, bundleID: appStore.bundleID, now: clock),
                bundleID: appStore.bundleID, appAppleID: appStore.appAppleID, now: clock),
            realtime: SandboxRealtime(apiKey: credentials.openAIKey, keptSessions: retention.keptCalls, logger: app.logger),
            openAI: SandboxOpenAI(apiKey: credentials.openAIKey, logger: app.logger),
            elevenLabs: SandboxElevenLabs(apiKey: credentials.elevenLabsKey, logger: app.logger),
            requestLogEntries: retention.requestLogEntries, requestLogBytes: retention.requestLogBytes
        )
        self.credentials = credentials
        appStoreRootCertificates = [authority.rootCertificate]
    }

    /// Mounts every emulator and the request log on `routes`.
    public func register(on routes: any RoutesBuilder) {
        services.register(on: routes)
    }

    /// Stops simulated calls in progress and closes every Realtime session.
    public func shutdown() {
        services.shutdown()
    }
}
