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

    public enum DatabaseLocation: Sendable, Equatable {
        case sqlite(path: String)
        case postgres(url: String)

        public var kind: String {
            switch self {
            case .sqlite: "sqlite"
            case .postgres: "postgres"
            }
        }
    }

    /// Twilio account used for live calls. Absent → the in-process Twilio sandbox.
    public struct TwilioAccount: Sendable {
        public var accountSID: String
        public var authToken: String
        public var fromNumber: String
        public var apiBaseURL: URL
    }

    /// The OpenAI account used for the calls' realtime voice. Absent → the in-process OpenAI Realtime sandbox.
    public struct OpenAIAccount: Sendable {
        public var apiKey: String
        public var baseURL: URL
    }

    /// The call bridge's models and policies.
    public struct CallBridgeSettings: Sendable, Equatable {
        /// The realtime model (`CHORUS_OPENAI_REALTIME_MODEL`).
        public var realtimeModel: String
        /// The model transcribing the callee; `nil` when set to `none`.
        public var transcriptionModel: String?
        /// Days a call's transcript is kept.
        public var transcriptRetentionDays: Int
        /// Outbound calls placed per second across all instances (Twilio's default account limit is 1).
        public var callsPerSecond: Double
        /// Twilio answering-machine detection on every call (`CHORUS_CALL_MACHINE_DETECTION`, default on): the AI's
        /// first words wait for it, and a machine is hung up on (or gets the scenario's message) without a charge.
        public var machineDetection: Bool = true
    }

    /// How App Store purchases and notifications are verified.
    public struct AppStoreSettings: Sendable, Equatable {
        /// The app's bundle id: every transaction and notification must name it.
        public var bundleID: String
        /// The app's numeric App Store id (`appAppleId`); production notifications must name it.
        public var appAppleID: Int64?
        /// The App Store environment the server serves (`Production` or `Sandbox`).
        public var environment: AppStoreEnvironment
        /// Whether a production server also accepts sandbox purchases (App Review and TestFlight buy in the sandbox).
        public var acceptsSandboxInProduction: Bool
        /// The app's shared secret for verifyReceipt (legacy receipts).
        public var sharedSecret: String?
        /// Certificates (DER or PEM files) trusted as extra roots besides Apple Root CA - G3: testing only.
        public var extraRootCertificatePaths: [String]
        /// verifyReceipt's production and sandbox URLs; `nil` means the local emulator under /sandbox.
        public var verifyReceiptURL: URL?
        public var verifyReceiptSandboxURL: URL?

        /// The environments whose signed data and receipts are accepted.
        public var acceptedEnvironments: Set<AppStoreEnvironment> {
            environment == .production && acceptsSandboxInProduction ? [.production, .sandbox] : [environment]
        }
    }

    /// Stories (seed 004): models, illustration pacing and limits, budgets.
    public struct StorySettings: Sendable, Equatable {
        /// The chat model writing stories, scenes, visual profiles and event suggestions (`CHORUS_STORIES_TEXT_MODEL`).
        public var textModel: String
        /// The image model drawing avatars and illustrations (`CHORUS_STORIES_IMAGE_MODEL`).
        public var imageModel: String
        /// Image size and quality sent with each picture.
        public var imageSize: String
        public var imageQuality: String
        /// The speech model narrating stories (`CHORUS_STORIES_TTS_MODEL`, default `gpt-realtime-2.1-mini` on the Realtime
        /// API; the `/v1/audio/speech` models `tts-1`, `tts-1-hd`, `gpt-4o-mini-tts…` still work until 2027-01-06).
        public var speechModel: String
        /// Moderation model used as a second opinion on user-supplied text; `nil` turns it off.
        public var moderationModel: String?
        /// Illustrations drawn at once, and the pause between batches.
        public var illustrationBatchSize: Int
        public var illustrationBatchSpacing: TimeInterval
        /// How long one picture may take before it counts as a timeout.
        public var illustrationTimeout: TimeInterval
        /// Attempts per picture (rate limits and timeouts), first included.
        public var illustrationAttempts: Int
        /// The most illustrations a story may have without and with a paid plan.
        public var freeIllustrations: Int
        public var premiumIllustrations: Int
        /// Spend limits of the feature (provider costs of all users), micro-dollars.
        public var dailyBudgetMicrodollars: Int64?
        public var monthlyBudgetMicrodollars: Int64?
        /// Story operations one user may start per UTC day (`CHORUS_STORIES_USER_DAILY_OPERATIONS`; `nil`: no limit):
        /// each story and retried illustration, and each provider call made for the user's own request (avatars, the
        /// event assistant).
        public var dailyOperationsPerUser: Int?

        /// The feature's limits (``ProductLimits``).
        public var limits: ProductLimits {
            ProductLimits(
                budget: FeatureBudget(dailyMicrodollars: dailyBudgetMicrodollars, monthlyMicrodollars: monthlyBudgetMicrodollars),
                userDailyOperations: dailyOperationsPerUser)
        }
    }

    /// Voice messages: recordings, transcription.
    public struct VoiceMessageSettings: Sendable, Equatable {
        /// The speech-to-text model (`CHORUS_VOICE_TRANSCRIPTION_MODEL`, default `gpt-transcribe`): `whisper-1` reports
        /// confidence and silence, `gpt-4o(-mini)-transcribe` token confidence (all three shut down on 2027-02-26),
        /// `gpt-transcribe` only the detected languages, judged with the recording (``TranscriptQuality``).
        public var transcriptionModel: String
        /// The largest recording accepted, bytes.
        public var maxUploadBytes: Int
        /// The longest recording, seconds; and with `long_form` (bedtime stories).
        public var maxSeconds: Double
        public var longFormMaxSeconds: Double
        /// How long a signed audio URL stays valid, seconds.
        public var audioURLLifetime: TimeInterval
        /// The chat model writing conversation summaries (`CHORUS_VOICE_SUMMARY_MODEL`).
        public var summaryModel: String
        /// OpenAI text-to-speech model for default voices and narration (`CHORUS_VOICE_TTS_MODEL`, default
        /// `gpt-realtime-2.1-mini` on the Realtime API; `/v1/audio/speech` models are still accepted until 2027-01-06).
        public var speechModel: String
        /// The default voice of accounts that chose none, and the narrator of summaries (OpenAI voices).
        public var defaultVoice: String
        public var narratorVoice: String
        /// ElevenLabs model for cloned voices (`CHORUS_ELEVENLABS_MODEL`).
        public var cloneSpeechModel: String
        /// Speech generations per user per day (cache hits are free).
        public var dailyGenerationsPerUser: Int
        /// Voice messages per month on the free tier (paid plans: unlimited).
        public var freeMonthlyVoiceMessages: Int
        /// Spend budgets across all users, micro-dollars per UTC day and month; every voice provider call
        /// (transcription, summaries, urgency, speech, cloning) is refused when it would pass them.
        public var dailyBudgetMicrodollars: Int64
        public var monthlyBudgetMicrodollars: Int64
        /// Voice provider operations one user may start per UTC day (`CHORUS_VOICE_USER_DAILY_OPERATIONS`; `nil`: no
        /// limit).
        public var dailyOperationsPerUser: Int?
        /// Summaries one user may have generated per UTC day (stored summaries are free) (`CHORUS_VOICE_DAILY_SUMMARIES`).
        public var dailySummariesPerUser: Int
        /// Seconds between sweeps deleting expired recordings.
        public var retentionSweepInterval: TimeInterval
        /// Generated speech and playbacks not requested for this long are deleted (`CHORUS_VOICE_SPEECH_CACHE_DAYS`).
        public var speechCacheLifetime: TimeInterval
        /// Messages are classified for urgency by the summary model (`model`) as well as the keyword policy, or by the
        /// keyword policy only (`keywords`) (`CHORUS_VOICE_URGENCY`).
        public var urgencyByModel: Bool

        /// The feature's limits (``ProductLimits``).
        public var limits: ProductLimits {
            ProductLimits(
                budget: FeatureBudget(dailyMicrodollars: dailyBudgetMicrodollars, monthlyMicrodollars: monthlyBudgetMicrodollars),
                userDailyOperations: dailyOperationsPerUser)
        }
    }

    /// Who may sign up and call for free, across all instances (counted in the database): free trial calls per UTC
    /// day across all accounts, and signups per client address and per network per UTC day. `nil` members are
    /// unlimited. On by default in production, off in development (tests, benchmarks and the playground register many
    /// accounts from one loopback address).
    public struct AdmissionLimits: Sendable, Equatable {
        /// Trial calls placed per UTC day, all accounts together (`CHORUS_TRIAL_CALLS_PER_DAY`).
        public var trialCallsPerDay: Int?
        /// Accounts registered per client address per UTC day (`CHORUS_SIGNUPS_PER_IP`).
        public var signupsPerAddress: Int?
        /// Accounts registered per network per UTC day (`CHORUS_SIGNUPS_PER_NETWORK`).
        public var signupsPerNetwork: Int?
        /// What a network is (`CHORUS_SIGNUP_NETWORK_PREFIXES`, `24,64`: IPv4 /24, IPv6 /64).
        public var network: NetworkPrefix

        public static let production = AdmissionLimits(
            trialCallsPerDay: 200, signupsPerAddress: 5, signupsPerNetwork: 50, network: NetworkPrefix())
        public static let off = AdmissionLimits(trialCallsPerDay: nil, signupsPerAddress: nil, signupsPerNetwork: nil, network: NetworkPrefix())

        static func read(from reader: inout EnvironmentReader, production: Bool) -> AdmissionLimits {
            let defaults = production ? AdmissionLimits.production : .off
            func count(_ key: String, _ fallback: Int?) -> Int? {
                reader.value(key, default: fallback) { text -> Int?? in
                    if text == "off" { return .some(nil) }
                    guard let value = Int(text), (0...10_000_000).contains(value) else { return nil }
                    return .some(value)
                }
            }
            return AdmissionLimits(
                trialCallsPerDay: count("CHORUS_TRIAL_CALLS_PER_DAY", defaults.trialCallsPerDay),
                signupsPerAddress: count("CHORUS_SIGNUPS_PER_IP", defaults.signupsPerAddress),
                signupsPerNetwork: count("CHORUS_SIGNUPS_PER_NETWORK", defaults.signupsPerNetwork),
                network: reader.value("CHORUS_SIGNUP_NETWORK_PREFIXES", default: defaults.network) { text in
                    let parts = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
                    guard parts.count == 2, let v4 = parts[0], let v6 = parts[1], (8...32).contains(v4), (16...128).contains(v6) else { return nil }
                    return NetworkPrefix(ipv4PrefixLength: v4, ipv6PrefixLength: v6)
                })
        }
    }

    /// The ElevenLabs account used for cloned voices. Absent → the in-process ElevenLabs sandbox.
    public struct ElevenLabsAccount: Sendable {
        public var apiKey: String
        public var baseURL: URL
    }

    /// Limits per fixed window: `limit` requests per `window` seconds.
    public struct RateLimit: Sendable, Equatable {
        public var limit: Int
        public var window: TimeInterval
    }

    /// Rate limits; `nil` members are unlimited.
    public struct RateLimits: Sendable, Equatable {
        /// Every authenticated request, per user.
        public var user: RateLimit?
        /// Call placement (make-call, schedule-call), per user.
        public var calls: RateLimit?
        /// Register, login and refresh, per client IP.
        public var auth: RateLimit?

        public static let standard = RateLimits(
            user: RateLimit(limit: 600, window: 60), calls: RateLimit(limit: 20, window: 60), auth: RateLimit(limit: 30, window: 60)
        )
        public static let off = RateLimits(user: nil, calls: nil, auth: nil)
    }

    /// Caps on the long-lived connections of this instance (the `/ws` WebSockets and the server-sent event streams)
    /// and on what clients send over `/ws`. Per instance, like the rate limits.
    public struct ConnectionLimits: Sendable, Equatable {
        /// Open `/ws` WebSockets of one user (`CHORUS_WS_PER_USER`).
        public var webSocketsPerUser: Int
        /// Open event streams of one user: call progress, story progress (`CHORUS_SSE_PER_USER`).
        public var eventStreamsPerUser: Int
        /// WebSockets and event streams of all users together (`CHORUS_MAX_REALTIME_CONNECTIONS`).
        public var perInstance: Int
        /// Bytes written to one WebSocket that its client has not taken yet; beyond them the socket is closed with
        /// 1013 (`CHORUS_WS_SEND_QUEUE_BYTES`).
        public var sendQueueBytes: Int
        /// Messages a client may send over one `/ws` WebSocket per window; beyond them the socket is closed with 1008
        /// (`CHORUS_WS_MESSAGE_RATE`, `messages/seconds`).
        public var inboundMessages: RateLimit

        public static let standard = ConnectionLimits(
            webSocketsPerUser: 8, eventStreamsPerUser: 8, perInstance: 10_000, sendQueueBytes: 1 << 20,
            inboundMessages: RateLimit(limit: 60, window: 10))

        static func read(from reader: inout EnvironmentReader) -> ConnectionLimits {
            func count(_ range: ClosedRange<Int>) -> (String) -> Int? { { Int($0).flatMap { range.contains($0) ? $0 : nil } } }
            return ConnectionLimits(
                webSocketsPerUser: reader.value("CHORUS_WS_PER_USER", default: standard.webSocketsPerUser, parse: count(1...1_000)),
                eventStreamsPerUser: reader.value("CHORUS_SSE_PER_USER", default: standard.eventStreamsPerUser, parse: count(1...1_000)),
                perInstance: reader.value("CHORUS_MAX_REALTIME_CONNECTIONS", default: standard.perInstance, parse: count(1...1_000_000)),
                sendQueueBytes: reader.value("CHORUS_WS_SEND_QUEUE_BYTES", default: standard.sendQueueBytes, parse: count(1_024...(256 << 20))),
                inboundMessages: reader.value("CHORUS_WS_MESSAGE_RATE", default: standard.inboundMessages) { text in
                    let numbers = text.split(separator: "/")
                    guard numbers.count == 2, let limit = Int(numbers[0]), let window = Double(numbers[1]),
                        (1...100_000).contains(limit), window > 0, window <= 3_600
                    else { return nil }
                    return RateLimit(limit: limit, window: window)
                })
        }
    }

    /// The simulated callee of the sandbox Twilio.
    public struct SandboxTiming: Sendable, Equatable {
        public var ringSeconds: Double
        public var talkSeconds: Double
    }

    /// What the embedded emulators keep for inspection, all bounded (`CHORUS_SANDBOX_REQUEST_LOG_ENTRIES`,
    /// `CHORUS_SANDBOX_REQUEST_LOG_BYTES`, `CHORUS_SANDBOX_KEPT_CALLS`, `CHORUS_SANDBOX_KEPT_AUDIO_BYTES`).
    public struct SandboxRetention: Sendable, Equatable {
        /// Requests and WebSocket messages kept in the request log.
        public var requestLogEntries: Int
        /// Bytes of recorded text kept in the request log.
        public var requestLogBytes: Int
        /// Ended calls (Twilio) and closed sessions (Realtime) kept.
        public var keptCalls: Int
        /// Bytes of audio (recordings, played audio) of ended calls kept.
        public var keptAudioBytes: Int
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
    /// The moderation model every custom persona is checked with, when saved and before each call
    /// (`CHORUS_CALLS_MODERATION_MODEL`, default `omni-moderation-latest`); `nil` (`off`, refused in production) leaves
    /// the persona policy's rules alone.
    public var callsModerationModel: String? = "omni-moderation-latest"
    /// `reasoning_effort` for OpenAI's reasoning text models (`CHORUS_OPENAI_REASONING_EFFORT`, default `none`).
    public var textReasoningEffort: OpenAITextGenerator.ReasoningEffort = .none

    /// The bearer token a Prometheus scraper sends to `GET /metrics` (`CHORUS_METRICS_TOKEN`, at least 16 characters);
    /// `nil` (the default) turns the route off (404).
    public var metricsToken: String?
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

    /// Every environment variable Chorus reads (documented in docs/configuration.md).
    public static let documentedKeys = [
        "CHORUS_ENVIRONMENT", "CHORUS_HOSTNAME", "CHORUS_PORT", "CHORUS_DATABASE_URL", "CHORUS_PUBLIC_URL", "CHORUS_JWT_SECRET", "CHORUS_NUMBER_HASH_SECRET",
        "CHORUS_DATA_DIR", "CHORUS_CORS_ORIGINS", "CHORUS_RATE_LIMITS", "CHORUS_ACCESS_TOKEN_TTL", "CHORUS_REFRESH_TOKEN_TTL",
        "CHORUS_TWILIO_ACCOUNT_SID", "CHORUS_TWILIO_AUTH_TOKEN", "CHORUS_TWILIO_FROM_NUMBER", "CHORUS_TWILIO_API_BASE_URL",
        "CHORUS_SANDBOX_RING_SECONDS", "CHORUS_SANDBOX_TALK_SECONDS", "CHORUS_SANDBOX_REQUEST_LOG_ENTRIES",
        "CHORUS_SANDBOX_REQUEST_LOG_BYTES", "CHORUS_SANDBOX_KEPT_CALLS", "CHORUS_SANDBOX_KEPT_AUDIO_BYTES", "CHORUS_APPLE_BUNDLE_ID", "CHORUS_TRIAL_CALLS", "CHORUS_TRIAL_DAYS",
        "CHORUS_TRIAL_CALL_SECONDS", "CHORUS_BASIC_CALLS", "CHORUS_BASIC_CALL_SECONDS", "CHORUS_BASIC_PRICE", "CHORUS_BASIC_PRODUCT_ID",
        "CHORUS_PREMIUM_CALLS", "CHORUS_PREMIUM_CALL_SECONDS", "CHORUS_PREMIUM_PRICE", "CHORUS_PREMIUM_PRODUCT_ID", "CHORUS_ADDON_CALLS",
        "CHORUS_ADDON_DAYS", "CHORUS_ADDON_PRICE", "CHORUS_ADDON_PRODUCT_ID", "CHORUS_ADDON_CALL_SECONDS", "CHORUS_MAX_BODY_BYTES",
        "CHORUS_JOB_POLL_SECONDS", "CHORUS_JOB_CONCURRENCY", "CHORUS_LOG_LEVEL", "CHORUS_LOG_FORMAT", "CHORUS_BLOCKING_THREADS",
        "CHORUS_SQLITE_READERS", "CHORUS_WS_PER_USER", "CHORUS_SSE_PER_USER", "CHORUS_MAX_REALTIME_CONNECTIONS", "CHORUS_WS_SEND_QUEUE_BYTES",
        "CHORUS_WS_MESSAGE_RATE",
        "CHORUS_OPENAI_API_KEY", "CHORUS_OPENAI_BASE_URL", "CHORUS_OPENAI_REALTIME_MODEL", "CHORUS_OPENAI_TRANSCRIPTION_MODEL",
        "CHORUS_TRANSCRIPT_RETENTION_DAYS", "CHORUS_TWILIO_CALLS_PER_SECOND", "CHORUS_CALL_MACHINE_DETECTION", "CHORUS_APPLE_APP_ID", "CHORUS_APPLE_ENVIRONMENT",
        "CHORUS_APPLE_ACCEPT_SANDBOX", "CHORUS_APPLE_SHARED_SECRET", "CHORUS_APPLE_EXTRA_ROOTS", "CHORUS_APPLE_VERIFY_RECEIPT_URL",
        "CHORUS_APPLE_VERIFY_RECEIPT_SANDBOX_URL", "CHORUS_BASIC_LEGACY_PRODUCT_IDS", "CHORUS_PREMIUM_LEGACY_PRODUCT_IDS",
        "CHORUS_VOICE_TRANSCRIPTION_MODEL", "CHORUS_VOICE_MAX_UPLOAD_BYTES", "CHORUS_VOICE_MAX_SECONDS", "CHORUS_VOICE_LONG_FORM_MAX_SECONDS",
        "CHORUS_VOICE_AUDIO_URL_TTL", "CHORUS_VOICE_TTS_MODEL", "CHORUS_VOICE_SUMMARY_MODEL", "CHORUS_VOICE_DEFAULT_VOICE",
        "CHORUS_VOICE_NARRATOR_VOICE",
        "CHORUS_ELEVENLABS_API_KEY", "CHORUS_ELEVENLABS_BASE_URL", "CHORUS_ELEVENLABS_MODEL", "CHORUS_VOICE_DAILY_GENERATIONS",
        "CHORUS_VOICE_FREE_MONTHLY_MESSAGES", "CHORUS_VOICE_DAILY_BUDGET_USD", "CHORUS_VOICE_MONTHLY_BUDGET_USD",
        "CHORUS_VOICE_RETENTION_SWEEP_SECONDS", "CHORUS_VOICE_SPEECH_CACHE_DAYS", "CHORUS_VOICE_URGENCY", "CHORUS_S3_ENDPOINT", "CHORUS_S3_REGION",
        "CHORUS_S3_BUCKET",
        "CHORUS_S3_ACCESS_KEY_ID", "CHORUS_S3_SECRET_ACCESS_KEY", "CHORUS_S3_ADDRESSING", "CHORUS_BLOB_MEMORY_CACHE_MB", "CHORUS_PRICE_TABLE_FILE",
        "CHORUS_STORIES_TEXT_MODEL",
        "CHORUS_STORIES_IMAGE_MODEL", "CHORUS_STORIES_IMAGE_SIZE", "CHORUS_STORIES_IMAGE_QUALITY", "CHORUS_STORIES_TTS_MODEL",
        "CHORUS_STORIES_MODERATION_MODEL", "CHORUS_STORIES_ILLUSTRATION_BATCH", "CHORUS_STORIES_ILLUSTRATION_SPACING_SECONDS",
        "CHORUS_STORIES_ILLUSTRATION_TIMEOUT_SECONDS", "CHORUS_STORIES_ILLUSTRATION_ATTEMPTS", "CHORUS_STORIES_FREE_ILLUSTRATIONS",
        "CHORUS_STORIES_PREMIUM_ILLUSTRATIONS", "CHORUS_STORIES_DAILY_BUDGET_USD", "CHORUS_STORIES_MONTHLY_BUDGET_USD",
        "CHORUS_STORIES_USER_DAILY_OPERATIONS", "CHORUS_VOICE_USER_DAILY_OPERATIONS", "CHORUS_VOICE_DAILY_SUMMARIES", "CHORUS_TRIAL_CALLS_PER_DAY",
        "CHORUS_SIGNUPS_PER_IP", "CHORUS_SIGNUPS_PER_NETWORK", "CHORUS_SIGNUP_NETWORK_PREFIXES",
        "CHORUS_PLAYGROUND", "CHORUS_DEVELOPMENT_ON_NETWORK", "CHORUS_IDLE_TIMEOUT_SECONDS", "CHORUS_METRICS_TOKEN",
        "CHORUS_MODEL_CHECK_INTERVAL_SECONDS", "CHORUS_CALLS_MODERATION_MODEL", "CHORUS_CALL_DESTINATIONS", "CHORUS_CALL_HOURS",
        "CHORUS_CALLS_PER_NUMBER_PER_DAY", "CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK",
        "CHORUS_CALL_DISCLOSURE", "CHORUS_CALL_DISCLOSURE_EN", "CHORUS_CALL_DISCLOSURE_ES", "CHORUS_CALL_DISCLOSURE_FR",
        "CHORUS_CALL_DISCLOSURE_DE", "CHORUS_CALL_DISCLOSURE_IT",
    ]

    /// What every call says first (issue 17): the templates by language (`CHORUS_CALL_DISCLOSURE` for every language,
    /// `CHORUS_CALL_DISCLOSURE_<LANG>` for one, over the built-in ones); `nil` (`off`, development only): no disclosure.
    public var callDisclosure: CallDisclosure? = CallDisclosure()

    static func readCallDisclosure(from reader: inout EnvironmentReader, production: Bool) -> CallDisclosure? {
        var templates = CallDisclosure.defaultTemplates
        if let text = reader.string("CHORUS_CALL_DISCLOSURE") {
            if text.lowercased() == "off" {
                if production {
                    reader.problems.append("CHORUS_CALL_DISCLOSURE=off is refused in production: every call must open with its disclosure.")
                }
                return production ? CallDisclosure() : nil
            }
            if let problem = CallDisclosure.problem(in: text) {
                reader.problems.append("CHORUS_CALL_DISCLOSURE \(problem).")
            } else {
                for language in CallLanguage.allCases { templates[language] = text }
            }
        }
        for language in CallLanguage.allCases {
            let key = "CHORUS_CALL_DISCLOSURE_" + language.rawValue.uppercased()
            guard let text = reader.string(key) else { continue }
            if let problem = CallDisclosure.problem(in: text) {
                reader.problems.append("\(key) \(problem).")
            } else {
                templates[language] = text
            }
        }
        return CallDisclosure(templates: templates)
    }

    /// Where and when calls may go (issue 17): countries, the callee's local calling hours, and per-number limits.
    public struct CallDestinationSettings: Sendable, Equatable {
        /// ISO 3166 alpha-2 codes (`CHORUS_CALL_DESTINATIONS`; default: the caller ID's country).
        public var countries: Set<String>
        /// The callee's local hours (`CHORUS_CALL_HOURS`, default `09:00-20:00`); `nil` (`any`): any time.
        public var hours: CallingHours?
        /// Calls one number receives per UTC day, all accounts together (`CHORUS_CALLS_PER_NUMBER_PER_DAY`, default 3;
        /// `nil` (`off`): no limit).
        public var callsPerNumberPerDay: Int?
        /// Accounts that may call one number per UTC week (`CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK`, default 3; `nil`
        /// (`off`): no limit).
        public var accountsPerNumberPerWeek: Int?

        static func read(from reader: inout EnvironmentReader, callerID: String) -> CallDestinationSettings {
            let supported = NumberingPlan.supportedCountries
            var countries: Set<String> = NumberingPlan.country(of: callerID).map { [$0] } ?? []
            if let text = reader.string("CHORUS_CALL_DESTINATIONS") {
                let codes = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() }.filter { !$0.isEmpty }
                let unknown = codes.filter { !supported.contains($0) }
                if codes.isEmpty || !unknown.isEmpty {
                    reader.problems.append(
                        "CHORUS_CALL_DESTINATIONS must list ISO 3166 country codes Chorus has numbering-plan data for"
                            + (unknown.isEmpty ? "" : " (unknown: \(unknown.joined(separator: ", ")))")
                            + "; supported: \(supported.sorted().joined(separator: ", ")).")
                } else {
                    countries = Set(codes)
                }
            } else if countries.isEmpty {
                reader.problems.append(
                    "CHORUS_CALL_DESTINATIONS is required: the caller ID \(PhoneNumberMask.mask(callerID)) is in no country Chorus has "
                        + "numbering-plan data for.")
            }
            let hours = reader.value("CHORUS_CALL_HOURS", default: CallingHours?.some(.standard)) { text -> CallingHours?? in
                text.lowercased() == "any" ? .some(nil) : CallingHours.parse(text).map { .some($0) }
            }
            if hours != nil {
                let missing = NumberingPlan.allTimeZones.filter { TimeZone(identifier: $0) == nil }.sorted()
                if !missing.isEmpty {
                    reader.problems.append(
                        "CHORUS_CALL_HOURS needs the IANA time zone database (install tzdata); missing: \(missing.prefix(5).joined(separator: ", ")).")
                }
            }
            func limit(_ key: String) -> Int? {
                reader.value(key, default: Int?.some(3)) { text -> Int?? in
                    if text.lowercased() == "off" { return .some(nil) }
                    guard let value = Int(text), (1...1_000).contains(value) else { return nil }
                    return .some(value)
                }
            }
            return CallDestinationSettings(
                countries: countries, hours: hours, callsPerNumberPerDay: limit("CHORUS_CALLS_PER_NUMBER_PER_DAY"),
                accountsPerNumberPerWeek: limit("CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK"))
        }
    }

    /// The caller ID of the sandbox telephony (Twilio's test number, in the NANP).
    public static let sandboxCallerID = "+15005550006"

    /// Where and when calls may go.
    public var callDestinations = CallDestinationSettings(
        countries: ["US"], hours: .standard, callsPerNumberPerDay: 3, accountsPerNumberPerWeek: 3)

    /// The rules of ``callDestinations`` (fictional numbers only with the sandbox telephony).
    public var destinationPolicy: CallDestinationPolicy {
        CallDestinationPolicy(
            allowedCountries: callDestinations.countries, allowsFictionalNumbers: usesSandboxTelephony, hours: callDestinations.hours)
    }

    /// Sandbox providers are in use (no live Twilio account configured).
    public var usesSandboxTelephony: Bool { twilio == nil }

    public var isProduction: Bool { environment == .production }

    /// Reads the configuration from `environment` (normally `ProcessInfo.processInfo.environment`).
    ///
    /// - Throws: ``ConfigurationError`` listing every malformed value.
    public static func load(
        from environment: [String: String], hostname: String? = nil, port: Int? = nil, workingDirectory: URL? = nil
    ) throws -> ChorusConfiguration {
        var reader = EnvironmentReader(environment)
        let cwd = workingDirectory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let env = reader.value("CHORUS_ENVIRONMENT", default: Environment.development) { Environment(rawValue: $0.lowercased()) }
        let host = hostname ?? reader.string("CHORUS_HOSTNAME") ?? "127.0.0.1"
        let listenPort = port ?? reader.value("CHORUS_PORT", default: 5050) { Int($0).flatMap { (0...65_535).contains($0) ? $0 : nil } }

        let databaseURL = reader.string("CHORUS_DATABASE_URL")
        var database = DatabaseLocation.sqlite(path: cwd.appendingPathComponent("chorus.sqlite").path)
        if let databaseURL {
            let scheme = databaseURL.range(of: "://").map { String(databaseURL[..<$0.lowerBound]).lowercased() }
            switch scheme {
            case .some(let scheme) where scheme.hasPrefix("postgres"):
                if URL(string: databaseURL)?.host == nil && !scheme.hasSuffix("+uds") {
                    reader.problems.append("CHORUS_DATABASE_URL is not a valid PostgreSQL URL (postgres://user:password@host:5432/database).")
                }
                database = .postgres(url: databaseURL)
            case "sqlite", nil:
                let path = scheme == nil ? databaseURL : String(databaseURL.dropFirst("sqlite://".count))
                database = .sqlite(path: path.hasPrefix("/") ? path : cwd.appendingPathComponent(path).path)
            case .some(let scheme):
                reader.problems.append("CHORUS_DATABASE_URL: unsupported scheme '\(scheme)' (use a SQLite path or postgres://).")
            }
        }

        let configuredPublicURL = reader.value("CHORUS_PUBLIC_URL", default: URL?.none) { text in
            guard let url = URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text),
                let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil
            else { return nil }
            return url
        }
        let publicURL = configuredPublicURL ?? loopbackURL(host: host, port: listenPort)

        let dataDirectoryPath = reader.string("CHORUS_DATA_DIR") ?? "data"
        let dataDirectory =
            dataDirectoryPath.hasPrefix("/")
            ? URL(fileURLWithPath: dataDirectoryPath) : cwd.appendingPathComponent(dataDirectoryPath)

        let cors = (reader.string("CHORUS_CORS_ORIGINS") ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let rateLimits = reader.value("CHORUS_RATE_LIMITS", default: RateLimits.standard, parse: RateLimits.parse)

        var twilio: TwilioAccount?
        let sid = reader.string("CHORUS_TWILIO_ACCOUNT_SID")
        let token = reader.string("CHORUS_TWILIO_AUTH_TOKEN")
        let from = reader.string("CHORUS_TWILIO_FROM_NUMBER")
        let apiBase = reader.value("CHORUS_TWILIO_API_BASE_URL", default: URL(string: "https://api.twilio.com")!) { text in
            URL(string: text).flatMap { ["http", "https"].contains($0.scheme ?? "") && $0.host != nil ? $0 : nil }
        }
        if sid != nil || token != nil || from != nil {
            if let sid, let token, let from {
                twilio = TwilioAccount(accountSID: sid, authToken: token, fromNumber: from, apiBaseURL: apiBase)
            } else {
                reader.problems.append(
                    "CHORUS_TWILIO_ACCOUNT_SID, CHORUS_TWILIO_AUTH_TOKEN and CHORUS_TWILIO_FROM_NUMBER must be set together"
                )
            }
        }

        let openAIBase = reader.value("CHORUS_OPENAI_BASE_URL", default: URL?.none) { text in
            URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text).flatMap {
                ["http", "https"].contains($0.scheme ?? "") && $0.host != nil ? $0 : nil
            }
        }
        // A base URL without a key points the bridge at another Realtime-compatible server (e.g. `chorus sandbox`).
        let openAIKey = reader.string("CHORUS_OPENAI_API_KEY")
        let openAI: OpenAIAccount? =
            openAIKey == nil && openAIBase == nil
            ? nil : OpenAIAccount(apiKey: openAIKey ?? "", baseURL: openAIBase ?? URL(string: "https://api.openai.com/v1")!)
        let callBridge = CallBridgeSettings(
            realtimeModel: reader.string("CHORUS_OPENAI_REALTIME_MODEL") ?? "gpt-realtime-2.1",
            transcriptionModel: reader.string("CHORUS_OPENAI_TRANSCRIPTION_MODEL").map { $0.lowercased() == "none" ? nil : $0 }
                ?? "gpt-live-transcribe",
            transcriptRetentionDays: reader.value("CHORUS_TRANSCRIPT_RETENTION_DAYS", default: 30) {
                Int($0).flatMap { (0...3_650).contains($0) ? $0 : nil }
            },
            callsPerSecond: reader.value("CHORUS_TWILIO_CALLS_PER_SECOND", default: 1) { Double($0).flatMap { $0 > 0 && $0 <= 1_000 ? $0 : nil } },
            machineDetection: reader.value("CHORUS_CALL_MACHINE_DETECTION", default: true) {
                ["true", "1", "yes"].contains($0.lowercased()) ? true : (["false", "0", "no"].contains($0.lowercased()) ? false : nil)
            }
        )

        /// A per-user daily operation limit: a count, or `off`.
        func dailyOperations(_ key: String) -> Int? {
            reader.value(key, default: Int?.some(300)) { text -> Int?? in
                if text == "off" { return .some(nil) }
                guard let value = Int(text), (0...10_000_000).contains(value) else { return nil }
                return .some(value)
            }
        }
        let voiceMessages = VoiceMessageSettings(
            transcriptionModel: reader.string("CHORUS_VOICE_TRANSCRIPTION_MODEL") ?? "gpt-transcribe",
            maxUploadBytes: reader.value("CHORUS_VOICE_MAX_UPLOAD_BYTES", default: 10 * 1024 * 1024) {
                Int($0).flatMap { (1_024...100 * 1024 * 1024).contains($0) ? $0 : nil }
            },
            maxSeconds: reader.value("CHORUS_VOICE_MAX_SECONDS", default: 120) { Double($0).flatMap { $0 > 0 && $0 <= 3_600 ? $0 : nil } },
            longFormMaxSeconds: reader.value("CHORUS_VOICE_LONG_FORM_MAX_SECONDS", default: 300) {
                Double($0).flatMap { $0 > 0 && $0 <= 3_600 ? $0 : nil }
            },
            audioURLLifetime: reader.value("CHORUS_VOICE_AUDIO_URL_TTL", default: 900) {
                TimeInterval($0).flatMap { $0 >= 10 && $0 <= 86_400 ? $0 : nil }
            },
            summaryModel: reader.string("CHORUS_VOICE_SUMMARY_MODEL") ?? "gpt-5.4-mini",
            speechModel: reader.string("CHORUS_VOICE_TTS_MODEL") ?? "gpt-realtime-2.1-mini",
            defaultVoice: reader.string("CHORUS_VOICE_DEFAULT_VOICE") ?? "alloy",
            narratorVoice: reader.string("CHORUS_VOICE_NARRATOR_VOICE") ?? "sage",
            cloneSpeechModel: reader.string("CHORUS_ELEVENLABS_MODEL") ?? "eleven_multilingual_v2",
            dailyGenerationsPerUser: reader.value("CHORUS_VOICE_DAILY_GENERATIONS", default: 50) { Int($0).flatMap { $0 >= 0 ? $0 : nil } },
            freeMonthlyVoiceMessages: reader.value("CHORUS_VOICE_FREE_MONTHLY_MESSAGES", default: 100) { Int($0).flatMap { $0 >= 0 ? $0 : nil } },
            dailyBudgetMicrodollars: reader.value("CHORUS_VOICE_DAILY_BUDGET_USD", default: 50_000_000) { microdollars($0) },
            monthlyBudgetMicrodollars: reader.value("CHORUS_VOICE_MONTHLY_BUDGET_USD", default: 1_000_000_000) { microdollars($0) },
            dailyOperationsPerUser: dailyOperations("CHORUS_VOICE_USER_DAILY_OPERATIONS"),
            dailySummariesPerUser: reader.value("CHORUS_VOICE_DAILY_SUMMARIES", default: 20) { Int($0).flatMap { (0...100_000).contains($0) ? $0 : nil } },
            retentionSweepInterval: reader.value("CHORUS_VOICE_RETENTION_SWEEP_SECONDS", default: 3_600) {
                TimeInterval($0).flatMap { $0 >= 1 && $0 <= 86_400 ? $0 : nil }
            },
            speechCacheLifetime: reader.value("CHORUS_VOICE_SPEECH_CACHE_DAYS", default: 30 * 86_400) {
                // At least the 7 days a summary (and its narration) is served from the cache.
                Int($0).flatMap { (7...3_650).contains($0) ? TimeInterval($0 * 86_400) : nil }
            },
            urgencyByModel: reader.value("CHORUS_VOICE_URGENCY", default: true) {
                switch $0 {
                case "model": true
                case "keywords": false
                default: nil
                }
            }
        )
        func budget(_ key: String, _ defaultUSD: Int64) -> Int64? {
            reader.value(key, default: Int64?.some(defaultUSD * 1_000_000)) { text -> Int64?? in
                if text == "off" { return .some(nil) }
                guard let value = microdollars(text) else { return nil }
                return .some(value)
            }
        }
        let stories = StorySettings(
            textModel: reader.string("CHORUS_STORIES_TEXT_MODEL") ?? "gpt-5.4-mini",
            imageModel: reader.string("CHORUS_STORIES_IMAGE_MODEL") ?? "gpt-image-2",
            imageSize: reader.string("CHORUS_STORIES_IMAGE_SIZE") ?? "1024x1024",
            imageQuality: reader.string("CHORUS_STORIES_IMAGE_QUALITY") ?? "medium",
            speechModel: reader.string("CHORUS_STORIES_TTS_MODEL") ?? "gpt-realtime-2.1-mini",
            moderationModel: reader.value("CHORUS_STORIES_MODERATION_MODEL", default: String?.some("omni-moderation-latest")) {
                $0 == "off" ? String?.none : String?.some($0)
            },
            illustrationBatchSize: reader.value("CHORUS_STORIES_ILLUSTRATION_BATCH", default: 3) {
                Int($0).flatMap { (1...8).contains($0) ? $0 : nil }
            },
            illustrationBatchSpacing: reader.value("CHORUS_STORIES_ILLUSTRATION_SPACING_SECONDS", default: 2) {
                TimeInterval($0).flatMap { $0 >= 0 && $0 <= 60 ? $0 : nil }
            },
            illustrationTimeout: reader.value("CHORUS_STORIES_ILLUSTRATION_TIMEOUT_SECONDS", default: 30) {
                TimeInterval($0).flatMap { $0 > 0 && $0 <= 600 ? $0 : nil }
            },
            illustrationAttempts: reader.value("CHORUS_STORIES_ILLUSTRATION_ATTEMPTS", default: 4) {
                Int($0).flatMap { (1...10).contains($0) ? $0 : nil }
            },
            freeIllustrations: reader.value("CHORUS_STORIES_FREE_ILLUSTRATIONS", default: 3) { Int($0).flatMap { (0...8).contains($0) ? $0 : nil } },
            premiumIllustrations: reader.value("CHORUS_STORIES_PREMIUM_ILLUSTRATIONS", default: 8) {
                Int($0).flatMap { (0...8).contains($0) ? $0 : nil }
            },
            dailyBudgetMicrodollars: budget("CHORUS_STORIES_DAILY_BUDGET_USD", 50),
            monthlyBudgetMicrodollars: budget("CHORUS_STORIES_MONTHLY_BUDGET_USD", 1_000),
            dailyOperationsPerUser: dailyOperations("CHORUS_STORIES_USER_DAILY_OPERATIONS"))
        var prices = PriceTable.standard
        if let path = reader.string("CHORUS_PRICE_TABLE_FILE") {
            let file = path.hasPrefix("/") ? URL(fileURLWithPath: path) : cwd.appendingPathComponent(path)
            do {
                prices = prices.applying(try PriceTable.Overrides.decode(json: try Data(contentsOf: file)))
            } catch {
                reader.problems.append("CHORUS_PRICE_TABLE_FILE \(file.path) cannot be used: \(error) (see docs/configuration.md).")
            }
        }
        var objectStorage: S3BlobStore.Configuration?
        let s3Endpoint = reader.value("CHORUS_S3_ENDPOINT", default: URL?.none) { text in
            URL(string: text).flatMap { ["http", "https"].contains($0.scheme ?? "") && $0.host != nil ? $0 : nil }
        }
        let s3Bucket = reader.string("CHORUS_S3_BUCKET")
        let s3Key = reader.string("CHORUS_S3_ACCESS_KEY_ID")
        let s3Secret = reader.string("CHORUS_S3_SECRET_ACCESS_KEY")
        if s3Endpoint != nil || s3Bucket != nil || s3Key != nil || s3Secret != nil {
            if let s3Endpoint, let s3Bucket, let s3Key, let s3Secret {
                objectStorage = S3BlobStore.Configuration(
                    endpoint: s3Endpoint, region: reader.string("CHORUS_S3_REGION") ?? "us-east-1", bucket: s3Bucket, accessKeyID: s3Key,
                    secretAccessKey: s3Secret,
                    addressing: reader.value("CHORUS_S3_ADDRESSING", default: .path) { S3BlobStore.Configuration.Addressing(rawValue: $0) })
            } else {
                reader.problems.append(
                    "CHORUS_S3_ENDPOINT, CHORUS_S3_BUCKET, CHORUS_S3_ACCESS_KEY_ID and CHORUS_S3_SECRET_ACCESS_KEY must be set together")
            }
        }
        let elevenLabsKey = reader.string("CHORUS_ELEVENLABS_API_KEY")
        let elevenLabsBase = reader.value("CHORUS_ELEVENLABS_BASE_URL", default: URL?.none) { text in
            URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text).flatMap {
                ["http", "https"].contains($0.scheme ?? "") && $0.host != nil ? $0 : nil
            }
        }
        let elevenLabs: ElevenLabsAccount? =
            elevenLabsKey == nil && elevenLabsBase == nil
            ? nil : ElevenLabsAccount(apiKey: elevenLabsKey ?? "", baseURL: elevenLabsBase ?? URL(string: "https://api.elevenlabs.io")!)

        let plans = PlanCatalog.read(from: &reader)
        func httpURL(_ text: String) -> URL? {
            URL(string: text).flatMap { ["http", "https"].contains($0.scheme ?? "") && $0.host != nil ? $0 : nil }
        }
        let sharedSecret = reader.string("CHORUS_APPLE_SHARED_SECRET")
        let appleDefaultURLs = sharedSecret != nil
        let appStore = AppStoreSettings(
            bundleID: reader.string("CHORUS_APPLE_BUNDLE_ID") ?? "com.chorus.speechassistant",
            appAppleID: reader.value("CHORUS_APPLE_APP_ID", default: Int64?.none) { Int64($0).flatMap { $0 > 0 ? $0 : nil } },
            environment: reader.value("CHORUS_APPLE_ENVIRONMENT", default: env == .production ? AppStoreEnvironment.production : .sandbox) {
                switch $0.lowercased() {
                case "production": .production
                case "sandbox": .sandbox
                default: nil
                }
            },
            acceptsSandboxInProduction: reader.value("CHORUS_APPLE_ACCEPT_SANDBOX", default: true) {
                ["true", "1", "yes"].contains($0.lowercased()) ? true : (["false", "0", "no"].contains($0.lowercased()) ? false : nil)
            },
            sharedSecret: sharedSecret,
            extraRootCertificatePaths: (reader.string("CHORUS_APPLE_EXTRA_ROOTS") ?? "").split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty },
            verifyReceiptURL: reader.value(
                "CHORUS_APPLE_VERIFY_RECEIPT_URL", default: appleDefaultURLs ? URL(string: "https://buy.itunes.apple.com/verifyReceipt") : nil,
                parse: httpURL),
            verifyReceiptSandboxURL: reader.value(
                "CHORUS_APPLE_VERIFY_RECEIPT_SANDBOX_URL",
                default: appleDefaultURLs ? URL(string: "https://sandbox.itunes.apple.com/verifyReceipt") : nil, parse: httpURL)
        )
        var configuration = ChorusConfiguration(
            environment: env,
            hostname: host,
            port: listenPort,
            database: database,
            publicURL: publicURL,
            publicURLWasConfigured: configuredPublicURL != nil,
            jwtSecret: reader.string("CHORUS_JWT_SECRET"),
            dataDirectory: dataDirectory,
            corsOrigins: cors,
            rateLimits: rateLimits,
            accessTokenLifetime: reader.value("CHORUS_ACCESS_TOKEN_TTL", default: 900) { TimeInterval($0).flatMap { $0 > 0 && $0 <= 315_360_000 ? $0 : nil } },
            refreshTokenLifetime: reader.value("CHORUS_REFRESH_TOKEN_TTL", default: 30 * 86_400) {
                TimeInterval($0).flatMap { $0 > 0 && $0 <= 315_360_000 ? $0 : nil }
            },
            twilio: twilio,
            sandboxTiming: SandboxTiming(
                ringSeconds: reader.value("CHORUS_SANDBOX_RING_SECONDS", default: 1) { Double($0).flatMap { $0 >= 0 && $0 <= 3_600 ? $0 : nil } },
                talkSeconds: reader.value("CHORUS_SANDBOX_TALK_SECONDS", default: 25) { Double($0).flatMap { $0 >= 0 && $0 <= 86_400 ? $0 : nil } }
            ),
            sandboxRetention: SandboxRetention(
                requestLogEntries: reader.value("CHORUS_SANDBOX_REQUEST_LOG_ENTRIES", default: 2_000) { Int($0).flatMap { $0 > 0 ? $0 : nil } },
                requestLogBytes: reader.value("CHORUS_SANDBOX_REQUEST_LOG_BYTES", default: 4 << 20) { Int($0).flatMap { $0 > 0 ? $0 : nil } },
                keptCalls: reader.value("CHORUS_SANDBOX_KEPT_CALLS", default: 100) { Int($0).flatMap { $0 > 0 ? $0 : nil } },
                keptAudioBytes: reader.value("CHORUS_SANDBOX_KEPT_AUDIO_BYTES", default: 32 << 20) { Int($0).flatMap { $0 > 0 ? $0 : nil } }
            ),
            appStore: appStore,
            plans: plans,
            maxBodySize: reader.value("CHORUS_MAX_BODY_BYTES", default: 64 * 1024) { Int($0).flatMap { $0 > 0 ? $0 : nil } },
            jobPollInterval: reader.value("CHORUS_JOB_POLL_SECONDS", default: 1) { Double($0).flatMap { $0 > 0 && $0 <= 3_600 ? $0 : nil } },
            jobConcurrency: reader.value("CHORUS_JOB_CONCURRENCY", default: 8) { Int($0).flatMap { (1...64).contains($0) ? $0 : nil } },
            logLevel: reader.value("CHORUS_LOG_LEVEL", default: "info") { text in
                ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(text.lowercased()) ? text.lowercased() : nil
            },
            blockingThreads: reader.value("CHORUS_BLOCKING_THREADS", default: max(8, System.coreCount * 4)) {
                Int($0).flatMap { (1...512).contains($0) ? $0 : nil }
            },
            sqliteReadersPerEventLoop: reader.value("CHORUS_SQLITE_READERS", default: 4) { Int($0).flatMap { (1...64).contains($0) ? $0 : nil } },
            logFormat: reader.value("CHORUS_LOG_FORMAT", default: env == .production ? LogFormat.json : .text) {
                LogFormat(rawValue: $0.lowercased())
            },
            openAI: openAI,
            callBridge: callBridge,
            voiceMessages: voiceMessages,
            stories: stories,
            elevenLabs: elevenLabs,
            objectStorage: objectStorage,
            blobMemoryCacheBytes: reader.value("CHORUS_BLOB_MEMORY_CACHE_MB", default: 64 << 20) {
                Int($0).flatMap { (0...65_536).contains($0) ? $0 << 20 : nil }
            },
            prices: prices,
            playgroundEnabled: reader.value("CHORUS_PLAYGROUND", default: env != .production) {
                ["true", "1", "yes"].contains($0.lowercased()) ? true : (["false", "0", "no"].contains($0.lowercased()) ? false : nil)
            }
        )
        configuration.connections = ConnectionLimits.read(from: &reader)
        configuration.metricsToken = reader.value("CHORUS_METRICS_TOKEN", default: String?.none) { text -> String?? in
            text.utf8.count >= 16 ? .some(text) : nil
        }
        configuration.modelCheckInterval = reader.value("CHORUS_MODEL_CHECK_INTERVAL_SECONDS", default: 86_400) {
            TimeInterval($0).flatMap { $0 >= 1 && $0 <= 604_800 ? $0 : nil }
        }
        configuration.callsModerationModel = reader.value("CHORUS_CALLS_MODERATION_MODEL", default: String?.some("omni-moderation-latest")) {
            $0 == "off" ? String?.none : String?.some($0)
        }
        configuration.numberHashSecret = reader.string("CHORUS_NUMBER_HASH_SECRET")
        configuration.textReasoningEffort = reader.value("CHORUS_OPENAI_REASONING_EFFORT", default: .none) {
            OpenAITextGenerator.ReasoningEffort(rawValue: $0.lowercased())
        }
        configuration.idleTimeoutSeconds = reader.value("CHORUS_IDLE_TIMEOUT_SECONDS", default: 60) {
            Double($0).flatMap { (1...3_600).contains($0) ? $0 : nil }
        }
        configuration.developmentOnNetwork = reader.value("CHORUS_DEVELOPMENT_ON_NETWORK", default: false) {
            ["true", "1", "yes"].contains($0.lowercased()) ? true : (["false", "0", "no"].contains($0.lowercased()) ? false : nil)
        }
        configuration.admission = AdmissionLimits.read(from: &reader, production: env == .production)
        configuration.callDestinations = CallDestinationSettings.read(from: &reader, callerID: twilio?.fromNumber ?? sandboxCallerID)
        configuration.callDisclosure = readCallDisclosure(from: &reader, production: env == .production)
        if !reader.problems.isEmpty { throw ConfigurationError(problems: reader.problems) }
        return configuration
    }

    /// A dollar amount (`12.50`) in micro-dollars.
    static func microdollars(_ text: String) -> Int64? {
        guard let value = Decimal(string: text), value >= 0, value < 1_000_000_000 else { return nil }
        return NSDecimalNumber(decimal: value * 1_000_000).int64Value
    }

    /// Problems that forbid starting in this configuration (production safety). Empty when all is well.
    public func startupProblems() -> [String] {
        guard isProduction else {
            guard listensOnLoopbackOnly || developmentOnNetwork else {
                return [
                    "CHORUS_HOSTNAME \(hostname) is reachable from the network, and in development the sandbox (/sandbox/*) serves "
                        + "phone numbers, call recordings and message text without authentication. Listen on 127.0.0.1, set "
                        + "CHORUS_ENVIRONMENT=production, or set CHORUS_DEVELOPMENT_ON_NETWORK=true to expose the sandbox anyway."
                ]
            }
            return []
        }
        var problems: [String] = []
        if jwtSecret == nil {
            problems.append("CHORUS_JWT_SECRET is required in production (at least 32 random bytes, e.g. `openssl rand -base64 48`).")
        } else if let jwtSecret, jwtSecret.utf8.count < 32 {
            problems.append("CHORUS_JWT_SECRET must be at least 32 bytes long.")
        }
        if numberHashSecret == nil {
            problems.append(
                "CHORUS_NUMBER_HASH_SECRET is required in production (at least 32 random bytes, e.g. `openssl rand -base64 48`; "
                    + "never rotate it: the do-not-call list is keyed by it).")
        } else if let numberHashSecret, numberHashSecret.utf8.count < 32 {
            problems.append("CHORUS_NUMBER_HASH_SECRET must be at least 32 bytes long.")
        }
        if !publicURLWasConfigured {
            problems.append("CHORUS_PUBLIC_URL is required in production (the https URL Twilio and Apple reach this server at).")
        } else if publicURL.scheme != "https" {
            problems.append("CHORUS_PUBLIC_URL must be an https URL in production.")
        }
        if usesSandboxTelephony {
            problems.append(
                "Telephony would use the sandbox: set CHORUS_TWILIO_ACCOUNT_SID, CHORUS_TWILIO_AUTH_TOKEN and "
                    + "CHORUS_TWILIO_FROM_NUMBER for production."
            )
        }
        if openAI?.apiKey.isEmpty ?? true {
            problems.append("The calls' AI voice would use the sandbox: set CHORUS_OPENAI_API_KEY for production.")
        }
        if elevenLabs?.apiKey.isEmpty ?? true {
            problems.append("Cloned voices would use the sandbox: set CHORUS_ELEVENLABS_API_KEY for production.")
        }
        if callsModerationModel == nil {
            problems.append(
                "CHORUS_CALLS_MODERATION_MODEL=off is for development only: production checks every custom persona with the moderation model.")
        }
        if appStore.appAppleID == nil {
            problems.append("CHORUS_APPLE_APP_ID is required in production (the app's numeric App Store id; notifications must name it).")
        }
        if appStore.sharedSecret == nil {
            problems.append("CHORUS_APPLE_SHARED_SECRET is required in production (App Store Connect → the app's shared secret).")
        }
        if !appStore.extraRootCertificatePaths.isEmpty {
            problems.append("CHORUS_APPLE_EXTRA_ROOTS is for testing only: production trusts Apple Root CA - G3 alone.")
        }
        return problems
    }
}

