import FluentKit

/// Issue 16 §2 (denial of wallet): transcripts stored per recording and language (a claim row while one is being
/// made), and global admission counters (trial calls per day, signups per address and network per day).
struct CreateUsageLimits: AsyncMigration {
    func prepare(on database: any Database) async throws {
        // `language_key` is the requested language, or `auto` when the provider detects it.
        try await database.schema("audio_transcripts")
            .field("audio_id", .string, .required, .references("audio_recordings", "id", onDelete: .cascade))
            .field("language_key", .string, .required)
            .field("status", .string, .required)
            .field("transcript", .string)
            .field("confidence", .double)
            .field("label", .string)
            .field("language", .string)
            .field("claimed_until", .int64)
            .compositeIdentifier(over: "audio_id", "language_key")
            .create()
        try await database.schema("admission_counters")
            .field("scope", .string, .required)
            .field("period", .string, .required)
            .field("used", .int64, .required)
            .compositeIdentifier(over: "scope", "period")
            .create()
        // Voice speech reserved its spend here; every product now reserves in `feature_spend`.
        try await database.schema("voice_spend").delete()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("voice_spend")
            .field("period", .string, .identifier(auto: false))
            .field("microdollars", .int64, .required)
            .create()
        try await database.schema("admission_counters").delete()
        try await database.schema("audio_transcripts").delete()
    }
}
