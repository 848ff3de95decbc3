import ChorusAPI
import Foundation
import Testing

@testable import ChorusServer

/// A sender deletes their messages while leaving the conversation at the same time: each delete either happened (204)
/// or finds the message out of their reach (404), never a 500 (the contract fuzzing once got one: the delete's final
/// read went through the membership the concurrent leave had just removed).
@Suite("Message delete racing a leave")
struct MessageDeleteRaceTests {
    @Test("deletes racing the sender's leave answer 204 or 404, and a 204 means deleted", arguments: TestDatabase.all)
    func deleteWhileLeaving(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await MessagingTests.person(server, name: "alice")
            for round in 0..<4 {
                let carol = try await MessagingTests.person(server, name: "carol\(round)")
                let group = try await server.startConversation(
                    alice.token, CreateConversationRequest(kind: "group", title: "Race \(round)", memberEmails: [carol.email]),
                    acceptedBy: [carol.token])
                var sent: [MessageDTO] = []
                for index in 0..<8 { sent.append(try await MessagingTests.send(server, carol, to: group.id, text: "message \(index)")) }

                let statuses = try await withThrowingTaskGroup(of: (String?, Int).self) { tasks in
                    for message in sent {
                        tasks.addTask { (message.id, try await server.request(.DELETE, "/messages/\(message.id)", token: carol.token).status) }
                    }
                    tasks.addTask { (nil, try await server.request(.DELETE, "/conversations/\(group.id)/members/\(carol.id)", token: carol.token).status) }
                    var answers: [(String?, Int)] = []
                    for try await answer in tasks { answers.append(answer) }
                    return answers
                }
                #expect(statuses.first { $0.0 == nil }?.1 == 204, "the leave: \(statuses)")
                let deletes = statuses.filter { $0.0 != nil }
                #expect(deletes.allSatisfy { [204, 404].contains($0.1) }, "\(deletes.map(\.1))")
                // What alice (still a member) reads agrees with each answer.
                for (id, status) in deletes {
                    let messageID = try #require(id)
                    let stored = try #require(try await MessagingTests.stored(server, alice, conversation: group.id, message: messageID))
                    #expect((stored.deletedAt != nil) == (status == 204), "message \(stored.id): answered \(status)")
                }
            }
        }
    }
}
