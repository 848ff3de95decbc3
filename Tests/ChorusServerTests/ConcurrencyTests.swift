import ChorusAPI
import Foundation
import Testing

@testable import ChorusServer

/// Money paths under concurrent duplicates: each effect happens exactly once.
@Suite("Concurrent duplicates")
struct ConcurrencyTests {
    @Test("one App Store transaction posted 10 times at once by two users is applied once", arguments: TestDatabase.all)
    func purchaseReplay(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await server.register().accessToken
            let mallory = try await server.register().accessToken
            let transaction = try await server.sandboxTransaction(productID: "speech_assistant_addon_calls", consumable: true)
            let body = PurchaseRequest(productID: "speech_assistant_addon_calls", signedTransaction: transaction.signedTransaction)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<10 {
                    let token = index.isMultiple(of: 2) ? alice : mallory
                    group.addTask { try await server.request(.POST, "/mobile/purchase-subscription", token: token, json: body).status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 1)
            #expect(statuses.filter { $0 == 400 }.count == 9)
            let packs = try await server.usage(alice).addonCallsRemaining + server.usage(mallory).addonCallsRemaining
            #expect(packs == 5)
        }
    }

    @Test("one unanswered-call callback delivered 10 times at once refunds once", arguments: TestDatabase.all)
    func callbackReplay(_ database: TestDatabase) async throws {
        // Real-time calls: the pending call's own end (its 60 s limit) stays far beyond the test.
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let answered = try await server.makeCall(token, to: "+14155551201").decode(MakeCallResponse.self)
            #expect(try await server.waitForEnd(token, sid: answered.callSid).endedReason == "callee_hangup")
            // A call still in progress: its callee talks for 10 minutes (cut at the 60 s limit).
            try await server.setCallee("+14155551202", behavior: "answer", talkSeconds: 600)
            let pending = try await server.makeCall(token, to: "+14155551202").decode(MakeCallResponse.self)
            #expect(try await server.usage(token).trialCallsUsed == 2)

            let callID = try await server.request(.GET, "/mobile/calls/\(pending.callSid)", token: token).decode(CallHistoryItem.self).id
            let url = server.configuration.publicURL.absoluteString + "/call-end-webhook?call_id=\(callID)"
            let params = [("CallSid", pending.callSid), ("CallStatus", "busy"), ("CallDuration", "0")]
            let signature = server.app.chorus.twilioSignatures.signature(url: url, parameters: params)
            let form = params.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        try await server.request(
                            .POST, "/call-end-webhook?call_id=\(callID)", form: form, headers: [("X-Twilio-Signature", signature)]
                        ).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 204 })
            let usage = try await server.usage(token)
            #expect(usage.trialCallsUsed == 1)  // the busy call refunded once; the completed one still counts
            let call = try await server.request(.GET, "/mobile/calls/\(pending.callSid)", token: token).decode(CallHistoryItem.self)
            #expect(call.endedReason == "busy")
        }
    }
}
