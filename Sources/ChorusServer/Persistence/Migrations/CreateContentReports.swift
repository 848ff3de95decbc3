import FluentKit
import SQLKit

/// Issue 17: the moderation verdict and the disabled state of custom scenarios, and the content reports table.
struct CreateContentReports: AsyncMigration {
    func prepare(on database: any Database) async throws {
        // SQLite adds one column per ALTER TABLE.
        let columns: [(String, DatabaseSchema.DataType)] = [
            ("moderation_categories", .string), ("moderation_model", .string), ("moderated_at", .int64), ("disabled_at", .int64),
            ("disabled_reason", .string),
        ]
        for (name, type) in columns {
            try await database.schema("custom_scenarios").field(FieldKey(stringLiteral: name), type).update()
        }
        try await database.schema("content_reports")
            .field("id", .string, .identifier(auto: false))
            .field("user_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("scenario_id", .string)
            .field("call_id", .int64)
            .field("call_sid", .string)
            .field("subject_scenario", .string)
            .field("subject_text", .string)
            .field("reason", .string, .required)
            .field("description", .string, .required)
            .field("status", .string, .required)
            .field("reviewed_by", .string)
            .field("created_at", .int64, .required)
            .field("updated_at", .int64, .required)
            .create()
        let sql = database as! any SQLDatabase
        try await sql.create(index: "content_reports_user").on("content_reports").column("user_id").column("created_at").run()
        try await sql.create(index: "content_reports_status").on("content_reports").column("status").column("created_at").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("content_reports").delete()
        for name in ["disabled_reason", "disabled_at", "moderated_at", "moderation_model", "moderation_categories"] {
            try await database.schema("custom_scenarios").deleteField(FieldKey(stringLiteral: name)).update()
        }
    }
}
