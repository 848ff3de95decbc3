import ChorusAPI
import Foundation
import SQLKit
import Testing

@testable import ChorusServer

/// Issue 18: the rate limits that guard money or accounts (`auth`: sign-up, sign-in, refresh, the console's sign-in;
/// `calls`: make-call, schedule-call) hold across instances sharing one database: two instances allow the configured
/// total, not twice it, and requests racing at the limit on two or three instances admit exactly the limit.
@Suite struct SharedRateLimitTests {
    /// A clock one second into a whole hour, so a test's requests (seconds long) fall in one window of an hour or less.
    static func alignedClock() -> TestClock {
        let clock = TestClock()
        let seconds = clock.now.timeIntervalSince1970
        let next = (seconds / 3_600).rounded(.up) * 3_600
        clock.advance(days: (next + 1 - seconds) / 86_400)
        return clock
    }

    /// `count` instances on one fresh database with `limits` (`CHORUS_RATE_LIMITS`) and one clock; always stopped.
    static func instances(
        _ database: TestDatabase, count: Int, limits: String, clock: TestClock = alignedClock(), _ body: ([TestServer]) async throws -> Void
    ) async throws {
        let provisioned = try database.make()
        defer { provisioned.drop() }
        let environment = ["CHORUS_RATE_LIMITS": limits]
        var servers: [TestServer] = []
        do {
            for _ in 0..<count {
                servers.append(try await TestServer.start(database: provisioned, environment: environment, options: .testing(clock: clock.closure)))
            }
            try await body(servers)
        } catch {
            for server in servers { await server.stop() }
            throw error
        }
        for server in servers { await server.stop() }
    }

    /// Two instances on one fresh database (``instances(_:count:limits:clock:_:)``).
    static func twoInstances(
        _ database: TestDatabase, limits: String, clock: TestClock = alignedClock(), _ body: (TestServer, TestServer) async throws -> Void
    ) async throws {
        try await instances(database, count: 2, limits: limits, clock: clock) { servers in try await body(servers[0], servers[1]) }
    }

    static func store(_ server: TestServer) -> ChorusStore {
        ChorusStore(sql: server.app.db as! any SQLDatabase, reader: nil, writeGate: WriteGate())
    }

    static func login(_ server: TestServer) async throws -> TestServer.Reply {
        try await server.request(.POST, "/auth/login", form: "username=nobody%40example.com&password=whatever1")
    }

    static func expectRefused(_ reply: TestServer.Reply, window: Int) {
        #expect(reply.status == 429, "\(reply.text)")
        let retryAfter = Int(reply.headers.first(name: "Retry-After") ?? "") ?? -1
        #expect(retryAfter > 0 && retryAfter <= window, "Retry-After \(retryAfter)")
        #expect(reply.detail?.hasPrefix("Rate limit exceeded") == true, "\(reply.text)")
    }

    @Test("sign-in attempts split across two instances are limited at the configured total", arguments: TestDatabase.all)
    func signInAcrossInstances(_ database: TestDatabase) async throws {
        try await Self.twoInstances(database, limits: "auth=6/3600") { first, second in
            var statuses: [Int] = []
            for index in 0..<10 {
                let reply = try await Self.login(index.isMultiple(of: 2) ? first : second)
                statuses.append(reply.status)
                if index >= 6 { Self.expectRefused(reply, window: 3_600) }
            }
            #expect(statuses == [401, 401, 401, 401, 401, 401, 429, 429, 429, 429])
            // The console's sign-in has its own key under the same limit: not used up by the API's sign-ins.
            let console = try await first.request(.POST, "/console/login", form: "email=a%40example.com&password=x&csrf_token=t")
            #expect(console.status != 429, "\(console.status) \(console.text)")
        }
    }

