import FluentKit
import SQLKit

/// The schema, one migration per table group. Timestamps are stored as epoch milliseconds (BIGINT) so every
/// comparison is dialect-neutral and exact; ids of user-facing rows are auto-increment integers (the contract's
/// `id`/`schedule_id` are numbers), users are UUID strings.
enum ChorusMigrations {
    static let all: [any Migration] = [
        CreateAccounts(),
        CreateCalls(),
        CreatePurchases(),
        CreateJobs(),
        CreateCallBridge(),
        CreateSubscriptionLifecycle(),
        CreateMessaging(),
        AddSpeechCacheExpiry(),
        CreateMetering(),
        CreateStories(),
        CreateConsole(),
        CreateConversationInvitations(),
        CreateUsageLimits(),
        CreateContentReports(),
        CreateNumberLimits(),
        AddScenarioVoicemail(),
        CreateDoNotCall(),
    ]
}

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

/// The live call bridge: the media stream's one-time token, why the bridge ended the call, latency figures, the
/// two-sided transcript, and the shared dial pacing (Twilio's calls-per-second limit across instances).
struct CreateCallBridge: AsyncMigration {
    func prepare(on database: any Database) async throws {
        // SQLite adds one column per ALTER TABLE.
        let columns: [(String, DatabaseSchema.DataType)] = [
            ("stream_token_hash", .string), ("stream_started_at", .int64), ("bridge_reason", .string), ("first_audio_ms", .int64),
            ("turn_latency_p50_ms", .int64), ("turn_latency_p90_ms", .int64), ("turns", .int64), ("barge_ins", .int64),
            ("transcript_deleted_at", .int64),
        ]
        for (name, type) in columns {
            try await database.schema("calls").field(FieldKey(stringLiteral: name), type).update()
        }
        try await database.schema("call_transcript_lines")
            .field("id", .int64, .identifier(auto: true))
            .field("call_id", .int64, .required, .references("calls", "id", onDelete: .cascade))
            .field("position", .int64, .required)
            .field("speaker", .string, .required)
            .field("text", .string, .required)
            .field("at_ms", .int64, .required)
            .field("interrupted", .bool, .required)
            .create()
        try await database.schema("dial_pacing")
            .field("id", .int64, .identifier(auto: false))
            .field("next_slot", .int64, .required)
            .create()
        let sql = database as! any SQLDatabase
        try await sql.create(index: "call_transcript_lines_call").on("call_transcript_lines").column("call_id").column("position").run()
        try await sql.create(index: "calls_stream_token").on("calls").column("stream_token_hash").run()
        try await sql.raw("INSERT INTO dial_pacing (id, next_slot) VALUES (1, 0)").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("dial_pacing").delete()
        try await database.schema("call_transcript_lines").delete()
    }
}

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

struct CreateCalls: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("custom_scenarios")
            .field("id", .int64, .identifier(auto: true))
            .field("user_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("name", .string, .required)
            .field("persona", .string, .required)
            .field("voice", .string, .required)
            .field("created_at", .int64, .required)
            .create()
        try await database.schema("calls")
            .field("id", .int64, .identifier(auto: true))
            .field("user_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("call_sid", .string)
            .field("phone_number", .string, .required)
            .field("scenario", .string, .required)
            .field("status", .string, .required)
            .field("status_rank", .int64, .required)
            .field("bucket_key", .string)
            .field("charge_state", .string, .required)
            .field("duration_limit", .int64, .required)
            .field("duration_seconds", .int64)
            .field("ended_reason", .string)
            .field("schedule_id", .int64)
            .field("created_at", .int64, .required)
            .field("updated_at", .int64, .required)
            .field("answered_at", .int64)
            .field("ended_at", .int64)
            .unique(on: "call_sid")
            .unique(on: "schedule_id")
            .create()
        try await database.schema("scheduled_calls")
            .field("id", .int64, .identifier(auto: true))
            .field("user_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("phone_number", .string, .required)
            .field("scenario", .string, .required)
            .field("scheduled_time", .int64, .required)
            .field("status", .string, .required)
            .field("job_id", .int64)
            .field("call_id", .int64)
            .field("failure_reason", .string)
            .field("created_at", .int64, .required)
            .create()
        let sql = database as! any SQLDatabase
        try await sql.create(index: "calls_user_created").on("calls").column("user_id").column("created_at").run()
        try await sql.create(index: "custom_scenarios_user").on("custom_scenarios").column("user_id").run()
        try await sql.create(index: "scheduled_calls_user").on("scheduled_calls").column("user_id").column("scheduled_time").run()
    }

    func revert(on database: any Database) async throws {
        for table in ["scheduled_calls", "calls", "custom_scenarios"] {
            try await database.schema(table).delete()
        }
    }
}

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

struct CreateJobs: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("jobs")
            .field("id", .int64, .identifier(auto: true))
            .field("kind", .string, .required)
            .field("payload", .string, .required)
            .field("status", .string, .required)
            .field("run_at", .int64, .required)
            .field("attempts", .int64, .required)
            .field("max_attempts", .int64, .required)
            .field("lease_owner", .string)
            .field("lease_until", .int64)
            .field("last_error", .string)
            .field("created_at", .int64, .required)
            .field("updated_at", .int64, .required)
            .create()
        let sql = database as! any SQLDatabase
        try await sql.create(index: "jobs_due").on("jobs").column("status").column("run_at").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("jobs").delete()
    }
}
