import FluentKit
import SQLKit

/// App Store purchases: the first per-user subscriptions table, verified transactions and received notifications.
struct CreatePurchases: AsyncMigration {
    /// The per-user subscriptions table of this migration (replaced by ``CreateSubscriptionLifecycle``, whose revert
    /// recreates it).
    static func createSubscriptions(on database: any Database) async throws {
        try await database.schema("subscriptions")
            .field("user_id", .string, .identifier(auto: false), .references("users", "id", onDelete: .cascade))
            .field("tier", .string, .required)
            .field("product_id", .string, .required)
            .field("status", .string, .required)
            .field("anchor", .int64, .required)
            .field("expires_at", .int64, .required)
            .field("original_transaction_id", .string, .required)
            .field("latest_transaction_id", .string, .required)
            .field("environment", .string, .required)
            .field("updated_at", .int64, .required)
            .create()
    }

    func prepare(on database: any Database) async throws {
        try await Self.createSubscriptions(on: database)
        try await database.schema("app_store_transactions")
            .field("transaction_id", .string, .identifier(auto: false))
            .field("user_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("product_id", .string, .required)
            .field("original_transaction_id", .string, .required)
            .field("purchase_date", .int64, .required)
            .field("expires_date", .int64)
            .field("environment", .string, .required)
            .field("revoked_at", .int64)
            .field("created_at", .int64, .required)
            .create()
        try await database.schema("app_store_notifications")
            .field("notification_uuid", .string, .identifier(auto: false))
            .field("notification_type", .string, .required)
            .field("subtype", .string)
            .field("original_transaction_id", .string)
            .field("outcome", .string, .required)
            .field("received_at", .int64, .required)
            .create()
        let sql = database as! any SQLDatabase
        try await sql.create(index: "subscriptions_original").on("subscriptions").column("original_transaction_id").run()
        try await sql.create(index: "transactions_original").on("app_store_transactions").column("original_transaction_id").run()
    }

    func revert(on database: any Database) async throws {
        for table in ["app_store_notifications", "app_store_transactions", "subscriptions"] {
            try await database.schema(table).delete()
        }
    }
}
