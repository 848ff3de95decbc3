import ChorusAPI
import Foundation
import Testing

@testable import ChorusServer

@Suite("Calls")
struct CallsTests {
    /// The seed's "Quick Test Commands": register, usage-stats, scenarios, make-call; then the call plays out
    /// in the sandbox and is recorded by the signed status callbacks.
    @Test("the seed's curl walkthrough, end to end", arguments: TestDatabase.all)
    func walkthrough(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let register = try await server.request(
                .POST, "/auth/register", json: RegisterRequest(email: "mobile@test.com", password: "password123"),
                headers: [("X-App-Type", "mobile"), ("User-Agent", "Speech-Assistant-Mobile-iOS/1.0")]
            )
            #expect(register.status == 200)
            let token = try register.decode(TokenResponse.self).accessToken

            let stats = try await server.request(.GET, "/mobile/usage-stats", token: token, headers: [("X-App-Type", "mobile")])
            #expect(stats.status == 200)
            let json = stats.json
            #expect(json.count == 17)
            #expect(json["subscription_tier"] is NSNull)
            #expect(json["addon_calls_expiry"] is NSNull)
            #expect((json["week_start_date"] as? String)?.hasSuffix("Z") == true)
            let usage = try stats.decode(UsageStatsResponse.self)
            #expect(usage.appType == "mobile_consumer")
            #expect(usage.isTrialActive && usage.trialCallsRemaining == 3 && usage.trialCallsUsed == 0 && !usage.upgradeRecommended)

            let scenarios = try await server.request(.GET, "/mobile/scenarios", token: token).decode(ScenariosResponse.self)
            #expect(scenarios.scenarios.count == 23)
            #expect(scenarios.scenarios.first?.id == "default")
            #expect(scenarios.scenarios.first { $0.id == "instigator" }?.contentWarning != nil)
            let voices = try await server.request(.GET, "/mobile/voices", token: token).decode(VoicesResponse.self)
            #expect(voices.voices.map(\.id).contains("marin") && voices.voices.count == 10)
            let pricing = try await server.request(.GET, "/mobile/pricing", token: token).decode(PricingResponse.self)
            #expect(pricing.plans.map(\.price) == ["$4.99", "$25.00"])

            let call = try await server.makeCall(token, to: "+14155550199", scenario: "default")
            #expect(call.status == 200, "\(call.text)")
            let placed = try call.decode(MakeCallResponse.self)
            #expect(placed.callSid.hasPrefix("CA") && placed.status == "initiated" && placed.durationLimit == 60)
            #expect(
                placed.usageStats
                    == CallUsageSnapshot(
                        callsRemainingThisWeek: 2, callsRemainingThisMonth: 2, addonCallsRemaining: 0, upgradeRecommended: false
                    ))

