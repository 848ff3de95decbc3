import ChorusAPI
import Foundation
import NIOWebSocket
import SQLKit
import Testing

@testable import ChorusServer

/// Issue 16 §6 over loopback HTTP: logout, refresh-token reuse and the console's revoke end access at once (on the
/// instance that revoked) and within ``SessionCheck/lifetime`` elsewhere; a deleted account gets 401; input rules.
@Suite("Access revocation and input rules")
struct AccessRevocationTests {
    @Test("logout, refresh-token reuse and the console's revoke end the access token at its next request", arguments: TestDatabase.all)
    func revocation(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            // Logout: the next request is refused, and the session's open WebSocket is closed within seconds.
            let out = try await server.register()
            #expect(try await server.request(.GET, "/mobile/usage-stats", token: out.accessToken).status == 200)
            let live = try await RealtimeCapsTests.Socket.connect(server, token: out.accessToken)
            let other = try await Self.login(server, out)
            let otherLive = try await RealtimeCapsTests.Socket.connect(server, token: other.accessToken)
            #expect(try await server.request(.POST, "/auth/logout", token: out.accessToken).status == 200)
            let loggedOutAt = ContinuousClock.now
            let afterLogout = try await server.request(.GET, "/mobile/usage-stats", token: out.accessToken)
            #expect(afterLogout.status == 401 && afterLogout.detail == "Could not validate credentials")
            #expect(try await live.closed() == .policyViolation)
            #expect(ContinuousClock.now - loggedOutAt <= SessionCheck.lifetime * 2 + .seconds(1))
            // The same account's other session keeps its socket.
            #expect(!otherLive.socket.isClosed)
            try await otherLive.socket.close()

            // Refresh-token reuse: the stolen token's session ends, both access tokens with it.
            let reused = try await server.register()
            let rotated = try await server.request(.POST, "/auth/refresh", json: RefreshRequest(refreshToken: reused.refreshToken))
            #expect(rotated.status == 200)
            let successor = try rotated.decode(TokenResponse.self)
            #expect(try await server.request(.GET, "/mobile/usage-stats", token: successor.accessToken).status == 200)
            let replay = try await server.request(.POST, "/auth/refresh", json: RefreshRequest(refreshToken: reused.refreshToken))
            #expect(replay.status == 401)
            #expect(try await server.request(.GET, "/mobile/usage-stats", token: successor.accessToken).status == 401)
            #expect(try await server.request(.GET, "/mobile/usage-stats", token: reused.accessToken).status == 401)

            // The console's revoke: every session of the user, the realtime socket's upgrade included.
            let (browser, cookies, csrf) = try await ConsoleTests.operatorSession(server)
            defer { Task { await browser.shutdown() } }
            let revoked = try await server.register()
            let second = try await Self.login(server, revoked)
            #expect(try await server.request(.GET, "/mobile/usage-stats", token: second.accessToken).status == 200)
            let userID = try #require(try CompactJWS.payload(revoked.accessToken)["sub"] as? String)
            let done = try await browser.send(.POST, "/console/api/users/\(userID)/revoke-sessions", cookies: cookies, headers: [("X-CSRF-Token", csrf)])
            #expect(done.status == 200, "\(done.text)")
            for token in [revoked.accessToken, second.accessToken] {
                #expect(try await server.request(.GET, "/mobile/usage-stats", token: token).status == 401)
                #expect(try await server.request(.GET, "/ws", token: token).status == 401)
            }
            // Signing in again works: only the old sessions ended.
            #expect(try await server.request(.GET, "/mobile/usage-stats", token: try await Self.login(server, revoked).accessToken).status == 200)
        }
    }

    static func email(of tokens: TokenResponse, _ server: TestServer) async throws -> String {
        let userID = try #require(try CompactJWS.payload(tokens.accessToken)["sub"] as? String)
        let email = try #require(
            try await (server.app.db as! any SQLDatabase).raw("SELECT email FROM users WHERE id = \(bind: userID)").first()?
                .decode(column: "email", as: String.self))
        return email.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? email
    }

    static func login(_ server: TestServer, _ tokens: TokenResponse) async throws -> TokenResponse {
        let email = try await email(of: tokens, server)
        return try await server.request(.POST, "/auth/login", form: "username=\(email)&password=correct%20horse%20battery").decode(TokenResponse.self)
    }

    @Test("a revocation on one instance ends access on another within the session check's lifetime", arguments: TestDatabase.all)
    func acrossInstances(_ database: TestDatabase) async throws {
        let provisioned = try database.make()
        defer { provisioned.drop() }
        let first = try await TestServer.start(database: provisioned)
        let second = try await TestServer.start(database: provisioned)
        do {
            let tokens = try await first.register()
            // The second instance has checked (and remembers) the session.
            #expect(try await second.request(.GET, "/mobile/usage-stats", token: tokens.accessToken).status == 200)
            #expect(try await first.request(.POST, "/auth/logout", token: tokens.accessToken).status == 200)
            let clock = ContinuousClock()
            let revokedAt = clock.now
            try await second.eventually(timeout: .seconds(15), "the other instance refuses the token") {
                try await second.request(.GET, "/mobile/usage-stats", token: tokens.accessToken).status == 401
            }
            let took = clock.now - revokedAt
            #expect(took <= SessionCheck.lifetime + .seconds(1), "took \(took)")
        } catch {
            await first.stop()
            await second.stop()
            throw error
        }
        await first.stop()
        await second.stop()
    }

    @Test("a write for a deleted account answers 401, not 500", arguments: TestDatabase.all)
    func deletedAccount(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let tokens = try await server.register()
            // The session is checked and remembered as active, then the account goes.
            #expect(try await server.request(.GET, "/heroes", token: tokens.accessToken).status == 200)
            let userID = try #require(try CompactJWS.payload(tokens.accessToken)["sub"] as? String)
            try await (server.app.db as! any SQLDatabase).raw("DELETE FROM users WHERE id = \(bind: userID)").run()
            let hero = HeroRequest(name: "Mia", traits: ["brave"], appearance: "a girl with red curly hair and a yellow raincoat")
            let write = try await server.request(.POST, "/heroes", token: tokens.accessToken, json: hero)
            #expect(write.status == 401 && write.detail == "Could not validate credentials", "\(write.status) \(write.text)")
            let profile = try await server.request(.PUT, "/me/profile", token: tokens.accessToken, json: MessagingProfileDTO(displayName: "Gone"))
            #expect(profile.status == 401, "\(profile.text)")
        }
    }

    @Test("emails with control, NUL or bidi characters are refused; display names and group titles are NFC, without bidi controls, limited in bytes")
    func inputRules() async throws {
        try await TestServer.run(on: .sqlite) { server in
            for email in [
                "nul\u{0}@example.com", "bell\u{7}@example.com", "evil\u{202E}moc.elpmaxe@example.com", "isolate\u{2066}@example.com",
                "zero\u{200B}width@example.com", "del\u{7F}@example.com", String(repeating: "é", count: 40) + "@example.com",
            ] {
                let reply = try await server.request(
                    .POST, "/auth/register", json: RegisterRequest(email: email, password: "correct horse battery"))
                #expect(reply.status == 422, "\(email.unicodeScalars.map { String($0.value, radix: 16) }): \(reply.text)")
            }
            let tokens = try await server.register()
            func setName(_ name: String) async throws -> TestServer.Reply {
                try await server.request(.PUT, "/me/profile", token: tokens.accessToken, json: MessagingProfileDTO(displayName: name))
            }
            // Decomposed input is stored composed: "Zoe" + U+0308 becomes "Zoë" (U+00EB).
            let decomposed = try await setName("Zoe\u{308} ")
            #expect(decomposed.status == 200, "\(decomposed.text)")
            let stored = try await server.request(.GET, "/me/profile", token: tokens.accessToken).decode(MessagingProfileDTO.self)
            #expect(stored.displayName.map { Array($0.unicodeScalars) } == Array("Zo\u{EB}".unicodeScalars))
            for bad in ["Mom\u{202E}olleH", "\u{2067}Dad", "Nul\u{0}l", "a" + String(repeating: "\u{301}", count: 300), "   "] {
                let reply = try await setName(bad)
                #expect(reply.status == 422, "\(reply.text)")
                #expect((reply.json["errors"] as? [[String: Any]])?.first?["field"] as? String == "display_name")
            }
            // Emoji sequences (zero-width joiners) and scripts that need joiners are names like any other.
            #expect(try await setName("👨‍👩‍👧 Family").status == 200)
            #expect(try await setName("می‌خواهم").status == 200)
            // Group titles follow the same rules.
            func group(_ title: String) async throws -> TestServer.Reply {
                try await server.request(
                    .POST, "/conversations", token: tokens.accessToken,
                    json: CreateConversationRequest(kind: "group", title: title, memberEmails: ["someone@example.com"]))
            }
            #expect(try await group("Trip \u{202E}gpj.exe").status == 422)
            #expect(try await group(String(repeating: "\u{1F600}", count: 101)).status == 422)  // 101 characters
            #expect(try await group("a" + String(repeating: "\u{301}", count: 250)).status == 422)  // one character, 500 bytes
            let created = try await group("Cafe\u{301} crew")
            #expect(created.status == 201 || created.status == 200, "\(created.text)")
            #expect(try created.decode(ConversationDTO.self).title.map { Array($0.unicodeScalars) } == Array("Caf\u{E9} crew".unicodeScalars))
        }
    }
}
