import AsyncHTTPClient
import ChorusAPI
import ChorusTestSupport
import Foundation
import NIOCore
import SQLKit
import Testing

@testable import ChorusServer

/// Issue 16 §6 over loopback HTTP: refunds racing status callbacks, Idempotency-Keys left pending by a request that
/// died, and calls the provider does not know.
@Suite("Money races and leftovers")
struct MoneyRaceTests {
    /// Posts a correctly signed Twilio status callback for the call.
    static func callback(_ server: TestServer, callID: Int, sid: String, status: String, duration: String = "0") async throws -> Int {
        let url = server.configuration.publicURL.absoluteString + "/call-end-webhook?call_id=\(callID)"
        let params = [("CallSid", sid), ("CallStatus", status), ("CallDuration", duration)]
        let reply = try await server.request(
            .POST, "/call-end-webhook?call_id=\(callID)", form: params.map { "\($0.0)=\($0.1)" }.joined(separator: "&"),
            headers: [("X-Twilio-Signature", server.app.chorus.twilioSignatures.signature(url: url, parameters: params))])
        return reply.status
    }

    static func sql(_ server: TestServer) -> any SQLDatabase { server.app.db as! any SQLDatabase }

    static func chargeState(_ server: TestServer, callID: Int) async throws -> String? {
        try await sql(server).raw("SELECT charge_state FROM calls WHERE id = \(bind: Int64(callID))").first()?
            .decode(column: "charge_state", as: String.self)
    }

    @Test(
        "console refunds racing unanswered and answered status callbacks: exactly one refund, never undone",
        arguments: TestDatabase.all)
    func refundsRacingCallbacks(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let (browser, cookies, csrf) = try await ConsoleTests.operatorSession(server)
            defer { Task { await browser.shutdown() } }
            let headers = [("X-CSRF-Token", csrf)]
            let user = try await server.register()
            // Three trial calls, none settled by the sandbox (no callbacks): all three charged.
            var calls: [(id: Int, sid: String)] = []
            for number in ["+14155550901", "+14155550902", "+14155550903"] {
                try await server.setCallee(number, behavior: "busy", callbacks: false)
                let placed = try await server.makeCall(user.accessToken, to: number).decode(MakeCallResponse.self)
                let item = try await server.request(.GET, "/mobile/calls/\(placed.callSid)", token: user.accessToken).decode(CallHistoryItem.self)
                calls.append((item.id, placed.callSid))
            }
            #expect(try await server.usage(user.accessToken).trialCallsUsed == 3)

            // Call 1: 8 operator refunds and 8 "busy" callbacks at once. Exactly one of them gives the call back.
            let first = calls[0]
            let outcomes = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                for index in 0..<16 {
                    group.addTask {
                        if index % 2 == 0 {
                            return ("refund", try await browser.send(.POST, "/console/api/calls/\(first.id)/refund", cookies: cookies, headers: headers).status)
                        }
                        return ("callback", try await Self.callback(server, callID: first.id, sid: first.sid, status: "busy"))
                    }
                }
                return try await group.reduce(into: [(String, Int)]()) { $0.append($1) }
            }
            let refunds = outcomes.filter { $0.0 == "refund" }.map(\.1)
            #expect(outcomes.filter { $0.0 == "callback" }.allSatisfy { $0.1 == 204 }, "\(outcomes)")
            #expect(refunds.allSatisfy { $0 == 200 || $0 == 409 } && refunds.filter { $0 == 200 }.count <= 1, "\(refunds)")
            // The other two calls are still charged, so a second refund would show (the bucket cannot hide it at zero).
            #expect(try await server.usage(user.accessToken).trialCallsUsed == 2)
            #expect(try await Self.chargeState(server, callID: first.id) == "refunded")