            let ended = try await server.waitForEnd(token, sid: placed.callSid)
            #expect(ended.status == "completed")
            // The sandbox callee hangs up after the talk time (1 s in tests): the bridge saw the callee hang up.
            #expect(ended.endedReason == "callee_hangup")
            #expect(ended.durationSeconds == 1 || ended.durationSeconds == 2)
            let history = try await server.history(token, limit: 10)
            #expect(history.totalCalls == 1 && history.callHistory.first?.callSid == placed.callSid)
            let after = try await server.usage(token)
            #expect(after.callsMadeToday == 1 && after.callsMadeThisWeek == 1 && after.callsMadeTotal == 1)
            #expect(after.trialCallsUsed == 1 && after.trialCallsRemaining == 2)
            #expect(after.totalCallDurationThisWeek == 1)
        }
    }

    @Test("50 concurrent make-calls from a fresh trial user: exactly 3 succeed", arguments: TestDatabase.all)
    func concurrentMakeCalls(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let replies = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
                for index in 0..<50 {
                    group.addTask { try await server.makeCall(token, to: "+1415555\(String(format: "%04d", index))") }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.filter { $0.status == 200 }.count == 3)
            let refused = replies.filter { $0.status == 402 }
            #expect(refused.count == 47)
            #expect(refused.allSatisfy { (($0.json["detail"] as? [String: Any])?["error"] as? String) == "trial_exhausted" })
            let usage = try await server.usage(token)
            #expect(usage.trialCallsUsed == 3)
            #expect(usage.callsMadeTotal == 3)
            #expect(usage.trialCallsRemaining == 0)
            #expect(try await server.history(token).totalCalls == 3)
        }
    }

    @Test("input errors: E.164, unknown scenario before any charge, history limits", arguments: TestDatabase.all)
    func inputErrors(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let badNumber = try await server.makeCall(token, to: "555-0100")
            #expect(badNumber.status == 422)
            #expect((badNumber.json["errors"] as? [[String: String]])?.first?["field"] == "phone_number")
            let unknown = try await server.makeCall(token, scenario: "celebrity_roast")
            #expect(unknown.status == 400)
            #expect(unknown.detail?.contains("Unknown scenario") == true)
            let wrongType = try await server.request(
                .POST, "/mobile/make-call", token: token, body: Data(#"{"phone_number": 5, "scenario": "default"}"#.utf8),
                headers: [("Content-Type", "application/json")]
            )
            #expect(wrongType.status == 422)
            #expect((wrongType.json["errors"] as? [[String: String]])?.first?["field"] == "phone_number")
            let notJSON = try await server.request(
                .POST, "/mobile/make-call", token: token, body: Data("phone=1".utf8), headers: [("Content-Type", "application/json")]
            )
            #expect(notJSON.status == 422)
            #expect(try await server.usage(token).trialCallsRemaining == 3)
            #expect(try await server.request(.GET, "/mobile/call-history?limit=0", token: token).status == 422)
            #expect(try await server.request(.GET, "/mobile/call-history?limit=101", token: token).status == 422)
            #expect(try await server.request(.GET, "/mobile/calls/CAdoesnotexist", token: token).status == 404)
        }
    }

    @Test("Idempotency-Key: a retried make-call returns the first answer without a second charge", arguments: TestDatabase.all)
    func idempotency(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let first = try await server.makeCall(token, headers: [("Idempotency-Key", "retry-1")])
            let second = try await server.makeCall(token, headers: [("Idempotency-Key", "retry-1")])
            #expect(first.status == 200 && second.status == 200)
            #expect(try first.decode(MakeCallResponse.self) == second.decode(MakeCallResponse.self))
            #expect(second.headers.first(name: "Idempotent-Replayed") == "true")
            #expect(try await server.usage(token).trialCallsUsed == 1)
            let reused = try await server.makeCall(token, to: "+14155550199", headers: [("Idempotency-Key", "retry-1")])
            #expect(reused.status == 422)
            let other = try await server.makeCall(token, headers: [("Idempotency-Key", "retry-2")])
            #expect(other.status == 200)
            #expect(try await server.usage(token).trialCallsUsed == 2)
        }
    }

    @Test("custom scenarios: subscribers only, at most 20, usable in make-call", arguments: TestDatabase.all)
    func customScenarios(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let body = CreateCustomScenarioRequest(
                name: "Pizza critic", persona: "You are Gino, a pizza critic calling to review last night's pizza.", voice: "ballad"
            )
            let refused = try await server.request(.POST, "/mobile/custom-scenarios", token: token, json: body)
            #expect(refused.status == 402)
            #expect((refused.json["detail"] as? [String: Any])?["upgrade_options"] as? [[String: String]] != nil)

            try await server.buy(token, productID: "speech_assistant_premium_monthly", periodSeconds: 30 * 86_400)
            let badVoice = try await server.request(
                .POST, "/mobile/custom-scenarios", token: token,
                json: CreateCustomScenarioRequest(name: "x", persona: body.persona, voice: "robot")
            )
            #expect(badVoice.status == 422)
            let created = try await server.request(.POST, "/mobile/custom-scenarios", token: token, json: body)
            #expect(created.status == 201)
            let scenario = try created.decode(CustomScenarioDTO.self)
            #expect(scenario.id.hasPrefix("custom_"))

            let call = try await server.makeCall(token, scenario: scenario.id)
            #expect(call.status == 200, "\(call.text)")
            #expect(try call.decode(MakeCallResponse.self).durationLimit == 120)  // charged to the trial, with the plan's longer limit
            let history = try await server.history(token)
            #expect(history.callHistory.first?.scenario == scenario.id)

            // Concurrent creations never exceed 20.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<25 {
                    group.addTask {
                        try await server.request(
                            .POST, "/mobile/custom-scenarios", token: token,
                            json: CreateCustomScenarioRequest(
                                name: "Persona \(index)", persona: body.persona, voice: "alloy"
                            )
                        ).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 201 }.count == 19)
            #expect(statuses.filter { $0 == 409 }.count == 6)
            let list = try await server.request(.GET, "/mobile/custom-scenarios", token: token).decode(CustomScenariosResponse.self)
            #expect(list.customScenarios.count == 20)
            #expect(try await server.request(.DELETE, "/mobile/custom-scenarios/\(scenario.id)", token: token).status == 204)
            #expect(try await server.request(.DELETE, "/mobile/custom-scenarios/\(scenario.id)", token: token).status == 404)
            #expect(try await server.makeCall(token, scenario: scenario.id).status == 400)
            // Another user cannot use it.
            let stranger = try await server.register().accessToken
            #expect(try await server.makeCall(stranger, scenario: list.customScenarios[1].id).status == 400)
        }
    }
}
