import AsyncHTTPClient
import ChorusAPI
import ChorusCore
import ChorusTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import SQLKit
import Testing

@testable import ChorusServer

/// Deploys without dropped calls (issue 18): SIGTERM drains the instance. `/health` says so, new requests and call
/// placements are refused, what a call in progress needs stays open, the call runs to its end, then the process exits.
@Suite("Drain on SIGTERM", .serialized)
struct DrainTests {
    static let number = "+14155557801"

    /// The callee answers, talks and hangs up after `seconds`.
    static func callee(hangingUpAfter seconds: Double) -> String {
        #"{"behavior":"answer","lines":["Hello? Who is this?","Okay, bye now."],"hangup_after_seconds":\#(seconds)}"#
    }

    static func record(_ server: TestServer, callSid: String) async throws -> CallRecord? {
        let database = server.app.db
        let store = server.app.chorus.store(database as! any SQLDatabase, on: database.eventLoop)
        let sql = database as! any SQLDatabase
        guard let id = try await sql.select().column("id").from("calls").where("call_sid", .equal, callSid).first(decodingColumn: "id", as: Int.self)
        else { return nil }
        return try await store.calls.call(id: id)
    }

    @Test("in process: health says draining, new requests get 503 and Connection: close, Twilio and the sandbox stay open, the call ends normally", arguments: TestDatabase.all)
    func drainsInProcess(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let encoded = Self.number.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? Self.number
            let callee = try await server.request(.PUT, "/sandbox/callees/\(encoded)", body: Data(Self.callee(hangingUpAfter: 5).utf8), headers: [("Content-Type", "application/json")])
            #expect(callee.status == 200, "\(callee.text)")
            let placed = try await server.makeCall(token, to: Self.number).decode(MakeCallResponse.self)
            try await server.eventually(timeout: .seconds(20), "the bridge opens") {
                server.app.chorus.bridges.metrics.snapshot().openBridges == 1
            }

            let clock = ContinuousClock()
            let began = clock.now
            let drain = Task { await ChorusApp.drain(server.app) }
            try await server.eventually(timeout: .seconds(5), "draining") { server.app.chorus.drain.isDraining }

            let health = try await server.request(.GET, "/health")
            #expect(health.status == 503)
            let body = try health.decode(HealthResponse.self)
            #expect(body.status == "draining" && body.draining)
            #expect(body.database.hasSuffix(":ok"))

            let refusedCall = try await server.makeCall(token, to: "+14155557802")
            #expect(refusedCall.status == 503)
            #expect(refusedCall.detail == DrainMiddleware.detail)
            #expect(refusedCall.headers.first(name: "Retry-After") == "5")
            // Among the connection options (Vapor adds its keep-alive after it; `close` wins, RFC 9112 §9.6).
            #expect(refusedCall.headers[canonicalForm: "Connection"].contains { $0.lowercased() == "close" })
            #expect(refusedCall.headers.first(name: "X-Request-ID") != nil)
            let refusedRead = try await server.request(.GET, "/mobile/usage-stats", token: token)
            #expect(refusedRead.status == 503)
            #expect(try await server.request(.POST, "/auth/register", json: RegisterRequest(email: "late@example.com", password: "correct horse battery")).status == 503)
            // The outside world of a development server (the emulated Twilio) and Twilio's callbacks stay open: an
            // unsigned callback is refused by its own check (403), not by the drain.
            #expect(try await server.request(.GET, "/sandbox/calls").status == 200)
            #expect(try await server.request(.POST, "/call-end-webhook", form: "CallSid=CA1&CallStatus=completed").status == 403)

            let outcome = await drain.value
            let took = clock.now - began
            #expect(outcome == .drained)
            // The call ran to its end (hung up 5 s after the answer), not to the drain's maximum.
            #expect(took < .seconds(30), "drain took \(took)")
            let call = try #require(try await Self.record(server, callSid: placed.callSid))
            #expect(call.status == .completed)
            #expect(call.endedReason == "callee_hangup")
            #expect(server.app.chorus.bridges.metrics.snapshot().openBridges == 0)
        }
    }

    @Test("in process: the maximum cuts a call still in progress; cancelling (a second signal) stops at once")
    func drainBounds() async throws {
        try await TestServer.run(on: .sqlite) { server in
            let token = try await server.register().accessToken
            let encoded = Self.number.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? Self.number
            _ = try await server.request(.PUT, "/sandbox/callees/\(encoded)", body: Data(Self.callee(hangingUpAfter: 60).utf8), headers: [("Content-Type", "application/json")])
            _ = try await server.makeCall(token, to: Self.number).decode(MakeCallResponse.self)
            try await server.eventually(timeout: .seconds(20), "the bridge opens") {
                server.app.chorus.bridges.metrics.snapshot().openBridges == 1
            }
            let clock = ContinuousClock()
            var began = clock.now
            #expect(await ChorusApp.drain(server.app, maximum: .seconds(1)) == .deadlinePassed)
            #expect(clock.now - began < .seconds(5))

            began = clock.now
            let interrupted = Task { await ChorusApp.drain(server.app) }
            try await Task.sleep(for: .milliseconds(300))
            interrupted.cancel()
            #expect(await interrupted.value == .interrupted)
            #expect(clock.now - began < .seconds(5))
            // The call is still up: it was never this test's to end (the server's stop cuts it).
            #expect(server.app.chorus.bridges.metrics.snapshot().openBridges == 1)
            #expect(ChorusApp.drainMaximum(server.configuration) == .seconds(180))
        }
    }

    @Test("in process: a final status that never arrives is waited for briefly after the call's stream ended")
    func lostFinalStatus() async throws {
        try await TestServer.run(on: .sqlite) { server in
            let token = try await server.register().accessToken
            let encoded = Self.number.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? Self.number
            // Twilio's status callbacks are lost on the way: only the stream tells the server about the call.
            let script = #"{"behavior":"answer","callbacks":false,"lines":["Hello?"],"hangup_after_seconds":3}"#
            let callee = try await server.request(.PUT, "/sandbox/callees/\(encoded)", body: Data(script.utf8), headers: [("Content-Type", "application/json")])
            #expect(callee.status == 200, "\(callee.text)")
            let placed = try await server.makeCall(token, to: Self.number).decode(MakeCallResponse.self)
            try await server.eventually(timeout: .seconds(20), "the bridge opens") {
                server.app.chorus.bridges.metrics.snapshot().openBridges == 1
            }
            let clock = ContinuousClock()
            let began = clock.now
            let outcome = await ChorusApp.drain(server.app)
            let took = clock.now - began
            #expect(outcome == .drained)
            // The stream ended about 3 s after the answer, then the drain waited its 10 s for the final status.
            #expect(took >= .seconds(DrainTiming.finalStatusWaitSeconds) && took < .seconds(30), "drain took \(took)")
            let call = try #require(try await Self.record(server, callSid: placed.callSid))
            #expect(!call.status.isTerminal, "no final status arrived: \(call.status)")
            #expect(server.app.chorus.bridges.drainSnapshot().recentlyEnded == [call.id])
        }
    }

    @Test("chorus serve: SIGTERM during a sandbox call drains, the call completes normally, the process exits 0", arguments: TestDatabase.all)
    func sigtermDuringACall(_ database: TestDatabase) async throws {
        let provisioned = try database.make()
        defer { provisioned.drop() }
        let directory = provisioned.directory
        let environment = [
            "CHORUS_DATABASE_URL": provisioned.url, "CHORUS_CALL_HOURS": "any", "CHORUS_CALLS_PER_NUMBER_PER_DAY": "off",
            "CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK": "off", "CHORUS_CALL_DISCLOSURE": "off", "CHORUS_SANDBOX_RING_SECONDS": "0.2",
            "CHORUS_TWILIO_CALLS_PER_SECOND": "1000", "CHORUS_LOG_LEVEL": "info",
        ]
        let server = try await ServeProcess.start(in: directory, environment: environment)
        defer { server.stop() }
        func log() -> String {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return files.filter { $0.hasPrefix("serve-") }.compactMap { try? String(contentsOfFile: directory.appendingPathComponent($0).path, encoding: .utf8) }
                .joined(separator: "\n")
        }
        let http = HTTPClient.shared
        let registered = try await server.request(http, .POST, "/auth/register", json: #"{"email":"drain@example.com","password":"Correct-Horse-42"}"#)
        let token = try #require(registered.json["access_token"] as? String, "\(registered.text)")
        let encoded = Self.number.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? Self.number
        let callee = try await server.request(http, .PUT, "/sandbox/callees/\(encoded)", json: Self.callee(hangingUpAfter: 6))
        #expect(callee.status == 200, "\(callee.text)")
        let placed = try await server.request(
            http, .POST, "/mobile/make-call", token: token, json: #"{"phone_number":"\#(Self.number)","scenario":"default"}"#)
        #expect(placed.status == 200, "\(placed.text)")
        let sid = try #require(placed.json["call_sid"] as? String, "\(placed.text)")

        // In progress: answered, its media stream bridged.
        func sandboxCall() async throws -> [String: Any] {
            let calls = try await server.request(http, .GET, "/sandbox/calls").json["calls"] as? [[String: Any]] ?? []
            return calls.first { $0["sid"] as? String == sid } ?? [:]
        }
        var inProgress = false
        for _ in 0..<200 where !inProgress {
            let call = try await sandboxCall()
            inProgress = call["status"] as? String == "in-progress" && call["stream_sid"] is String
            if !inProgress { try await Task.sleep(for: .milliseconds(50)) }
        }
        try #require(inProgress, "the call never got in progress:\n\(log())")

        let clock = ContinuousClock()
        let signalled = clock.now
        #expect(kill(server.processIdentifier, SIGTERM) == 0)
        var health = ServeProcess.Reply(status: 0, text: "")
        for _ in 0..<100 {
            health = try await server.request(http, .GET, "/health")
            if health.status == 503 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(health.status == 503, "\(health.text)")
        #expect(health.json["status"] as? String == "draining")
        #expect(health.json["draining"] as? Bool == true)
        let refused = try await server.request(
            http, .POST, "/mobile/make-call", token: token, json: #"{"phone_number":"+14155557802","scenario":"default"}"#)
        #expect(refused.status == 503, "\(refused.text)")

        // The call runs to its end; its final status reaches the draining server, which then exits 0.
        let status = try await server.exitStatus(within: .seconds(60))
        let took = clock.now - signalled
        #expect(status == 0, "\(log())")
        #expect(took < .seconds(30), "the drain took \(took)")
        let output = log()
        #expect(output.contains("drained: stopping"), "\(output)")

        // What the server recorded, read back through the API of a server started again on the same database.
        let again = try await ServeProcess.start(in: directory, environment: environment)
        defer { again.stop() }
        let detail = try await again.request(http, .GET, "/mobile/calls/\(sid)", token: token)
        #expect(detail.status == 200, "\(detail.text)")
        // The detail is the call's history item with the detail's members beside it.
        #expect(detail.json["status"] as? String == "completed", "\(detail.text)")
        #expect(detail.json["ended_reason"] as? String == "callee_hangup", "\(detail.text)")
        #expect(detail.json["ended_at"] is String)
    }

    @Test("chorus serve: a second SIGTERM stops at once, exit 1")
    func secondSignal() async throws {
        let directory = try CLITests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = [
            "CHORUS_CALL_HOURS": "any", "CHORUS_CALLS_PER_NUMBER_PER_DAY": "off", "CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK": "off",
            "CHORUS_CALL_DISCLOSURE": "off", "CHORUS_SANDBOX_RING_SECONDS": "0.2", "CHORUS_TWILIO_CALLS_PER_SECOND": "1000",
        ]
        let server = try await ServeProcess.start(in: directory, environment: environment)
        defer { server.stop() }
        let http = HTTPClient.shared
        let registered = try await server.request(http, .POST, "/auth/register", json: #"{"email":"again@example.com","password":"Correct-Horse-42"}"#)
        let token = try #require(registered.json["access_token"] as? String, "\(registered.text)")
        let encoded = Self.number.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? Self.number
        _ = try await server.request(http, .PUT, "/sandbox/callees/\(encoded)", json: Self.callee(hangingUpAfter: 120))
        let placed = try await server.request(
            http, .POST, "/mobile/make-call", token: token, json: #"{"phone_number":"\#(Self.number)","scenario":"default"}"#)
        #expect(placed.status == 200, "\(placed.text)")
        var answered = false
        for _ in 0..<200 where !answered {
            let calls = try await server.request(http, .GET, "/sandbox/calls").json["calls"] as? [[String: Any]] ?? []
            answered = calls.contains { $0["stream_sid"] is String }
            if !answered { try await Task.sleep(for: .milliseconds(50)) }
        }
        try #require(answered)
        #expect(kill(server.processIdentifier, SIGTERM) == 0)
        for _ in 0..<100 {
            if try await server.request(http, .GET, "/health").status == 503 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        // Still draining: the call would run for two minutes.
        #expect(try await server.exitStatus(within: .seconds(1)) == nil)
        let clock = ContinuousClock()
        let signalled = clock.now
        #expect(kill(server.processIdentifier, SIGTERM) == 0)
        let status = try await server.exitStatus(within: .seconds(20))
        #expect(status == 1)
        #expect(clock.now - signalled < .seconds(20))
    }
}
