import Foundation

/// Every exchange with the providers over the last ``minutes`` minutes, per provider and operation, in one-minute
/// buckets: how many, how many failed and why, how long they took — and from that, each one's health.
///
/// Pure: the caller gives the time of each exchange; the server keeps one window per instance behind a lock.
public struct ProviderHealthWindow: Sendable {
    /// How far back the figures reach.
    public static let minutes = 15
    /// Latencies kept per operation and minute (a sample beyond that is enough for percentiles).
    static let samplesPerMinute = 256

    /// How a provider operation is doing.
    public enum Status: String, Sendable, CaseIterable {
        /// No failure, or under 5 % of the exchanges.
        case ok
        /// 5 % or more of the exchanges failed.
        case degraded
        /// Half or more failed (at least 3).
        case down
    }

    /// One provider operation's figures over the window.
    public struct Figures: Sendable, Equatable {
        public var provider: String
        public var operation: String
        public var calls: Int
        public var failures: Int
        /// Failures by classification (`timeout`, `unreachable`, `http_503`, …).
        public var failuresByKind: [String: Int]
        public var p50Milliseconds: Int?
        public var p95Milliseconds: Int?
        public var lastFailureAt: Date?
        public var lastFailure: String?

        /// Failed exchanges among all, 0–1.
        public var errorRate: Double { calls == 0 ? 0 : Double(failures) / Double(calls) }

        public var status: Status {
            if failures >= 3 && errorRate >= 0.5 { return .down }
            if failures > 0 && errorRate >= 0.05 { return .degraded }
            return .ok
        }
    }

    private struct Key: Hashable {
        var provider: String
        var operation: String
    }

    private struct Minute {
        var minute: Int64
        var calls = 0
        var failures: [String: Int] = [:]
        var latencies: [Int] = []
    }

    private struct Series {
        var minutes: [Minute] = []
        var lastFailureAt: Date?
        var lastFailure: String?
    }

    private var series: [Key: Series] = [:]

    public init() {}

    /// Records one exchange that ended at `date`; `failure` is `nil` for a success.
    public mutating func record(provider: String, operation: String, failure: String?, milliseconds: Int, at date: Date) {
        let minute = Self.minute(of: date)
        let key = Key(provider: provider, operation: operation)
        var entry = series[key] ?? Series()
        if entry.minutes.last?.minute != minute { entry.minutes.append(Minute(minute: minute)) }
        entry.minutes.removeAll { $0.minute <= minute - Int64(Self.minutes) }
        let last = entry.minutes.count - 1
        entry.minutes[last].calls += 1
        if entry.minutes[last].latencies.count < Self.samplesPerMinute { entry.minutes[last].latencies.append(max(0, milliseconds)) }
        if let failure {
            entry.minutes[last].failures[failure, default: 0] += 1
            entry.lastFailureAt = date
            entry.lastFailure = failure
        }
        series[key] = entry
    }

    /// Each provider operation seen in the window, by provider then operation.
    public func figures(at now: Date) -> [Figures] {
        let oldest = Self.minute(of: now) - Int64(Self.minutes)
        return series.compactMap { key, entry -> Figures? in
            let minutes = entry.minutes.filter { $0.minute > oldest }
            guard !minutes.isEmpty else { return nil }
            var byKind: [String: Int] = [:]
            for minute in minutes { byKind.merge(minute.failures, uniquingKeysWith: +) }
            let latencies = minutes.flatMap(\.latencies).sorted()
            return Figures(
                provider: key.provider, operation: key.operation, calls: minutes.reduce(0) { $0 + $1.calls },
                failures: byKind.values.reduce(0, +), failuresByKind: byKind,
                p50Milliseconds: Self.percentile(latencies, 50), p95Milliseconds: Self.percentile(latencies, 95),
                lastFailureAt: entry.lastFailureAt, lastFailure: entry.lastFailure)
        }.sorted { ($0.provider, $0.operation) < ($1.provider, $1.operation) }
    }

    static func minute(of date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / 60).rounded(.down)) }

    /// Nearest-rank percentile of sorted values.
    static func percentile(_ sorted: [Int], _ p: Int) -> Int? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((Double(p) / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }
}
