import FluentKit
import SQLKit

/// Calls: custom scenarios, calls (with their charge state and duration limit) and scheduled calls.
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
