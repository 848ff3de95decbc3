import ChorusAPI
import Foundation
import Testing

/// Conversations whose invitees accept right away, for tests about what members do once they are in.
extension TestServer {
    /// Starts a conversation as the holder of `token` and has each invitee (by token) accept its invitation.
    func startConversation(_ token: String, _ body: CreateConversationRequest, acceptedBy invitees: [String]) async throws -> ConversationDTO {
        let reply = try await request(.POST, "/conversations", token: token, json: body)
        #expect([200, 201].contains(reply.status), "create conversation: \(reply.text)")
        let conversation = try reply.decode(ConversationDTO.self)
        var joined = conversation
        for invitee in invitees { joined = try await acceptInvitation(invitee, to: conversation.id) }
        return invitees.isEmpty ? conversation : joined
    }

    /// Accepts the invitation of the holder of `token` to `conversationID` and returns the conversation as they see it.
    func acceptInvitation(_ token: String, to conversationID: String) async throws -> ConversationDTO {
        let invitations = try await request(.GET, "/invitations", token: token).decode(InvitationsResponse.self).invitations
        let invitation = try #require(invitations.first { $0.conversationID == conversationID }, "no invitation to \(conversationID)")
        let reply = try await request(.POST, "/invitations/\(invitation.id)/accept", token: token)
        #expect(reply.status == 200, "accept: \(reply.text)")
        return try reply.decode(ConversationDTO.self)
    }
}
