import ChorusCore
import Foundation
import SQLKit

/// Spend reserved for a provider call before it is made (``MeteringStore/reserveFeatureSpend``): settled to the call's
/// cost when it is recorded, given back when it fails.
struct SpendReservation: Sendable {
    var feature: MeteredFeature
    var amount: Int64
    /// The feature's day and month it was reserved in (settled there even when the call ends on the next day).
    var periods: [String]
    /// The user's operation counter it charged, if any.
    var userCounter: (id: String, key: String)?
}

/// The limit a reservation would pass.
enum SpendLimitReached: Error, Equatable {
    /// The user's daily operations.
    case user
    /// The feature's daily budget.
    case day
    /// The feature's monthly budget.
    case month
}

/// One metered provider call.
struct UsageRecord: Sendable, Equatable {
    var userID: String?
    var feature: MeteredFeature
    var operation: MeteredOperation
    var provider: String
    var model: String
    var consumption: Consumption
    var usdMicros: Int64
    var requestID: String?
    /// What the call worked on, e.g. `story:<id>`, to total its cost.
    var subject: String?
    var createdAt: Date
}

/// A user's consumption of one operation with one model in a period.
struct UsageTotal: Sendable, Equatable {
    var feature: MeteredFeature
    var operation: MeteredOperation
    var model: String
    var calls: Int
    var consumption: Consumption
    var usdMicros: Int64
}

/// Provider usage (`provider_usage`, one row per provider call) and the spend ledger per feature and period
/// (`feature_spend`).
///
/// Reached as `store.metering`, or `tx.metering` inside ``ChorusStore/writeTransaction(_:)``.
struct MeteringStore: StoreArea {
    let base: ChorusStore

    /// Records `usage` and adds its cost to its feature's day and month; with `settling`, the reservation made for the
    /// call is replaced by its cost instead (the difference is added to the reservation's periods).
    func recordUsage(_ usage: UsageRecord, settling reservation: SpendReservation? = nil) async throws {
        let day = "day:" + VoiceUsagePolicy.period(usage.createdAt, monthly: false)
        let month = "month:" + VoiceUsagePolicy.period(usage.createdAt, monthly: true)
        try await writeTransaction { store in
            let c = usage.consumption
            try await store.sql.raw(
                """
                INSERT INTO provider_usage (user_id, feature, operation, provider, model, input_tokens, output_tokens, characters, images,
                  audio_ms, usd_micros, request_id, subject, created_at)
                VALUES (\(bind: usage.userID), \(bind: usage.feature.rawValue), \(bind: usage.operation.rawValue), \(bind: usage.provider),
                  \(bind: usage.model), \(bind: Int64(c.inputTokens)), \(bind: Int64(c.outputTokens)), \(bind: Int64(c.characters)),
                  \(bind: Int64(c.images)), \(bind: Int64(clampingRounded: c.audioSeconds * 1_000)), \(bind: usage.usdMicros),
                  \(bind: usage.requestID), \(bind: usage.subject), \(bind: usage.createdAt.epochMillis))
                """
            ).run()
            if let reservation {
                let (delta, overflow) = usage.usdMicros.subtractingReportingOverflow(reservation.amount)
                guard !overflow, delta != 0 else { return }
                try await store.metering.adjustFeatureSpend(reservation.feature, periods: reservation.periods, by: delta)
                return
            }
            guard usage.usdMicros > 0 else { return }
            for period in [day, month] {
                try await store.sql.raw(
                    """
                    INSERT INTO feature_spend (feature, period, usd_micros) VALUES (\(bind: usage.feature.rawValue), \(bind: period), \(bind: usage.usdMicros))
                    ON CONFLICT (feature, period) DO UPDATE SET usd_micros = feature_spend.usd_micros + excluded.usd_micros
                    """
                ).run()
            }
        }
    }

