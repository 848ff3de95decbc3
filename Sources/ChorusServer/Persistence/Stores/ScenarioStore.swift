import ChorusAPI
import ChorusCore
import Foundation
import SQLKit

struct CustomScenarioRecord: Sendable, Equatable {
    var id: Int
    var userID: String
    var name: String
    var persona: String
    var voice: String
    var createdAt: Date
    /// The last moderation verdict; `nil` for a scenario saved before personas were checked and not used since.
    var verdict: PersonaVerdict?
    /// When an operator disabled it after a report.
    var disabledAt: Date?
    /// What it does when an answering machine answers.
    var voicemail: VoicemailPolicy = .hangUp

    /// The id clients use: `custom_<n>`.
    var publicID: String { CustomScenarioRecord.publicID(id) }

    static func publicID(_ id: Int) -> String { "custom_\(id)" }

    /// Parses `custom_<n>`.
    static func rowID(fromPublicID text: String) -> Int? {
        guard text.hasPrefix("custom_") else { return nil }
        return Int(text.dropFirst("custom_".count))
    }

    /// The scenario as `GET /mobile/scenarios` lists it: category `custom`, its persona as the description, not
    /// marked family-friendly (people write their own personas).
    var catalogEntry: ScenarioDTO {
        ScenarioDTO(
            id: publicID, name: name, description: persona, icon: "✨", category: .custom, isFamilyFriendly: false, voice: voice,
            contentWarning: nil)
    }

    var dto: CustomScenarioDTO {
        CustomScenarioDTO(
            id: publicID, name: name, persona: persona, voice: voice, createdAt: createdAt,
            moderation: verdict.map { PersonaModerationDTO(categories: $0.categories, model: $0.model, checkedAt: $0.checkedAt) },
            disabledAt: disabledAt, voicemail: voicemail.rawValue)
    }

    /// The text a call's instructions get from it, as the persona policy and the moderation model read it.
    var screenedText: String { Self.screenedText(name: name, persona: persona) }

    static func screenedText(name: String, persona: String) -> String { name + "\n" + persona }
}

/// Users' custom scenarios (`custom_scenarios`) with their moderation verdict.
///
/// Reached as `store.scenarios`, or `tx.scenarios` inside ``ChorusStore/writeTransaction(_:)``.
struct ScenarioStore: StoreArea {
    let base: ChorusStore

    /// Inserts the scenario unless the user already has `limit`. The count and the insert are one transaction
    /// holding the user's row lock (PostgreSQL) or the write lock (SQLite), so concurrent creations cannot overshoot.
    func createCustomScenario(
        userID: String, name: String, persona: String, voice: String, verdict: PersonaVerdict, voicemail: VoicemailPolicy = .hangUp,
        limit: Int, now: Date
    ) async throws
        -> CustomScenarioRecord?
    {
        try await writeTransaction { tx in
            if tx.dialect == .postgres {
                _ = try await tx.sql.raw("SELECT id FROM users WHERE id = \(bind: userID) FOR UPDATE").first()
            }
            let count = try await tx.sql.raw("SELECT COUNT(*) AS n FROM custom_scenarios WHERE user_id = \(bind: userID)").first()?.int("n") ?? 0
            guard count < limit else { return nil }
            guard
                let row = try await tx.sql.raw(
                    """
                    INSERT INTO custom_scenarios (user_id, name, persona, voice, created_at, moderation_categories, moderation_model, moderated_at,
                      voicemail)
                    VALUES (\(bind: userID), \(bind: name), \(bind: persona), \(bind: voice), \(bind: now.epochMillis),
                      \(bind: verdict.categories.joined(separator: ",")), \(bind: verdict.model), \(bind: verdict.checkedAt.epochMillis),
                      \(bind: voicemail.rawValue)) RETURNING id
                    """
                ).first()
            else { throw ChorusStoreError.missingRow("custom_scenarios") }
            return CustomScenarioRecord(
                id: try row.int("id"), userID: userID, name: name, persona: persona, voice: voice, createdAt: now, verdict: verdict,
                voicemail: voicemail)
        }
    }

    func customScenarios(userID: String) async throws -> [CustomScenarioRecord] {
        try await reader.raw("SELECT * FROM custom_scenarios WHERE user_id = \(bind: userID) ORDER BY id").all().map(Self.customScenarioRecord)
    }

    func customScenario(id: Int, userID: String) async throws -> CustomScenarioRecord? {
        try await reader.raw("SELECT * FROM custom_scenarios WHERE id = \(bind: Int64(id)) AND user_id = \(bind: userID)")
            .first().map(Self.customScenarioRecord)
    }

    /// Any user's custom scenario (the console).
    func customScenario(id: Int) async throws -> CustomScenarioRecord? {
        try await reader.raw("SELECT * FROM custom_scenarios WHERE id = \(bind: Int64(id))").first().map(Self.customScenarioRecord)
    }

    /// Stores the verdict of a check before a call.
    func recordVerdict(_ verdict: PersonaVerdict, customScenarioID id: Int) async throws {
        try await sql.raw(
            """
            UPDATE custom_scenarios SET moderation_categories = \(bind: verdict.categories.joined(separator: ",")),
              moderation_model = \(bind: verdict.model), moderated_at = \(bind: verdict.checkedAt.epochMillis)
            WHERE id = \(bind: Int64(id))
            """
        ).run()
    }

    func deleteCustomScenario(id: Int, userID: String) async throws -> Bool {
        try await sql.raw("DELETE FROM custom_scenarios WHERE id = \(bind: Int64(id)) AND user_id = \(bind: userID) RETURNING id").first() != nil
    }

    static func customScenarioRecord(_ row: any SQLRow) throws -> CustomScenarioRecord {
        let verdict = try row.optionalDate("moderated_at").map { checkedAt in
            PersonaVerdict(
                categories: (try row.optionalString("moderation_categories") ?? "").split(separator: ",").map(String.init),
                model: try row.optionalString("moderation_model"), checkedAt: checkedAt)
        }
        return CustomScenarioRecord(
            id: try row.int("id"), userID: try row.string("user_id"), name: try row.string("name"), persona: try row.string("persona"),
            voice: try row.string("voice"), createdAt: try row.date("created_at"), verdict: verdict, disabledAt: try row.optionalDate("disabled_at"),
            voicemail: VoicemailPolicy(rawValue: try row.optionalString("voicemail") ?? "") ?? .hangUp
        )
    }
}
