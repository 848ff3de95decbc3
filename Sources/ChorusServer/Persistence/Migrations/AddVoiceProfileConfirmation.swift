import FluentKit
import SQLKit

/// Issue 21: a new clone waits for its owner's confirmation. `state` is `pending_confirmation` (the owner has not yet
/// heard and confirmed it), `requires_verification` (ElevenLabs asked for verification: unusable) or `ready`
/// (profiles made before this migration were used already: `ready`); `confirmed_at` is when the owner confirmed.
/// Unconfirmed profiles are found by `(state, created_at)` to be deleted after a day.
struct AddVoiceProfileConfirmation: AsyncMigration {
    func prepare(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        try await sql.raw("ALTER TABLE voice_profiles ADD COLUMN state VARCHAR(32) NOT NULL DEFAULT 'ready'").run()
        try await database.schema("voice_profiles").field("confirmed_at", .int64).update()
        try await sql.raw("UPDATE voice_profiles SET confirmed_at = created_at").run()
        try await sql.create(index: "voice_profiles_state_created").on("voice_profiles").column("state").column("created_at").run()
    }

    func revert(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        try await sql.drop(index: "voice_profiles_state_created").run()
        try await database.schema("voice_profiles").deleteField("confirmed_at").update()
        try await database.schema("voice_profiles").deleteField("state").update()
    }
}
