import ChorusKit
import Foundation
import Testing

/// Invitations through the SDK against a real server: adding someone invites them; they list, accept, decline, or
/// block the inviter.
@Suite("ChorusKit invitations (live server)")
struct MessagingInvitationTests {
    @Test("invitations: list, accept, decline, block the inviter; an unregistered email gets the same answer")
    func invitations() async throws {
        try await LiveServer.run { server in
            let alice = try await MessagingPerson.register(on: server, name: "Alice")
            let bob = try await MessagingPerson.register(on: server, name: "Bob", transport: WebSocketKitTransport())
            let carol = try await MessagingPerson.register(on: server, name: "Carol")
            let bobConnection = try await bob.chorus.voice.connect()
            defer { bobConnection.close() }
            let bobInbox = EventInbox(bobConnection.events)

            let direct = try await alice.chorus.conversations.createDirect(with: bob.email)
            #expect(direct.members.map(\.userID) == [alice.userID])
            // Bob hears of the invitation, live.
            _ = try await bobInbox.next { $0 == .invitationReceived(conversationID: direct.id) }
            let unregistered = try await alice.chorus.conversations.createDirect(with: LiveServer.newEmail("nobody"))
            #expect(unregistered.members.map(\.userID) == [alice.userID] && unregistered.kind == direct.kind)
            let group = try await alice.chorus.conversations.createGroup(title: "Family", memberEmails: [bob.email, carol.email])
            #expect(group.members.count == 1)

            // Bob sees both invitations, newest first, and nothing of the conversations yet.
            let invitations = try await bob.chorus.conversations.invitations()
            #expect(Set(invitations.map(\.conversationID)) == [group.id, direct.id])
            let toGroup = try #require(invitations.first { $0.conversationID == group.id })
            let toDirect = try #require(invitations.first { $0.conversationID == direct.id })
            #expect(toGroup.kind == .group && toGroup.title == "Family" && toDirect.kind == .direct && toDirect.title == nil)
            #expect(invitations.allSatisfy { $0.inviterID == alice.userID && $0.inviterName == "Alice" && $0.inviterEmail == alice.email })
            #expect(try await bob.chorus.conversations.list().isEmpty)
            #expect(await chorusStatus { try await bob.chorus.conversations.conversation(id: direct.id) } == 404)

            // He accepts the direct one (once), declines the group.
            let joined = try await bob.chorus.conversations.accept(toDirect.id)
            #expect(joined.id == direct.id && Set(joined.members.map(\.userID)) == [alice.userID, bob.userID])
            #expect(await chorusStatus { try await bob.chorus.conversations.accept(toDirect.id) } == 404)
            try await bob.chorus.conversations.decline(toGroup.id)
            #expect(try await bob.chorus.conversations.invitations().isEmpty)
            #expect(try await bob.chorus.conversations.list().map(\.id) == [direct.id])
            #expect(Set(try await alice.chorus.conversations.conversation(id: group.id).members.map(\.userID)) == [alice.userID])

            // Carol blocks Alice: the invitation goes, and Alice's next one never arrives.
            let carols = try await carol.chorus.conversations.invitations()
            #expect(carols.map(\.conversationID) == [group.id])
            try await carol.chorus.conversations.blockInviter(of: carols[0].id)
            _ = try await alice.chorus.conversations.createDirect(with: carol.email)
            #expect(try await carol.chorus.conversations.invitations().isEmpty)
            #expect(await chorusStatus { try await carol.chorus.conversations.decline(carols[0].id) } == 404)
        }
    }
}

extension MessagingPerson {
    /// Starts the direct conversation with `other`, who accepts its invitation; the conversation as this person sees it.
    func directConversation(with other: MessagingPerson) async throws -> Conversation {
        let direct = try await chorus.conversations.createDirect(with: other.email)
        let invitation = try #require(try await other.chorus.conversations.invitations().first { $0.conversationID == direct.id })
        _ = try await other.chorus.conversations.accept(invitation.id)
        return try await chorus.conversations.conversation(id: direct.id)
    }

    /// Has this person accept their invitation to `conversationID`.
    func acceptInvitation(to conversationID: String) async throws {
        let invitation = try #require(try await chorus.conversations.invitations().first { $0.conversationID == conversationID })
        _ = try await chorus.conversations.accept(invitation.id)
    }
}
