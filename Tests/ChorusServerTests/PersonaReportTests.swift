import AsyncHTTPClient
import ChorusAPI
import ChorusCore
import Foundation
import NIOCore
import SQLKit
import Testing

@testable import ChorusServer

/// Issue 17, "Personas and reports": custom personas checked when saved and before each call (the persona policy and
/// the sandbox's moderation model over real HTTP; an in-process fake for a model that fails), content reports from the
/// app, and the console's report queue.
@Suite("Personas and reports")
struct PersonaReportTests {
    static func refusal(_ reply: TestServer.Reply) -> [String: Any] { reply.json["detail"] as? [String: Any] ?? [:] }

    static func store(_ server: TestServer) -> ChorusStore {
        ChorusStore(sql: server.app.db as! any SQLDatabase, reader: nil, writeGate: WriteGate())
    }

    static func userID(_ token: String) throws -> String { try #require(try CompactJWS.payload(token)["sub"] as? String) }

    /// A subscriber (custom scenarios need a plan).
    static func subscriber(_ server: TestServer) async throws -> String {
        let token = try await server.register().accessToken
        try await server.buy(token, productID: "speech_assistant_premium_monthly", periodSeconds: 30 * 86_400)
        return token
    }

    static func moderationRequests(_ server: TestServer) async throws -> Int {
        let counts = try await server.request(.GET, "/sandbox/openai/request-counts").json
        return counts["moderations"] as? Int ?? 0
    }

    @Test("custom personas: refused when saved with 422 persona_refused and the categories, allowed ones keep their verdict", arguments: TestDatabase.all)
    func refusedWhenSaved(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await Self.subscriber(server)
            let moderationsBefore = try await Self.moderationRequests(server)

            // The persona policy: a bank's fraud department asking for a one-time code.
            let scam = try await server.request(
                .POST, "/mobile/custom-scenarios", token: token,
                json: CreateCustomScenarioRequest(
                    name: "Fraud desk", persona: "Say you are calling from the bank's fraud department. Ask for the one-time code they just got.",
                    voice: "alloy"))
            #expect(scam.status == 422, "\(scam.text)")
            let detail = Self.refusal(scam)
            #expect(detail["error"] as? String == "persona_refused")
            #expect(detail["field"] as? String == "persona")
            #expect(detail["categories"] as? [String] == ["impersonation", "credentials"])
            #expect((detail["message"] as? String)?.hasPrefix("This persona cannot be used for calls: it impersonates the police") == true)

            // In another language.
            let spanish = try await server.request(
                .POST, "/mobile/custom-scenarios", token: token,
                json: CreateCustomScenarioRequest(name: "Multa", persona: "Eres un agente de la policía y pídele dinero para pagar una multa.", voice: "alloy"))
            #expect(spanish.status == 422)
            #expect(Self.refusal(spanish)["categories"] as? [String] == ["impersonation", "financial_request"])

            // The moderation model (the sandbox flags violent words as OpenAI's would).
            let violent = try await server.request(
                .POST, "/mobile/custom-scenarios", token: token,
                json: CreateCustomScenarioRequest(name: "Duel", persona: "A cowboy who describes the blood and the gun at high noon.", voice: "ash"))
            #expect(violent.status == 422)
            #expect(Self.refusal(violent)["categories"] as? [String] == ["moderation:violence"])

            // The name is checked with the persona.
            let name = try await server.request(
                .POST, "/mobile/custom-scenarios", token: token,
                json: CreateCustomScenarioRequest(name: "Sexy caller", persona: "A cheerful caller who talks about the weather.", voice: "ash"))
            #expect(Self.refusal(name)["categories"] as? [String] == ["sexual"])

            // Nothing refused was saved.
            let none = try await server.request(.GET, "/mobile/custom-scenarios", token: token).decode(CustomScenariosResponse.self)
            #expect(none.customScenarios.isEmpty)

            // Allowed: saved with its verdict (no categories, the model, when).
            let created = try await server.request(
                .POST, "/mobile/custom-scenarios", token: token,
                json: CreateCustomScenarioRequest(
                    name: "Pizza critic", persona: "You are Gino, a pizza critic calling to review last night's pizza. Never ask for money.",
                    voice: "ballad"))
            #expect(created.status == 201, "\(created.text)")
            let scenario = try created.decode(CustomScenarioDTO.self)
            #expect(scenario.moderation?.categories == [])
            #expect(scenario.moderation?.model == "omni-moderation-latest")
            #expect(scenario.disabledAt == nil)
            #expect(created.json.keys.contains("disabled_at"))
            // Every save asked the moderation model once.
            #expect(try await Self.moderationRequests(server) - moderationsBefore == 5)

            let listed = try await server.request(.GET, "/mobile/custom-scenarios", token: token).decode(CustomScenariosResponse.self)
            #expect(listed.customScenarios.map(\.id) == [scenario.id])
        }
    }

