import FluentKit
import SQLKit

/// App Store subscriptions keyed by `originalTransactionId` (a user may hold several over time), with the state the
/// entitlement evaluator needs; notifications kept verbatim and applied from the job queue.
struct CreateSubscriptionLifecycle: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("app_store_subscriptions")
            .field("original_transaction_id", .string, .identifier(auto: false))
            .field("user_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("product_id", .string, .required)
            .field("latest_transaction_id", .string, .required)
            .field("purchase_date", .int64, .required)
            .field("expires_at", .int64, .required)
            .field("anchor", .int64, .required)
            .field("will_renew", .bool, .required)
            .field("auto_renew_product_id", .string)
            .field("billing_state", .string, .required)
            .field("grace_expires_at", .int64)
            .field("expired_at", .int64)
            .field("revoked_at", .int64)
            .field("environment", .string, .required)
            .field("last_event_at", .int64, .required)
            .field("version", .int64, .required)
            .field("created_at", .int64, .required)
            .field("updated_at", .int64, .required)
            .create()
        let sql = database as! any SQLDatabase
        try await sql.create(index: "app_store_subscriptions_user").on("app_store_subscriptions").column("user_id").run()
        // Subscriptions recorded before: one per user.
        try await sql.raw(
            """
            INSERT INTO app_store_subscriptions (original_transaction_id, user_id, product_id, latest_transaction_id, purchase_date,
              expires_at, anchor, will_renew, billing_state, expired_at, revoked_at, environment, last_event_at, version, created_at, updated_at)
            SELECT original_transaction_id, user_id, product_id, latest_transaction_id, anchor, expires_at, anchor, status <> 'cancelled',
              'current', CASE WHEN status = 'expired' THEN updated_at END, CASE WHEN status = 'revoked' THEN updated_at END, environment,
              updated_at, 1, updated_at, updated_at
            FROM subscriptions
            """
        ).run()
        try await database.schema("subscriptions").delete()
        // SQLite adds one column per ALTER TABLE.
        let columns: [(String, DatabaseSchema.DataType)] = [
            ("signed_payload", .string), ("signed_at", .int64), ("environment", .string), ("applied_at", .int64),
        ]
        for (name, type) in columns {
            try await database.schema("app_store_notifications").field(FieldKey(stringLiteral: name), type).update()
        }
        try await database.schema("app_store_transactions").field("revocation_reason", .int64).update()
        // Transactions are claimed by the app's post; those learnt from notifications are recorded unclaimed.
        try await database.schema("app_store_transactions").field("claimed_at", .int64).update()
        try await sql.raw("UPDATE app_store_transactions SET claimed_at = created_at").run()
    }

    /// Drops the new table and recreates the old one empty (subscription state is rebuilt from the App Store).
    func revert(on database: any Database) async throws {
        try await database.schema("app_store_subscriptions").delete()
        try await CreatePurchases.createSubscriptions(on: database)
    }
}
