import FluentKit
import SQLKit

/// Consent in conversations: adding someone creates an invitation (to an email, whether or not an account uses it yet)
/// that only they can accept, decline or answer by blocking the inviter. Direct conversations are keyed by the two
/// emails (sorted, joined by a space, which no email contains) instead of the two account ids, so a conversation with
/// an email nobody has registered yet is the same one once they do.
struct CreateConversationInvitations: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema("conversation_invitations")
            .field("id", .string, .identifier(auto: false))
            .field("conversation_id", .string, .required, .references("conversations", "id", onDelete: .cascade))
            .field("inviter_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("invitee_email", .string, .required)
            .field("created_at", .int64, .required)
            .unique(on: "conversation_id", "invitee_email")
            .create()
        // Who refuses invitations from whom: invitations from a blocked inviter are dropped without telling them.
        try await database.schema("conversation_blocks")
            .field("blocker_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("blocked_id", .string, .required, .references("users", "id", onDelete: .cascade))
            .field("created_at", .int64, .required)
            .compositeIdentifier(over: "blocker_id", "blocked_id")
            .create()
        let sql = database as! any SQLDatabase
        try await sql.create(index: "conversation_invitations_email").on("conversation_invitations").column("invitee_email").run()
        try await sql.create(index: "conversation_invitations_inviter").on("conversation_invitations").column("inviter_id").run()
        try await Self.rewriteDirectKeys(on: sql)
    }

    /// Existing direct conversations: from "id|id" (sorted account ids) to "email email" (``InvitationStore/directKey(_:)``).
    /// A pair one of whose accounts is gone keeps its old key, which no new key can equal.
    static func rewriteDirectKeys(on sql: any SQLDatabase) async throws {
        for row in try await sql.raw("SELECT id, direct_key FROM conversations WHERE direct_key IS NOT NULL").all() {
            let ids = try row.decode(column: "direct_key", as: String.self).split(separator: "|").map(String.init)
            guard ids.count == 2 else { continue }
            let emails = try await sql.raw("SELECT email FROM users WHERE id IN (\(SQLList(ids.map { SQLBind($0) })))").all()
                .map { try $0.decode(column: "email", as: String.self) }
            guard emails.count == 2 else { continue }
            let id = try row.decode(column: "id", as: String.self)
            try await sql.raw("UPDATE conversations SET direct_key = \(bind: InvitationStore.directKey(emails)) WHERE id = \(bind: id)").run()
        }
    }

    func revert(on database: any Database) async throws {
        try await database.schema("conversation_blocks").delete()
        try await database.schema("conversation_invitations").delete()
    }
}