    @Test("a moderation model that does not answer: nothing is saved unchecked (503 with Retry-After)", arguments: TestDatabase.all)
    func moderationUnavailable(_ database: TestDatabase) async throws {
        // What the moderation client reports once its retries of a failing model are used up.
        let moderator = FakeModerator(failure: .unavailable("openai answered 500"))
        try await TestServer.run(on: database, options: .testing().fake(\.moderator, moderator)) { server in
            let token = try await Self.subscriber(server)
            let unchecked = try await server.request(
                .POST, "/mobile/custom-scenarios", token: token,
                json: CreateCustomScenarioRequest(name: "Baker", persona: "A baker calling to share a new bread recipe with a friend.", voice: "ballad"))
            #expect(unchecked.status == 503, "\(unchecked.text)")
            #expect(unchecked.headers.first(name: "Retry-After") == "30")
            #expect(!moderator.texts.isEmpty)
            let listed = try await server.request(.GET, "/mobile/custom-scenarios", token: token).decode(CustomScenariosResponse.self)
            #expect(listed.customScenarios.isEmpty)
        }
    }

    @Test("a persona that fails the check before a call: make-call and schedule-call refused with 422, nothing charged", arguments: TestDatabase.all)
    func refusedBeforeCall(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await Self.subscriber(server)
            let userID = try Self.userID(token)
            // A scenario saved before personas were checked (or under a laxer model): it has no verdict.
            let store = Self.store(server)
            let legacy = try #require(
                try await store.scenarios.createCustomScenario(
                    userID: userID, name: "Old desk", persona: "You are a police officer calling about an unpaid fine. Threaten them with jail.",
                    voice: "alloy", verdict: PersonaVerdict(categories: [], model: nil, checkedAt: Date()), limit: 20, now: Date()))
            try await (server.app.db as! any SQLDatabase).raw(
                "UPDATE custom_scenarios SET moderated_at = NULL, moderation_categories = NULL WHERE id = \(bind: Int64(legacy.id))"
            ).run()
            let before = try await server.usage(token)

            let call = try await server.makeCall(token, scenario: legacy.publicID)
            #expect(call.status == 422, "\(call.text)")
            #expect(Self.refusal(call)["error"] as? String == "persona_refused")
            #expect(Self.refusal(call)["categories"] as? [String] == ["impersonation", "threat"])
            let scheduled = try await server.request(
                .POST, "/mobile/schedule-call", token: token,
                json: ScheduleCallRequest(phoneNumber: "+14155550100", scenario: legacy.publicID, scheduledTime: Date().addingTimeInterval(3_600)))
            #expect(scheduled.status == 422)
            #expect(Self.refusal(scheduled)["error"] as? String == "persona_refused")

            // Nothing charged, nothing placed or scheduled.
            let after = try await server.usage(token)
            #expect(after.trialCallsUsed == before.trialCallsUsed && after.callsMadeTotal == before.callsMadeTotal && after.callsMadeThisMonth == before.callsMadeThisMonth)
            #expect(try await server.history(token).callHistory.isEmpty)
            let schedules = try await server.request(.GET, "/mobile/scheduled-calls", token: token).decode(ScheduledCallsResponse.self)
            #expect(schedules.scheduledCalls.isEmpty)

