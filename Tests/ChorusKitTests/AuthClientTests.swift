import ChorusKit
import Foundation
import Testing

/// Sessions against a real server: sign-in, transparent refresh, the end of a session.
@Suite("ChorusKit auth (live server)")
struct AuthClientTests {
    @Test("login with an email containing + and a password full of form delimiters")
    func loginPercentEncoding() async throws {
        try await LiveServer.run { server in
            let email = "first+chorus-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let password = "p+ss w&rd=100%é"
            try await server.client().auth.register(email: email, password: password)

            let store = InMemoryTokenStore()
            let chorus = server.client(tokenStore: store)
            // Sent unencoded, `+` would read as a space and `&`/`=` would split the fields: the login would fail.
            try await chorus.auth.login(email: email, password: password)
            #expect(await store.load() != nil)
            #expect(try await chorus.calls.usageStats().appType == .mobileConsumer)

            let wrong = await #expect(throws: ChorusError.self) {
                try await server.client().auth.login(email: email, password: password + "x")
            }
            guard case .unauthorized = wrong else {
                Issue.record("expected unauthorized, got \(String(describing: wrong))")
                return
            }
            #expect(wrong?.errorDescription == "The email or password is incorrect.")
        }
    }

    @Test("registering a taken email is an api error with the server's message")
    func duplicateRegistration() async throws {
        try await LiveServer.run { server in
            let email = LiveServer.newEmail()
            try await server.client().auth.register(email: email, password: "correct horse battery")
            let chorus = server.client()
            let error = await #expect(throws: ChorusError.self) {
                try await chorus.auth.register(email: email, password: "correct horse battery")
            }
            guard case .api(let status, let detail) = error else {
                Issue.record("expected api, got \(String(describing: error))")
                return
            }
            #expect(status == 400 && detail == "Email already registered")
            #expect(await !chorus.auth.isSignedIn)
        }
    }

    @Test("an invalid access token is refreshed transparently and the new pair stored")
    func invalidAccessTokenRefreshed() async throws {
        try await LiveServer.run { server in
            let store = InMemoryTokenStore()
            let chorus = server.client(tokenStore: store)
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            let issued = try #require(await store.load())
            await store.save(StoredTokens(accessToken: "garbage", refreshToken: issued.refreshToken))

            let usage = try await chorus.calls.usageStats()
            #expect(usage.trialCallsRemaining == 3)
            let renewed = try #require(await store.load())
            #expect(renewed.accessToken != "garbage")
            #expect(renewed.refreshToken != issued.refreshToken, "the server rotates refresh tokens")
            #expect(try await chorus.calls.callHistory().totalCalls == 0)
        }
    }

    @Test("an expired access token is refreshed transparently")
    func expiredAccessTokenRefreshed() async throws {
        // A real expiry. The renewed token lives as long (6 s): time enough for the replay on a loaded machine.
        try await LiveServer.run(environment: ["CHORUS_ACCESS_TOKEN_TTL": "6"]) { server in
            let store = InMemoryTokenStore()
            let chorus = server.client(tokenStore: store)
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            let issued = try #require(await store.load())
            try await Task.sleep(for: .milliseconds(6_200))
            let call = try await chorus.calls.makeCall(to: "+14155550100")
            #expect(call.sid.hasPrefix("CA"))
            #expect(await store.load()?.refreshToken != issued.refreshToken)
            #expect(try await chorus.calls.callHistory().totalCalls == 1, "the replayed request placed exactly one call")
        }
    }

    @Test("reusing a refresh token ends the session: signedOut, store cleared, successor revoked")
    func refreshTokenReuse() async throws {
        try await LiveServer.run { server in
            let store = InMemoryTokenStore()
            let chorus = server.client(tokenStore: store)
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            let original = try #require(await store.load())
            try await chorus.auth.refresh()
            let successor = try #require(await store.load())
            #expect(successor != original)

            // A stolen copy of the already-used refresh token comes back.
            await store.save(StoredTokens(accessToken: "expired", refreshToken: original.refreshToken))
            let error = await #expect(throws: ChorusError.self) { try await chorus.calls.usageStats() }
            guard case .signedOut = error else {
                Issue.record("expected signedOut, got \(String(describing: error))")
                return
            }
            #expect(await store.load() == nil)
            #expect(await !chorus.auth.isSignedIn)

            // Reuse detection revoked the whole session, including the successor's refresh token.
            let other = InMemoryTokenStore(successor)
            let otherError = await #expect(throws: ChorusError.self) { try await server.client(tokenStore: other).auth.refresh() }
            guard case .signedOut = otherError else {
                Issue.record("expected signedOut, got \(String(describing: otherError))")
                return
            }
            #expect(await other.load() == nil)
        }
    }

    @Test("logout clears the store and revokes the session on the server")
    func logout() async throws {
        try await LiveServer.run { server in
            let store = InMemoryTokenStore()
            let chorus = server.client(tokenStore: store)
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            let tokens = try #require(await store.load())
            try await chorus.auth.logout()
            #expect(await store.load() == nil)
            try await chorus.auth.logout()  // signed out already: nothing to do

            let stale = InMemoryTokenStore(StoredTokens(accessToken: "expired", refreshToken: tokens.refreshToken))
            let error = await #expect(throws: ChorusError.self) { try await server.client(tokenStore: stale).calls.usageStats() }
            guard case .signedOut = error else {
                Issue.record("expected signedOut, got \(String(describing: error))")
                return
            }
        }
    }

    @Test("a FileTokenStore session survives a new client (an app relaunch)")
    func fileStoreSession() async throws {
        try await LiveServer.run { server in
            let file = server.directory.appendingPathComponent("session/tokens.json")
            try await server.client(tokenStore: FileTokenStore(fileURL: file)).auth.register(
                email: LiveServer.newEmail(), password: "correct horse battery"
            )
            let relaunched = server.client(tokenStore: FileTokenStore(fileURL: file))
            #expect(await relaunched.auth.isSignedIn)
            #expect(try await relaunched.calls.usageStats().trialCallsRemaining == 3)
            try await relaunched.auth.logout()
            #expect(!FileManager.default.fileExists(atPath: file.path))
        }
    }
}
