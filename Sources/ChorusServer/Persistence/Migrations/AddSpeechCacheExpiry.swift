import FluentKit
import SQLKit

/// Generated speech expires when nobody asked for it for a while: `last_used_at` is when its URL was last handed out
/// (rows made before this migration count from `created_at`).
struct AddSpeechCacheExpiry: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("speech_cache").field("last_used_at", .int64).update()
        let sql = database as! any SQLDatabase
        try await sql.raw("UPDATE speech_cache SET last_used_at = created_at").run()
        try await sql.create(index: "speech_cache_last_used").on("speech_cache").column("last_used_at").run()
    }

    func revert(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        try await sql.drop(index: "speech_cache_last_used").run()
        try await database.schema("speech_cache").deleteField("last_used_at").update()
    }
}