    /// Counts one operation of `user` (its counter key and daily limit) and reserves `amount` micro-dollars against
    /// `feature`'s day and month budgets (`nil`: no limit), all or nothing: each is one conditional upsert in one
    /// transaction, so concurrent reservations never pass a limit. Returns what was reserved, or throws
    /// ``SpendLimitReached`` naming the first limit it would pass.
    func reserveFeatureSpend(
        _ feature: MeteredFeature, amount: Int64, day: (period: String, budget: Int64?), month: (period: String, budget: Int64?),
        user: (id: String, key: String, limit: Int?)?
    ) async throws -> SpendReservation {
        let amount = max(0, amount)
        return try await writeTransaction { tx in
            if let user, let limit = user.limit {
                guard try await tx.voices.chargeVoiceUsage(userID: user.id, key: user.key, limit: limit) else { throw SpendLimitReached.user }
            }
            for (period, budget, reached) in [(day.period, day.budget, SpendLimitReached.day), (month.period, month.budget, .month)] {
                if let budget {
                    guard budget > 0, amount <= budget else { throw reached }
                    let reserved = try await tx.sql.raw(
                        """
                        INSERT INTO feature_spend (feature, period, usd_micros) VALUES (\(bind: feature.rawValue), \(bind: period), \(bind: amount))
                        ON CONFLICT (feature, period) DO UPDATE SET usd_micros = feature_spend.usd_micros + excluded.usd_micros
                        WHERE feature_spend.usd_micros < \(bind: budget) AND feature_spend.usd_micros + excluded.usd_micros <= \(bind: budget)
                        RETURNING usd_micros
                        """
                    ).first()
                    if reserved == nil { throw reached }
                } else if amount > 0 {
                    try await tx.sql.raw(
                        """
                        INSERT INTO feature_spend (feature, period, usd_micros) VALUES (\(bind: feature.rawValue), \(bind: period), \(bind: amount))
                        ON CONFLICT (feature, period) DO UPDATE SET usd_micros = feature_spend.usd_micros + excluded.usd_micros
                        """
                    ).run()
                }
            }
            return SpendReservation(
                feature: feature, amount: amount, periods: [day.period, month.period],
                userCounter: user.flatMap { $0.limit == nil ? nil : (id: $0.id, key: $0.key) })
        }
    }

    /// Gives a reservation back (the call it was made for failed): its amount and its operation.
    func releaseFeatureSpend(_ reservation: SpendReservation) async throws {
        try await writeTransaction { tx in
            if let user = reservation.userCounter { try await tx.voices.refundVoiceUsage(userID: user.id, key: user.key) }
            if reservation.amount > 0 { try await tx.metering.adjustFeatureSpend(reservation.feature, periods: reservation.periods, by: -reservation.amount) }
        }
    }

    /// Adds `delta` (possibly negative; never below zero) to `feature`'s spend in `periods`.
    private func adjustFeatureSpend(_ feature: MeteredFeature, periods: [String], by delta: Int64) async throws {
        for period in periods {
            try await sql.raw(
                """
                UPDATE feature_spend SET usd_micros = CASE WHEN usd_micros + \(bind: delta) < 0 THEN 0 ELSE usd_micros + \(bind: delta) END
                WHERE feature = \(bind: feature.rawValue) AND period = \(bind: period)
                """
            ).run()
        }
    }

    /// What `feature` spent on the day and in the month of `date` (UTC).
    func featureSpend(_ feature: MeteredFeature, at date: Date) async throws -> (day: Int64, month: Int64) {
        let day = "day:" + VoiceUsagePolicy.period(date, monthly: false)
        let month = "month:" + VoiceUsagePolicy.period(date, monthly: true)
        let rows = try await reader.raw(
            """
            SELECT period, usd_micros FROM feature_spend
            WHERE feature = \(bind: feature.rawValue) AND period IN (\(bind: day), \(bind: month))
            """
        ).all()
        var spend: (day: Int64, month: Int64) = (0, 0)
        for row in rows {
            let micros = try row.decode(column: "usd_micros", as: Int64.self)
            if try row.string("period") == day { spend.day = micros } else { spend.month = micros }
        }
        return spend
    }

    /// `userID`'s consumption since `since`, per feature, operation and model.
    func usageTotals(userID: String, since: Date) async throws -> [UsageTotal] {
        try await totals(where: "user_id = \(bind: userID) AND created_at >= \(bind: since.epochMillis)")
    }

    /// The consumption and cost of everything done for `subject` (e.g. `story:<id>`), per feature, operation and model.
    func subjectCosts(_ subject: String) async throws -> [UsageTotal] {
        try await totals(where: "subject = \(bind: subject)")
    }

    private func totals(where condition: SQLQueryString) async throws -> [UsageTotal] {
        try await reader.raw(
            """
            SELECT feature, operation, model, COUNT(*) AS calls, CAST(SUM(input_tokens) AS BIGINT) AS input_tokens, CAST(SUM(output_tokens) AS BIGINT) AS output_tokens,
              CAST(SUM(characters) AS BIGINT) AS characters, CAST(SUM(images) AS BIGINT) AS images, CAST(SUM(audio_ms) AS BIGINT) AS audio_ms, CAST(SUM(usd_micros) AS BIGINT) AS usd_micros
            FROM provider_usage WHERE \(condition)
            GROUP BY feature, operation, model ORDER BY feature, operation, model
            """
        ).all().compactMap { row in
            guard let feature = MeteredFeature(rawValue: try row.string("feature")),
                let operation = MeteredOperation(rawValue: try row.string("operation"))
            else { return nil }
            return UsageTotal(
                feature: feature, operation: operation, model: try row.string("model"), calls: try row.int("calls"),
                consumption: Consumption(
                    inputTokens: try row.int("input_tokens"), outputTokens: try row.int("output_tokens"), characters: try row.int("characters"),
                    images: try row.int("images"), audioSeconds: Double(try row.int("audio_ms")) / 1_000),
                usdMicros: try row.decode(column: "usd_micros", as: Int64.self))
        }
    }
}
