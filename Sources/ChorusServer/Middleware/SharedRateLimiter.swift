import ChorusCore
import Foundation
import Logging
import NIOConcurrencyHelpers

/// Fixed-window request counters kept in the database, shared by every instance on it: the rate limits that guard
/// money or accounts (`auth`: sign-up, sign-in, token refresh, the console's sign-in, per client address; `calls`:
/// make-call and schedule-call, per user). With N instances a client gets the configured budget, not N times it.
///
/// Windows are aligned to the epoch (a 60-second window runs from one whole minute to the next), so every instance
/// puts a request in the same window without asking the others. Counting a request is one conditional upsert
/// (``RateLimitStore/admit(key:windowStart:expiresAt:limit:)``), so requests racing on any number of instances admit
/// exactly the limit. A key refused in a window is remembered here until the window ends: a flood past the limit costs
/// the database nothing more. Ended windows are swept in the background, at most once a minute per instance.
///
/// When the database cannot count (an error), the request is counted by this instance's in-memory limiter instead: the
/// limit then holds per instance, as it did before issue 18 (docs/decisions.md, "Issue 18: rate limits across instances").
final class SharedRateLimiter: Sendable {
    /// One fixed window of a limit: its stored key (the limit's key and the window's length), its start and end in
    /// epoch milliseconds, and the seconds from `now` until it ends (at least 1: the `Retry-After` of a refusal).
    struct Window: Equatable {
        var key: String
        var start: Int64
        var end: Int64
        var retryAfter: Int
    }

    private struct State {
        /// Stored keys refused in their current window, with the window's end.
        var refused: [String: Int64] = [:]
        /// When ended windows were last swept (epoch milliseconds).
        var lastSweep: Int64 = .min
    }

    /// How often an instance sweeps ended windows, and how much at most each time (in batches).
    static let sweepInterval: Int64 = 60_000
    static let sweepBatch = 1_000
    static let sweepBatches = 20
    /// Refused keys remembered at most (beyond it, those of ended windows are dropped, then all).
    static let refusedCapacity = 10_000

    private let state = NIOLockedValueBox(State())
    private let fallback = RateLimiter()

    /// The window of `key` under `limit` that `now` falls in.
    static func window(_ key: String, _ limit: ChorusConfiguration.RateLimit, at now: Date) -> Window {
        let length = max(1, Int64(clampingRounded: limit.window * 1_000, .up))
        let time = now.epochMillis
        var offset = time % length
        if offset < 0 { offset += length }
        // Clamped rather than trapping at the ends of the range (no real clock gets there).
        let start = time.subtractingReportingOverflow(offset).overflow ? Int64.min : time - offset
        let end = start.addingClamped(length)
        let (left, overflow) = end.subtractingReportingOverflow(time)
        let remaining = overflow ? Int64.max : max(0, left)
        let seconds = remaining / 1_000 + (remaining % 1_000 == 0 ? 0 : 1)
        return Window(key: "\(key)/\(length)", start: start, end: end, retryAfter: Int(clamping: max(1, seconds)))
    }

    /// Counts one request for `key` against `limit` at `now`. Returns `nil` when it is admitted, or the seconds until
    /// its window ends.
    func consume(_ key: String, limit: ChorusConfiguration.RateLimit, now: Date, store: ChorusStore, logger: Logger) async -> Int? {
        let window = Self.window(key, limit, at: now)
        let time = now.epochMillis
        let known = state.withLockedValue { state in (state.refused[window.key] ?? .min) > time }
        if known { return window.retryAfter }
        do {
            if try await store.rateLimits.admit(key: window.key, windowStart: window.start, expiresAt: window.end, limit: limit.limit) {
                return nil
            }
        } catch {
            logger.warning(
                "rate limit not counted in the database; counted on this instance only",
                metadata: ["key": .string(key), "error": .string(String(describing: error))])
            return fallback.consume(key, limit: limit.limit, window: limit.window, now: now.timeIntervalSince1970)
        }
        state.withLockedValue { state in
            if state.refused.count >= Self.refusedCapacity {
                state.refused = state.refused.filter { $0.value > time }
                if state.refused.count >= Self.refusedCapacity { state.refused.removeAll() }
            }
            state.refused[window.key] = window.end
        }
        return window.retryAfter
    }

    /// Whether this instance should sweep ended windows now (true at most once per ``sweepInterval``).
    func claimSweep(at now: Date) -> Bool {
        let time = now.epochMillis
        return state.withLockedValue { state in
            let (elapsed, overflow) = time.subtractingReportingOverflow(state.lastSweep)
            // A clock set back sweeps again at once rather than waiting for it to catch up.
            guard overflow || elapsed >= Self.sweepInterval || elapsed < 0 else { return false }
            state.lastSweep = time
            return true
        }
    }

    /// Deletes windows that ended by `now`, in bounded batches; returns how many. Errors are logged, not thrown (the
    /// next sweep tries again; ended windows are never read).
    @discardableResult
    func sweep(store: ChorusStore, now: Date, logger: Logger) async -> Int {
        var deleted = 0
        do {
            for _ in 0..<Self.sweepBatches {
                let count = try await store.rateLimits.deleteExpired(now: now.epochMillis, limit: Self.sweepBatch)
                deleted += count
                if count < Self.sweepBatch { break }
            }
        } catch {
            logger.warning("sweeping ended rate limit windows failed", metadata: ["error": .string(String(describing: error))])
        }
        return deleted
    }
}
