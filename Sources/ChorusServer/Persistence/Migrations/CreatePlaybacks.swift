import FluentKit
import SQLKit

/// Issue 21: conversation playbacks as they fill in, readable from every instance. `state` is the playback as JSON
/// (``PlaybackState``), `version` grows with every snapshot its generator writes; rows go after an hour.
struct CreatePlaybacks: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("playbacks")
            .field("id", .string, .identifier(auto: false))
            .field("conversation_id", .string, .required, .references("conversations", "id", onDelete: .cascade))
            .field("user_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("version", .int64, .required)
            .field("state", .string, .required)
            .field("created_at", .int64, .required)
            .field("updated_at", .int64, .required)
            .create()
        let sql = database as! any SQLDatabase
        try await sql.create(index: "playbacks_created").on("playbacks").column("created_at").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("playbacks").delete()
    }
}
