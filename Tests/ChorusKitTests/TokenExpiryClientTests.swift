import ChorusKit
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 20: access tokens that really expire on a real server — renewed once for every request refused at the same
/// time, replayed transparently; a server that calls even a fresh token expired gives ``ChorusError/tokenExpired``.
@Suite("ChorusKit token expiry (live server)")
struct TokenExpiryClientTests {
    /// The real transport, counting what it sends.
    actor CountingTransport: HTTPTransport {
        private let transport = URLSessionTransport()
        private(set) var paths: [String] = []
        private(set) var expiredAnswers = 0

        func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
            paths.append(request.url?.path ?? "")
            let (data, response) = try await transport.send(request)
            if response.statusCode == 401, response.value(forHTTPHeaderField: "WWW-Authenticate")?.contains("expired") == true {
                expiredAnswers += 1
            }
            return (data, response)
        }

        func count(_ suffix: String) -> Int { paths.filter { $0.hasSuffix(suffix) }.count }
    }

    @Test("eight requests at once after the access token expired: one refresh, every request answered, the new pair stored")
    func concurrentRequestsAfterExpiryRefreshOnce() async throws {
        // Tokens live 3 s: long enough for the replays, short enough to wait for.
        try await LiveServer.run(environment: ["CHORUS_ACCESS_TOKEN_TTL": "3"]) { server in
            let store = InMemoryTokenStore()
            let transport = CountingTransport()
            let chorus = ChorusClient(environment: .custom(server.baseURL), tokenStore: store, transport: transport)
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            let issued = try #require(await store.load())
            #expect(try await chorus.calls.usageStats().appType == .mobileConsumer)
            try await Task.sleep(for: .seconds(4.2))

            let answered = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        if index.isMultiple(of: 2) { return try await chorus.calls.usageStats().appType == .mobileConsumer }
                        return try await chorus.calls.callPermission().status.isKnown
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(answered.count == 8 && answered.allSatisfy { $0 })
            #expect(await transport.count("/auth/refresh") == 1)
            // The requests sent with the expired token were refused as expired (the server said so), each replayed
            // once; one sent after the renewal (a slow task) went through at once.
            let refused = await transport.expiredAnswers
            #expect((1...8).contains(refused))
            let sent = await transport.count("/mobile/usage-stats") + transport.count("/mobile/check-call-permission")
            let paths = await transport.paths
            #expect(sent == 1 + 8 + refused, "\(paths)")
            let renewed = try #require(await store.load())
            #expect(renewed.accessToken != issued.accessToken && renewed.refreshToken != issued.refreshToken)
        }
    }

    @Test("an access token the server calls expired even when fresh: tokenExpired, after one refresh, and the session is kept")
    func freshTokenCalledExpired() async throws {
        // Every token is born expired: the replay with the renewed one is refused as expired too.
        try await LiveServer.run(environment: ["CHORUS_ACCESS_TOKEN_TTL": "0.001"]) { server in
            let store = InMemoryTokenStore()
            let transport = CountingTransport()
            let chorus = ChorusClient(environment: .custom(server.baseURL), tokenStore: store, transport: transport)
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")

            let error = await #expect(throws: ChorusError.self) { try await chorus.calls.usageStats() }
            guard case .tokenExpired = error else {
                Issue.record("expected tokenExpired, got \(String(describing: error))")
                return
            }
            #expect(error?.errorDescription == "Your sign-in could not be renewed just now. Please try again in a moment.")
            #expect(await transport.count("/auth/refresh") == 1)
            #expect(await transport.expiredAnswers == 2)
            // Not signed out: the refresh token still holds, and the explicit refresh works.
            #expect(await chorus.auth.isSignedIn)
            try await chorus.auth.refresh()
            #expect(await transport.count("/auth/refresh") == 2)
        }
    }

    @Test("the realtime WebSocket: a token the server calls expired even when renewed is tokenExpired, and the session is kept")
    func webSocketFreshTokenCalledExpired() async throws {
        try await LiveServer.run(environment: ["CHORUS_ACCESS_TOKEN_TTL": "0.001"]) { server in
            let store = InMemoryTokenStore()
            let transport = WebSocketKitTransport()
            let chorus = ChorusClient(environment: .custom(server.baseURL), tokenStore: store, transport: transport)
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            let issued = try #require(await store.load())

            let error = await #expect(throws: ChorusError.self) { try await chorus.voice.connect() }
            guard case .tokenExpired = error else {
                Issue.record("expected tokenExpired, got \(String(describing: error))")
                return
            }
            // Renewed once (the refresh token rotated), and still signed in.
            let kept = try #require(await store.load())
            #expect(kept.refreshToken != issued.refreshToken)
            #expect(await chorus.auth.isSignedIn)
        }
    }

    @Test("a garbage access token with a refresh token the server refuses still ends the session (signedOut)")
    func garbageWithRefusedRefresh() async throws {
        try await LiveServer.run { server in
            let store = InMemoryTokenStore(StoredTokens(accessToken: "garbage", refreshToken: "not-a-refresh-token"))
            let transport = CountingTransport()
            let chorus = ChorusClient(environment: .custom(server.baseURL), tokenStore: store, transport: transport)
            let error = await #expect(throws: ChorusError.self) { try await chorus.calls.usageStats() }
            guard case .signedOut = error else {
                Issue.record("expected signedOut, got \(String(describing: error))")
                return
            }
            #expect(await transport.expiredAnswers == 0)
            #expect(await store.load() == nil)
        }
    }
}
