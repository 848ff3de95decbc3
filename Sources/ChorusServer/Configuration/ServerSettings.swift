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
        func lifetime(_ text: String) -> TimeInterval? { TimeInterval(text).flatMap { $0 > 0 && $0 <= 315_360_000 ? $0 : nil } }
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
            reader.value("CHORUS_JOB_POLL_SECONDS", default: 1) { Double($0).flatMap { $0 > 0 && $0 <= 3_600 ? $0 : nil } },
            reader.value("CHORUS_JOB_CONCURRENCY", default: 8, parse: EnvironmentReader.integer(in: 1...64)),
            reader.value("CHORUS_LOG_LEVEL", default: "info") { text in
                ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(text.lowercased()) ? text.lowercased() : nil
            },
            reader.value("CHORUS_BLOCKING_THREADS", default: max(8, System.coreCount * 4), parse: EnvironmentReader.integer(in: 1...512)),
            reader.value("CHORUS_SQLITE_READERS", default: 4, parse: EnvironmentReader.integer(in: 1...64)),
            reader.value("CHORUS_LOG_FORMAT", default: production ? LogFormat.json : .text) { LogFormat(rawValue: $0.lowercased()) }
        )
    }

    /// The settings read after the sections: connection caps, the metrics token, model checks, the calls' moderation
    /// model, the number-hash secret, reasoning effort, the idle timeout and whether development may listen on the
    /// network.
    mutating func loadOperation(from reader: inout EnvironmentReader) {
        connections = ConnectionLimits.load(from: &reader)
        metricsToken = reader.value("CHORUS_METRICS_TOKEN", default: String?.none) { text -> String?? in
            text.utf8.count >= 16 ? .some(text) : nil
        }
        trustedProxies = reader.value("CHORUS_TRUSTED_PROXIES", default: .none) { TrustedProxies(list: $0) }
        modelCheckInterval = reader.value("CHORUS_MODEL_CHECK_INTERVAL_SECONDS", default: 86_400) {
            TimeInterval($0).flatMap { $0 >= 1 && $0 <= 604_800 ? $0 : nil }
        }
        callsModerationModel = reader.value("CHORUS_CALLS_MODERATION_MODEL", default: String?.some("omni-moderation-latest")) {
            $0 == "off" ? String?.none : String?.some($0)
        }
        numberHashSecret = reader.string("CHORUS_NUMBER_HASH_SECRET")
        textReasoningEffort = reader.value("CHORUS_OPENAI_REASONING_EFFORT", default: .none) {
            OpenAITextGenerator.ReasoningEffort(rawValue: $0.lowercased())
        }
        idleTimeoutSeconds = reader.value("CHORUS_IDLE_TIMEOUT_SECONDS", default: 60) { Double($0).flatMap { (1...3_600).contains($0) ? $0 : nil } }
        jobLease = reader.value("CHORUS_JOB_LEASE_SECONDS", default: 120) { Double($0).flatMap { (3...3_600).contains($0) ? $0 : nil } }
        developmentOnNetwork = reader.flag("CHORUS_DEVELOPMENT_ON_NETWORK", default: false)
        tracing = TracingSettings.load(from: &reader)
    }
}
