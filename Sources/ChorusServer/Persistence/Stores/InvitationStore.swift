import Foundation
import SQLKit

/// A pending invitation to a conversation, as its invitee sees it.
struct InvitationRecord: Sendable, Equatable {
    var id: String
    var conversationID: String
    var kind: String
    var title: String?
    var inviterID: String
    var inviterEmail: String
    var inviterName: String
    var createdAt: Date
}

/// What accepting an invitation did.
enum InvitationAcceptance: Sendable, Equatable {
    /// The invitee is now a member of the conversation.
    case joined(conversationID: String)
    /// The group already has its maximum of members; the invitation stays.
    case full
    /// No invitation of the user has this id (never made, declined, or already accepted by a concurrent request).
    case notFound
}

/// Consent in conversations: invitations (`conversation_invitations`) and blocks (`conversation_blocks`).
///
/// Reached as `store.invitations`, or `tx.invitations` inside ``ChorusStore/writeTransaction(_:)``.
struct InvitationStore: StoreArea {
    let base: ChorusStore

    /// Sorted and joined by a space (no email contains one): the key of the direct conversation between two emails.
    static func directKey(_ emails: [String]) -> String {
        emails.map { $0.lowercased() }.sorted().joined(separator: " ")
    }

    /// The account's email (`nil` for an unknown account).
    func email(userID: String) async throws -> String? {
        try await reader.raw("SELECT email FROM users WHERE id = \(bind: userID)").first().map { try $0.string("email") }
    }

    /// Invites `email` to the conversation, unless an account with that email is already a member, it is invited
    /// already, or that account blocked the inviter. Returns whether a new invitation was made. One statement, so a
    /// concurrent invitation of the same email makes one row.
    func invite(conversationID: String, inviterID: String, email: String, now: Date) async throws -> Bool {
        try await sql.raw(
            """
            INSERT INTO conversation_invitations (id, conversation_id, inviter_id, invitee_email, created_at)
            SELECT \(bind: UUID().uuidString.lowercased()), \(bind: conversationID), \(bind: inviterID), \(bind: email), \(bind: now.epochMillis)
            WHERE NOT EXISTS (
                SELECT 1 FROM users u JOIN conversation_blocks b ON b.blocker_id = u.id
                WHERE u.email = \(bind: email) AND b.blocked_id = \(bind: inviterID))
              AND NOT EXISTS (
                SELECT 1 FROM users u JOIN conversation_members m ON m.user_id = u.id
                WHERE u.email = \(bind: email) AND m.conversation_id = \(bind: conversationID))
            ON CONFLICT (conversation_id, invitee_email) DO NOTHING RETURNING id
            """
        ).first() != nil
    }

    /// How many invitations to the conversation are waiting for an answer.
    func pendingInvitationCount(conversationID: String) async throws -> Int {
        try await reader.raw(
            "SELECT COUNT(*) AS n FROM conversation_invitations WHERE conversation_id = \(bind: conversationID)"
        ).first()?.int("n") ?? 0
    }

    /// The invitations waiting for `email`, newest first (those of inviters the user blocked excluded).
    func invitations(email: String, userID: String) async throws -> [InvitationRecord] {
        try await reader.raw(
            """
            SELECT i.id, i.conversation_id, i.inviter_id, i.created_at, c.kind, c.title, u.email AS inviter_email,
              p.display_name AS inviter_display_name
            FROM conversation_invitations i JOIN conversations c ON c.id = i.conversation_id
            JOIN users u ON u.id = i.inviter_id LEFT JOIN messaging_profiles p ON p.user_id = i.inviter_id
            WHERE i.invitee_email = \(bind: email) AND NOT EXISTS (
              SELECT 1 FROM conversation_blocks b WHERE b.blocker_id = \(bind: userID) AND b.blocked_id = i.inviter_id)
            ORDER BY i.created_at DESC, i.id
            """
        ).all().map { row in
            let inviterEmail = try row.string("inviter_email")
            return InvitationRecord(
                id: try row.string("id"), conversationID: try row.string("conversation_id"), kind: try row.string("kind"),
                title: try row.optionalString("title"), inviterID: try row.string("inviter_id"), inviterEmail: inviterEmail,
                inviterName: try row.optionalString("inviter_display_name") ?? MessagingStore.defaultDisplayName(email: inviterEmail),
                createdAt: try row.date("created_at"))
        }
    }

    /// Accepts the invitation for `userID` (whose email it names): the invitation is deleted and the user becomes a
    /// member, in one transaction. Deleting is the compare-and-set: of two concurrent acceptances one deletes the row and
    /// joins, the other finds nothing — one membership either way (the members' primary key guarantees it as well).
    func acceptInvitation(id: String, userID: String, email: String, maxMembers: Int, now: Date) async throws -> InvitationAcceptance {
        try await writeTransaction { tx in
            guard
                let invitation = try await tx.sql.raw(
                    "SELECT conversation_id FROM conversation_invitations WHERE id = \(bind: id) AND invitee_email = \(bind: email)"
                ).first()
            else { return .notFound }
            let conversationID = try invitation.string("conversation_id")
            let members =
                try await tx.sql.raw(
                    "SELECT COUNT(*) AS n FROM conversation_members WHERE conversation_id = \(bind: conversationID)"
                ).first()?.int("n") ?? 0
            guard members < maxMembers else { return .full }
            guard
                try await tx.sql.raw(
                    "DELETE FROM conversation_invitations WHERE id = \(bind: id) AND invitee_email = \(bind: email) RETURNING id"
                ).first() != nil
            else { return .notFound }
            try await tx.messaging.insertMember(conversationID: conversationID, userID: userID, role: "member", now: now)
            return .joined(conversationID: conversationID)
        }
    }

    /// Declines (deletes) the invitation; `false` when no invitation of the user has this id.
    func declineInvitation(id: String, email: String) async throws -> Bool {
        try await sql.raw(
            "DELETE FROM conversation_invitations WHERE id = \(bind: id) AND invitee_email = \(bind: email) RETURNING id"
        ).first() != nil
    }

    /// Blocks the inviter of the invitation for `userID`: this and every other invitation of theirs to the user are
    /// dropped, and later ones are never made. `false` when no invitation of the user has this id.
    func blockInviter(invitationID: String, userID: String, email: String, now: Date) async throws -> Bool {
        try await writeTransaction { tx in
            guard
                let invitation = try await tx.sql.raw(
                    "SELECT inviter_id FROM conversation_invitations WHERE id = \(bind: invitationID) AND invitee_email = \(bind: email)"
                ).first()
            else { return false }
            let inviterID = try invitation.string("inviter_id")
            try await tx.sql.raw(
                """
                INSERT INTO conversation_blocks (blocker_id, blocked_id, created_at)
                VALUES (\(bind: userID), \(bind: inviterID), \(bind: now.epochMillis))
                ON CONFLICT (blocker_id, blocked_id) DO NOTHING
                """
            ).run()
            try await tx.sql.raw(
                "DELETE FROM conversation_invitations WHERE inviter_id = \(bind: inviterID) AND invitee_email = \(bind: email)"
            ).run()
            return true
        }
    }
}
