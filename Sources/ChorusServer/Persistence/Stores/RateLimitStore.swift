import Foundation
import SQLKit

/// The fixed windows of the rate limits counted across instances (`rate_limit_windows`, see ``SharedRateLimiter``).
///
/// Reached as `store.rateLimits`.
struct RateLimitStore: StoreArea {
    let base: ChorusStore

    /// Counts one request in the window of `key` that starts at `windowStart` (epoch milliseconds) when fewer than
    /// `limit` were counted in it: one conditional upsert, atomic on SQLite and PostgreSQL, so requests racing on any
    /// number of instances admit exactly `limit`. Returns whether the request was counted (admitted).
    func admit(key: String, windowStart: Int64, expiresAt: Int64, limit: Int) async throws -> Bool {
        guard limit > 0 else { return false }
        return try await sql.raw(
            """
            INSERT INTO rate_limit_windows (limit_key, window_start, hits, expires_at)
            VALUES (\(bind: key), \(bind: windowStart), 1, \(bind: expiresAt))
            ON CONFLICT (limit_key, window_start) DO UPDATE SET hits = rate_limit_windows.hits + 1
            WHERE rate_limit_windows.hits < \(bind: Int64(limit))
            RETURNING hits
            """
        ).first() != nil
    }

    /// Deletes up to `limit` windows that ended at or before `now` (epoch milliseconds); returns how many.
    func deleteExpired(now: Int64, limit: Int) async throws -> Int {
        try await sql.raw(
            """
            DELETE FROM rate_limit_windows WHERE (limit_key, window_start) IN (
              SELECT limit_key, window_start FROM rate_limit_windows WHERE expires_at <= \(bind: now) LIMIT \(bind: Int64(limit)))
            RETURNING limit_key
            """
        ).all().count
    }

    /// How many windows are stored (the sweep's test).
    func windowCount() async throws -> Int {
        try await reader.raw("SELECT COUNT(*) AS n FROM rate_limit_windows").first().map { try $0.int("n") } ?? 0
    }
}
