import Foundation
import SQLKit

/// What the store knows about an `Idempotency-Key`.
enum IdempotencyClaim: Sendable, Equatable {
    /// First use: the caller does the work, then calls `completeIdempotencyKey` or `releaseIdempotencyKey`.
    case claimed
    /// The request that claimed the key stayed pending longer than any request can run (its process died): this
    /// request took the claim over and does the work, like ``claimed``.
    case reclaimed
    /// A request with this key is still running.
    case inProgress
    /// The key was used for a different request.
    case mismatch
    /// The first request finished: replay its answer.
    case completed(status: Int, body: String)
}

/// Idempotency keys of money-path requests (`idempotency_keys`): claimed, completed with the response, or released.
///
/// Reached as `store.idempotency`, or `tx.idempotency` inside ``ChorusStore/writeTransaction(_:)``.
struct IdempotencyStore: StoreArea {
    let base: ChorusStore

    /// Claims `key` for `userID` (a single insert; the primary key makes it atomic). Keys older than `ttl` are forgotten;
    /// a key still pending after `lapse` is taken over by one request with the same fingerprint (a compare-and-set).
    func claimIdempotencyKey(
        userID: String, key: String, fingerprint: String, now: Date, ttl: TimeInterval, lapse: TimeInterval
    ) async throws -> IdempotencyClaim {
        try await sql.raw(
            """
            DELETE FROM idempotency_keys WHERE user_id = \(bind: userID) AND key = \(bind: key)
              AND created_at < \(bind: now.addingTimeInterval(-ttl).epochMillis)
            """
        ).run()
        let inserted = try await sql.raw(
            """
            INSERT INTO idempotency_keys (user_id, key, fingerprint, state, created_at)
            VALUES (\(bind: userID), \(bind: key), \(bind: fingerprint), 'pending', \(bind: now.epochMillis))
            ON CONFLICT (user_id, key) DO NOTHING RETURNING key
            """
        ).first()
        if inserted != nil { return .claimed }
        let reclaimed = try await sql.raw(
            """
            UPDATE idempotency_keys SET created_at = \(bind: now.epochMillis)
            WHERE user_id = \(bind: userID) AND key = \(bind: key) AND fingerprint = \(bind: fingerprint) AND state = 'pending'
              AND created_at < \(bind: now.addingTimeInterval(-lapse).epochMillis)
            RETURNING key
            """
        ).first()
        if reclaimed != nil { return .reclaimed }
        guard let row = try await sql.raw("SELECT * FROM idempotency_keys WHERE user_id = \(bind: userID) AND key = \(bind: key)").first()
        else { return .inProgress }  // released between the two statements; the client may retry
        guard try row.string("fingerprint") == fingerprint else { return .mismatch }
        guard try row.string("state") == "done", let status = try row.optionalInt("status_code"), let body = try row.optionalString("body")
        else { return .inProgress }
        return .completed(status: status, body: body)
    }

    func completeIdempotencyKey(userID: String, key: String, status: Int, body: String) async throws {
        try await sql.raw(
            """
            UPDATE idempotency_keys SET state = 'done', status_code = \(bind: Int64(status)), body = \(bind: body)
            WHERE user_id = \(bind: userID) AND key = \(bind: key)
            """
        ).run()
    }

    /// Forgets a claim whose request failed, so the client can retry with the same key.
    func releaseIdempotencyKey(userID: String, key: String) async throws {
        try await sql.raw("DELETE FROM idempotency_keys WHERE user_id = \(bind: userID) AND key = \(bind: key) AND state = 'pending'").run()
    }
}
