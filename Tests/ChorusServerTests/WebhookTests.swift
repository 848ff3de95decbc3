import ChorusAPI
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusServer

@Suite("Twilio status callbacks")
struct WebhookTests {
    @Test("unanswered calls (busy, no-answer, failed) are refunded once", arguments: TestDatabase.all)
    func refunds(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, sandboxTimeScale: LoopbackServer.fastCalls) { server in
            let token = try await server.register().accessToken
            let outcomes = [("+14155550301", "busy", "busy"), ("+14155550302", "no-answer", "no_answer"), ("+14155550303", "failed", "failed")]
            for (number, behavior, reason) in outcomes {
                try await server.setCallee(number, behavior: behavior)
                let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
                let ended = try await server.waitForEnd(token, sid: placed.callSid)
                #expect(ended.endedReason?.rawValue == reason)
                #expect(ended.durationSeconds == 0)
            }
            let usage = try await server.usage(token)
            #expect(usage.trialCallsRemaining == 3 && usage.trialCallsUsed == 0 && usage.callsMadeTotal == 0)
            #expect(try await server.history(token).totalCalls == 3)
        }
    }

    @Test("missing or bad signatures are refused with 403 and change nothing", arguments: TestDatabase.all)
    func signatures(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            try await server.setCallee("+14155550401", behavior: "answer", talkSeconds: 30)
            let placed = try await server.makeCall(token, to: "+14155550401").decode(MakeCallResponse.self)
            let form = "CallSid=\(placed.callSid)&CallStatus=busy&CallDuration=0"
            let unsigned = try await server.request(.POST, "/call-end-webhook", form: form)
            #expect(unsigned.status == 403)
            #expect(unsigned.detail == "Invalid Twilio signature")
            let forged = try await server.request(.POST, "/call-end-webhook", form: form, headers: [("X-Twilio-Signature", "bm90IGEgc2lnbmF0dXJl")])
            #expect(forged.status == 403)
            #expect(try await server.request(.POST, "/twilio/voice", form: form).status == 403)
            let usage = try await server.usage(token)
            #expect(usage.trialCallsUsed == 1)
            let call = try await server.request(.GET, "/mobile/calls/\(placed.callSid)", token: token).decode(CallHistoryItem.self)
            #expect(call.status != "busy" && call.endedReason == nil)
        }
    }

    @Test("duplicate and out-of-order callbacks change nothing twice", arguments: TestDatabase.all)
    func ordering(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, sandboxTimeScale: LoopbackServer.fastCalls) { server in
            let token = try await server.register().accessToken
            try await server.setCallee("+14155550501", behavior: "no-answer")
            let placed = try await server.makeCall(token, to: "+14155550501").decode(MakeCallResponse.self)
            let ended = try await server.waitForEnd(token, sid: placed.callSid)
            #expect(ended.endedReason == "no_answer")
            #expect(try await server.usage(token).trialCallsRemaining == 3)

            // Replay Twilio's callbacks, correctly signed: the terminal one twice, then a late "ringing" and a
            // contradicting "completed". Nothing changes and the refund is not given twice.
            let callID = try await callID(server, token: token, sid: placed.callSid)
            let url = server.configuration.publicURL.absoluteString + "/call-end-webhook?call_id=\(callID)"
            let validator = server.app.chorus.twilioSignatures
            for (status, duration) in [("no-answer", "0"), ("no-answer", "0"), ("ringing", "0"), ("completed", "42")] {
                let params = [("CallSid", placed.callSid), ("CallStatus", status), ("CallDuration", duration)]
                let reply = try await server.request(
                    .POST, "/call-end-webhook?call_id=\(callID)", form: params.map { "\($0.0)=\($0.1)" }.joined(separator: "&"),
                    headers: [("X-Twilio-Signature", validator.signature(url: url, parameters: params))]
                )
                #expect(reply.status == 204)
            }
            let after = try await server.request(.GET, "/mobile/calls/\(placed.callSid)", token: token).decode(CallHistoryItem.self)
            #expect(after.status == "no-answer" && after.durationSeconds == 0 && after.endedReason == "no_answer")
            let usage = try await server.usage(token)
            #expect(usage.trialCallsRemaining == 3 && usage.trialCallsUsed == 0)
        }
    }

    @Test("calls whose final callback is lost are settled from the provider", arguments: TestDatabase.all)
    func reconciliation(_ database: TestDatabase) async throws {
        let clock = TestClock()
        var options = ChorusApp.Options.testing()
        options.clock = clock.closure
        try await TestServer.run(on: database, options: options, sandboxTimeScale: LoopbackServer.fastCalls) { server in
            let token = try await server.register().accessToken
            try await server.setCallee("+14155550801", behavior: "busy", callbacks: false)
            try await server.setCallee("+14155550802", behavior: "answer", talkSeconds: 2, callbacks: false)
            let busy = try await server.makeCall(token, to: "+14155550801").decode(MakeCallResponse.self)
            let answered = try await server.makeCall(token, to: "+14155550802").decode(MakeCallResponse.self)
            // Both play out in the sandbox (the answered one streams for 2 s of real time), but no callback reaches the
            // server: both still count.
            try await Task.sleep(for: .milliseconds(3_500))
            #expect(try await server.usage(token).trialCallsUsed == 2)
            let pending = try await server.request(.GET, "/mobile/calls/\(busy.callSid)", token: token).decode(CallHistoryItem.self)
            #expect(pending.endedReason == nil)

            clock.advance(days: 10.0 / 1_440)  // ten minutes: both calls must be over; the reconciliation jobs come due
            let settledBusy = try await server.waitForEnd(token, sid: busy.callSid)
            #expect(settledBusy.endedReason == "busy" && settledBusy.durationSeconds == 0)
            let settledAnswered = try await server.waitForEnd(token, sid: answered.callSid)
            #expect(settledAnswered.endedReason == "callee_hangup" && settledAnswered.durationSeconds == 2)
            #expect(try await server.usage(token).trialCallsUsed == 1)  // the busy call was refunded, once
        }
    }

    private func callID(_ server: TestServer, token: String, sid: String) async throws -> Int {
        try await server.request(.GET, "/mobile/calls/\(sid)", token: token).decode(CallHistoryItem.self).id
    }
}