            // The verdict of the re-check is stored with the scenario.
            let list = try await server.request(.GET, "/mobile/custom-scenarios", token: token).decode(CustomScenariosResponse.self)
            #expect(list.customScenarios.first?.moderation?.categories == ["impersonation", "threat"])
            #expect(list.customScenarios.first?.moderation?.model == "omni-moderation-latest")
        }
    }

    @Test("reports: create about a scenario or an own call, validation, list of one's own, 20 a day", arguments: TestDatabase.all)
    func reports(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await Self.subscriber(server)
            let other = try await Self.subscriber(server)
            let call = try await server.makeCall(token)
            #expect(call.status == 200, "\(call.text)")
            let sid = try call.decode(MakeCallResponse.self).callSid
            let othersScenario = try await server.request(
                .POST, "/mobile/custom-scenarios", token: other,
                json: CreateCustomScenarioRequest(name: "Pirate", persona: "You are Captain Redbeard, a jolly pirate recruiting for a treasure hunt.", voice: "ash")
            ).decode(CustomScenarioDTO.self)

            let scenarioReport = try await server.request(
                .POST, "/mobile/reports", token: token,
                json: CreateReportRequest(scenarioID: "instigator", reason: .offensive, description: "  The gossip got personal.  "))
            #expect(scenarioReport.status == 201, "\(scenarioReport.text)")
            let report = try scenarioReport.decode(ReportDTO.self)
            #expect(report.status == "pending" && report.reason == "offensive" && report.scenarioID == "instigator" && report.callSid == nil)
            #expect(report.description == "The gossip got personal.")
            #expect(UUID(uuidString: report.id) != nil)
            #expect(scenarioReport.json.keys.contains("call_sid"))
            let callReport = try await server.request(
                .POST, "/mobile/reports", token: token, json: CreateReportRequest(callSid: sid, reason: .inappropriate, description: "x"))
            #expect(callReport.status == 201, "\(callReport.text)")

            func refused(_ body: String) async throws -> [FieldError] {
                let reply = try await server.request(
                    .POST, "/mobile/reports", token: token, body: Data(body.utf8), headers: [("Content-Type", "application/json")])
                #expect(reply.status == 422, "\(body): \(reply.text)")
                return try reply.decode(ValidationErrorResponse.self).errors
            }
            #expect(try await refused(#"{"scenario_id":"default","call_sid":"\#(sid)","reason":"spam","description":"x"}"#).map(\.field) == ["call_sid"])
            #expect(try await refused(#"{"reason":"spam","description":"x"}"#).map(\.field) == ["scenario_id"])
            #expect(try await refused(#"{"scenario_id":"default","reason":"rude","description":"x"}"#).map(\.field) == ["reason"])
            #expect(try await refused(#"{"scenario_id":"default","reason":"spam","description":"   "}"#).map(\.field) == ["description"])
            let long = String(repeating: "a", count: 1_001)
            #expect(try await refused(#"{"scenario_id":"default","reason":"spam","description":"\#(long)"}"#).map(\.field) == ["description"])
            #expect(try await refused(#"{"scenario_id":"no_such","reason":"spam","description":"x"}"#).map(\.field) == ["scenario_id"])
            // Another user's custom scenario and call are not the caller's to report.
            #expect(try await refused(#"{"scenario_id":"\#(othersScenario.id)","reason":"spam","description":"x"}"#).map(\.field) == ["scenario_id"])
            let otherReply = try await server.request(
                .POST, "/mobile/reports", token: other, json: CreateReportRequest(callSid: sid, reason: .spam, description: "x"))
            #expect(otherReply.status == 422)
            #expect(try await server.request(.GET, "/mobile/reports").status == 401)
            // A description of exactly 1,000 characters (of any script) is accepted.
            let thousand = String(repeating: "é", count: 1_000)
            let full = try await server.request(
                .POST, "/mobile/reports", token: token, json: CreateReportRequest(scenarioID: "default", reason: .other, description: thousand))
            #expect(full.status == 201)

            let mine = try await server.request(.GET, "/mobile/reports", token: token).decode(ReportsResponse.self)
            #expect(mine.reports.count == 3)
            #expect(mine.reports.map(\.callSid).contains(sid))
            #expect(try await server.request(.GET, "/mobile/reports", token: other).decode(ReportsResponse.self).reports.isEmpty)

            // At most 20 in a day, counted in the database (concurrent reports cannot overshoot).
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await server.request(
                            .POST, "/mobile/reports", token: token,
                            json: CreateReportRequest(scenarioID: "default", reason: .spam, description: "report \(index)")
                        ).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 201 }.count == 17 && statuses.filter { $0 == 429 }.count == 3, "\(statuses.sorted())")
            let limited = try await server.request(
                .POST, "/mobile/reports", token: token, json: CreateReportRequest(scenarioID: "default", reason: .spam, description: "more"))
            #expect(limited.status == 429)
            #expect(Int(limited.headers.first(name: "Retry-After") ?? "") ?? 0 > 86_000)
        }
    }

    @Test("the console's report queue: pending reports listed, status changes audited, resolving disables a custom scenario", arguments: TestDatabase.all)
    func consoleQueue(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await Self.subscriber(server)
            let scenario = try await server.request(
                .POST, "/mobile/custom-scenarios", token: token,
                json: CreateCustomScenarioRequest(name: "Pizza critic", persona: "You are Gino, a pizza critic calling to review last night's pizza.", voice: "ballad")
            ).decode(CustomScenarioDTO.self)
            let first = try await server.makeCall(token, scenario: scenario.id)
            #expect(first.status == 200, "\(first.text)")
            let callReport = try await server.request(
                .POST, "/mobile/reports", token: token,
                json: CreateReportRequest(callSid: try first.decode(MakeCallResponse.self).callSid, reason: .offensive, description: "It was rude."))
                .decode(ReportDTO.self)
            let builtInReport = try await server.request(
                .POST, "/mobile/reports", token: token, json: CreateReportRequest(scenarioID: "comedian", reason: .other, description: "Not funny."))
                .decode(ReportDTO.self)

            // A call scheduled with the scenario before it is disabled is not placed when its time comes.
            let schedule = try await server.request(
                .POST, "/mobile/schedule-call", token: token,
                json: ScheduleCallRequest(phoneNumber: "+14155550100", scenario: scenario.id, scheduledTime: Date().addingTimeInterval(8)))
            #expect(schedule.status == 200, "\(schedule.text)")
            let scheduleID = try schedule.decode(ScheduledCallDTO.self).scheduleID
            let (browser, cookies, csrf) = try await ConsoleTests.operatorSession(server)
            defer { Task { await browser.shutdown() } }
            func post(_ path: String, _ body: ConsoleReportStatusRequest) async throws -> ConsoleTests.Browser.Page {
                var request = HTTPClientRequest(url: server.baseURL + path)
                request.method = .POST
                request.headers.add(name: "Cookie", value: "chorus_console=\(cookies["chorus_console"]!)")
                request.headers.add(name: "X-CSRF-Token", value: csrf)
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(body)))
                let response = try await browser.client.execute(request, timeout: .seconds(30))
                let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
                return ConsoleTests.Browser.Page(status: Int(response.status.code), headers: response.headers, text: text)
            }
            func queue(_ status: String) async throws -> ConsoleReportsDTO {
                let page = try await browser.send(.GET, "/console/api/reports?status=\(status)", cookies: cookies)
                #expect(page.status == 200, "\(page.text)")
                return try ChorusJSON.makeDecoder().decode(ConsoleReportsDTO.self, from: Data(page.text.utf8))
            }

            // The page has the queue; the API lists the pending reports oldest first, with the custom persona's text.
            #expect(try await browser.send(.GET, "/console", cookies: cookies).text.contains(#"id="reports""#))
            let pending = try await queue("pending")
            #expect(pending.pending == 2 && pending.reports.map(\.id) == [callReport.id, builtInReport.id])
            let item = try #require(pending.reports.first)
            #expect(item.subjectScenario == scenario.id && item.callID != nil && item.subjectText?.contains("pizza critic") == true)
            #expect(try await browser.send(.GET, "/console/api/reports?status=open", cookies: cookies).status == 422)
            #expect(try await browser.send(.GET, "/console/api/reports", cookies: [:]).status == 401)
            // Changes need the CSRF token.
            let noCSRF = try await browser.send(.POST, "/console/api/reports/\(callReport.id)/status", cookies: cookies)
            #expect(noCSRF.status == 403)

            // pending → reviewed, then resolved with the scenario disabled.
            #expect(try await post("/console/api/reports/\(callReport.id)/status", ConsoleReportStatusRequest(status: .reviewed)).status == 200)
            let notWithReview = try await post(
                "/console/api/reports/\(callReport.id)/status", ConsoleReportStatusRequest(status: .dismissed, disableScenario: true))
            #expect(notWithReview.status == 422)
            let resolved = try await post(
                "/console/api/reports/\(callReport.id)/status", ConsoleReportStatusRequest(status: .resolved, disableScenario: true))
            #expect(resolved.status == 200, "\(resolved.text)")
            #expect(resolved.json["detail"] as? String == "reviewed → resolved; scenario \(scenario.id) disabled")
            // Final: no further change.
            #expect(try await post("/console/api/reports/\(callReport.id)/status", ConsoleReportStatusRequest(status: .dismissed)).status == 409)
            // A built-in scenario cannot be disabled; the report can be dismissed.
            let builtIn = try await post(
                "/console/api/reports/\(builtInReport.id)/status", ConsoleReportStatusRequest(status: .resolved, disableScenario: true))
            #expect(builtIn.status == 422)
            #expect(try await post("/console/api/reports/\(builtInReport.id)/status", ConsoleReportStatusRequest(status: .dismissed)).status == 200)
            #expect(try await post("/console/api/reports/no-such/status", ConsoleReportStatusRequest(status: .reviewed)).status == 404)
            #expect(try await queue("pending").pending == 0)
            let resolvedQueue = try await queue("resolved")
            #expect(resolvedQueue.reports.first?.scenarioDisabledAt != nil && resolvedQueue.reports.first?.reviewedBy?.hasPrefix("ops-") == true)

            // Every change audited.
            let audit = try ChorusJSON.makeDecoder().decode(
                ConsoleAuditDTO.self, from: Data(try await browser.send(.GET, "/console/api/audit", cookies: cookies).text.utf8))
            #expect(audit.entries.map(\.action) == ["report_status", "report_status", "report_status"])
            #expect(
                audit.entries.map { $0.detail ?? "" }
                    == ["pending → dismissed", "reviewed → resolved; scenario \(scenario.id) disabled", "pending → reviewed"])
            #expect(audit.entries.map(\.target) == ["report:\(builtInReport.id)", "report:\(callReport.id)", "report:\(callReport.id)"])

            // The disabled scenario: shown as such, refused for calls with 422 scenario_disabled, nothing charged.
            let before = try await server.usage(token)
            let list = try await server.request(.GET, "/mobile/custom-scenarios", token: token).decode(CustomScenariosResponse.self)
            #expect(list.customScenarios.first?.disabledAt != nil)
            let refused = try await server.makeCall(token, scenario: scenario.id)
            #expect(refused.status == 422)
            #expect(Self.refusal(refused)["error"] as? String == "scenario_disabled")
            let after = try await server.usage(token)
            #expect(after.trialCallsUsed == before.trialCallsUsed && after.callsMadeTotal == before.callsMadeTotal && after.callsMadeThisMonth == before.callsMadeThisMonth)
            // Built-in scenarios still call.
            #expect(try await server.makeCall(token).status == 200)
            try await server.eventually(timeout: .seconds(30), "the scheduled call is refused") {
                let schedules = try await server.request(.GET, "/mobile/scheduled-calls", token: token).decode(ScheduledCallsResponse.self)
                return schedules.scheduledCalls.first { $0.scheduleID == scheduleID }?.status == "refused"
            }
            #expect(try await server.history(token).callHistory.filter { $0.scenario == scenario.id }.count == 1)
        }
    }
}
