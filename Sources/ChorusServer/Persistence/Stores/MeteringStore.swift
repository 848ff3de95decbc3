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
    /// Makes the row unique: a second record with the same key is ignored (a phone call's minutes, whose final status
    /// Twilio may send again); `nil`: no key.
    var key: String? = nil
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
    /// call is replaced by its cost instead (the difference is added to the reservation's periods). A usage whose
    /// ``UsageRecord/key`` is already recorded changes nothing.
    /// - Returns: whether it was recorded (`false`: its key was).
    @discardableResult
    func recordUsage(_ usage: UsageRecord, settling reservation: SpendReservation? = nil) async throws -> Bool {
        let day = "day:" + VoiceUsagePolicy.period(usage.createdAt, monthly: false)
        let month = "month:" + VoiceUsagePolicy.period(usage.createdAt, monthly: true)
        return try await writeTransaction { store in
            let c = usage.consumption
            // Counts come from provider answers: non-negative, and a non-finite duration is stored as 0.
            let audioMs = c.audioSeconds.isFinite ? Int64(clampingRounded: max(0, c.audioSeconds) * 1_000) : 0
            let inserted = try await store.sql.raw(
                """
                INSERT INTO provider_usage (user_id, feature, operation, provider, model, input_tokens, output_tokens, characters, images,
                  audio_ms, usd_micros, request_id, subject, created_at, cached_input_tokens, audio_input_tokens, cached_audio_input_tokens,
                  audio_output_tokens, usage_key)
                VALUES (\(bind: usage.userID), \(bind: usage.feature.rawValue), \(bind: usage.operation.rawValue), \(bind: usage.provider),
                  \(bind: usage.model), \(bind: Int64(max(0, c.inputTokens))), \(bind: Int64(max(0, c.outputTokens))), \(bind: Int64(c.characters)),
                  \(bind: Int64(c.images)), \(bind: audioMs), \(bind: usage.usdMicros),
                  \(bind: usage.requestID), \(bind: usage.subject), \(bind: usage.createdAt.epochMillis), \(bind: Int64(max(0, c.cachedInputTokens))),
                  \(bind: Int64(max(0, c.audioInputTokens))), \(bind: Int64(max(0, c.cachedAudioInputTokens))), \(bind: Int64(max(0, c.audioOutputTokens))),
                  \(bind: usage.key))
                ON CONFLICT DO NOTHING
                RETURNING id
                """
            ).first()
            guard inserted != nil else { return false }
            if let reservation {
                let (delta, overflow) = usage.usdMicros.subtractingReportingOverflow(reservation.amount)
                guard !overflow, delta != 0 else { return true }
                try await store.metering.adjustFeatureSpend(reservation.feature, periods: reservation.periods, by: delta)
                return true
            }
            guard usage.usdMicros > 0 else { return true }
            for period in [day, month] {
                try await store.sql.raw(
                    """
                    INSERT INTO feature_spend (feature, period, usd_micros) VALUES (\(bind: usage.feature.rawValue), \(bind: period), \(bind: usage.usdMicros))
                    ON CONFLICT (feature, period) DO UPDATE SET usd_micros = feature_spend.usd_micros + excluded.usd_micros
                    """
                ).run()
            }
            return true
        }
    }

    /// Reserves `amount` against the Calls budget (``reserveFeatureSpend``) for a call about to be placed, under
    /// `id`, all in one transaction; ``attachCallSpend`` names the call once it exists, ``settleCallSpend`` gives the
    /// amount back when the call is over (its metered cost was recorded meanwhile) or was not placed.
    /// - Throws: ``SpendLimitReached`` (`.day` or `.month`).
    func reserveCallSpend(
        id: String, amount: Int64, day: (period: String, budget: Int64?), month: (period: String, budget: Int64?), now: Date
    ) async throws {
        try await writeTransaction { tx in
            let reservation = try await tx.metering.reserveFeatureSpend(.calls, amount: amount, day: day, month: month, user: nil)
            try await tx.sql.raw(
                """
                INSERT INTO call_spend_reservations (id, call_id, usd_micros, day_period, month_period, created_at)
                VALUES (\(bind: id), NULL, \(bind: reservation.amount), \(bind: day.period), \(bind: month.period), \(bind: now.epochMillis))
                """
            ).run()
        }
    }

    /// Names the call a reservation was made for.
    func attachCallSpend(id: String, callID: Int) async throws {
        try await sql.raw("UPDATE call_spend_reservations SET call_id = \(bind: Int64(callID)) WHERE id = \(bind: id)").run()
    }

    /// Gives back the Calls budget reserved for a call (by its reservation id or its call id), exactly once: the row
    /// is deleted and its amount subtracted in one transaction, so of concurrent settlements one finds it.
    /// - Returns: the amount given back (`nil`: nothing was reserved, or it was already settled).
    @discardableResult
    func settleCallSpend(id: String? = nil, callID: Int? = nil) async throws -> Int64? {
        let selector: SQLQueryString =
            if let id { "id = \(bind: id)" } else if let callID { "call_id = \(bind: Int64(callID))" } else { "1 = 0" }
        return try await writeTransaction { tx in
            guard let row = try await tx.sql.raw("DELETE FROM call_spend_reservations WHERE \(selector) RETURNING usd_micros, day_period, month_period").first()
            else { return nil }
            let amount = try row.decode(column: "usd_micros", as: Int64.self)
            if amount > 0 {
                try await tx.metering.adjustFeatureSpend(.calls, periods: [try row.string("day_period"), try row.string("month_period")], by: -amount)
            }
            return amount
        }
    }

    /// Every call's metered realtime responses and telephony minutes so far.
    func callCostTotals() async throws -> MeteredCallCosts {
        var totals = MeteredCallCosts(calls: 0, realtimeResponses: 0, realtimeUSDMicros: 0, billedMinutes: 0, telephonyUSDMicros: 0)
        let rows = try await reader.raw(
            """
            SELECT operation, audio_ms, usd_micros FROM provider_usage
            WHERE feature = \(bind: MeteredFeature.calls.rawValue) AND operation IN ('realtime', 'telephony')
            """
        ).all()
        for row in rows {
            let micros = try row.decode(column: "usd_micros", as: Int64.self)
            if try row.string("operation") == MeteredOperation.realtime.rawValue {
                totals.realtimeResponses += 1
                totals.realtimeUSDMicros = totals.realtimeUSDMicros.addingReportingOverflow(micros).partialValue
            } else {
                totals.billedMinutes += PriceTable.billedMinutes(seconds: Double(try row.decode(column: "audio_ms", as: Int64.self)) / 1_000)
                totals.telephonyUSDMicros = totals.telephonyUSDMicros.addingReportingOverflow(micros).partialValue
            }
        }
        totals.calls = try await reader.raw(
            "SELECT COUNT(DISTINCT subject) AS calls FROM provider_usage WHERE feature = \(bind: MeteredFeature.calls.rawValue) AND operation IN ('realtime', 'telephony')"
        ).first()?.int("calls") ?? 0
        return totals
    }

    /// The metered cost of each of `callIDs` (`call:<id>` subjects), micro-dollars; calls with no rows are absent.
    func callCosts(_ callIDs: [Int]) async throws -> [Int: Int64] {
        guard !callIDs.isEmpty else { return [:] }
        let subjects = callIDs.map { "call:\($0)" }
        let rows = try await reader.raw(
            "SELECT subject, CAST(SUM(usd_micros) AS BIGINT) AS usd_micros FROM provider_usage WHERE subject IN (\(binds: subjects)) GROUP BY subject"
        ).all()
        var costs: [Int: Int64] = [:]
        for row in rows {
            guard let id = Int(try row.string("subject").dropFirst("call:".count)) else { continue }
            costs[id] = try row.decode(column: "usd_micros", as: Int64.self)
        }
        return costs
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
              CAST(SUM(characters) AS BIGINT) AS characters, CAST(SUM(images) AS BIGINT) AS images, CAST(SUM(audio_ms) AS BIGINT) AS audio_ms, CAST(SUM(usd_micros) AS BIGINT) AS usd_micros,
              CAST(SUM(cached_input_tokens) AS BIGINT) AS cached_input_tokens, CAST(SUM(audio_input_tokens) AS BIGINT) AS audio_input_tokens,
              CAST(SUM(cached_audio_input_tokens) AS BIGINT) AS cached_audio_input_tokens, CAST(SUM(audio_output_tokens) AS BIGINT) AS audio_output_tokens
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
                    images: try row.int("images"), audioSeconds: Double(try row.int("audio_ms")) / 1_000,
                    cachedInputTokens: try row.int("cached_input_tokens"), audioInputTokens: try row.int("audio_input_tokens"),
                    cachedAudioInputTokens: try row.int("cached_audio_input_tokens"), audioOutputTokens: try row.int("audio_output_tokens")),
                usdMicros: try row.decode(column: "usd_micros", as: Int64.self))
        }
    }
}
