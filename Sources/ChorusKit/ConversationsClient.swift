import ChorusAPI
import Foundation

/// Conversations of voice messages and their members: `/conversations`. Reached through
/// ``ChorusClient/conversations``.
///
/// Only members see a conversation: for everyone else it does not exist (``ChorusError/notFound``). Every method needs
/// a signed-in user (``ChorusError/signedOut`` otherwise).
public struct ConversationsClient: Sendable {
    let session: APISession

    /// The user's conversations, most recently active first, each with its unread and unheard counts.
    public func list() async throws -> [Conversation] {
        try await session.send(.get("/conversations"), as: ConversationsResponse.self).conversations.map(Conversation.init)
    }

    /// One conversation.
    ///
    /// - Throws: ``ChorusError/notFound`` when it does not exist or the user is not a member.
    public func conversation(id: String) async throws -> Conversation {
        Conversation(try await session.send(.get("/conversations/\(id)"), as: ConversationDTO.self))
    }

    /// The direct conversation with the person registered with `email`, started if there is none yet: there is one
    /// per pair, so calling this again (from either side) returns the same conversation.
    ///
    /// - Parameter email: the other person's email (matched case-insensitively).
    /// - Throws: ``ChorusError/validation(_:)`` (field `member_emails`) when no account uses the email, or it is the
    ///   user's own.
    public func createDirect(with email: String) async throws -> Conversation {
        var request = try APIRequest.post("/conversations", json: CreateConversationRequest(kind: "direct", memberEmails: [email]))
        request.idempotent = true  // the server returns the pair's existing conversation
        return Conversation(try await session.send(request, as: ConversationDTO.self))
    }

    /// Starts a group with the user as its owner.
    ///
    /// A network failure is not retried: a repeated request would start a second group. Call ``list()`` to see
    /// whether the first one arrived.
    ///
    /// - Parameters:
    ///   - title: the group's name, 1–100 characters.
    ///   - memberEmails: the other members (1–49), by the email they registered with.
    /// - Throws: ``ChorusError/validation(_:)`` for a missing title, too many members, or an email no account uses
    ///   (the message names it).
    public func createGroup(title: String, memberEmails: [String]) async throws -> Conversation {
        let body = CreateConversationRequest(kind: "group", title: title, memberEmails: memberEmails)
        return Conversation(try await session.send(try APIRequest.post("/conversations", json: body), as: ConversationDTO.self))
    }

    /// Adds people to a group; those already in it are left as they are.
    ///
    /// - Parameters:
    ///   - emails: the people to add, by the email they registered with.
    ///   - conversationID: the group.
    /// - Returns: the group with its new members.
    /// - Throws: ``ChorusError/validation(_:)`` for an unknown email or more than 50 members in all;
    ///   ``ChorusError/api(status:detail:)`` (400) for a direct conversation; ``ChorusError/notFound`` when the user is
    ///   not a member.
    public func addMembers(emails: [String], to conversationID: String) async throws -> Conversation {
        var request = try APIRequest.post("/conversations/\(conversationID)/members", json: AddMembersRequest(memberEmails: emails))
        request.idempotent = true  // adding someone already in the group changes nothing
        return Conversation(try await session.send(request, as: ConversationDTO.self))
    }

    /// Removes a member from a group (the owner only), or the user themselves from any conversation.
    ///
    /// - Parameters:
    ///   - userID: the member's ``ConversationMember/userID``.
    ///   - conversationID: the conversation.
    /// - Throws: ``ChorusError/api(status:detail:)`` (403) when a member other than the owner removes someone else;
    ///   ``ChorusError/notFound`` when the user is not a member, or `userID` is not (or no longer) one.
    public func removeMember(userID: String, from conversationID: String) async throws {
        try await session.send(APIRequest(method: "DELETE", path: "/conversations/\(conversationID)/members/\(userID)"))
    }

    /// The user leaves a conversation: it disappears from their list and they receive no more of its messages.
    ///
    /// - Throws: ``ChorusError/signedOut`` without a session; ``ChorusError/notFound`` when the user is not a member.
    public func leave(_ conversationID: String) async throws {
        guard let accountID = await AuthClient(session: session).accountID else { throw ChorusError.signedOut }
        try await removeMember(userID: accountID.uuidString.lowercased(), from: conversationID)
    }

    /// Marks messages read: all of them, or those up to and including one message.
    ///
    /// - Parameters:
    ///   - conversationID: the conversation.
    ///   - messageID: the last message read; `nil` for everything.
    /// - Returns: the conversation with its updated ``Conversation/unreadCount``.
    /// - Throws: ``ChorusError/validation(_:)`` (field `up_to_message_id`) for a message of another conversation.
    @discardableResult
    public func markRead(_ conversationID: String, upTo messageID: String? = nil) async throws -> Conversation {
        var request = try APIRequest.post("/conversations/\(conversationID)/read", json: MarkReadRequest(upToMessageID: messageID))
        request.idempotent = true  // marking read twice changes nothing
        return Conversation(try await session.send(request, as: ConversationDTO.self))
    }
}
