import ChorusCore
import ChorusProviders
import Foundation
import NIOCore

/// Every setting of a Chorus server, built once from `CHORUS_*` environment variables.
///
/// `docs/configuration.md` documents each key; ``documentedKeys`` lists them for `chorus serve --help`.
public struct ChorusConfiguration: Sendable {
    public enum Environment: String, Sendable {
        case development
        case production
    }
    public var environment: Environment
    public var hostname: String
    public var port: Int
    public var database: DatabaseLocation
    /// The externally visible base URL (no trailing slash). Webhook URLs and signature checks use it.
    public var publicURL: URL
    public var publicURLWasConfigured: Bool
    public var jwtSecret: String?
    /// The key of the phone-number hashes (per-number limits, the do-not-call list): `CHORUS_NUMBER_HASH_SECRET`.
    /// Separate from the JWT secret so rotating that one keeps every opt-out; required in production, in development
    /// the development secret kept in the data directory when unset.
    public var numberHashSecret: String?
    public var dataDirectory: URL
    public var corsOrigins: [String]
    public var rateLimits: RateLimits
    public var accessTokenLifetime: TimeInterval
    public var refreshTokenLifetime: TimeInterval
    public var twilio: TwilioAccount?
    public var sandboxTiming: SandboxTiming
    public var sandboxRetention: SandboxRetention
    /// What speaks in the sandbox emulators (`CHORUS_SANDBOX_SPEECH`): the built-in synthetic voice unless espeak-ng is
    /// asked for.
    public var sandboxSpeech: SandboxSpeechChoice = .synthetic
    public var appStore: AppStoreSettings
    public var plans: PlanCatalog
    /// Maximum request body, bytes.
    public var maxBodySize: Int
    /// How often the job queue polls for due work.
    public var jobPollInterval: TimeInterval
    /// Jobs one instance runs at once (`CHORUS_JOB_CONCURRENCY`, default 8).
    public var jobConcurrency: Int
    public var logLevel: String
    /// Threads for blocking work (SQLite statements, bcrypt).
    public var blockingThreads: Int
    /// SQLite read connections per event loop.
    public var sqliteReadersPerEventLoop: Int
    public var logFormat: LogFormat
    public var openAI: OpenAIAccount?
    public var callBridge: CallBridgeSettings
    public var voiceMessages: VoiceMessageSettings
    public var stories: StorySettings
    public var elevenLabs: ElevenLabsAccount?
    /// S3-compatible object storage for recordings and generated audio; `nil` stores files under the data directory.
    public var objectStorage: S3BlobStore.Configuration?
    /// Memory kept for small, often-read blobs such as generated speech (`CHORUS_BLOB_MEMORY_CACHE_MB`; 0 turns it off).
    public var blobMemoryCacheBytes: Int
    /// Provider prices for metering and budgets: the defaults with `CHORUS_PRICE_TABLE_FILE`'s overrides.
    public var prices: PriceTable
    /// Whether `/playground` is served (`CHORUS_PLAYGROUND`; on outside production, off in production by default).
    public var playgroundEnabled: Bool
    /// Trial calls per day and signups per address and network.
    public var admission: AdmissionLimits = .off
    /// Caps on WebSockets and event streams, and on what clients send over `/ws`.
    public var connections: ConnectionLimits = .standard

    public enum LogFormat: String, Sendable {
        /// One JSON object per line.
        case json
        /// Human-readable lines.
        case text
    }

    /// Whether a development server may listen on an address other than loopback (`CHORUS_DEVELOPMENT_ON_NETWORK`,
    /// off by default): outside production the emulators under `/sandbox` answer without authentication, with other
    /// users' phone numbers, call recordings and message text.
    public var developmentOnNetwork = false

    /// Seconds a client connection may go without a byte read or written before it is closed
    /// (`CHORUS_IDLE_TIMEOUT_SECONDS`, default 60, between 1 and 3,600).
    public var idleTimeoutSeconds: Double = 60
    /// How long a claimed job stays leased to its instance without a heartbeat (`CHORUS_JOB_LEASE_SECONDS`, default 120,
    /// 3–3,600): a job whose instance died is claimed again by another once its lease has run out.
    public var jobLease: TimeInterval = 120
    /// The moderation model every custom persona is checked with, when saved and before each call
    /// (`CHORUS_CALLS_MODERATION_MODEL`, default `omni-moderation-latest`); `nil` (`off`, refused in production) leaves
    /// the persona policy's rules alone.
    public var callsModerationModel: String? = "omni-moderation-latest"
    /// `reasoning_effort` for OpenAI's reasoning text models (`CHORUS_OPENAI_REASONING_EFFORT`, default `none`).
    public var textReasoningEffort: OpenAITextGenerator.ReasoningEffort = .none

