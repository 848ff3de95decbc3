import FluentKit

/// Issue 17: calls per destination number, across all accounts. One row per number (its keyed hash, never the number):
/// the calls of its current UTC day and the accounts that called it in its current UTC week.
struct CreateNumberLimits: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("number_call_limits")
            .field("number_hash", .string, .identifier(auto: false))
            .field("day", .string, .required)
            .field("day_calls", .int64, .required)
            .field("week", .string, .required)
            // `,<user id>,<user id>,`: at most `CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK` ids (user ids are UUIDs).
            .field("week_accounts", .string, .required)
            .field("week_account_count", .int64, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("number_call_limits").delete()
    }
}
