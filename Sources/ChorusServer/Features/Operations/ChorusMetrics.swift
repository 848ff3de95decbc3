import ChorusAPI
import ChorusCore
import Foundation
import NIOConcurrencyHelpers
import Prometheus

/// Every metric `GET /metrics` serves, defined in one place (docs/operations.md lists them) on the app's
/// ``PrometheusCollectorRegistry``, and handed to what records them.
///
/// Label values are bounded: route templates (never raw paths), known HTTP methods, status codes, the code's own
/// provider, operation and job-kind names, closed sets of call statuses and ended reasons. No user ids, no numbers.
///
/// Two kinds of figures:
/// - events, recorded where they happen (HTTP requests, provider exchanges, job failures, calls ending, waits for a
///   database connection);
/// - states, refreshed right before each scrape by ``refresh(_:)`` from their one source of truth (the job queue and the
///   calls in the database, the realtime hub's connections, the bridges' figures, the spend counters).
final class ChorusMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    /// The configured spending limits per feature (the same ones ``UsageMeter`` enforces).
    private let budgets: [MeteredFeature: FeatureBudget]
    /// Label sets of the gauges refreshed at scrape time, so one that vanished (no job of a kind left) goes to 0.
    private let refreshed = NIOLockedValueBox<[String: Set<[String]>]>([:])

    /// Records a write transaction's wait for its connection (made once: every request's store uses it).
    let writeTransactionWaits: @Sendable (Duration) -> Void

    init(registry: PrometheusCollectorRegistry, budgets: [MeteredFeature: FeatureBudget]) {
        self.registry = registry
        self.budgets = budgets
        writeTransactionWaits = Self.connectionWaits(.writeTransaction, registry: registry)
    }

    // MARK: Names and buckets

    enum Name {
        static let httpRequests = "chorus_http_requests_total"
        static let httpDuration = "chorus_http_request_duration_seconds"
        static let callsEnded = "chorus_calls_ended_total"
        static let callsInProgress = "chorus_calls_in_progress"
        static let bridgeRelay = "chorus_bridge_relay_latency_seconds"
        static let bridgeBargeIn = "chorus_bridge_barge_in_latency_seconds"
        static let firstAudio = "chorus_call_first_audio_seconds"
        static let jobsQueued = "chorus_jobs"
        static let jobsOldestDue = "chorus_jobs_oldest_due_age_seconds"
        static let jobFailures = "chorus_job_failures_total"
        static let providerCalls = "chorus_provider_calls_total"
        static let providerDuration = "chorus_provider_call_duration_seconds"
        static let databaseWait = "chorus_db_connection_wait_seconds"
        static let openConnections = "chorus_open_connections"
        static let spend = "chorus_feature_spend_usd"
        static let budget = "chorus_feature_budget_usd"
    }

    static let httpBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .milliseconds(2_500), .seconds(5), .seconds(10),
    ]
    static let providerBuckets: [Duration] = [
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2_500), .seconds(5),
        .seconds(10), .seconds(30), .seconds(60),
    ]
    static let databaseWaitBuckets: [Duration] = [
        .microseconds(100), .microseconds(500), .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(50),
        .milliseconds(100), .milliseconds(500), .seconds(1), .seconds(5),
    ]
    /// Seconds (the bridges' own histograms are in microseconds).
    static let relayBuckets: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1]
    static let bargeInBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]
    static let firstAudioBuckets: [Double] = [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10]

    // MARK: HTTP

    /// The methods named as themselves; any other is `other` (a client may send any token as a method).
    private static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    /// One answered request: `route` is the matched route's template (`/mobile/calls/:id`) or `unmatched`.
    func httpRequest(route: String, method: String, status: Int, duration: Duration) {
        let method = Self.knownMethods.contains(method) ? method : "other"
        registry.makeCounter(
            descriptor: .init(metricName: Name.httpRequests, unitName: "", helpText: "HTTP requests answered, by route template, method and status."),
            labels: [("route", route), ("method", method), ("status", String(status))]
        ).increment()
        registry.makeDurationHistogram(
            descriptor: .init(metricName: Name.httpDuration, unitName: "", helpText: "Time from a request's arrival to its answer's head, by route template and method."),
            labels: [("route", route), ("method", method)], buckets: Self.httpBuckets
        ).record(duration)
    }

    // MARK: Calls

    /// A call reached a final status (counted once: only the update that moved it there records it).
    func callEnded(status: CallStatus, reason: String?) {
        callsEnded(status: status, reason: reason).increment()
    }

    private func callsEnded(status: CallStatus, reason: String?) -> Counter {
        let reason = reason.map(EndedReason.init(rawValue:))
        return registry.makeCounter(
            descriptor: .init(metricName: Name.callsEnded, unitName: "", helpText: "Calls that reached a final status, by status and ended reason."),
            labels: [
                ("status", status.isKnown ? status.rawValue : "other"),
                ("ended_reason", reason.map { $0.isKnown ? $0.rawValue : "other" } ?? "none"),
            ]
        )
    }

    /// Records ``callEnded(status:reason:)`` when `update` is the one that ended its call.
    func callStatusApplied(_ update: CallStatusUpdate) {
        guard update.applied, let call = update.call, call.status.isTerminal else { return }
        callEnded(status: call.status, reason: call.endedReason)
    }

    /// `count` calls the telephony provider never took were released: failed, `failed_to_start`.
    func callsReleased(_ count: Int) {
        guard count > 0 else { return }
        callsEnded(status: .failed, reason: EndedReason.failedToStart.rawValue).increment(by: Int64(count))
    }

    // MARK: Jobs

    /// A job attempt failed; `final` when it will not be retried.
    func jobFailed(kind: String, final: Bool) {
        registry.makeCounter(
            descriptor: .init(metricName: Name.jobFailures, unitName: "", helpText: "Failed job attempts, by job kind and whether the job is given up (final) or retried."),
            labels: [("kind", kind), ("final", final ? "true" : "false")]
        ).increment()
    }

    // MARK: Providers

    /// One exchange with a provider, as ``ProviderHealth`` (the console's provider health) sees it: `outcome` is `ok`
    /// or the failure's classification (``ProviderCallFailure``).
    func providerCall(provider: String, operation: String, failure: String?, duration: Duration) {
        registry.makeCounter(
            descriptor: .init(metricName: Name.providerCalls, unitName: "", helpText: "Exchanges with providers, by provider, operation and outcome (ok or the failure's kind)."),
            labels: [("provider", provider), ("operation", operation), ("outcome", failure ?? "ok")]
        ).increment()
        registry.makeDurationHistogram(
            descriptor: .init(metricName: Name.providerDuration, unitName: "", helpText: "Duration of exchanges with providers, by provider and operation."),
            labels: [("provider", provider), ("operation", operation)], buckets: Self.providerBuckets
        ).record(duration)
    }

    // MARK: Database

    /// The connection pools whose waits are measured.
    enum DatabasePool: String {
        /// A write transaction: its connection from Fluent's pool, and on SQLite the process's write gate.
        case writeTransaction = "write_transaction"
        /// SQLite's read pool.
        case sqliteRead = "sqlite_read"
    }

    /// What records the time taken to obtain a connection of `pool`.
    func connectionWaits(_ pool: DatabasePool) -> @Sendable (Duration) -> Void {
        Self.connectionWaits(pool, registry: registry)
    }

    private static func connectionWaits(_ pool: DatabasePool, registry: PrometheusCollectorRegistry) -> @Sendable (Duration) -> Void {
        let histogram = registry.makeDurationHistogram(
            descriptor: .init(metricName: Name.databaseWait, unitName: "", helpText: "Time from asking for a database connection to holding it, by pool."),
            labels: [("pool", pool.rawValue)], buckets: Self.databaseWaitBuckets)
        return { histogram.record($0) }
    }

    // MARK: Scrape-time states

    /// What ``refresh(_:)`` reads: each from its one source.
    struct States: Sendable {
        var jobs: [JobQueueFigures]
        var callsInProgress: [(status: CallStatus, count: Int)]
        var spend: [MeteredFeature: (day: Int64, month: Int64)]
        var webSockets: Int
        var eventStreams: Int
        var bridges: BridgeMetrics.Snapshot
        var now: Date
    }

    /// Sets the scrape-time gauges to `states`.
    func refresh(_ states: States) {
        let help = "Jobs in the queue, by kind and state (due: pending and due; scheduled: pending for later; running)."
        var queued: [[String]: Double] = [:]
        var oldest: [[String]: Double] = [:]
        for kind in JobKind.all {
            for state in ["due", "scheduled", "running"] { queued[[kind, state]] = 0 }
            oldest[[kind]] = 0
        }
        for figures in states.jobs {
            queued[[figures.kind, "due"]] = Double(figures.due)
            queued[[figures.kind, "scheduled"]] = Double(figures.scheduled)
            queued[[figures.kind, "running"]] = Double(figures.running)
            if let due = figures.oldestDue { oldest[[figures.kind]] = max(0, states.now.timeIntervalSince(due)) }
        }
        setGauges(Name.jobsQueued, help: help, labels: ["kind", "state"], values: queued)
        setGauges(
            Name.jobsOldestDue, help: "Age of the oldest due job not yet claimed, by kind (how far behind the queue is).",
            labels: ["kind"], values: oldest)

        var inProgress: [[String]: Double] = [:]
        for status in [CallStatus.initiated, .queued, .ringing, .inProgress] { inProgress[[status.rawValue]] = 0 }
        for (status, count) in states.callsInProgress { inProgress[[status.isKnown ? status.rawValue : "other"], default: 0] += Double(count) }
        setGauges(
            Name.callsInProgress, help: "Calls not over yet (all instances: the database's figure), by status.", labels: ["status"],
            values: inProgress)

        var spend: [[String]: Double] = [:]
        var budget: [[String]: Double] = [:]
        for feature in MeteredFeature.allCases {
            let spent = states.spend[feature] ?? (0, 0)
            spend[[feature.rawValue, "day"]] = Double(spent.day) / 1_000_000
            spend[[feature.rawValue, "month"]] = Double(spent.month) / 1_000_000
            if let daily = budgets[feature]?.dailyMicrodollars { budget[[feature.rawValue, "day"]] = Double(daily) / 1_000_000 }
            if let monthly = budgets[feature]?.monthlyMicrodollars { budget[[feature.rawValue, "month"]] = Double(monthly) / 1_000_000 }
        }
        setGauges(
            Name.spend, help: "Provider spend in US dollars this UTC day and month, by product feature (all instances).",
            labels: ["feature", "period"], values: spend)
        setGauges(
            Name.budget, help: "The configured spending limit in US dollars, by product feature and period (absent: no limit).",
            labels: ["feature", "period"], values: budget)

        setGauges(
            Name.openConnections, help: "Long-lived connections open on this instance, by kind.", labels: ["kind"],
            values: [
                ["websocket"]: Double(states.webSockets), ["event_stream"]: Double(states.eventStreams),
                ["media_stream"]: Double(states.bridges.openBridges),
            ])
    }

    /// Sets a gauge family to `values` (label values in the order of `labels`); label sets set before and missing now go
    /// to 0.
    private func setGauges(_ name: String, help: String, labels: [String], values: [[String]: Double]) {
        let stale = refreshed.withLockedValue { seen -> Set<[String]> in
            let previous = seen[name] ?? []
            seen[name] = previous.union(values.keys)
            return previous.subtracting(values.keys)
        }
        let descriptor = MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
        func gauge(_ values: [String]) -> Gauge { registry.makeGauge(descriptor: descriptor, labels: Array(zip(labels, values))) }
        for key in stale { gauge(key).set(0.0) }
        for (key, value) in values { gauge(key).set(value) }
    }

    // MARK: The bridges' histograms

    /// The bridges' latency histograms (``BridgeMetrics``, merged as each bridge ends) in the text format. They are kept
    /// by the bridges themselves (no lock shared across calls per frame), so they are written here at scrape time
    /// rather than recorded into the registry. A bucket counts the values of the bridge histogram's buckets starting at
    /// or below its bound (their resolution is about 3 %).
    static func bridgeHistograms(_ snapshot: BridgeMetrics.Snapshot) -> String {
        var text = ""
        Self.appendHistogram(
            to: &text, name: Name.bridgeRelay,
            help: "Relay latency of the media bridges, frame received to frame written, by direction (to_realtime: callee audio to the model; to_twilio: the model's audio to the call).",
            buckets: Self.relayBuckets,
            series: [([("direction", "to_realtime")], snapshot.relayToRealtime), ([("direction", "to_twilio")], snapshot.relayToTwilio)])
        Self.appendHistogram(
            to: &text, name: Name.bridgeBargeIn,
            help: "Barge-in reaction of the media bridges: the callee's speech detected to the call's audio cleared and the answer truncated.",
            buckets: Self.bargeInBuckets, series: [([], snapshot.bargeInReaction)])
        Self.appendHistogram(
            to: &text, name: Name.firstAudio, help: "From the callee answering (the media stream starting) to the AI's first audio, per answered call.",
            buckets: Self.firstAudioBuckets, series: [([], snapshot.answerToFirstAudio)])
        return text
    }

    private static func appendHistogram(
        to text: inout String, name: String, help: String, buckets: [Double], series: [([(String, String)], LatencyHistogram)]
    ) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        for (labels, histogram) in series {
            let prefix = labels.map { "\($0.0)=\"\($0.1)\"" }.joined(separator: ",")
            func labelSet(_ extra: String?) -> String {
                let all = [prefix.isEmpty ? nil : prefix, extra].compactMap { $0 }.joined(separator: ",")
                return all.isEmpty ? "" : "{\(all)}"
            }
            for bound in buckets {
                let microseconds = UInt64((bound * 1_000_000).rounded())
                text += "\(name)_bucket\(labelSet("le=\"\(bound)\"")) \(histogram.count(atMost: microseconds))\n"
            }
            text += "\(name)_bucket\(labelSet("le=\"+Inf\"")) \(histogram.count)\n"
            text += "\(name)_sum\(labelSet(nil)) \(Double(histogram.sumMicroseconds) / 1_000_000)\n"
            text += "\(name)_count\(labelSet(nil)) \(histogram.count)\n"
        }
    }
}
