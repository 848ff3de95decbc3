import ChorusAPI
import ChorusCore
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Testing

@testable import ChorusServer

/// Consent in conversations: adding someone invites them; they join only by accepting, can decline or block the
/// inviter, leaving is final, and nothing tells the inviter whether an email has an account.
@Suite("Invitations")
struct InvitationTests {
    typealias Person = MessagingTests.Person

    static func person(_ server: TestServer, _ name: String) async throws -> Person {
        try await MessagingTests.person(server, name: name)
    }

    static func invitations(_ server: TestServer, _ person: Person) async throws -> [InvitationDTO] {
        let reply = try await server.request(.GET, "/invitations", token: person.token)
        #expect(reply.status == 200, "\(reply.text)")
        return try reply.decode(InvitationsResponse.self).invitations
    }

    static func create(_ server: TestServer, _ person: Person, _ body: CreateConversationRequest) async throws -> TestServer.Reply {
        try await server.request(.POST, "/conversations", token: person.token, json: body)
    }

    /// The reply's JSON with the values that differ between any two conversations (ids, times) blanked.
    static func shape(_ reply: TestServer.Reply) throws -> [String: String] {
        let object = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
        var shape: [String: String] = [:]
        for (key, value) in object where !["id", "created_at"].contains(key) {
            if let members = value as? [[String: Any]] {
                shape[key] = "\(members.count) members: \(members.map { $0.keys.sorted() })"
            } else {
                shape[key] = "\(value)"
            }
        }
        return shape
    }

