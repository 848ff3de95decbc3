import ChorusCore
import Foundation
import SQLKit

/// What a destination's limits said to one more call.
enum NumberLimitOutcome: Sendable, Equatable {
    case admitted
    /// The day's calls are used up.
    case dailyLimit
    /// The week's accounts are used up and this account is not one of them.
    case accountLimit
}

extension ChorusStore {
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
