import FluentKit

/// What a custom scenario does when an answering machine answers (issue 17): `hang_up` or `leave_message`.
struct AddScenarioVoicemail: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("custom_scenarios").field("voicemail", .string).update()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("custom_scenarios").deleteField("voicemail").update()
    }
}
