import FluentKit
import SQLKit

/// What calls cost (issue 18): the realtime token split in `provider_usage` (cached input, audio in, cached audio in,
/// audio out; older rows 0), a `usage_key` that makes a usage row recorded at most once (a phone call's minutes:
/// `telephony:call:<id>`; `NULL` for rows that need none), and `call_spend_reservations`, the Calls budget reserved
/// for each call at placement until the call's final status settles it (one row per placement; `call_id` is set once
/// the call row exists).
struct CreateCallCosts: AsyncMigration {
    static let usageColumns = ["cached_input_tokens", "audio_input_tokens", "cached_audio_input_tokens", "audio_output_tokens"]

    func prepare(on database: any Database) async throws {
        let sql = database as! any SQLDatabase
        // One column per statement: SQLite adds one column per ALTER TABLE.
        for column in Self.usageColumns {
            try await sql.raw("ALTER TABLE provider_usage ADD COLUMN \(ident: column) BIGINT NOT NULL DEFAULT 0").run()
        }
        try await sql.raw("ALTER TABLE provider_usage ADD COLUMN usage_key TEXT").run()
        try await sql.create(index: "provider_usage_key").on("provider_usage").column("usage_key").unique().run()
        try await database.schema("call_spend_reservations")
            .field("id", .string, .identifier(auto: false))
            .field("call_id", .int64)
            .field("usd_micros", .int64, .required)
            .field("day_period", .string, .required)
            .field("month_period", .string, .required)
            .field("created_at", .int64, .required)
            .unique(on: "call_id")
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("call_spend_reservations").delete()
        let sql = database as! any SQLDatabase
        try await sql.drop(index: "provider_usage_key").run()
        for column in Self.usageColumns + ["usage_key"] {
            try await sql.raw("ALTER TABLE provider_usage DROP COLUMN \(ident: column)").run()
        }
    }
}