/// Malformed configuration values, one line each.
public struct ConfigurationError: Error, CustomStringConvertible {
    public var problems: [String]
    public var description: String { problems.joined(separator: "\n") }
}

extension ChorusConfiguration.RateLimits {
    /// Parses `off`, `default`, or `user=600/60,calls=20/60,auth=30/60` (requests/seconds; `none` disables one).
    static func parse(_ text: String) -> Self? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if trimmed == "off" { return .off }
        if trimmed == "default" || trimmed.isEmpty { return .standard }
        var limits = Self.standard
        for part in trimmed.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { return nil }
            let limit: ChorusConfiguration.RateLimit?
            if pair[1] == "none" {
                limit = nil
            } else {
                let numbers = pair[1].split(separator: "/")
                guard numbers.count == 2, let count = Int(numbers[0]), let window = Double(numbers[1]), count > 0, window > 0, window <= 86_400
                else {
                    return nil
                }
                limit = ChorusConfiguration.RateLimit(limit: count, window: window)
            }
            switch pair[0] {
            case "user": limits.user = limit
            case "calls": limits.calls = limit
            case "auth": limits.auth = limit
            default: return nil
            }
        }
        return limits
    }
}

extension PlanCatalog {
    static func read(from reader: inout EnvironmentReader) -> PlanCatalog {
        var catalog = PlanCatalog.standard
        func positive(_ text: String) -> Int? { Int(text).flatMap { $0 > 0 ? $0 : nil } }
        func nonNegative(_ text: String) -> Int? { Int(text).flatMap { $0 >= 0 ? $0 : nil } }
        catalog.trial.calls = reader.value("CHORUS_TRIAL_CALLS", default: catalog.trial.calls, parse: nonNegative)
        catalog.trial.period = TimeInterval(reader.value("CHORUS_TRIAL_DAYS", default: 7, parse: positive) * 86_400)
        catalog.trial.durationLimitSeconds = reader.value("CHORUS_TRIAL_CALL_SECONDS", default: 60, parse: positive)
        for tier in PlanTier.allCases {
            let prefix = "CHORUS_\(tier.rawValue.uppercased())"
            var terms = catalog.plan(tier)
            terms.callsPerCycle = reader.value("\(prefix)_CALLS", default: terms.callsPerCycle, parse: positive)
            terms.durationLimitSeconds = reader.value("\(prefix)_CALL_SECONDS", default: terms.durationLimitSeconds, parse: positive)
            terms.price = reader.string("\(prefix)_PRICE") ?? terms.price
            terms.productID = reader.string("\(prefix)_PRODUCT_ID") ?? terms.productID
            if let legacy = reader.string("\(prefix)_LEGACY_PRODUCT_IDS") {
                terms.legacyProductIDs = legacy.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            }
            switch tier {
            case .basic: catalog.basic = terms
            case .premium: catalog.premium = terms
            }
        }
        catalog.addon.calls = reader.value("CHORUS_ADDON_CALLS", default: catalog.addon.calls, parse: positive)
        catalog.addon.validity = TimeInterval(reader.value("CHORUS_ADDON_DAYS", default: 30, parse: positive) * 86_400)
        catalog.addon.price = reader.string("CHORUS_ADDON_PRICE") ?? catalog.addon.price
        catalog.addon.productID = reader.string("CHORUS_ADDON_PRODUCT_ID") ?? catalog.addon.productID
        catalog.addon.durationLimitWithoutPlanSeconds = reader.value(
            "CHORUS_ADDON_CALL_SECONDS", default: catalog.addon.durationLimitWithoutPlanSeconds, parse: positive
        )
        return catalog
    }
}

/// Reads typed values and collects one problem per malformed key.
struct EnvironmentReader {
    let environment: [String: String]
    var problems: [String] = []

    init(_ environment: [String: String]) {
        self.environment = environment
    }

    func string(_ key: String) -> String? {
        guard let value = environment[key]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }

    mutating func value<T>(_ key: String, default defaultValue: T, parse: (String) -> T?) -> T {
        guard let text = string(key) else { return defaultValue }
        guard let parsed = parse(text) else {
            problems.append("\(key) has an invalid value (see docs/configuration.md).")
            return defaultValue
        }
        return parsed
    }
}
