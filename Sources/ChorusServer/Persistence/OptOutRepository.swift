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

extension ChorusStore {
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

extension ChorusStore {
    /// The display name a user set on their messaging profile, if they set one (never the email-derived default): the
    /// first name a call's disclosure may say.
    func explicitDisplayName(userID: String) async throws -> String? {
        try await reader.raw("SELECT display_name FROM messaging_profiles WHERE user_id = \(bind: userID)").first()?
            .optionalString("display_name")
    }
}
