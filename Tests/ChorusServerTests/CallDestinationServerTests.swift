import ChorusAPI
import ChorusCore
import Foundation
import Testing

@testable import ChorusServer

/// Issue 17, destinations and quiet hours over HTTP: every refusal with its exact answer, nothing charged, nothing dialled.
@Suite("Call destinations over HTTP")
struct CallDestinationServerTests {
    /// The rules on, as in production (the shared test settings turn the hours and the limits off).
    static let rulesOn = [
        "CHORUS_CALL_HOURS": "09:00-20:00", "CHORUS_CALLS_PER_NUMBER_PER_DAY": "3", "CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK": "3",
    ]

    /// A clock reading `hour:minute` UTC on a day after tomorrow (access tokens expire by the wall clock, so the clock
    /// runs ahead of it, never behind).
    static func clock(atUTC hour: Int, _ minute: Int = 0) -> TestClock {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let day = calendar.startOfDay(for: Date().addingTimeInterval(2 * 86_400))
        let target = day.addingTimeInterval(TimeInterval(hour * 3_600 + minute * 60))
        let clock = TestClock()
        clock.advance(days: target.timeIntervalSince(Date()) / 86_400)
        return clock
    }

    /// The refusal body of a 422: `{"detail": {"error", "message", "retry_at"?}}`.
    static func refusal(_ reply: TestServer.Reply) throws -> RefusalDetail {
        #expect(reply.status == 422, "\(reply.text)")
        return try reply.decode(RefusalResponse.self).detail
    }

    static func dialled(_ server: TestServer) async throws -> Int {
        let log = try await server.request(.GET, "/sandbox/requests")
        let entries = log.json["requests"] as? [[String: Any]] ?? []
        return entries.filter { ($0["method"] as? String) == "POST" && (($0["path"] as? String) ?? "").hasSuffix("/Calls.json") }.count
    }

    // MARK: Numbers and countries

    /// (number, code, message) for numbers refused whatever the time and the limits.
    static let refusals: [(String, String, String)] = [
        ("+447700900123", "destination_not_allowed", "Calls to the United Kingdom (GB) are not available on this service."),
        ("+79161234567", "destination_not_allowed", "Calls to this country are not available on this service."),
        (
            "+19005550123", "premium_rate_number",
            "This number is not called: 900 numbers are premium-rate in the North American Numbering Plan. Chorus never calls premium-rate numbers."
        ),
        (
            "+14159111234", "service_number",
            "This number is not called: 911 is an N11 service code, not an exchange. Chorus never calls emergency or service numbers."
        ),
        ("+1234567890", "invalid_number", "This number cannot exist: numbers of the North American Numbering Plan have 10 digits after +1."),
        ("+10125550123", "invalid_number", "This number cannot exist: North American area codes never start with 0 or 1."),
        (
            "+88212345678", "international_service_number",
            "This number is not called: +882 is an international network number. Chorus calls subscriber numbers of countries only."
        ),
        (
            "+97912345678", "premium_rate_number",
            "This number is not called: +979 is an international premium-rate number. Chorus never calls premium-rate numbers."
        ),
    ]