    @Test("sign-in attempts racing on three instances at the limit admit exactly the limit", arguments: TestDatabase.all)
    func signInRace(_ database: TestDatabase) async throws {
        try await Self.instances(database, count: 3, limits: "auth=10/3600") { servers in
            let replies = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
                for index in 0..<40 {
                    group.addTask { try await Self.login(servers[index % 3]) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.filter { $0.status == 401 }.count == 10, "\(replies.map(\.status).sorted())")
            #expect(replies.filter { $0.status == 429 }.count == 30, "\(replies.map(\.status).sorted())")
        }
    }

    @Test("sign-ups racing on two instances at the limit create exactly the limit of accounts", arguments: TestDatabase.all)
    func signUpRace(_ database: TestDatabase) async throws {
        try await Self.twoInstances(database, limits: "auth=7/3600") { first, second in
            let replies = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await (index.isMultiple(of: 2) ? first : second).request(
                            .POST, "/auth/register", json: RegisterRequest(email: "racer-\(index)@example.com", password: "correct horse battery"))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.filter { $0.status == 200 }.count == 7, "\(replies.map(\.status).sorted())")
            #expect(replies.filter { $0.status == 429 }.count == 13, "\(replies.map(\.status).sorted())")
            let accounts = try await Self.store(first).sql.raw("SELECT COUNT(*) AS n FROM users").first().map { try $0.int("n") }
            #expect(accounts == 7)
            // The limit covers the refresh of the accounts created too.
            let refresh = try await second.request(.POST, "/auth/refresh", json: RefreshRequest(refreshToken: "not-a-token"))
            Self.expectRefused(refresh, window: 3_600)
        }
    }

    @Test("call placement split and racing across two instances is limited at the configured total", arguments: TestDatabase.all)
    func callsAcrossInstances(_ database: TestDatabase) async throws {
        try await Self.twoInstances(database, limits: "calls=2/3600") { first, second in
            let token = try await first.register().accessToken
            let replies = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
                for index in 0..<10 {
                    group.addTask {
                        try await (index.isMultiple(of: 2) ? first : second).makeCall(token, to: "+1415555\(String(format: "%04d", index))")
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.filter { $0.status == 200 }.count == 2, "\(replies.map(\.status).sorted())")
            #expect(replies.filter { $0.status == 429 }.count == 8, "\(replies.map(\.status).sorted())")
            #expect(try await first.history(token).totalCalls == 2)
            // schedule-call counts against the same limit, on either instance.
            for server in [first, second] {
                let scheduled = try await server.request(
                    .POST, "/mobile/schedule-call", token: token,
                    json: ScheduleCallRequest(phoneNumber: "+14155550999", scenario: "default", scheduledTime: nil))
                Self.expectRefused(scheduled, window: 3_600)
            }
            // Another user has a budget of their own.
            let other = try await second.register().accessToken
            #expect(try await second.makeCall(other).status == 200)
        }
    }

    @Test("a new window admits again, and ended windows are swept from the database", arguments: TestDatabase.all)
    func windowsEndAndAreSwept(_ database: TestDatabase) async throws {
        let clock = Self.alignedClock()
        try await Self.twoInstances(database, limits: "auth=2/60", clock: clock) { first, second in
            #expect(try await Self.login(first).status == 401)
            #expect(try await Self.login(second).status == 401)
            Self.expectRefused(try await Self.login(first), window: 60)
            Self.expectRefused(try await Self.login(second), window: 60)
            #expect(try await Self.store(first).rateLimits.windowCount() == 1)
            clock.advance(days: 120.0 / 86_400)  // two windows later, and past both instances' sweep interval
            #expect(try await Self.login(second).status == 401)
            #expect(try await Self.login(first).status == 401)
            Self.expectRefused(try await Self.login(second), window: 60)
            try await first.eventually("the ended window is swept") {
                try await Self.store(first).rateLimits.windowCount() == 1
            }
        }
    }

    @Test("the database cannot count: each instance still limits on its own", arguments: TestDatabase.all)
    func fallsBackToTheInstance(_ database: TestDatabase) async throws {
        try await Self.twoInstances(database, limits: "auth=2/3600") { first, second in
            try await Self.store(first).sql.raw("DROP TABLE rate_limit_windows").run()
            for server in [first, second] {
                #expect(try await Self.login(server).status == 401)
                #expect(try await Self.login(server).status == 401)
                Self.expectRefused(try await Self.login(server), window: 3_600)
            }
        }
    }

    @Test("windows are aligned to the epoch; Retry-After is the rest of the window; extreme clocks do not trap")
    func windows() {
        let minute = ChorusConfiguration.RateLimit(limit: 5, window: 60)
        let window = SharedRateLimiter.window("auth:203.0.113.7", minute, at: Date(epochMillis: 120_500))
        #expect(window == SharedRateLimiter.Window(key: "auth:203.0.113.7/60000", start: 120_000, end: 180_000, retryAfter: 60))
        #expect(SharedRateLimiter.window("k", minute, at: Date(epochMillis: 179_999)).retryAfter == 1)
        #expect(SharedRateLimiter.window("k", minute, at: Date(epochMillis: 180_000)).start == 180_000)
        let before1970 = SharedRateLimiter.window("k", minute, at: Date(epochMillis: -1))
        #expect(before1970.start == -60_000 && before1970.end == 0 && before1970.retryAfter == 1)
        for date in [Date.distantFuture, .distantPast, Date(timeIntervalSince1970: 1e300), Date(timeIntervalSince1970: -1e300)] {
            let extreme = SharedRateLimiter.window("k", minute, at: date)
            #expect(extreme.start <= extreme.end && extreme.retryAfter >= 1)
        }
        let tiny = SharedRateLimiter.window("k", ChorusConfiguration.RateLimit(limit: 1, window: 0.0001), at: Date(epochMillis: 5_000))
        #expect(tiny.start == 5_000 && tiny.end == 5_001 && tiny.retryAfter == 1)
    }
}

/// `CHORUS_TRUSTED_PROXIES`: behind a trusted proxy the sign-in limit counts per client address its `X-Forwarded-For`
/// names; from anyone else the header is ignored.
@Suite struct TrustedProxyRateLimitTests {
    static func login(_ server: TestServer, forwardedFor: String) async throws -> TestServer.Reply {
        try await server.request(
            .POST, "/auth/login", form: "username=nobody%40example.com&password=whatever1",
            headers: [("X-Forwarded-For", forwardedFor)])
    }

