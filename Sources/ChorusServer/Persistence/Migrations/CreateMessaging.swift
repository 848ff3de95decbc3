import FluentKit
import SQLKit

/// Voice messages: profiles, conversations and members, recordings, messages (with their per-member read, heard and
/// star state). Messages carry a global insertion sequence (`seq`) used for ordering, read positions and cursors; their
/// public id is a UUID. Text is also stored lower-cased (`*_lc`) for case-insensitive search on both databases.
struct CreateMessaging: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("messaging_profiles")
            .field("user_id", .string, .identifier(auto: false), .references("users", "id", onDelete: .cascade))
            .field("display_name", .string, .required)
            .field("birth_year", .int64)
            .field("retention_days", .int64, .required)
            .field("voice_enabled", .bool, .required)
            .field("default_voice", .string)
            .field("updated_at", .int64, .required)
            .create()
        try await database.schema("conversations")
            .field("id", .string, .identifier(auto: false))
            .field("kind", .string, .required)
            .field("title", .string)
            // Direct conversations: the two member ids, sorted and joined, so a pair has one conversation.
            .field("direct_key", .string)
            .field("created_by", .string, .required)
            .field("created_at", .int64, .required)
            .field("last_message_at", .int64)
            .unique(on: "direct_key")
            .create()
        try await database.schema("conversation_members")
            .field("conversation_id", .string, .required, .references("conversations", "id", onDelete: .cascade))
            .field("user_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("role", .string, .required)
            .field("joined_at", .int64, .required)
            .field("last_read_seq", .int64, .required)
            .compositeIdentifier(over: "conversation_id", "user_id")
            .create()
        try await database.schema("audio_recordings")
            .field("id", .string, .identifier(auto: false))
            .field("owner_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("blob_key", .string, .required)
            .field("format", .string, .required)
            .field("content_type", .string, .required)
            .field("size_bytes", .int64, .required)
            .field("duration_ms", .int64, .required)
            .field("long_form", .bool, .required)
            .field("created_at", .int64, .required)
            .field("expires_at", .int64)
            .field("transcript", .string)
            .field("transcript_confidence", .double)
            .field("transcript_label", .string)
            .field("transcript_language", .string)
            .create()
        try await database.schema("messages")
            .field("seq", .int64, .identifier(auto: true))
            .field("id", .string, .required)
            .field("conversation_id", .string, .required, .references("conversations", "id", onDelete: .cascade))
            .field("sender_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("client_message_id", .string, .required)
            .field("send_mode", .string, .required)
            .field("content", .string)
            .field("content_lc", .string)
            .field("audio_id", .string)
            .field("audio_duration_ms", .int64)
            .field("transcript", .string)
            .field("transcript_lc", .string)
            .field("transcript_confidence", .double)
            .field("transcript_label", .string)
            .field("urgent", .bool, .required)
            .field("urgent_reasons", .string, .required)
            .field("created_at", .int64, .required)
            .field("edited_at", .int64)
            .field("deleted_at", .int64)
            .unique(on: "id")
            .unique(on: "sender_id", "client_message_id")
            .create()
        try await database.schema("message_receipts")
            .field("message_seq", .int64, .required, .references("messages", "seq", onDelete: .cascade))
            .field("user_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("heard_at", .int64)
            .field("starred_at", .int64)
            .compositeIdentifier(over: "message_seq", "user_id")
            .create()
        // One cloned voice per account; the provider's voice id never leaves the server.
        try await database.schema("voice_profiles")
            .field("user_id", .string, .identifier(auto: false), .references("users", "id", onDelete: .cascade))
            .field("provider", .string, .required)
            .field("provider_voice_id", .string, .required)
            .field("sample_audio_id", .string)
            .field("script", .string, .required)
            .field("consent_statement", .string, .required)
            .field("consented_at", .int64, .required)
            .field("preview_blob_key", .string)
            .field("created_at", .int64, .required)
            .create()
        // Generated speech, once per (text, voice, model, settings): `pending` while one worker generates it.
        try await database.schema("speech_cache")
            .field("key", .string, .identifier(auto: false))
            .field("status", .string, .required)
            .field("owner_user_id", .string)
            .field("blob_key", .string)
            .field("content_type", .string)
            .field("size_bytes", .int64)
            .field("created_at", .int64, .required)
            .field("claimed_until", .int64)
            .create()
        // Per-user counters (daily speech generations, monthly voice messages) and the spend ledger, both charged with
        // one conditional upsert.
        try await database.schema("voice_usage")
            .field("user_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("key", .string, .required)
            .field("used", .int64, .required)
            .compositeIdentifier(over: "user_id", "key")
            .create()
        try await database.schema("voice_spend")
            .field("period", .string, .identifier(auto: false))
            .field("microdollars", .int64, .required)
            .create()
        // Summaries, cached per selection until a newer message exists (or 7 days pass).
        try await database.schema("conversation_summaries")
            .field("id", .string, .identifier(auto: false))
            .field("conversation_id", .string, .required, .references("conversations", "id", onDelete: .cascade))
            .field("selection", .string, .required)
            .field("last_seq", .int64, .required)
            .field("message_count", .int64, .required)
            .field("summary_json", .string, .required)
            .field("narration", .string, .required)
            .field("speech_key", .string)
            .field("created_at", .int64, .required)
            .create()
        // Daily digests per member; `version` makes the job of a replaced subscription a no-op.
        try await database.schema("digest_subscriptions")
            .field("conversation_id", .string, .required, .references("conversations", "id", onDelete: .cascade))
            .field("user_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("schedule", .string, .required)
            .field("time_zone", .string, .required)
            .field("version", .int64, .required)
            .field("last_digest_at", .int64)
            .field("next_at", .int64)
            .compositeIdentifier(over: "conversation_id", "user_id")
            .create()
        // Realtime events too large for a PostgreSQL notification, referenced by id (removed after an hour).
        try await database.schema("realtime_payloads")
            .field("id", .int64, .identifier(auto: true))
            .field("payload", .string, .required)
            .field("created_at", .int64, .required)
            .create()
        let sql = database as! any SQLDatabase
        try await sql.create(index: "conversation_members_user").on("conversation_members").column("user_id").run()
        try await sql.create(index: "messages_conversation").on("messages").column("conversation_id").column("seq").run()
        try await sql.create(index: "messages_audio").on("messages").column("audio_id").run()
        try await sql.create(index: "audio_recordings_expiry").on("audio_recordings").column("expires_at").run()
        try await sql.create(index: "audio_recordings_owner").on("audio_recordings").column("owner_id").run()
    }

    func revert(on database: any Database) async throws {
        for table in [
            "realtime_payloads", "digest_subscriptions", "conversation_summaries", "voice_spend", "voice_usage", "speech_cache", "voice_profiles",
            "message_receipts",
            "messages", "audio_recordings", "conversation_members", "conversations", "messaging_profiles",
        ] {
            try await database.schema(table).delete()
        }
    }
}

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
