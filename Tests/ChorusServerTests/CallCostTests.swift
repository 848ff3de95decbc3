import ChorusAPI
import ChorusCore
import ChorusProviders
import ChorusTestSupport
import Foundation
import SQLKit
import Testing

@testable import ChorusServer

/// What calls cost (issue 18): every realtime response and the call's telephony minutes metered in `provider_usage`,
/// the Calls budget reserved at placement and settled at the end, and the console's cost per call and per day.
@Suite("Call costs and the Calls budget", .serialized)
struct CallCostTests {
    struct UsageRow {
        var operation: String
        var model: String
        var userID: String
        var consumption: Consumption
        var usdMicros: Int64
    }

    static func rows(_ server: TestServer, callID: Int) async throws -> [UsageRow] {
        let sql = server.app.db as! any SQLDatabase
        return try await sql.raw(
            """
            SELECT operation, model, user_id, input_tokens, output_tokens, cached_input_tokens, audio_input_tokens, cached_audio_input_tokens,
              audio_output_tokens, audio_ms, usd_micros FROM provider_usage WHERE feature = 'calls' AND subject = \(bind: "call:\(callID)") ORDER BY id
            """
        ).all().map { row in
            func int(_ column: String) throws -> Int { Int(try row.decode(column: column, as: Int64.self)) }
            return UsageRow(
                operation: try row.decode(column: "operation", as: String.self), model: try row.decode(column: "model", as: String.self),
                userID: try row.decode(column: "user_id", as: String.self),
                consumption: Consumption(
                    inputTokens: try int("input_tokens"), outputTokens: try int("output_tokens"), audioSeconds: Double(try int("audio_ms")) / 1_000,
                    cachedInputTokens: try int("cached_input_tokens"), audioInputTokens: try int("audio_input_tokens"),
                    cachedAudioInputTokens: try int("cached_audio_input_tokens"), audioOutputTokens: try int("audio_output_tokens")),
                usdMicros: try row.decode(column: "usd_micros", as: Int64.self))
        }
    }

    static func callsSpendToday(_ server: TestServer) async throws -> Int64 {
        try await server.app.chorus.store(server.app.db as! any SQLDatabase, on: server.app.eventLoopGroup.any()).metering.featureSpend(.calls, at: Date()).day
    }

    static func finalCallback(_ server: TestServer, callID: Int, sid: String, duration: String) async throws -> Int {
        let url = server.configuration.publicURL.absoluteString + "/call-end-webhook?call_id=\(callID)"
        let params = [("CallSid", sid), ("CallStatus", "completed"), ("CallDuration", duration)]
        return try await server.request(
            .POST, "/call-end-webhook?call_id=\(callID)", form: params.map { "\($0.0)=\($0.1)" }.joined(separator: "&"),
            headers: [("X-Twilio-Signature", server.app.chorus.twilioSignatures.signature(url: url, parameters: params))]
        ).status
    }