    @Test("trusted proxy: each forwarded client has its own sign-in budget, shared by both instances", arguments: TestDatabase.all)
    func perForwardedClient(_ database: TestDatabase) async throws {
        let provisioned = try database.make()
        defer { provisioned.drop() }
        let environment = ["CHORUS_RATE_LIMITS": "auth=2/3600", "CHORUS_TRUSTED_PROXIES": "127.0.0.1, ::1"]
        let clock = SharedRateLimitTests.alignedClock()
        let first = try await TestServer.start(database: provisioned, environment: environment, options: .testing(clock: clock.closure))
        let second = try await TestServer.start(database: provisioned, environment: environment, options: .testing(clock: clock.closure))
        var statuses: [String: [Int]] = [:]
        do {
            for client in ["198.51.100.1", "198.51.100.2"] {
                for server in [first, second, first] {
                    // A client's own X-Forwarded-For entry (to the left) does not give it a new budget.
                    let reply = try await Self.login(server, forwardedFor: "203.0.113.\(statuses[client, default: []].count), \(client)")
                    statuses[client, default: []].append(reply.status)
                }
            }
        } catch {
            await first.stop(); await second.stop()
            throw error
        }
        await first.stop()
        await second.stop()
        #expect(statuses["198.51.100.1"] == [401, 401, 429])
        #expect(statuses["198.51.100.2"] == [401, 401, 429])
    }

    @Test("no trusted proxy: X-Forwarded-For is ignored and the peer's budget is spent", arguments: TestDatabase.all)
    func headerIgnoredWithoutTrust(_ database: TestDatabase) async throws {
        try await SharedRateLimitTests.instances(database, count: 1, limits: "auth=2/3600") { servers in
            var statuses: [Int] = []
            for index in 0..<3 { statuses.append(try await Self.login(servers[0], forwardedFor: "198.51.100.\(index)").status) }
            #expect(statuses == [401, 401, 429])
        }
    }
}
