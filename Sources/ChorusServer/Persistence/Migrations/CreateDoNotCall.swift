import FluentKit

/// Issue 17: the global do-not-call list. One row per number that opted out, keyed by its keyed hash
/// (``PhoneNumberHasher``): the list recognises a number again but cannot be read back as numbers.
struct CreateDoNotCall: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("do_not_call")
            .field("number_hash", .string, .identifier(auto: false))
            // `speech` or `key` (``CallOptOut/Source``).
            .field("source", .string, .required)
            .field("created_at", .int64, .required)
            .create()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("do_not_call").delete()
    }
}