    @Test(
        "a sandbox call end to end: each realtime response and the started minutes are metered once, priced; the console shows the call's cost and the day's",
        arguments: TestDatabase.all)
    func answeredCallIsMetered(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let email = "cost-\(UUID().uuidString.prefix(6).lowercased())@chorus.test"
            let token = try await server.register(email: email, password: "operator password").accessToken
            let number = "+14155557101"
            try await LiveCallTests.configure(
                server, number: number,
                callee: LiveCallTests.Callee(lines: ["Hello? Who is this?", "Okay, bye now."], hangup_after_seconds: 12, reply_after_ms: 300),
                realtime: LiveCallTests.RealtimeBehavior(
                    first_audio_delay_ms: 100, speed: 4, reply_lines: ["Hi, it's Sam, just calling to say hello.", "Talk soon, bye!"],
                    caller_transcripts: ["Hello? Who is this?", "Okay, bye now."]))
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            let detail = try await LiveCallTests.settled(server, token, sid: placed.callSid)
            let callID = detail.call.id
            let seconds = try #require(detail.call.durationSeconds)
            #expect(seconds > 0 && seconds < 60, "a short call: \(seconds) s")

            // Every response.done of the call is a realtime row at the model's six token prices.
            var rows: [UsageRow] = []
            try await server.eventually("the call's minutes are metered") {
                rows = try await Self.rows(server, callID: callID)
                return rows.contains { $0.operation == "telephony" }
            }
            let prices = PriceTable.standard
            let realtime = rows.filter { $0.operation == "realtime" }
            #expect(realtime.count >= 2, "the greeting and at least one answer: \(realtime.count)")
            let model = server.configuration.callBridge.realtimeModel
            let userID = try #require(try await server.app.chorus.store(server.app.db as! any SQLDatabase, on: server.app.eventLoopGroup.any()).calls.call(id: callID)?.userID)
            for row in realtime {
                #expect(row.model == model && row.userID == userID)
                #expect(row.consumption.inputTokens > row.consumption.audioInputTokens, "the instructions are text input: \(row.consumption)")
                #expect(row.usdMicros == prices.costMicrodollars(of: .realtime, model: model, consumption: row.consumption))
                #expect(row.usdMicros > 0)
            }
            #expect(realtime.contains { $0.consumption.audioOutputTokens > 0 }, "the model spoke")
            // Later responses re-read the conversation (the callee's audio too): more audio input than the first.
            #expect((realtime.last?.consumption.audioInputTokens ?? 0) > (realtime.first?.consumption.audioInputTokens ?? 0))
            // The minutes: one started minute at $0.014, whatever the seconds under a minute.
            let telephony = try #require(rows.first { $0.operation == "telephony" })
            #expect(telephony.model == "twilio" && telephony.userID == userID)
            #expect(telephony.consumption.audioSeconds == Double(seconds))
            #expect(telephony.usdMicros == 14_000)
            let total = rows.reduce(Int64(0)) { $0 + $1.usdMicros }

            // Twilio sends the final status again (even with another duration): nothing is charged twice.
            #expect(try await Self.finalCallback(server, callID: callID, sid: placed.callSid, duration: String(seconds)) == 204)
            #expect(try await Self.finalCallback(server, callID: callID, sid: placed.callSid, duration: "125") == 204)
            let again = try await Self.rows(server, callID: callID)
            #expect(again.filter { $0.operation == "telephony" }.count == 1)
            #expect(again.reduce(Int64(0)) { $0 + $1.usdMicros } == total)
            // The reservation is settled: the day's Calls spend is what the call cost, nothing reserved any more.
            #expect(try await Self.callsSpendToday(server) == total)

            // The console: the call's cost and the day's.
            try await ConsoleTests.setRole(server, email: email, role: "admin")
            let browser = ConsoleTests.Browser(base: server.baseURL)
            defer { Task { await browser.shutdown() } }
            let session = try #require(try await browser.signIn(email: email, password: "operator%20password").session)
            let page = try await browser.send(.GET, "/console/api/calls/\(callID)", cookies: ["chorus_console": session])
            #expect(page.status == 200, "\(page.text)")
            let consoleCall = try ChorusJSON.makeDecoder().decode(ConsoleCallDetailDTO.self, from: Data(page.text.utf8))
            #expect(consoleCall.cost.usdMicros == total)
            #expect(consoleCall.cost.items.map(\.operation).sorted() == ["realtime", "telephony"])
            #expect(consoleCall.cost.items.first { $0.operation == "realtime" }?.calls == realtime.count)
            #expect(consoleCall.detail.call.phoneNumber != number, "the number is masked")
            let overview = try await browser.send(.GET, "/console/api/overview", cookies: ["chorus_console": session])
            let figures = try ChorusJSON.makeDecoder().decode(ConsoleOverviewDTO.self, from: Data(overview.text.utf8))
            let calls = try #require(figures.spend.first { $0.feature == "calls" })
            #expect(calls.todayUSDMicros == total && calls.perDay.last == total)
            #expect(calls.dailyBudgetUSDMicros == 250_000_000 && calls.monthlyBudgetUSDMicros == 5_000_000_000)
            try await LiveCallTests.expectNothingOpen(server)
        }
    }

    @Test("a spent Calls budget refuses new calls with 503 and Retry-After before anything is charged or dialed", arguments: TestDatabase.all)
    func budgetRefusal(_ database: TestDatabase) async throws {
        // One trial call's estimate, less a micro-dollar: no call fits.
        let estimate = PriceTable.standard.callEstimateMicrodollars(
            model: "gpt-realtime-2.1", telephonyProvider: "twilio", durationSeconds: PlanCatalog.standard.trial.durationLimitSeconds)
        let budget = String(format: "%.6f", Double(estimate - 1) / 1_000_000)
        try await TestServer.run(on: database, environment: ["CHORUS_CALLS_DAILY_BUDGET_USD": budget]) { server in
            let token = try await server.register().accessToken
            let reply = try await server.makeCall(token, to: "+14155557102")
            #expect(reply.status == 503, "\(reply.text)")
            #expect(reply.detail == "Calls have reached their daily spending limit. Please try again tomorrow.")
            let retryAfter = try #require(reply.headers.first(name: "Retry-After").flatMap { Int($0) })
            #expect(retryAfter >= 1 && retryAfter <= 86_400)
            // Nothing charged, no call placed, nothing reserved.
            #expect(try await server.usage(token).trialCallsUsed == 0)
            #expect(try await server.history(token).totalCalls == 0)
            let dialed = try await server.request(.GET, "/sandbox/calls").json["calls"] as? [Any] ?? []
            #expect(dialed.isEmpty)
            #expect(try await Self.callsSpendToday(server) == 0)
            // The test call of development is refused the same way.
            let test = try await server.request(.POST, "/test/test-call", token: token, json: MakeCallRequest(phoneNumber: "+14155557102", scenario: "default"))
            #expect(test.status == 503 && test.headers.first(name: "Retry-After") != nil, "\(test.text)")
        }
    }

    @Test("a scheduled call that comes due with the Calls budget spent ends refused, nothing charged or dialed", arguments: TestDatabase.all)
    func scheduledRefusal(_ database: TestDatabase) async throws {
        let estimate = PriceTable.standard.callEstimateMicrodollars(
            model: "gpt-realtime-2.1", telephonyProvider: "twilio", durationSeconds: PlanCatalog.standard.trial.durationLimitSeconds)
        let budget = String(format: "%.6f", Double(estimate - 1) / 1_000_000)
        let clock = TestClock()
        try await TestServer.run(on: database, environment: ["CHORUS_CALLS_DAILY_BUDGET_USD": budget], options: .testing(clock: clock.closure)) { server in
            let token = try await server.register().accessToken
            let reply = try await server.request(
                .POST, "/mobile/schedule-call", token: token,
                json: ScheduleCallRequest(phoneNumber: "+14155557103", scenario: "default", scheduledTime: clock.now.addingTimeInterval(3_600)))
            #expect(reply.status == 200, "scheduling spends nothing: \(reply.text)")
            clock.advance(days: 1.0 / 24)
            try await server.eventually("the schedule is refused") {
                let list = try await server.request(.GET, "/mobile/scheduled-calls", token: token).decode(ScheduledCallsResponse.self)
                return list.scheduledCalls.first?.status == "refused"
            }
            let list = try await server.request(.GET, "/mobile/scheduled-calls", token: token).decode(ScheduledCallsResponse.self)
            #expect(list.scheduledCalls.first?.failureReason == "Calls have reached their daily spending limit. Please try again tomorrow.")
            #expect(try await server.usage(token).trialCallsUsed == 0)
            let dialed = try await server.request(.GET, "/sandbox/calls").json["calls"] as? [Any] ?? []
            #expect(dialed.isEmpty)
        }
    }

    /// A phone service that refuses every call.
    struct RefusingTelephony: Telephony {
        func placeCall(_ request: OutboundCallRequest) async throws -> PlacedCall {
            throw TelephonyError.rejected(httpStatus: 400, code: 21_215, message: "Geo permissions")
        }
        func hangUp(callSid: String) async throws {}
        func callStatus(callSid: String) async throws -> ProviderCallStatus { throw TelephonyError.unavailable("down") }
    }

    @Test("a call the phone service refuses gives its Calls budget reservation back", arguments: TestDatabase.all)
    func refusedCallGivesReservationBack(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, options: ChorusApp.Options.testing().fake(\.telephony, RefusingTelephony())) { server in
            let token = try await server.register().accessToken
            #expect(try await server.makeCall(token, to: "+14155557104").status == 502)
            #expect(try await Self.callsSpendToday(server) == 0)
            let sql = server.app.db as! any SQLDatabase
            #expect(try await sql.raw("SELECT COUNT(*) AS n FROM call_spend_reservations").first()?.decode(column: "n", as: Int64.self) == 0)
        }
    }

    @Test("placements racing at the budget's edge: exactly the budget's worth of calls is admitted", arguments: TestDatabase.all)
    func racingPlacements(_ database: TestDatabase) async throws {
        let estimate = PriceTable.standard.callEstimateMicrodollars(
            model: "gpt-realtime-2.1", telephonyProvider: "twilio", durationSeconds: PlanCatalog.standard.trial.durationLimitSeconds)
        // Three calls' worth and a little more, not four.
        let budget = String(format: "%.6f", Double(3 * estimate + estimate / 2) / 1_000_000)
        let environment = ["CHORUS_CALLS_DAILY_BUDGET_USD": budget, "CHORUS_TWILIO_CALLS_PER_SECOND": "100"]
        try await TestServer.run(on: database, environment: environment, sandboxTimeScale: LoopbackServer.fastCalls) { server in
            var tokens: [String] = []
            for index in 0..<10 {
                tokens.append(try await server.register().accessToken)
                // The callees do not answer and Twilio sends no final status: every reservation stays while the race runs.
                try await server.setCallee("+1415555720\(index)", behavior: "no-answer", callbacks: false)
            }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for (index, token) in tokens.enumerated() {
                    group.addTask { try await server.makeCall(token, to: "+1415555720\(index)").status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 3, "\(statuses.sorted())")
            #expect(statuses.filter { $0 == 503 }.count == 7, "\(statuses.sorted())")
            #expect(try await Self.callsSpendToday(server) == 3 * estimate)
            let dialed = try await server.request(.GET, "/sandbox/calls").json["calls"] as? [Any] ?? []
            #expect(dialed.count == 3)
        }
    }
}
