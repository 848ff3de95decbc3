import ChorusAPI
import Foundation
import Testing

@testable import ChorusServer

@Suite("Scheduled calls")
struct ScheduleTests {
    @Test("schedule, list, run once; cancel; refused when not allowed", arguments: TestDatabase.all)
    func lifecycle(_ database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(on: database, options: .testing(clock: clock.closure)) { server in
            let token = try await server.register().accessToken
            let soon = clock.now.addingTimeInterval(3_600)
            let reply = try await server.request(
                .POST, "/mobile/schedule-call", token: token,
                json: ScheduleCallRequest(phoneNumber: "+14155550701", scenario: "birthday_wishes", scheduledTime: soon)
            )
            #expect(reply.status == 200, "\(reply.text)")
            let scheduled = try reply.decode(ScheduledCallDTO.self)
            #expect(scheduled.status == "scheduled" && scheduled.scenario == "birthday_wishes")
            #expect(abs(scheduled.scheduledTime.timeIntervalSince(soon)) < 1)
            // Scheduling charges nothing; placing does.
            #expect(try await server.usage(token).trialCallsUsed == 0)

            let later = try await server.request(
                .POST, "/mobile/schedule-call", token: token,
                json: ScheduleCallRequest(phoneNumber: "+14155550702", scenario: "default", scheduledTime: clock.now.addingTimeInterval(7_200))
            ).decode(ScheduledCallDTO.self)
            let cancelled = try await server.request(.DELETE, "/mobile/scheduled-calls/\(later.scheduleID)", token: token)
            #expect(cancelled.status == 200)
            #expect(try cancelled.decode(ScheduledCallDTO.self).status == "cancelled")
            #expect(try await server.request(.DELETE, "/mobile/scheduled-calls/999999", token: token).status == 404)

            clock.advance(days: 1.5 / 24)  // the first schedule comes due; the cancelled one never runs
            try await server.eventually("the scheduled call is placed") {
                let list = try await server.request(.GET, "/mobile/scheduled-calls", token: token).decode(ScheduledCallsResponse.self)
                return list.scheduledCalls.first { $0.scheduleID == scheduled.scheduleID }?.status == "placed"
            }
            let list = try await server.request(.GET, "/mobile/scheduled-calls", token: token).decode(ScheduledCallsResponse.self)
            let placed = try #require(list.scheduledCalls.first { $0.scheduleID == scheduled.scheduleID })
            let sid = try #require(placed.callSid)
            #expect(try await server.usage(token).trialCallsUsed == 1)
            #expect(try await server.history(token).callHistory.map(\.callSid) == [sid])
            // A placed call can no longer be cancelled.
            #expect(try await server.request(.DELETE, "/mobile/scheduled-calls/\(scheduled.scheduleID)", token: token).status == 409)

            let past = try await server.request(
                .POST, "/mobile/schedule-call", token: token,
                json: ScheduleCallRequest(phoneNumber: "+14155550703", scenario: "default", scheduledTime: clock.now.addingTimeInterval(-600))
            )
            #expect(past.status == 422)
            #expect((past.json["errors"] as? [[String: String]])?.first?["field"] == "scheduled_time")
            let defaulted = try await server.request(
                .POST, "/mobile/schedule-call", token: token, json: ScheduleCallRequest(phoneNumber: "+14155550704", scenario: "default")
            ).decode(ScheduledCallDTO.self)
            #expect(abs(defaulted.scheduledTime.timeIntervalSince(clock.now) - 60) < 5)
        }
    }

