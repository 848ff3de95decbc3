import FluentKit
import SQLKit

/// Accounts: users, refresh-token families and tokens, quota buckets, idempotency keys.
struct CreateAccounts: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("users")
            .field("id", .string, .identifier(auto: false))
            .field("email", .string, .required)
            .field("password_hash", .string, .required)
            .field("app_type", .string, .required)
            .field("created_at", .int64, .required)
            .unique(on: "email")
            .create()
        try await database.schema("refresh_families")
            .field("id", .string, .identifier(auto: false))
            .field("user_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("created_at", .int64, .required)
            .field("revoked_at", .int64)
            .create()
        try await database.schema("refresh_tokens")
            .field("token_hash", .string, .identifier(auto: false))
            .field("user_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("family_id", .string, .required, .references("refresh_families", "id", onDelete: .cascade))
            .field("created_at", .int64, .required)
            .field("expires_at", .int64, .required)
            .field("used_at", .int64)
            .create()
        try await database.schema("quota_buckets")
            .field("id", .int64, .identifier(auto: true))
            .field("user_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("key", .string, .required)
            .field("kind", .string, .required)
            .field("period_start", .int64, .required)
            .field("period_end", .int64, .required)
            .field("capacity", .int64, .required)
            .field("used", .int64, .required)
            .unique(on: "user_id", "key")
            .create()
        try await database.schema("idempotency_keys")
            .field("user_id", .string, .required)
            .field("key", .string, .required)
            .field("fingerprint", .string, .required)
            .field("state", .string, .required)
            .field("status_code", .int64)
            .field("body", .string)
            .field("created_at", .int64, .required)
            .compositeIdentifier(over: "user_id", "key")
            .create()
        let sql = database as! any SQLDatabase
        try await sql.create(index: "refresh_tokens_family").on("refresh_tokens").column("family_id").run()
    }

    func revert(on database: any Database) async throws {
        for table in ["idempotency_keys", "quota_buckets", "refresh_tokens", "refresh_families", "users"] {
            try await database.schema(table).delete()
        }
    }
}
