import Foundation
import NIOConcurrencyHelpers

/// Fixed-window request counters kept in memory (per instance). A key is e.g. `user:<id>` or `auth:<ip>`.
///
/// Limits are per instance: with N instances a client gets at most N times the budget. It counts the limits that
/// protect against floods (`user`, the stories' per-user limits); the limits that guard money or accounts are counted
/// across instances by ``SharedRateLimiter``, which falls back to one of these when the database cannot count.
final class RateLimiter: Sendable {
    private struct Window {
        var start: TimeInterval
        var count: Int
    }

    private let windows = NIOLockedValueBox([String: Window]())

    /// Counts one request for `key`. Returns `nil` when allowed, or the seconds until the window resets.
    func consume(_ key: String, limit: Int, window: TimeInterval, now: TimeInterval) -> Int? {
        windows.withLockedValue { windows in
            if windows.count > 100_000 {  // bound memory: drop windows that have ended
                windows = windows.filter { now - $0.value.start < window }
            }
            var current = windows[key] ?? Window(start: now, count: 0)
            if now - current.start >= window { current = Window(start: now, count: 0) }
            current.count += 1
            windows[key] = current
            guard current.count > limit else { return nil }
            return max(1, Int((current.start + window - now).rounded(.up)))
        }
    }
}