    @Test("adding someone invites them: they join by accepting, decline, or block the inviter; unknown emails look the same", arguments: TestDatabase.all)
    func invitations(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await Self.person(server, "alice")
            let bob = try await Self.person(server, "bob")
            let carol = try await Self.person(server, "carol")
            let stranger = "later-\(UUID().uuidString.prefix(6).lowercased())@family.test"

            // A direct conversation with an account and one with an email nobody uses: the same answer.
            let known = try await Self.create(server, alice, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]))
            let unknown = try await Self.create(server, alice, CreateConversationRequest(kind: "direct", memberEmails: [stranger]))
            #expect(known.status == 201 && unknown.status == 201, "\(known.text) \(unknown.text)")
            #expect(try Self.shape(known) == Self.shape(unknown))
            let direct = try known.decode(ConversationDTO.self)
            #expect(direct.members.map(\.userID) == [alice.id])
            // Again: the same conversation, the same answer for both.
            let knownAgain = try await Self.create(server, alice, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]))
            let unknownAgain = try await Self.create(server, alice, CreateConversationRequest(kind: "direct", memberEmails: [stranger]))
            #expect(knownAgain.status == 200 && unknownAgain.status == 200)
            #expect(try knownAgain.decode(ConversationDTO.self).id == direct.id)
            #expect(try Self.shape(knownAgain) == Self.shape(unknownAgain))
            // A group with both kinds of email, and adding them to a group: the same answers.
            let group = try await Self.create(
                server, alice, CreateConversationRequest(kind: "group", title: "Soccer parents", memberEmails: [bob.email, carol.email, stranger]))
            #expect(group.status == 201, "\(group.text)")
            let groupID = try group.decode(ConversationDTO.self).id
            #expect(try group.decode(ConversationDTO.self).members.map(\.userID) == [alice.id])
            let other = try await Self.create(server, alice, CreateConversationRequest(kind: "group", title: "Other", memberEmails: [bob.email]))
            let otherID = try other.decode(ConversationDTO.self).id
            let addKnown = try await server.request(
                .POST, "/conversations/\(otherID)/members", token: alice.token, json: AddMembersRequest(memberEmails: [carol.email]))
            let addUnknown = try await server.request(
                .POST, "/conversations/\(otherID)/members", token: alice.token, json: AddMembersRequest(memberEmails: [stranger]))
            #expect(addKnown.status == 200 && addUnknown.status == 200)
            #expect(try addKnown.decode(ConversationDTO.self) == addUnknown.decode(ConversationDTO.self))
            #expect(try Self.shape(addKnown) == Self.shape(addUnknown))
            let invalid = try await Self.create(server, alice, CreateConversationRequest(kind: "direct", memberEmails: ["not an email"]))
            #expect(invalid.status == 422)

            // Bob sees his invitations and nothing of the conversations until he accepts.
            let bobsInvitations = try await Self.invitations(server, bob)
            #expect(Set(bobsInvitations.map(\.conversationID)) == [direct.id, groupID, otherID])
            let groupInvitation = try #require(bobsInvitations.first { $0.conversationID == groupID })
            #expect(groupInvitation.kind == "group" && groupInvitation.title == "Soccer parents")
            #expect(groupInvitation.inviterID == alice.id && groupInvitation.inviterName == "Alice" && groupInvitation.inviterEmail == alice.email)
            #expect(try await server.request(.GET, "/conversations/\(groupID)", token: bob.token).status == 404)
            #expect(try await server.request(.GET, "/conversations/\(groupID)/messages", token: bob.token).status == 404)
            #expect(try await server.request(.GET, "/conversations", token: bob.token).decode(ConversationsResponse.self).conversations.isEmpty)
            let early = try await MessagingTests.send(server, alice, to: groupID, text: "Practice moved to 5pm")
            #expect(try await server.request(.GET, "/messages/search?q=practice", token: bob.token).decode(MessageSearchResponse.self).messages.isEmpty)
            // Nobody answers for someone else.
            #expect(try await server.request(.POST, "/invitations/\(groupInvitation.id)/accept", token: carol.token).status == 404)
            #expect(try await server.request(.POST, "/invitations/\(groupInvitation.id)/decline", token: alice.token).status == 404)
            #expect(try await server.request(.POST, "/invitations/\(groupInvitation.id)/block", token: carol.token).status == 404)

            // Bob accepts: he is a member (and reads the group); a second accept finds nothing.
            let accepted = try await server.request(.POST, "/invitations/\(groupInvitation.id)/accept", token: bob.token)
            #expect(accepted.status == 200, "\(accepted.text)")
            #expect(Set(try accepted.decode(ConversationDTO.self).members.map(\.userID)) == [alice.id, bob.id])
            #expect(try await MessagingTests.stored(server, bob, conversation: groupID, message: early.id) != nil)
            let twice = try await server.request(.POST, "/invitations/\(groupInvitation.id)/accept", token: bob.token)
            #expect(twice.status == 404 && twice.text.contains("\"detail\""))
            // He declines the other group: still not a member, and the invitation is gone.
            let otherInvitation = try #require(bobsInvitations.first { $0.conversationID == otherID })
            #expect(try await server.request(.POST, "/invitations/\(otherInvitation.id)/decline", token: bob.token).status == 204)
            #expect(try await server.request(.GET, "/conversations/\(otherID)", token: bob.token).status == 404)
            #expect(try await Self.invitations(server, bob).map(\.conversationID) == [direct.id])

            // Leaving is final: re-creating the direct conversation invites Bob again, it never puts him back.
            _ = try await server.acceptInvitation(bob.token, to: direct.id)
            #expect(try await server.request(.DELETE, "/conversations/\(direct.id)/members/\(bob.id)", token: bob.token).status == 204)
            let recreated = try await Self.create(server, alice, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]))
            #expect(recreated.status == 200)
            #expect(try recreated.decode(ConversationDTO.self).members.map(\.userID) == [alice.id])
            #expect(try await server.request(.GET, "/conversations/\(direct.id)", token: bob.token).status == 404)
            #expect(try await Self.invitations(server, bob).map(\.conversationID) == [direct.id])
            // Bob starting it himself is his own consent: he is back, and his invitation is answered.
            let bobStarts = try await Self.create(server, bob, CreateConversationRequest(kind: "direct", memberEmails: [alice.email]))
            #expect(bobStarts.status == 200)
            #expect(try bobStarts.decode(ConversationDTO.self).id == direct.id)
            #expect(try await Self.invitations(server, bob).isEmpty)
            // A removed member is not re-added either.
            #expect(try await server.request(.DELETE, "/conversations/\(groupID)/members/\(bob.id)", token: alice.token).status == 204)
            _ = try await server.request(.POST, "/conversations/\(groupID)/members", token: alice.token, json: AddMembersRequest(memberEmails: [bob.email]))
            #expect(try await server.request(.GET, "/conversations/\(groupID)", token: bob.token).status == 404)
            #expect(try await Self.invitations(server, bob).map(\.conversationID) == [groupID])

            // Carol blocks Alice: all of Alice's invitations to her go, and later ones are dropped without a trace.
            let carolsInvitations = try await Self.invitations(server, carol)
            #expect(Set(carolsInvitations.map(\.conversationID)) == [groupID, otherID])
            #expect(try await server.request(.POST, "/invitations/\(carolsInvitations[0].id)/block", token: carol.token).status == 204)
            #expect(try await Self.invitations(server, carol).isEmpty)
            let afterBlock = try await Self.create(server, alice, CreateConversationRequest(kind: "direct", memberEmails: [carol.email]))
            #expect(afterBlock.status == 201)
            #expect(try Self.shape(afterBlock) == Self.shape(known))
            let addBlocked = try await server.request(
                .POST, "/conversations/\(groupID)/members", token: alice.token, json: AddMembersRequest(memberEmails: [carol.email]))
            #expect(addBlocked.status == 200)
            #expect(try await Self.invitations(server, carol).isEmpty)
            // Bob's invitations to Carol still arrive.
            _ = try await Self.create(server, bob, CreateConversationRequest(kind: "direct", memberEmails: [carol.email]))
            #expect(try await Self.invitations(server, carol).map(\.inviterID) == [bob.id])

            // The stranger signs up: their invitations were waiting for the email.
            let token = try await server.register(email: stranger.uppercased()).accessToken
            let waiting = try await server.request(.GET, "/invitations", token: token).decode(InvitationsResponse.self).invitations
            #expect(Set(waiting.map(\.conversationID)) == [groupID, otherID, try unknown.decode(ConversationDTO.self).id])
            let joined = try await server.acceptInvitation(token, to: groupID)
            #expect(joined.members.count == 2)
        }
    }

    @Test("accepting one invitation many times at once makes one membership", arguments: TestDatabase.all)
    func concurrentAccept(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await Self.person(server, "alice")
            let bob = try await Self.person(server, "bob")
            let group = try await Self.create(server, alice, CreateConversationRequest(kind: "group", title: "Family", memberEmails: [bob.email]))
            let groupID = try group.decode(ConversationDTO.self).id
            let invitation = try #require(try await Self.invitations(server, bob).first)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { tasks in
                for _ in 0..<20 {
                    tasks.addTask { try await server.request(.POST, "/invitations/\(invitation.id)/accept", token: bob.token).status }
                }
                return try await tasks.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0 == 404 }.count == 19, "\(statuses)")
            let members = try await server.request(.GET, "/conversations/\(groupID)", token: alice.token).decode(ConversationDTO.self).members
            #expect(members.filter { $0.userID == bob.id }.count == 1)
            let store = ChorusStore(sql: server.app.db as! any SQLDatabase, writeGate: WriteGate())
            let rows = try await store.messaging.memberIDs(conversationID: groupID)
            #expect(rows.sorted() == [alice.id, bob.id].sorted())
        }
    }

    @Test("a direct conversation keyed by its two account ids (before invitations) is found by their emails", arguments: TestDatabase.all)
    func legacyDirectKeys(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await Self.person(server, "alice")
            let bob = try await Self.person(server, "bob")
            let sql = server.app.db as! any SQLDatabase
            let id = UUID().uuidString.lowercased()
            let now = Date().epochMillis
            try await sql.raw(
                """
                INSERT INTO conversations (id, kind, direct_key, created_by, created_at)
                VALUES (\(bind: id), 'direct', \(bind: [alice.id, bob.id].sorted().joined(separator: "|")), \(bind: alice.id), \(bind: now))
                """
            ).run()
            for (member, role) in [(alice.id, "owner"), (bob.id, "member")] {
                try await sql.raw(
                    """
                    INSERT INTO conversation_members (conversation_id, user_id, role, joined_at, last_read_seq)
                    VALUES (\(bind: id), \(bind: member), \(bind: role), \(bind: now), 0)
                    """
                ).run()
            }
            try await CreateConversationInvitations.rewriteDirectKeys(on: sql)
            let again = try await Self.create(server, bob, CreateConversationRequest(kind: "direct", memberEmails: [alice.email]))
            #expect(again.status == 200, "\(again.text)")
            #expect(try again.decode(ConversationDTO.self).id == id)
            #expect(try Set(again.decode(ConversationDTO.self).members.map(\.userID)) == [alice.id, bob.id])
        }
    }

    @Test("presence and typing only between members who accepted; typing is limited per user and conversation", arguments: TestDatabase.all)
    func presenceAndTyping(_ database: TestDatabase) async throws {
        let clock = FrozenClock()
        try await TestServer.run(on: database, options: .testing(clock: clock.closure)) { server in
            let alice = try await Self.person(server, "alice")
            let bob = try await Self.person(server, "bob")
            let bobLive = try await RealtimeClient.connect(baseURL: server.baseURL, token: bob.token)
            let direct = try await Self.create(server, alice, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]))
            let conversationID = try direct.decode(ConversationDTO.self).id
            // Bob only hears that an invitation waits.
            _ = try await bobLive.next { $0.type == "invitation.created" }

            // Invited, not accepted: Alice coming online and typing reach nobody.
            let aliceFirst = try await RealtimeClient.connect(baseURL: server.baseURL, token: alice.token)
            aliceFirst.send(#"{"type":"typing","conversation_id":"\#(conversationID)"}"#)
            let before = try await MessagingTests.send(server, alice, to: conversationID, text: "Are you there?")
            // Bob accepts; Alice's next comings and goings reach him.
            _ = try await server.acceptInvitation(bob.token, to: conversationID)
            await aliceFirst.close()
            let offline = try await bobLive.next { $0.type == "presence" }
            #expect(offline.userID == alice.id && offline.online == false, "the first presence Bob hears is after he accepted")
            let heardEarly = bobLive.events.filter { $0.type == "typing" || $0.message?.id == before.id }
            #expect(heardEarly.isEmpty)

            // 50 typing events at one instant (under the per-socket message limit): one is relayed. Two seconds later, one
            // more.
            let aliceLive = try await RealtimeClient.connect(baseURL: server.baseURL, token: alice.token)
            _ = try await bobLive.next { $0.type == "presence" && $0.online == true }
            clock.advance(seconds: TypingThrottle.standardInterval)
            for _ in 0..<50 { aliceLive.send(#"{"type":"typing","conversation_id":"\#(conversationID)"}"#) }
            _ = try await bobLive.next { $0.type == "typing" }
            clock.advance(seconds: TypingThrottle.standardInterval)
            aliceLive.send(#"{"type":"typing","conversation_id":"\#(conversationID)"}"#)
            try await Self.waitForTyping(bobLive, count: 2)
            let marker = try await MessagingTests.send(server, alice, to: conversationID, text: "Typed it")
            _ = try await bobLive.next { $0.message?.id == marker.id }
            let typing = bobLive.events.filter { $0.type == "typing" }
            #expect(typing.count == 2, "relayed \(typing.count) of 51")
            let senders = Set(typing.compactMap { $0.userID.map { "\($0) \(conversationID)" } })
            let expected: Set<String> = ["\(alice.id) \(conversationID)"]
            #expect(senders == expected)
            await aliceLive.close()
            await bobLive.close()
        }
    }
}

extension InvitationTests {
    /// Waits until `client` received `count` typing events.
    static func waitForTyping(_ client: RealtimeClient, count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(15)
        while client.events.filter({ $0.type == "typing" }).count < count {
            guard ContinuousClock.now < deadline else { throw TestSetupError(message: "fewer than \(count) typing events") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// A clock that stands still until the test moves it.
final class FrozenClock: Sendable {
    private let current = NIOLockedValueBox(Date())

    var now: Date { current.withLockedValue { $0 } }

    func advance(seconds: TimeInterval) {
        current.withLockedValue { $0 += seconds }
    }

    var closure: @Sendable () -> Date { { [self] in now } }
}
