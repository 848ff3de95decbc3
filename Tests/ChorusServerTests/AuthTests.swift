import ChorusAPI
import Foundation
import Testing

@testable import ChorusServer

@Suite("Auth")
struct AuthTests {
    @Test("register, login, refresh, logout", arguments: TestDatabase.all)
    func lifecycle(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let tokens = try await server.register(email: "Mobile@Test.com", password: "password123")
            #expect(tokens.tokenType == "bearer")
            #expect(tokens.expiresIn == 900)
            #expect(try await server.usage(tokens.accessToken).appType == "mobile_consumer")

            // Same email in another case is the same account.
            let duplicate = try await server.request(
                .POST, "/auth/register", json: RegisterRequest(email: "mobile@TEST.com", password: "password123"))
            #expect(duplicate.status == 400)
            #expect(duplicate.detail == "Email already registered")

            let login = try await server.request(.POST, "/auth/login", form: "username=mobile%40test.com&password=password123")
            #expect(login.status == 200, "\(login.text)")
            let loggedIn = try login.decode(TokenResponse.self)

            let refreshed = try await server.request(.POST, "/auth/refresh", json: RefreshRequest(refreshToken: loggedIn.refreshToken))
            #expect(refreshed.status == 200)
            let pair = try refreshed.decode(TokenResponse.self)
            #expect(pair.refreshToken != loggedIn.refreshToken)
            #expect(try await server.usage(pair.accessToken).callsMadeTotal == 0)

            let logout = try await server.request(
                .POST, "/auth/logout", token: pair.accessToken, json: LogoutRequest(refreshToken: pair.refreshToken))
            #expect(logout.status == 200)
            #expect(logout.detail == "Logged out successfully")
            let afterLogout = try await server.request(.POST, "/auth/refresh", json: RefreshRequest(refreshToken: pair.refreshToken))
            #expect(afterLogout.status == 401)
            // The first registration's session is independent and still works.
            let other = try await server.request(.POST, "/auth/refresh", json: RefreshRequest(refreshToken: tokens.refreshToken))
            #expect(other.status == 200)
        }
    }

    @Test("bad credentials and validation", arguments: TestDatabase.all)
    func rejections(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            _ = try await server.register(email: "a@example.com", password: "password123")
            let wrong = try await server.request(.POST, "/auth/login", form: "username=a%40example.com&password=wrong-password")
            #expect(wrong.status == 401)
            #expect(wrong.detail == "Incorrect username or password")
            let unknown = try await server.request(.POST, "/auth/login", form: "username=nobody%40example.com&password=password123")
            #expect(unknown.status == 401)
            #expect(unknown.detail == "Incorrect username or password")

            let short = try await server.request(.POST, "/auth/register", json: RegisterRequest(email: "b@example.com", password: "short"))
            #expect(short.status == 422)
            #expect(short.detail == "Validation error")
            #expect((short.json["errors"] as? [[String: String]])?.first?["field"] == "password")
            let badEmail = try await server.request(.POST, "/auth/register", json: RegisterRequest(email: "not-an-email", password: "password123"))
            #expect(badEmail.status == 422)
            #expect((badEmail.json["errors"] as? [[String: String]])?.first?["field"] == "email")
            let tooLong = try await server.request(
                .POST, "/auth/register", json: RegisterRequest(email: "c@example.com", password: String(repeating: "x", count: 129))
            )
            #expect(tooLong.status == 422)
            let missing = try await server.request(
                .POST, "/auth/register", body: Data(#"{"email":"d@example.com"}"#.utf8), headers: [("Content-Type", "application/json")])
            #expect(missing.status == 422)
            #expect((missing.json["errors"] as? [[String: String]])?.first == ["field": "password", "message": "Field required"])
        }
    }

    @Test("passwords longer than bcrypt's 72 bytes are not truncated", arguments: TestDatabase.all)
    func longPasswords(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let base = String(repeating: "p", count: 100)
            _ = try await server.register(email: "long@example.com", password: base + "A")
            let sameFirst72 = try await server.request(.POST, "/auth/login", form: "username=long%40example.com&password=\(base)B")
            #expect(sameFirst72.status == 401)
            let exact = try await server.request(.POST, "/auth/login", form: "username=long%40example.com&password=\(base)A")
            #expect(exact.status == 200)
        }
    }

    @Test("tokens: missing, malformed, refresh-as-access", arguments: TestDatabase.all)
    func tokenChecks(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let tokens = try await server.register()
            let missing = try await server.request(.GET, "/mobile/usage-stats")
            #expect(missing.status == 401)
            #expect(missing.detail == "Not authenticated")
            #expect(missing.headers.first(name: "WWW-Authenticate") == "Bearer")
            let garbage = try await server.request(.GET, "/mobile/usage-stats", token: "not.a.jwt")
            #expect(garbage.status == 401)
            #expect(garbage.detail == "Could not validate credentials")
            #expect(garbage.headers.first(name: "WWW-Authenticate") == #"Bearer error="invalid_token""#)
            let refreshAsAccess = try await server.request(.GET, "/mobile/usage-stats", token: tokens.refreshToken)
            #expect(refreshAsAccess.status == 401)
            // A token signed with another key is rejected.
            let parts = tokens.accessToken.split(separator: ".")
            let forged = "\(parts[0]).\(parts[1]).\(String(parts[2].reversed()))"
            #expect(try await server.request(.GET, "/mobile/usage-stats", token: forged).status == 401)
        }
    }

    @Test("20 concurrent refreshes with one token: exactly one succeeds, the family is revoked", arguments: TestDatabase.all)
    func concurrentRefresh(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let tokens = try await server.register()
            let replies = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
                for _ in 0..<20 {
                    group.addTask { try await server.request(.POST, "/auth/refresh", json: RefreshRequest(refreshToken: tokens.refreshToken)) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let winners = replies.filter { $0.status == 200 }
            #expect(winners.count == 1)
            #expect(replies.filter { $0.status == 401 }.count == 19)
            // Reuse revoked the family: the winner's new refresh token is dead too.
            let successor = try winners[0].decode(TokenResponse.self).refreshToken
            let afterReuse = try await server.request(.POST, "/auth/refresh", json: RefreshRequest(refreshToken: successor))
            #expect(afterReuse.status == 401)
        }
    }

    @Test("auth endpoints are rate limited per IP with Retry-After", arguments: [TestDatabase.sqlite])
    func rateLimit(_ database: TestDatabase) async throws {
        // The window is a whole minute (counted in the database): the clock starts one second into one.
        let options = ChorusApp.Options.testing(clock: SharedRateLimitTests.alignedClock().closure)
        try await TestServer.run(on: database, environment: ["CHORUS_RATE_LIMITS": "auth=3/60"], options: options) { server in
            var statuses: [Int] = []
            for _ in 0..<4 {
                statuses.append(try await server.request(.POST, "/auth/login", form: "username=x%40example.com&password=whatever1").status)
            }
            #expect(statuses == [401, 401, 401, 429])
            let limited = try await server.request(.POST, "/auth/login", form: "username=x%40example.com&password=whatever1")
            #expect(limited.status == 429)
            #expect(Int(limited.headers.first(name: "Retry-After") ?? "") ?? 0 > 0)
            #expect(limited.detail?.hasPrefix("Rate limit exceeded") == true)
        }
    }
}