    @Test("permission is checked when scheduling and again when placing", arguments: TestDatabase.all)
    func recheck(_ database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(on: database, options: .testing(clock: clock.closure)) { server in
            let token = try await server.register().accessToken
            let at = clock.now.addingTimeInterval(3_600)
            for index in 0..<3 {
                let reply = try await server.request(
                    .POST, "/mobile/schedule-call", token: token,
                    json: ScheduleCallRequest(phoneNumber: "+1415555080\(index)", scenario: "default", scheduledTime: at)
                )
                #expect(reply.status == 200)
            }
            // Use the whole trial now: the schedules are refused when they come due.
            for index in 0..<3 {
                #expect(try await server.makeCall(token, to: "+1415555081\(index)").status == 200)
            }
            let refusedNow = try await server.request(
                .POST, "/mobile/schedule-call", token: token, json: ScheduleCallRequest(phoneNumber: "+14155550820", scenario: "default")
            )
            #expect(refusedNow.status == 402)
            clock.advance(days: 1.0 / 24)
            try await server.eventually("the schedules are refused") {
                let list = try await server.request(.GET, "/mobile/scheduled-calls", token: token).decode(ScheduledCallsResponse.self)
                return list.scheduledCalls.count == 3 && list.scheduledCalls.allSatisfy { $0.status == "refused" }
            }
            let list = try await server.request(.GET, "/mobile/scheduled-calls", token: token).decode(ScheduledCallsResponse.self)
            #expect(list.scheduledCalls.allSatisfy { $0.failureReason?.hasPrefix("Trial calls exhausted") == true })
            #expect(try await server.usage(token).trialCallsUsed == 3)
        }
    }

    @Test("a scheduled call survives a restart", arguments: TestDatabase.all)
    func restart(_ database: TestDatabase) async throws {
        let provisioned = try database.make()
        defer { provisioned.drop() }
        var token = ""
        var scheduleID = 0
        var options = ChorusApp.Options.testing()
        options.runsJobs = false  // the first instance stops before the job is due
        try await TestServer.run(on: database, database: provisioned, options: options) { server in
            token = try await server.register().accessToken
            scheduleID = try await server.request(
                .POST, "/mobile/schedule-call", token: token,
                json: ScheduleCallRequest(phoneNumber: "+14155550901", scenario: "default", scheduledTime: Date().addingTimeInterval(1))
            ).decode(ScheduledCallDTO.self).scheduleID
        }
        try await TestServer.run(on: database, database: provisioned) { server in
            try await server.eventually("the call is placed after the restart") {
                let list = try await server.request(.GET, "/mobile/scheduled-calls", token: token).decode(ScheduledCallsResponse.self)
                return list.scheduledCalls.first { $0.scheduleID == scheduleID }?.status == "placed"
            }
            #expect(try await server.history(token).totalCalls == 1)
        }
    }

    @Test("two instances on one database place each scheduled call exactly once", arguments: TestDatabase.all)
    func twoInstances(_ database: TestDatabase) async throws {
        let provisioned = try database.make()
        defer { provisioned.drop() }
        let clock = TestClock()
        let first = try await TestServer.start(database: provisioned, options: .testing(clock: clock.closure))
        let second = try await TestServer.start(database: provisioned, options: .testing(clock: clock.closure))
        do {
            // Ten users, each with one call scheduled for the same instant.
            var tokens: [String] = []
            for index in 0..<10 {
                tokens.append(try await (index.isMultiple(of: 2) ? first : second).register().accessToken)
            }
            let at = clock.now.addingTimeInterval(3_600)
            for (index, token) in tokens.enumerated() {
                let reply = try await (index.isMultiple(of: 2) ? first : second).request(
                    .POST, "/mobile/schedule-call", token: token,
                    json: ScheduleCallRequest(phoneNumber: "+141555510\(String(format: "%02d", index))", scenario: "default", scheduledTime: at)
                )
                #expect(reply.status == 200)
            }
            clock.advance(days: 1.5 / 24)  // all ten come due at once, on both instances
            try await first.eventually("all ten are placed") {
                var placed = 0
                for token in tokens {
                    let list = try await first.request(.GET, "/mobile/scheduled-calls", token: token).decode(ScheduledCallsResponse.self)
                    placed += list.scheduledCalls.filter { $0.status == "placed" }.count
                }
                return placed == 10
            }
            for token in tokens {
                #expect(try await first.history(token).totalCalls == 1)
                #expect(try await first.usage(token).trialCallsUsed == 1)
            }
            // Each sandbox saw its own share of Calls.json requests; together exactly ten.
            var creates = 0
            for server in [first, second] {
                let log = try await server.request(.GET, "/sandbox/requests")
                let entries = log.json["requests"] as? [[String: Any]] ?? []
                creates += entries.filter { ($0["method"] as? String) == "POST" && (($0["path"] as? String) ?? "").hasSuffix("/Calls.json") }.count
            }
            #expect(creates == 10)
        } catch {
            await first.stop()
            await second.stop()
            throw error
        }
        await first.stop()
        await second.stop()
    }
}
