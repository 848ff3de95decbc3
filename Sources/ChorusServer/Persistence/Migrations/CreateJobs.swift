import FluentKit
import SQLKit

/// The durable job queue: one row per job, leased by an instance while it runs.
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
