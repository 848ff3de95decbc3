import FluentKit

/// The operator console: the admin role on accounts, console sessions (cookie tokens, stored hashed, each with its
/// CSRF token) and the audit log of operator actions.
struct CreateConsole: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("users").field("role", .string, .required, .sql(.default("user"))).update()
        try await database.schema("console_sessions")
            .field("token_hash", .string, .identifier(auto: false))
            .field("user_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("csrf_token", .string, .required)
            .field("created_at", .int64, .required)
            .field("expires_at", .int64, .required)
            .create()
        try await database.schema("console_audit")
            .field("id", .int64, .identifier(auto: true))
            .field("actor_user_id", .string, .required)
            .field("actor_email", .string, .required)
            .field("action", .string, .required)
            .field("target", .string, .required)
            .field("detail", .string)
            .field("created_at", .int64, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("console_audit").delete()
        try await database.schema("console_sessions").delete()
        try await database.schema("users").deleteField("role").update()
    }
}