    /// The bearer token a Prometheus scraper sends to `GET /metrics` (`CHORUS_METRICS_TOKEN`, at least 16 characters);
    /// `nil` (the default) turns the route off (404).
    public var metricsToken: String?
    /// The reverse proxies whose `X-Forwarded-For` names the client (`CHORUS_TRUSTED_PROXIES`, addresses and CIDR
    /// ranges; default none): the address sign-in, sign-up and console sign-in limits count per.
    public var trustedProxies: TrustedProxies = .none
    /// Distributed tracing over OTLP (`CHORUS_OTEL_*`); off without an endpoint.
    public var tracing: TracingSettings = .off
    /// Seconds between two model lifecycle checks of OpenAI's model list (`CHORUS_MODEL_CHECK_INTERVAL_SECONDS`,
    /// default a day, between 1 and 604,800).
    public var modelCheckInterval: TimeInterval = 86_400

    /// Whether the listening address is reachable from this machine only (`localhost`, `127.0.0.0/8`, `::1`).
    public var listensOnLoopbackOnly: Bool { Self.isLoopback(hostname) }

    public static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare.lowercased() == "localhost" || bare == "::1" || bare == "0:0:0:0:0:0:0:1" { return true }
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// How this process reaches itself: the listening address, with wildcard addresses replaced by loopback.
    public var loopbackURL: URL { Self.loopbackURL(host: hostname, port: port) }

    static func loopbackURL(host: String, port: Int) -> URL {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let reachable = bare == "0.0.0.0" ? "127.0.0.1" : (bare == "::" ? "::1" : bare)
        let literal = reachable.contains(":") ? "[\(reachable)]" : reachable
        // A host no URL can hold fails when the server binds to it, with the system's error, rather than here.
        return URL(string: "http://\(literal):\(port)") ?? URL(string: "http://127.0.0.1:\(port)")!
    }

    /// What every call says first (issue 17): the templates by language (`CHORUS_CALL_DISCLOSURE` for every language,
    /// `CHORUS_CALL_DISCLOSURE_<LANG>` for one, over the built-in ones); `nil` (`off`, development only): no disclosure.
    public var callDisclosure: CallDisclosure? = CallDisclosure()
    /// The Calls budget (issue 18).
    public var callCosts = CallCostSettings.standard
    /// The caller ID of the sandbox telephony (Twilio's test number, in the NANP).
    public static let sandboxCallerID = "+15005550006"

    /// Where and when calls may go.
    public var callDestinations = CallDestinationSettings(
        countries: ["US"], hours: .standard, callsPerNumberPerDay: 3, accountsPerNumberPerWeek: 3)

    /// The rules of ``callDestinations`` (fictional numbers only with sandbox telephony, ``callsFictionalNumbers``).
    public var destinationPolicy: CallDestinationPolicy {
        CallDestinationPolicy(
            allowedCountries: callDestinations.countries, allowsFictionalNumbers: callsFictionalNumbers, hours: callDestinations.hours)
    }

    /// Sandbox providers are in use (no live Twilio account configured).
    public var usesSandboxTelephony: Bool { twilio == nil }

    /// Fictional numbers (the NANP's 555 exchange) may be called: with the embedded sandbox telephony, or outside
    /// production with a Twilio API on loopback — a standalone `chorus sandbox`, which no real Twilio account is behind
    /// (issue 20: the README's calls to +14155550123 were refused there as `fictional_number`).
    public var callsFictionalNumbers: Bool {
        if usesSandboxTelephony { return true }
        guard !isProduction, let host = twilio?.apiBaseURL.host else { return false }
        return Self.isLoopback(host)
    }

    public var isProduction: Bool { environment == .production }

