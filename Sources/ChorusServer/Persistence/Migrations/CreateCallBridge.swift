import FluentKit
import SQLKit

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
