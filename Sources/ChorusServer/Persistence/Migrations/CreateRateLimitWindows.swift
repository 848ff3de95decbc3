import FluentKit
import SQLKit

/// Issue 18: the fixed windows of the rate limits that guard money or accounts (sign-in, sign-up, token refresh, the
/// console's sign-in, call placement), counted in the database so that every instance on it shares them. One row per
/// limit key and window; `expires_at` (epoch milliseconds) is when the window ends, after which the row is swept.
struct CreateRateLimitWindows: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("rate_limit_windows")
            .field("limit_key", .string, .required)
            .field("window_start", .int64, .required)
            .field("hits", .int64, .required)
            .field("expires_at", .int64, .required)
            .compositeIdentifier(over: "limit_key", "window_start")
            .create()
        let sql = database as! any SQLDatabase
        try await sql.create(index: "rate_limit_windows_expiry").on("rate_limit_windows").column("expires_at").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("rate_limit_windows").delete()
    }
}
