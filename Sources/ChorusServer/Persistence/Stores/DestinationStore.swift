import ChorusCore
import Foundation
import SQLKit

/// How many numbers are on the do-not-call list (the console's figures).
struct OptOutCounts: Sendable, Equatable {
    var total: Int
    var lastDay: Int
    var lastWeek: Int
    var bySpeech: Int
    var byKey: Int
}

/// What is kept per destination number, by its keyed hash only: the do-not-call list (`do_not_call`) and the calls per
/// number and day, accounts per number and week (`number_call_limits`).
///
/// Reached as `store.destinations`, or `tx.destinations` inside ``ChorusStore/writeTransaction(_:)``.
struct DestinationStore: StoreArea {
    let base: ChorusStore

    /// Adds the number `hash` to the do-not-call list; a number already there keeps its first opt-out.
    func addOptOut(hash: String, source: CallOptOut.Source, now: Date) async throws {
        try await sql.raw(
            """
            INSERT INTO do_not_call (number_hash, source, created_at) VALUES (\(bind: hash), \(bind: source.rawValue), \(bind: now.epochMillis))
            ON CONFLICT (number_hash) DO NOTHING
            """
        ).run()
    }

    /// Whether the number `hash` is on the do-not-call list.
    func isOptedOut(hash: String) async throws -> Bool {
        try await sql.raw("SELECT 1 AS found FROM do_not_call WHERE number_hash = \(bind: hash)").first() != nil
    }

    /// Removes the number `hash` from the list (the callee asked to be called again). `false` when it was not there.
    func removeOptOut(hash: String) async throws -> Bool {
        try await sql.raw("DELETE FROM do_not_call WHERE number_hash = \(bind: hash) RETURNING number_hash").first() != nil
    }

    /// The list's size, recent additions and how numbers opted out.
    func optOutCounts(now: Date) async throws -> OptOutCounts {
        let day = now.addingTimeInterval(-86_400).epochMillis
        let week = now.addingTimeInterval(-7 * 86_400).epochMillis
        guard
            let row = try await reader.raw(
                """
                SELECT COUNT(*) AS total,
                  COALESCE(SUM(CASE WHEN created_at >= \(bind: day) THEN 1 ELSE 0 END), 0) AS last_day,
                  COALESCE(SUM(CASE WHEN created_at >= \(bind: week) THEN 1 ELSE 0 END), 0) AS last_week,
                  COALESCE(SUM(CASE WHEN source = 'speech' THEN 1 ELSE 0 END), 0) AS by_speech,
                  COALESCE(SUM(CASE WHEN source = 'key' THEN 1 ELSE 0 END), 0) AS by_key
                FROM do_not_call
                """
            ).first()
        else { return OptOutCounts(total: 0, lastDay: 0, lastWeek: 0, bySpeech: 0, byKey: 0) }
        return OptOutCounts(
            total: try row.int("total"), lastDay: try row.int("last_day"), lastWeek: try row.int("last_week"),
            bySpeech: try row.int("by_speech"), byKey: try row.int("by_key"))
    }
}

/// What a destination's limits said to one more call.
enum NumberLimitOutcome: Sendable, Equatable {
    case admitted
    /// The day's calls are used up.
    case dailyLimit
    /// The week's accounts are used up and this account is not one of them.
    case accountLimit
}

extension DestinationStore {
    /// Counts one call to the number `hash` from `userID` unless it would pass a limit: one conditional upsert, so
    /// concurrent requests (on any instance) can never admit more than the limits. A new UTC day (week) starts the
    /// day's calls (the week's accounts) again. `nil` limits are unlimited.
    func admitNumberCall(
        hash: String, userID: String, day: String, week: String, callsPerDay: Int?, accountsPerWeek: Int?
    ) async throws -> NumberLimitOutcome {
        let dayLimit = Int64(callsPerDay ?? Int(Int32.max))
        let accountLimit = Int64(accountsPerWeek ?? Int(Int32.max))
        let member = ",\(userID),"
        let pattern = "%" + member + "%"
        let admitted = try await sql.raw(
            """
            INSERT INTO number_call_limits (number_hash, day, day_calls, week, week_accounts, week_account_count)
            VALUES (\(bind: hash), \(bind: day), 1, \(bind: week), \(bind: member), 1)
            ON CONFLICT (number_hash) DO UPDATE SET
              day_calls = CASE WHEN number_call_limits.day < excluded.day THEN 1 ELSE number_call_limits.day_calls + 1 END,
              day = CASE WHEN number_call_limits.day < excluded.day THEN excluded.day ELSE number_call_limits.day END,
              week_accounts = CASE
                WHEN number_call_limits.week < excluded.week THEN excluded.week_accounts
                WHEN number_call_limits.week_accounts LIKE \(bind: pattern) THEN number_call_limits.week_accounts
                ELSE number_call_limits.week_accounts || \(bind: userID) || ',' END,
              week_account_count = CASE
                WHEN number_call_limits.week < excluded.week THEN 1
                WHEN number_call_limits.week_accounts LIKE \(bind: pattern) THEN number_call_limits.week_account_count
                ELSE number_call_limits.week_account_count + 1 END,
              week = CASE WHEN number_call_limits.week < excluded.week THEN excluded.week ELSE number_call_limits.week END
            WHERE (number_call_limits.day < excluded.day OR number_call_limits.day_calls < \(bind: dayLimit))
              AND (number_call_limits.week < excluded.week OR number_call_limits.week_accounts LIKE \(bind: pattern)
                OR number_call_limits.week_account_count < \(bind: accountLimit))
            RETURNING day_calls
            """
        ).first() != nil
        if admitted { return .admitted }
        // Refused: which limit (read only to word the answer; nothing is decided on it).
        guard
            let row = try await sql.raw(
                "SELECT day, day_calls, week, week_accounts, week_account_count FROM number_call_limits WHERE number_hash = \(bind: hash)"
            ).first()
        else { return .dailyLimit }
        let sameWeek = try row.string("week") >= week
        if sameWeek, !(try row.string("week_accounts")).contains(member), Int64(try row.int("week_account_count")) >= accountLimit {
            return .accountLimit
        }
        return .dailyLimit
    }

    /// Gives back a call counted by ``admitNumberCall`` that was not placed (the charge or the phone service refused
    /// it). The account stays among the week's: it did try to call the number.
    func releaseNumberCall(hash: String, day: String) async throws {
        try await sql.raw(
            """
            UPDATE number_call_limits SET day_calls = day_calls - 1
            WHERE number_hash = \(bind: hash) AND day = \(bind: day) AND day_calls > 0
            """
        ).run()
    }
}
