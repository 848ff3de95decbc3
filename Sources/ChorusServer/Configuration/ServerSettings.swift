import ChorusCore
import ChorusProviders
import Foundation
import NIOCore

// The server process itself: its tokens, its tuning, and the settings of its operation (connections, metrics, model
// checks, moderation, timeouts).
extension ChorusConfiguration {
    /// The JWT secret and the access and refresh tokens' lifetimes.
    static func loadTokens(
        from reader: inout EnvironmentReader
    ) -> (
        jwtSecret: String?, accessTokenLifetime: TimeInterval, refreshTokenLifetime: TimeInterval
    ) {
        let lifetime = EnvironmentReader.number(above: 0, atMost: 315_360_000, of: "seconds")
        return (
            reader.string("CHORUS_JWT_SECRET"),
            reader.value("CHORUS_ACCESS_TOKEN_TTL", default: 900, parse: lifetime),
            reader.value("CHORUS_REFRESH_TOKEN_TTL", default: 30 * 86_400, parse: lifetime)
        )
    }

    /// Request bodies, the job queue, logging and threads.
    static func loadProcess(
        from reader: inout EnvironmentReader, production: Bool
    ) -> (
        maxBodySize: Int, jobPollInterval: TimeInterval, jobConcurrency: Int, logLevel: String, blockingThreads: Int,
        sqliteReadersPerEventLoop: Int, logFormat: LogFormat
    ) {
        return (
            reader.value("CHORUS_MAX_BODY_BYTES", default: 64 * 1024, parse: EnvironmentReader.integer(in: 1...Int.max)),
            reader.value("CHORUS_JOB_POLL_SECONDS", default: 1, parse: EnvironmentReader.number(above: 0, atMost: 3_600, of: "seconds")),
            reader.value("CHORUS_JOB_CONCURRENCY", default: 8, parse: EnvironmentReader.integer(in: 1...64)),
            reader.value("CHORUS_LOG_LEVEL", default: "info", accepts: "trace, debug, info, notice, warning, error or critical") { text in
                ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(text.lowercased()) ? text.lowercased() : nil
            },
            reader.value("CHORUS_BLOCKING_THREADS", default: max(8, System.coreCount * 4), parse: EnvironmentReader.integer(in: 1...512)),
            reader.value("CHORUS_SQLITE_READERS", default: 4, parse: EnvironmentReader.integer(in: 1...64)),
            reader.choice("CHORUS_LOG_FORMAT", default: production ? LogFormat.json : .text, among: [.json, .text])
        )
    }

    /// The settings read after the sections: connection caps, the metrics token, model checks, the calls' moderation
    /// model, the number-hash secret, reasoning effort, the idle timeout and whether development may listen on the
    /// network.
    mutating func loadOperation(from reader: inout EnvironmentReader) {
        connections = ConnectionLimits.load(from: &reader)
        metricsToken = reader.value("CHORUS_METRICS_TOKEN", default: String?.none, accepts: "a token of at least 16 bytes") { text -> String?? in
            text.utf8.count >= 16 ? .some(text) : nil
        }
        trustedProxies = reader.value(
            "CHORUS_TRUSTED_PROXIES", default: .none, accepts: "comma-separated IP addresses or CIDR ranges, such as 10.0.0.0/8,127.0.0.1"
        ) { TrustedProxies(list: $0) }
        modelCheckInterval = reader.value(
            "CHORUS_MODEL_CHECK_INTERVAL_SECONDS", default: 86_400, parse: EnvironmentReader.number(in: 1...604_800, of: "seconds"))
        callsModerationModel = reader.value("CHORUS_CALLS_MODERATION_MODEL", default: String?.some("omni-moderation-latest"), accepts: "a model name, or off") {
            $0 == "off" ? String?.none : String?.some($0)
        }
        numberHashSecret = reader.string("CHORUS_NUMBER_HASH_SECRET")
        textReasoningEffort = reader.choice(
            "CHORUS_OPENAI_REASONING_EFFORT", default: .none, among: OpenAITextGenerator.ReasoningEffort.allCases)
        idleTimeoutSeconds = reader.value("CHORUS_IDLE_TIMEOUT_SECONDS", default: 60, parse: EnvironmentReader.number(in: 1...3_600, of: "seconds"))
        jobLease = reader.value("CHORUS_JOB_LEASE_SECONDS", default: 120, parse: EnvironmentReader.number(in: 3...3_600, of: "seconds"))
        developmentOnNetwork = reader.flag("CHORUS_DEVELOPMENT_ON_NETWORK", default: false)
        tracing = TracingSettings.load(from: &reader)
    }
}
