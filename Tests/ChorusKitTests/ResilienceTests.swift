import ChorusKit
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session and retry machinery against a real server: concurrent refreshes, a stolen refresh token, and a
/// make-call whose answer is lost on the way back.
@Suite("ChorusKit resilience (live server)")
struct ResilienceTests {
    @Test("20 concurrent requests with an expired access token cause exactly one refresh")
    func concurrentExpiredRequestsRefreshOnce() async throws {
        try await LiveServer.run { server in
            let store = InMemoryTokenStore()
            let transport = RecordingTransport()
            let chorus = ChorusClient(baseURL: server.baseURL, tokenStore: store, transport: transport)
            #expect(chorus.environment == .custom(server.baseURL))
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            let issued = try #require(await store.load())
            // An access token the server refuses, as it refuses an expired one (401). Waiting for a short-lived token
            // to expire would make the renewed one short-lived too, and a loaded machine could outlast it mid-test.
            await store.save(StoredTokens(accessToken: issued.accessToken + "x", refreshToken: issued.refreshToken))

            let remaining = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        index.isMultiple(of: 2)
                            ? try await chorus.calls.usageStats().trialCallsRemaining : try await chorus.calls.callHistory().totalCalls
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(remaining.count == 20)
            let log = await transport.log
            #expect(log.filter { $0.path.hasSuffix("/auth/refresh") }.count == 1)
            #expect(log.filter { $0.path.hasSuffix("/auth/refresh") }.first?.status == 200)
            let renewed = try #require(await store.load())
            #expect(renewed.refreshToken != issued.refreshToken)
            // The one refresh left a working session: no request needed a second one.
            #expect(try await chorus.calls.usageStats().trialCallsRemaining == 3)
            #expect(await transport.log.filter { $0.path.hasSuffix("/auth/refresh") }.count == 1)
        }
    }

    @Test("a reused refresh token signs the client out: signedOut, store cleared, for every request in flight")
    func reusedRefreshTokenSignsOut() async throws {
        try await LiveServer.run { server in
            let store = InMemoryTokenStore()
            let chorus = server.client(tokenStore: store)
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            let original = try #require(await store.load())
            try await chorus.auth.refresh()  // rotates: `original.refreshToken` is now spent

            // A copy of the spent refresh token comes back, with an access token the server refuses.
            await store.save(StoredTokens(accessToken: "expired", refreshToken: original.refreshToken))
            let outcomes = await withTaskGroup(of: (any Error)?.self) { group in
                for _ in 0..<5 {
                    group.addTask {
                        do {
                            _ = try await chorus.calls.usageStats()
                            return nil
                        } catch {
                            return error
                        }
                    }
                }
                return await group.reduce(into: [(any Error)?]()) { $0.append($1) }
            }
            #expect(outcomes.count == 5)
            for outcome in outcomes {
                guard case .signedOut? = outcome as? ChorusError else {
                    Issue.record("expected signedOut, got \(String(describing: outcome))")
                    continue
                }
            }
            #expect(await store.load() == nil)
            #expect(await !chorus.auth.isSignedIn)
            let next = await #expect(throws: ChorusError.self) { try await chorus.calls.usageStats() }
            guard case .signedOut = next else {
                Issue.record("expected signedOut, got \(String(describing: next))")
                return
            }
        }
    }

    @Test("a make-call whose answer is lost is retried with the same key and places one call")
    func droppedMakeCallAnswer() async throws {
        try await LiveServer.run { server in
            let transport = RecordingTransport(dropFirstAnswerTo: "/mobile/make-call")
            let chorus = ChorusClient(
                environment: .custom(server.baseURL), tokenStore: InMemoryTokenStore(), transport: transport,
                options: ChorusClientOptions(retry: RetryPolicy(maxAttempts: 3, baseDelay: 0.05, maxDelay: 1))
            )
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")

            let call = try await chorus.calls.makeCall(to: "+14155550100")

            let attempts = await transport.log.filter { $0.path.hasSuffix("/mobile/make-call") }
            #expect(attempts.count == 2, "the dropped attempt and one retry")
            #expect(attempts.map(\.status) == [200, 200], "the server answered both; the client saw only the second")
            #expect(attempts[0].idempotencyKey != nil && attempts[0].idempotencyKey == attempts[1].idempotencyKey)
            #expect(attempts[1].replayed, "the second answer is the first one, replayed")
            let dropped = try #require(attempts[0].body)
            #expect(String(decoding: dropped, as: UTF8.self).contains(call.sid), "the SDK returns the original call")

            let history = try await chorus.calls.callHistory()
            #expect(history.totalCalls == 1)
            #expect(history.calls.map(\.sid) == [call.sid])
            #expect(try await chorus.calls.usageStats().trialCallsRemaining == 2, "charged once")
        }
    }
}

extension ResilienceTests {
    @Test("a schedule-call whose answer is lost is retried with the same key and schedules one call")
    func droppedScheduleCallAnswer() async throws {
        try await LiveServer.run { server in
            let transport = RecordingTransport(dropFirstAnswerTo: "/mobile/schedule-call")
            let chorus = ChorusClient(
                environment: .custom(server.baseURL), tokenStore: InMemoryTokenStore(), transport: transport,
                options: ChorusClientOptions(retry: RetryPolicy(maxAttempts: 3, baseDelay: 0.05, maxDelay: 1))
            )
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")

            let scheduled = try await chorus.calls.scheduleCall(to: "+14155550100", at: Date().addingTimeInterval(3_600))

            let attempts = await transport.log.filter { $0.path.hasSuffix("/mobile/schedule-call") }
            #expect(attempts.count == 2, "the dropped attempt and one retry")
            #expect(attempts[0].idempotencyKey != nil && attempts[0].idempotencyKey == attempts[1].idempotencyKey)
            #expect(attempts[1].replayed, "the second answer is the first one, replayed")
            #expect(try await chorus.calls.scheduledCalls().map(\.id) == [scheduled.id])
        }
    }
}

/// The real URLSession transport, recording every exchange; optionally it loses the first answer to one path: the
/// request reaches the server and is answered, and the client is told the connection was lost.
actor RecordingTransport: HTTPTransport {
    struct Exchange: Sendable {
        var method: String
        var path: String
        var idempotencyKey: String?
        var status: Int
        var replayed: Bool
        var body: Data?
    }

    private let inner = URLSessionTransport()
    private var dropPath: String?
    private(set) var log: [Exchange] = []

    init(dropFirstAnswerTo path: String? = nil) {
        self.dropPath = path
    }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await inner.send(request)
        let path = request.url?.path ?? ""
        log.append(
            Exchange(
                method: request.httpMethod ?? "GET", path: path, idempotencyKey: request.value(forHTTPHeaderField: "Idempotency-Key"),
                status: response.statusCode, replayed: response.value(forHTTPHeaderField: "Idempotent-Replayed") == "true", body: data
            ))
        if let dropPath, path.hasSuffix(dropPath) {
            self.dropPath = nil
            throw URLError(.networkConnectionLost)
        }
        return (data, response)
    }
}