    @Test("make-call and schedule-call refuse numbers never called and countries not served, charging nothing", arguments: TestDatabase.all)
    func refusedNumbers(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            for (number, code, message) in Self.refusals {
                let made = try Self.refusal(try await server.makeCall(token, to: number))
                #expect(made == RefusalDetail(error: code, message: message), "\(number)")
                let scheduled = try Self.refusal(
                    try await server.request(
                        .POST, "/mobile/schedule-call", token: token,
                        json: ScheduleCallRequest(phoneNumber: number, scenario: "default", scheduledTime: Date().addingTimeInterval(3_600))))
                #expect(scheduled == RefusalDetail(error: code, message: message), "\(number)")
            }
            let usage = try await server.usage(token)
            #expect(usage.trialCallsUsed == 0 && usage.callsMadeTotal == 0)
            #expect(try await server.history(token).totalCalls == 0)
            #expect(try await server.request(.GET, "/mobile/scheduled-calls", token: token).decode(ScheduledCallsResponse.self).scheduledCalls.isEmpty)
            #expect(try await Self.dialled(server) == 0)
            // The test call of the development endpoints follows the same rules.
            let test = try await server.request(
                .POST, "/test/test-call", token: token, json: MakeCallRequest(phoneNumber: "+19005550123", scenario: "default"))
            #expect(try Self.refusal(test).error == "premium_rate_number")
            // The sandbox's own numbers (the 555 exchange) are callable with the sandbox telephony.
            #expect(try await server.makeCall(token, to: "+14155550123").status == 200)
            #expect(try await Self.dialled(server) == 1)
        }
    }

    @Test("CHORUS_CALL_DESTINATIONS opens other countries", arguments: TestDatabase.all)
    func otherCountries(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_CALL_DESTINATIONS": "us, GB"]) { server in
            #expect(server.configuration.callDestinations.countries == ["US", "GB"])
            let token = try await server.register().accessToken
            #expect(try await server.makeCall(token, to: "+447700900123").status == 200)
            let canada = try Self.refusal(try await server.makeCall(token, to: "+14162223333"))
            #expect(canada.error == "destination_not_allowed" && canada.message == "Calls to Canada (CA) are not available on this service.")
            // Premium-rate numbers stay refused in an allowed country.
            #expect(try Self.refusal(try await server.makeCall(token, to: "+449098790123")).error == "premium_rate_number")
            #expect(try await server.usage(token).trialCallsUsed == 1)
        }
    }

    @Test("the fictional 555 range is refused with live telephony, before anything is dialled", arguments: TestDatabase.all)
    func fictionalWithLiveTelephony(_ database: TestDatabase) async throws {
        // A live Twilio account that cannot be reached (`.invalid` never resolves; a Twilio API on loopback would be a
        // standalone `chorus sandbox`, which may call them): a refusal must come before any request to it.
        let live = [
            "CHORUS_TWILIO_ACCOUNT_SID": "AC00000000000000000000000000000000", "CHORUS_TWILIO_AUTH_TOKEN": "live-token",
            "CHORUS_TWILIO_FROM_NUMBER": "+12026661234", "CHORUS_TWILIO_API_BASE_URL": "http://api.twilio.invalid:9",
        ]
        try await TestServer.run(on: database, environment: live) { server in
            #expect(server.configuration.callDestinations.countries == ["US"])
            let token = try await server.register().accessToken
            let refused = try Self.refusal(try await server.makeCall(token, to: "+14155550123"))
            #expect(refused.error == "fictional_number")
            #expect(
                refused.message
                    == "This number is not called: 555-0100 to 555-0199 is the fictional range of the North American Numbering Plan; "
                    + "it can be called only with the sandbox telephony.")
            #expect(try await server.usage(token).trialCallsUsed == 0)
        }
    }

    @Test("invalid settings refuse to start, naming the problem")
    func settings() throws {
        for (key, value, words) in [
            ("CHORUS_CALL_DESTINATIONS", "US,XX", "unknown: XX"), ("CHORUS_CALL_DESTINATIONS", ",", "CHORUS_CALL_DESTINATIONS must list"),
            ("CHORUS_CALL_HOURS", "20:00-09:00", #"CHORUS_CALL_HOURS="20:00-09:00" is not valid: expected local hours such as 09:00-20:00"#),
            ("CHORUS_CALLS_PER_NUMBER_PER_DAY", "0", #"CHORUS_CALLS_PER_NUMBER_PER_DAY="0" is not valid: expected a whole number from 1 to 1000, or off"#),
            ("CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK", "many", #"CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK="many" is not valid"#),
        ] {
            do {
                _ = try ChorusConfiguration.load(from: [key: value])
                Issue.record("\(key)=\(value) was accepted")
            } catch let error as ConfigurationError {
                #expect(error.problems.contains { $0.contains(words) }, "\(error.problems)")
            }
        }
        let defaults = try ChorusConfiguration.load(from: [:])
        #expect(defaults.callDestinations == .init(countries: ["US"], hours: .standard, callsPerNumberPerDay: 3, accountsPerNumberPerWeek: 3))
        let off = try ChorusConfiguration.load(from: [
            "CHORUS_CALL_HOURS": "any", "CHORUS_CALLS_PER_NUMBER_PER_DAY": "off", "CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK": "off",
        ])
        #expect(off.callDestinations.hours == nil && off.callDestinations.callsPerNumberPerDay == nil)
        // A caller ID in a country without data needs the list.
        let foreign = [
            "CHORUS_TWILIO_ACCOUNT_SID": "AC1", "CHORUS_TWILIO_AUTH_TOKEN": "t", "CHORUS_TWILIO_FROM_NUMBER": "+79161234567",
        ]
        #expect(throws: ConfigurationError.self) { try ChorusConfiguration.load(from: foreign) }
        let listed = try ChorusConfiguration.load(from: foreign.merging(["CHORUS_CALL_DESTINATIONS": "GB"]) { $1 })
        #expect(listed.callDestinations.countries == ["GB"])
    }

    // MARK: Quiet hours

    @Test("quiet hours: make-call and schedule-call refused with the next allowed time; a call slipped into them is released", arguments: TestDatabase.all)
    func quietHours(_ database: TestDatabase) async throws {
        // Phoenix keeps UTC-7 all year: its calling hours are 16:00Z to 03:00Z. The clock reads 10:00Z, 03:00 there.
        let clock = Self.clock(atUTC: 10)
        try await TestServer.run(on: database, environment: Self.rulesOn, options: .testing(clock: clock.closure)) { server in
            let token = try await server.register().accessToken
            let opening = NumberLimitPeriods.day(of: clock.now).ends.addingTimeInterval(-8 * 3_600)  // 16:00Z, 09:00 in Phoenix
            let refused = try Self.refusal(try await server.makeCall(token, to: "+16025550123"))
            #expect(refused.error == "quiet_hours")
            #expect(refused.retryAt == opening)
            #expect(
                refused.message
                    == "It is outside the calling hours (09:00-20:00, the callee's local time) where this number is. "
                    + "Calls to it can be placed from \(ChorusJSON.formatDate(opening)).")
            let json = try #require(try await server.makeCall(token, to: "+16025550123").json["detail"] as? [String: Any])
            #expect(json["retry_at"] as? String == ChorusJSON.formatDate(opening))
            // New York (UTC-5 or -4): 05:00 or 06:00 there, quiet too; Honolulu (UTC-10): midnight.
            #expect(try Self.refusal(try await server.makeCall(token, to: "+12125550123")).error == "quiet_hours")
            #expect(try Self.refusal(try await server.makeCall(token, to: "+18085550123")).error == "quiet_hours")

            // Scheduling for a quiet time is refused; for a time inside the hours it is accepted.
            let night = clock.now.addingTimeInterval(18 * 3_600)  // 04:00Z next day, 21:00 in Phoenix
            let scheduledAtNight = try Self.refusal(
                try await server.request(
                    .POST, "/mobile/schedule-call", token: token,
                    json: ScheduleCallRequest(phoneNumber: "+16025550123", scenario: "default", scheduledTime: night)))
            #expect(scheduledAtNight.error == "quiet_hours")
            #expect(scheduledAtNight.retryAt == opening.addingTimeInterval(86_400))
            let evening = clock.now.addingTimeInterval(16 * 3_600 + 50 * 60)  // 02:50Z, 19:50 in Phoenix
            let accepted = try await server.request(
                .POST, "/mobile/schedule-call", token: token,
                json: ScheduleCallRequest(phoneNumber: "+16025550123", scenario: "default", scheduledTime: evening))
            #expect(accepted.status == 200, "\(accepted.text)")
            let schedule = try accepted.decode(ScheduledCallDTO.self)
            #expect(try await server.usage(token).trialCallsUsed == 0)
            #expect(try await Self.dialled(server) == 0)

            // Inside the hours the call goes through.
            clock.advance(days: 7.0 / 24)  // 17:00Z, 10:00 in Phoenix
            #expect(try await server.makeCall(token, to: "+16025550123").status == 200)
            #expect(try await server.usage(token).trialCallsUsed == 1)

            // The clock jumps past the scheduled moment (the job runs late, as after an outage): 03:30Z, 20:30 in Phoenix.
            clock.advance(days: 10.5 / 24)
            try await server.eventually("the slipped call is released") {
                let list = try await server.request(.GET, "/mobile/scheduled-calls", token: token).decode(ScheduledCallsResponse.self)
                return list.scheduledCalls.first { $0.scheduleID == schedule.scheduleID }?.status == "refused"
            }
            let list = try await server.request(.GET, "/mobile/scheduled-calls", token: token).decode(ScheduledCallsResponse.self)
            let released = try #require(list.scheduledCalls.first { $0.scheduleID == schedule.scheduleID })
            #expect(released.callSid == nil)
            #expect(released.failureReason?.hasPrefix("It is outside the calling hours (09:00-20:00, the callee's local time)") == true)
            #expect(try await server.usage(token).trialCallsUsed == 1)
            #expect(try await server.history(token).totalCalls == 1)
            #expect(try await Self.dialled(server) == 1)
        }
    }

    // MARK: Per-number limits

    @Test("concurrent calls to one number from several accounts: exactly the day's limit placed", arguments: TestDatabase.all)
    func dailyLimitUnderConcurrency(_ database: TestDatabase) async throws {
        let clock = Self.clock(atUTC: 18)  // inside the hours in New York
        let environment = Self.rulesOn.merging(["CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK": "10"]) { $1 }
        try await TestServer.run(on: database, environment: environment, options: .testing(clock: clock.closure)) { server in
            var tokens: [String] = []
            for _ in 0..<3 { tokens.append(try await server.register().accessToken) }
            let number = "+12125550142"
            // Twelve simultaneous requests, four from each account (each account's trial has three calls).
            let replies = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
                for index in 0..<12 {
                    let token = tokens[index % 3]
                    group.addTask { try await server.makeCall(token, to: number) }
                }
                var replies: [TestServer.Reply] = []
                for try await reply in group { replies.append(reply) }
                return replies
            }
            #expect(replies.filter { $0.status == 200 }.count == 3, "\(replies.map(\.text))")
            let refused = replies.filter { $0.status == 422 }
            #expect(refused.count == 9, "\(replies.filter { $0.status != 200 }.map(\.text))")
            let tomorrow = NumberLimitPeriods.day(of: clock.now).ends
            for reply in refused {
                let detail = try reply.decode(RefusalResponse.self).detail
                #expect(detail.error == "number_daily_limit")
                #expect(detail.retryAt == tomorrow)
                #expect(
                    detail.message
                        == "This number has already been called 3 times today, the most a number is called in a day. "
                        + "It can be called again from \(ChorusJSON.formatDate(tomorrow)).")
            }
            var charged = 0
            for token in tokens { charged += try await server.usage(token).trialCallsUsed }
            #expect(charged == 3)
            #expect(try await Self.dialled(server) == 3)
            // Another number is not affected; the next UTC day the number can be called again.
            let other = try await server.register().accessToken
            #expect(try await server.makeCall(other, to: "+12125550143").status == 200)
            #expect(try Self.refusal(try await server.makeCall(other, to: number)).error == "number_daily_limit")
            clock.advance(days: 1)
            #expect(try await server.makeCall(other, to: number).status == 200)
        }
    }

    @Test("concurrent calls to one number from many accounts: at most the week's accounts", arguments: TestDatabase.all)
    func accountLimitUnderConcurrency(_ database: TestDatabase) async throws {
        let clock = Self.clock(atUTC: 18)
        let environment = Self.rulesOn.merging(["CHORUS_CALLS_PER_NUMBER_PER_DAY": "20", "CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK": "2"]) { $1 }
        try await TestServer.run(on: database, environment: environment, options: .testing(clock: clock.closure)) { server in
            var tokens: [String] = []
            for _ in 0..<8 { tokens.append(try await server.register().accessToken) }
            let number = "+12125550177"
            let replies = try await withThrowingTaskGroup(of: (Int, TestServer.Reply).self) { group in
                for (index, token) in tokens.enumerated() {
                    group.addTask { (index, try await server.makeCall(token, to: number)) }
                }
                var replies: [(Int, TestServer.Reply)] = []
                for try await reply in group { replies.append(reply) }
                return replies
            }
            let admitted = replies.filter { $0.1.status == 200 }.map(\.0)
            #expect(admitted.count == 2, "\(replies.map(\.1.status))")
            let nextWeek = NumberLimitPeriods.week(of: clock.now).ends
            for (_, reply) in replies where reply.status != 200 {
                let detail = try Self.refusal(reply)
                #expect(detail.error == "number_account_limit")
                #expect(detail.retryAt == nextWeek)
                #expect(
                    detail.message
                        == "This number has been called from 2 different accounts this week, the most a number is called from. "
                        + "It can be called from another account again from \(ChorusJSON.formatDate(nextWeek)).")
            }
            var charged = 0
            for token in tokens { charged += try await server.usage(token).trialCallsUsed }
            #expect(charged == 2)
            // An account among the week's may call the number again (within the day's limit).
            let first = try #require(admitted.first)
            #expect(try await server.makeCall(tokens[first], to: number).status == 200)
            #expect(try await Self.dialled(server) == 3)
        }
    }
}