    /// Reads the configuration from `environment` (normally `ProcessInfo.processInfo.environment`).
    ///
    /// Each section reads its own keys (the files of this folder); problems are reported in the order the keys are read.
    ///
    /// - Throws: ``ConfigurationError`` listing every malformed value.
    public static func load(
        from environment: [String: String], hostname: String? = nil, port: Int? = nil, workingDirectory: URL? = nil
    ) throws -> ChorusConfiguration {
        var reader = EnvironmentReader(environment)
        let cwd = workingDirectory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let env = reader.choice("CHORUS_ENVIRONMENT", default: Environment.development, among: [.development, .production])
        let production = env == .production
        let host = hostname ?? reader.string("CHORUS_HOSTNAME") ?? "127.0.0.1"
        let listenPort = port ?? reader.value("CHORUS_PORT", default: 5050, parse: EnvironmentReader.integer(in: 0...65_535))
        let database = DatabaseLocation.load(from: &reader, workingDirectory: cwd)
        let configuredPublicURL = reader.value("CHORUS_PUBLIC_URL", default: URL?.none, parse: EnvironmentReader.baseURLs)
        let dataDirectory = EnvironmentReader.file(reader.string("CHORUS_DATA_DIR") ?? "data", in: cwd)
        let corsOrigins = reader.list("CHORUS_CORS_ORIGINS")
        let rateLimits = reader.value("CHORUS_RATE_LIMITS", default: RateLimits.standard, accepts: RateLimits.accepts, parse: RateLimits.parse)
        let twilio = TwilioAccount.load(from: &reader)
        let openAI = OpenAIAccount.load(from: &reader)
        let callBridge = CallBridgeSettings.load(from: &reader)
        let voiceMessages = VoiceMessageSettings.load(from: &reader)
        let stories = StorySettings.load(from: &reader)
        let prices = loadPrices(from: &reader, workingDirectory: cwd)
        let objectStorage = loadObjectStorage(from: &reader)
        let elevenLabs = ElevenLabsAccount.load(from: &reader)
        let plans = PlanCatalog.load(from: &reader)
        let appStore = AppStoreSettings.load(from: &reader, production: production)
        let tokens = loadTokens(from: &reader)
        let sandboxTiming = SandboxTiming.load(from: &reader)
        let sandboxRetention = SandboxRetention.load(from: &reader)
        let process = loadProcess(from: &reader, production: production)
        var configuration = ChorusConfiguration(
            environment: env, hostname: host, port: listenPort, database: database,
            publicURL: configuredPublicURL ?? loopbackURL(host: host, port: listenPort), publicURLWasConfigured: configuredPublicURL != nil,
            jwtSecret: tokens.jwtSecret, dataDirectory: dataDirectory, corsOrigins: corsOrigins, rateLimits: rateLimits,
            accessTokenLifetime: tokens.accessTokenLifetime, refreshTokenLifetime: tokens.refreshTokenLifetime, twilio: twilio,
            sandboxTiming: sandboxTiming, sandboxRetention: sandboxRetention, appStore: appStore, plans: plans,
            maxBodySize: process.maxBodySize, jobPollInterval: process.jobPollInterval, jobConcurrency: process.jobConcurrency,
            logLevel: process.logLevel, blockingThreads: process.blockingThreads, sqliteReadersPerEventLoop: process.sqliteReadersPerEventLoop,
            logFormat: process.logFormat, openAI: openAI, callBridge: callBridge, voiceMessages: voiceMessages, stories: stories,
            elevenLabs: elevenLabs, objectStorage: objectStorage,
            blobMemoryCacheBytes: reader.value("CHORUS_BLOB_MEMORY_CACHE_MB", default: 64 << 20, accepts: "a whole number of megabytes from 0 to 65536") {
                Int($0).flatMap { (0...65_536).contains($0) ? $0 << 20 : nil }
            },
            prices: prices, playgroundEnabled: reader.flag("CHORUS_PLAYGROUND", default: !production))
        configuration.loadOperation(from: &reader)
        configuration.admission = AdmissionLimits.load(from: &reader, production: production)
        configuration.callDestinations = CallDestinationSettings.load(from: &reader, callerID: twilio?.fromNumber ?? sandboxCallerID)
        configuration.callDisclosure = loadCallDisclosure(from: &reader, production: production)
        configuration.callCosts = CallCostSettings.load(from: &reader)
        configuration.sandboxSpeech = SandboxSpeechChoice.load(from: &reader)
        if !reader.problems.isEmpty { throw ConfigurationError(problems: reader.problems) }
        return configuration
    }
}

/// Malformed configuration values, one line each.
public struct ConfigurationError: Error, CustomStringConvertible {
    public var problems: [String]
    public var description: String { problems.joined(separator: "\n") }
}