            // Call 2: operator refunds racing an answered call's "in-progress" and "completed": the refund stands.
            let second = calls[1]
            let raced = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        switch index % 3 {
                        case 0: try await browser.send(.POST, "/console/api/calls/\(second.id)/refund", cookies: cookies, headers: headers).status
                        case 1: try await Self.callback(server, callID: second.id, sid: second.sid, status: "in-progress")
                        default: try await Self.callback(server, callID: second.id, sid: second.sid, status: "completed", duration: "42")
                        }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(raced.allSatisfy { [200, 204, 409].contains($0) }, "\(raced)")
            #expect(try await Self.chargeState(server, callID: second.id) == "refunded")
            #expect(try await server.usage(user.accessToken).trialCallsUsed == 1)
            // Refunded stays refunded: another operator refund is refused and changes nothing.
            #expect(try await browser.send(.POST, "/console/api/calls/\(second.id)/refund", cookies: cookies, headers: headers).status == 409)
            #expect(try await server.usage(user.accessToken).trialCallsUsed == 1)
        }
    }

    @Test("an Idempotency-Key left pending by a request that died lapses: the retry proceeds and charges once", arguments: TestDatabase.all)
    func pendingKeyLapses(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let user = try await server.register()
            let userID = try #require(try CompactJWS.payload(user.accessToken)["sub"] as? String)
            let sql = Self.sql(server)
            try await server.setCallee("+14155550911", behavior: "busy", callbacks: false)
            let request = MakeCallRequest(phoneNumber: "+14155550911", scenario: "default")
            let fingerprint = try await Self.fingerprint(server, request)

            // What a request killed mid-way leaves behind, 6 minutes ago: its key pending, its call charged, no sid.
            let died = Date().addingTimeInterval(-360).epochMillis
            let bucket = try #require(
                try await sql.raw("SELECT key FROM quota_buckets WHERE user_id = \(bind: userID)").first()?.decode(column: "key", as: String.self))
            try await sql.raw(
                """
                INSERT INTO idempotency_keys (user_id, key, fingerprint, state, created_at)
                VALUES (\(bind: userID), 'killed-request', \(bind: fingerprint), 'pending', \(bind: died))
                """
            ).run()
            try await sql.raw("UPDATE quota_buckets SET used = used + 1 WHERE user_id = \(bind: userID) AND key = \(bind: bucket)").run()
            try await sql.raw(
                """
                INSERT INTO calls (user_id, phone_number, scenario, status, status_rank, bucket_key, charge_state, duration_limit, created_at, updated_at)
                VALUES (\(bind: userID), '+14155550911', 'default', 'initiated', 0, \(bind: bucket), 'charged', 60, \(bind: died), \(bind: died))
                """
            ).run()
            #expect(try await server.usage(user.accessToken).trialCallsUsed == 1)

            // A key another request holds right now still answers 409.
            try await sql.raw(
                """
                INSERT INTO idempotency_keys (user_id, key, fingerprint, state, created_at)
                VALUES (\(bind: userID), 'running-request', \(bind: fingerprint), 'pending', \(bind: Date().epochMillis))
                """
            ).run()
            let running = try await server.request(
                .POST, "/mobile/make-call", token: user.accessToken, json: request, headers: [("Idempotency-Key", "running-request")])
            #expect(running.status == 409, "\(running.text)")

            // Concurrent retries of the lapsed key: one places the call, the others wait for it (409) or replay it.
            let retries = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await server.request(
                            .POST, "/mobile/make-call", token: user.accessToken, json: request, headers: [("Idempotency-Key", "killed-request")])
                    }
                }
                return try await group.reduce(into: [TestServer.Reply]()) { $0.append($1) }
            }
            #expect(retries.filter { $0.status == 200 && $0.headers.first(name: "Idempotent-Replayed") == nil }.count == 1, "\(retries.map(\.status))")
            #expect(retries.allSatisfy { $0.status == 200 || $0.status == 409 }, "\(retries.map(\.text))")
            // One charge in all: the dead request's call was given back when its key was taken over.
            let usage = try await server.usage(user.accessToken)
            #expect(usage.trialCallsUsed == 1)
            let abandoned = try await sql.raw("SELECT status, charge_state FROM calls WHERE user_id = \(bind: userID) AND call_sid IS NULL").all()
            #expect(abandoned.count == 1)
            #expect(try abandoned.first?.decode(column: "charge_state", as: String.self) == "released")
            let replay = try await server.request(
                .POST, "/mobile/make-call", token: user.accessToken, json: request, headers: [("Idempotency-Key", "killed-request")])
            #expect(replay.status == 200 && replay.headers.first(name: "Idempotent-Replayed") == "true")
        }
    }

    /// The fingerprint make-call stores for `request` (read back from a key the server claimed itself).
    static func fingerprint(_ server: TestServer, _ request: MakeCallRequest) async throws -> String {
        let probe = try await server.register()
        let reply = try await server.request(
            .POST, "/mobile/make-call", token: probe.accessToken, json: request, headers: [("Idempotency-Key", "fingerprint-probe")])
        #expect(reply.status == 200, "\(reply.text)")
        let userID = try #require(try CompactJWS.payload(probe.accessToken)["sub"] as? String)
        return try #require(
            try await sql(server).raw("SELECT fingerprint FROM idempotency_keys WHERE user_id = \(bind: userID)").first()?
                .decode(column: "fingerprint", as: String.self))
    }

    @Test("a call the provider answers 404 for is settled as failed and refunded after a bounded number of attempts", arguments: TestDatabase.all)
    func unknownToProvider(_ database: TestDatabase) async throws {
        let clock = TestClock()
        var options = ChorusApp.Options.testing()
        options.clock = clock.closure
        try await TestServer.run(on: database, options: options, sandboxTimeScale: LoopbackServer.fastCalls) { server in
            let token = try await server.register().accessToken
            try await server.setCallee("+14155550921", behavior: "busy", callbacks: false)
            let lost = try await server.makeCall(token, to: "+14155550921").decode(MakeCallResponse.self)
            let item = try await server.request(.GET, "/mobile/calls/\(lost.callSid)", token: token).decode(CallHistoryItem.self)
            // The provider forgets the call (as for a sid from another account, or one purged): every lookup is a 404.
            let unknown = "CA" + String(repeating: "0", count: 32)
            try await Self.sql(server).raw("UPDATE calls SET call_sid = \(bind: unknown) WHERE id = \(bind: Int64(item.id))").run()
            #expect(try await server.usage(token).trialCallsUsed == 1)

            // The reconciliation job comes due; each retry (5 s, then 10 s of service time) is brought forward.
            var settled: CallHistoryItem?
            try await server.eventually(timeout: .seconds(30), "the unknown call is settled") {
                clock.advance(days: 30.0 / 86_400)
                let call = try await server.request(.GET, "/mobile/calls/\(unknown)", token: token).decode(CallHistoryItem.self)
                settled = call
                return call.status == "failed"
            }
            #expect(settled?.endedReason == "failed")
            #expect(try await server.usage(token).trialCallsUsed == 0)
            // The job is finished (done jobs are deleted), not left failing or retrying.
            let job = try await Self.sql(server).raw(
                "SELECT status FROM jobs WHERE kind = 'reconcile_call' AND payload = \(bind: String(item.id))"
            ).first()
            #expect(job == nil)
        }
    }
}
