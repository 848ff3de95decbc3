import ChorusAPI
import Foundation
import Vapor

/// Invitations to conversations, answered by the person invited: `GET /invitations`, and `POST
/// /invitations/{id}/accept|decline|block`.
///
/// Adding someone to a conversation only invites their email; they join when they accept. An invitation to an email
/// with no account waits until someone registers with it. Every answer to an invitation that is not the caller's
/// (someone else's, declined, already accepted, dropped by a block) is the same 404.
struct InvitationsController: RouteCollection {
    let services: ChorusServices

    func boot(routes: any RoutesBuilder) throws {
        let routes = routes.grouped(UserAuthenticator(services: services))
        routes.on(API.Messaging.invitations, use: list)
        routes.on(API.Messaging.acceptInvitation, use: accept)
        routes.on(API.Messaging.declineInvitation, use: decline)
        routes.on(API.Messaging.blockInviter, use: block)
    }

    /// The caller's id and email, and the invitation id of the path.
    private func context(_ req: Request) async throws -> (userID: String, email: String, invitationID: String?) {
        let user = try req.user
        guard let email = try await req.store.invitations.email(userID: user.id) else { throw APIError.notAuthenticated }
        return (user.id, email, req.parameters.get("invitation_id"))
    }

    @Sendable
    func list(_ req: Request) async throws -> InvitationsResponse {
        let (userID, email, _) = try await context(req)
        let invitations = try await req.store.invitations.invitations(email: email, userID: userID)
        return InvitationsResponse(
            invitations: invitations.map {
                InvitationDTO(
                    id: $0.id, conversationID: $0.conversationID, kind: ConversationKind(rawValue: $0.kind), title: $0.title, inviterID: $0.inviterID,
                    inviterName: $0.inviterName, inviterEmail: $0.inviterEmail, createdAt: $0.createdAt)
            })
    }

    /// Joins the conversation: 200 with it as the new member sees it. The other members get `conversation.updated`.
    @Sendable
    func accept(_ req: Request) async throws -> ConversationDTO {
        let (userID, email, invitationID) = try await context(req)
        guard let invitationID else { throw APIError.notFound("Invitation not found") }
        switch try await req.store.invitations.acceptInvitation(
            id: invitationID, userID: userID, email: email, maxMembers: ConversationsController.maxGroupMembers, now: services.now())
        {
        case .notFound:
            throw APIError.notFound("Invitation not found")
        case .full:
            throw APIError.detail(.conflict, "This group already has \(ConversationsController.maxGroupMembers) members")
        case .joined(let conversationID):
            guard let conversation = try await req.store.messaging.conversations(of: userID, only: conversationID).first else {
                throw APIError.notFound("Invitation not found")
            }
            await services.messaging.fanout.publish(
                RealtimeEventDTO(type: "conversation.updated", conversationID: conversationID, userID: userID),
                to: conversation.members.map(\.userID))
            return ConversationsController.dto(conversation)
        }
    }

    /// Drops the invitation; the inviter is not told (their next invitation is a new one).
    @Sendable
    func decline(_ req: Request) async throws {
        let (_, email, invitationID) = try await context(req)
        guard let invitationID, try await req.store.invitations.declineInvitation(id: invitationID, email: email) else {
            throw APIError.notFound("Invitation not found")
        }
    }

    /// Drops the invitation and every other one from its inviter, and blocks them: their later invitations are dropped
    /// silently (they get the answer they would get otherwise).
    @Sendable
    func block(_ req: Request) async throws {
        let (userID, email, invitationID) = try await context(req)
        guard let invitationID,
            try await req.store.invitations.blockInviter(invitationID: invitationID, userID: userID, email: email, now: services.now())
        else { throw APIError.notFound("Invitation not found") }
    }
}
