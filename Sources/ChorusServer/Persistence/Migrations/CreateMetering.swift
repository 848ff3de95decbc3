import FluentKit
import SQLKit

/// What every provider call consumed (`provider_usage`, one row per call) and the spend ledger per feature and period
/// (`feature_spend`, `day:2026-11-24` / `month:2026-11`), kept in step in one transaction.
struct CreateMetering: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("provider_usage")
            .field("id", .int64, .identifier(auto: true))
            .field("user_id", .string)
            .field("feature", .string, .required)
            .field("operation", .string, .required)
            .field("provider", .string, .required)
            .field("model", .string, .required)
            .field("input_tokens", .int64, .required)
            .field("output_tokens", .int64, .required)
            .field("characters", .int64, .required)
            .field("images", .int64, .required)
            .field("audio_ms", .int64, .required)
            .field("usd_micros", .int64, .required)
            .field("request_id", .string)
            .field("subject", .string)
            .field("created_at", .int64, .required)
            .create()
        try await database.schema("feature_spend")
            .field("feature", .string, .required)
            .field("period", .string, .required)
            .field("usd_micros", .int64, .required)
            .compositeIdentifier(over: "feature", "period")
            .create()
        let sql = database as! any SQLDatabase
        try await sql.create(index: "provider_usage_user").on("provider_usage").column("user_id").column("created_at").run()
        try await sql.create(index: "provider_usage_subject").on("provider_usage").column("subject").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("feature_spend").delete()
        try await database.schema("provider_usage").delete()
    }
}
