import ChorusCore
import Foundation
import SQLKit

/// Call quota: the quota buckets a user's calls are taken from (`quota_buckets`) and the usage account built from them.
///
/// Reached as `store.usage`, or `tx.usage` inside ``ChorusStore/writeTransaction(_:)``.
struct UsageStore: StoreArea {
    let base: ChorusStore

    /// Everything the permission policy needs about `userID`, or `nil` for an unknown user. The plan is the one the
    /// user's best entitlement gives at `now`.
    func usageAccount(userID: String, entitlements: EntitlementEvaluator, now: Date) async throws -> UsageAccount? {
        // One statement: the user, its subscriptions and its open buckets (the trial always, so never zero rows).
        let rows = try await reader.raw(
            """
            SELECT u.created_at, u.app_type, s.original_transaction_id, s.product_id, s.latest_transaction_id, s.purchase_date,
              s.expires_at, s.anchor, s.will_renew, s.auto_renew_product_id, s.billing_state, s.grace_expires_at, s.expired_at,
              s.revoked_at, s.last_event_at, b.key, b.kind, b.period_start, b.period_end, b.capacity, b.used
            FROM users u
            LEFT JOIN app_store_subscriptions s ON s.user_id = u.id
            LEFT JOIN quota_buckets b ON b.user_id = u.id AND (b.kind = 'trial' OR b.period_end > \(bind: now.epochMillis))
            WHERE u.id = \(bind: userID)
            """
        ).all()
        guard let user = rows.first else { return nil }
        var trialUsed = 0
        var buckets: [String: QuotaBucket] = [:]
        var subscriptions: [String: SubscriptionSnapshot] = [:]
        for row in rows {
            if let original = try row.optionalString("original_transaction_id"), subscriptions[original] == nil {
                subscriptions[original] = try PurchaseStore.subscriptionSnapshot(row)
            }
            guard let key = try row.optionalString("key"), buckets[key] == nil else { continue }
            let bucket = QuotaBucket(
                key: key, kind: QuotaBucket.Kind(rawValue: try row.string("kind")) ?? .addon,
                periodStart: try row.date("period_start"), periodEnd: try row.date("period_end"),
                capacity: try row.int("capacity"), used: try row.int("used")
            )
            if bucket.kind == .trial { trialUsed = bucket.used } else { buckets[key] = bucket }
        }
        return UsageAccount(
            registeredAt: try user.date("created_at"), appType: try user.string("app_type"), trialUsed: trialUsed,
            plan: entitlements.current(Array(subscriptions.values), at: now)?.activePlan,
            buckets: buckets.values.sorted { $0.key < $1.key }
        )
    }

    /// Creates `bucket` for the user unless it exists (plan cycles are created on first use).
    func insertBucket(_ bucket: QuotaBucket, userID: String) async throws {
        try await sql.raw(
            """
            INSERT INTO quota_buckets (user_id, key, kind, period_start, period_end, capacity, used)
            VALUES (\(bind: userID), \(bind: bucket.key), \(bind: bucket.kind.rawValue), \(bind: bucket.periodStart.epochMillis), \
            \(bind: bucket.periodEnd.epochMillis), \(bind: Int64(bucket.capacity)), \(bind: Int64(bucket.used)))
            ON CONFLICT (user_id, key) DO NOTHING
            """
        ).run()
    }

    /// Takes one call from `bucket` if it still has one and is open at `now`: a single compare-and-set.
    /// - Returns: whether the call was taken.
    func takeCall(from bucket: QuotaBucket, userID: String, now: Date) async throws -> Bool {
        if bucket.kind == .plan {
            try await insertBucket(
                QuotaBucket(
                    key: bucket.key, kind: .plan, periodStart: bucket.periodStart, periodEnd: bucket.periodEnd, capacity: bucket.capacity, used: 0
                ), userID: userID)
        }
        let row = try await sql.raw(
            """
            UPDATE quota_buckets SET used = used + 1
            WHERE user_id = \(bind: userID) AND key = \(bind: bucket.key) AND used < capacity
              AND period_start <= \(bind: now.epochMillis) AND period_end > \(bind: now.epochMillis)
            RETURNING used
            """
        ).first()
        return row != nil
    }

    /// Gives one call back to the bucket `key`.
    func returnCall(toBucket key: String, userID: String) async throws {
        try await sql.raw(
            """
            UPDATE quota_buckets SET used = used - 1 WHERE user_id = \(bind: userID) AND key = \(bind: key) AND used > 0
            """
        ).run()
    }

    /// Counts of charged calls (placed and not refunded) in each window.
    func callTally(userID: String, windows: UsageWindows) async throws -> CallTally {
        let day = windows.dayStart.epochMillis
        let week = windows.weekStart.epochMillis
        let month = windows.monthStart.epochMillis
        guard
            let row = try await reader.raw(
                """
                SELECT
                  COUNT(*) AS total,
                  CAST(COALESCE(SUM(CASE WHEN created_at >= \(bind: day) THEN 1 ELSE 0 END), 0) AS BIGINT) AS today,
                  CAST(COALESCE(SUM(CASE WHEN created_at >= \(bind: week) THEN 1 ELSE 0 END), 0) AS BIGINT) AS week,
                  CAST(COALESCE(SUM(CASE WHEN created_at >= \(bind: month) THEN 1 ELSE 0 END), 0) AS BIGINT) AS month,
                  CAST(COALESCE(SUM(CASE WHEN created_at >= \(bind: week) THEN COALESCE(duration_seconds, 0) ELSE 0 END), 0) AS BIGINT) AS week_duration,
                  CAST(COALESCE(SUM(CASE WHEN created_at >= \(bind: month) THEN COALESCE(duration_seconds, 0) ELSE 0 END), 0) AS BIGINT) AS month_duration
                FROM calls WHERE user_id = \(bind: userID) AND charge_state = 'charged'
                """
            ).first()
        else { return CallTally() }
        return CallTally(
            today: try row.int("today"), thisWeek: try row.int("week"), thisMonth: try row.int("month"), total: try row.int("total"),
            durationThisWeek: try row.int("week_duration"), durationThisMonth: try row.int("month_duration")
        )
    }
}
