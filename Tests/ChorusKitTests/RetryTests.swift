import Foundation
import Testing

@testable import ChorusKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Retries through a scripted transport: which answers and failures are retried, how long the client waits, and
/// that every attempt is the same request.
@Suite("ChorusKit retries")
struct RetryTests {
    private static let base = URL(string: "https://chorus.invalid")!
    private static let tokens = StoredTokens(accessToken: "access-1", refreshToken: "refresh-1")

    private func client(_ transport: ScriptedTransport, retry: RetryPolicy) -> ChorusClient {
        ChorusClient(
            environment: .custom(Self.base), tokenStore: InMemoryTokenStore(Self.tokens), transport: transport,
            options: ChorusClientOptions(timeout: 5, retry: retry)
        )
    }

    private func session(_ transport: ScriptedTransport, retry: RetryPolicy) -> APISession {
        APISession(
            baseURL: Self.base, tokenStore: InMemoryTokenStore(Self.tokens), transport: transport,
            options: ChorusClientOptions(timeout: 5, retry: retry)
        )
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    @Test("429 with Retry-After: 1, then 200: one retry, after about one second")
    func rateLimitedThenOK() async throws {
        let transport = ScriptedTransport([
            .answer(429, headers: ["Retry-After": "1"], body: #"{"detail":"Rate limit exceeded"}"#), .answer(200, body: "{}"),
        ])
        let session = session(transport, retry: RetryPolicy(maxAttempts: 3, baseDelay: 0.05, maxDelay: 5))
        let elapsed = try await ContinuousClock().measure { try await session.send(.get("/mobile/usage-stats")) }
        #expect(await transport.requests.count == 2)
        // Wall-clock lower bound only: a loaded machine may wake the task late, never early.
        #expect(Self.seconds(elapsed) >= 0.95, "waited \(elapsed), not Retry-After")
    }

    @Test("503 without Retry-After is retried with exponential backoff, then the last 503 is delivered")
    func unavailableBackoff() async throws {
        let transport = ScriptedTransport([
            .answer(503, body: #"{"detail":"The App Store cannot be reached"}"#), .answer(503, body: "{}"), .answer(200, body: "{}"),
        ])
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: 0.2, maxDelay: 5)
        let elapsed = try await ContinuousClock().measure { try await session(transport, retry: policy).send(.get("/mobile/pricing")) }
        let times = await transport.requests.map(\.time)
        #expect(times.count == 3)
        // Equal jitter: at least half of 0.2 s, then at least half of 0.4 s.
        #expect(Self.seconds(times[1] - times[0]) >= 0.1 && Self.seconds(times[2] - times[1]) >= 0.2, "\(elapsed)")

        let exhausted = ScriptedTransport(Array(repeating: .answer(503, headers: ["X-Request-ID": "req-9"], body: "{}"), count: 3))
        let error = await #expect(throws: ChorusError.self) {
            try await session(exhausted, retry: RetryPolicy(maxAttempts: 2, baseDelay: 0.01, maxDelay: 1)).send(.get("/mobile/pricing"))
        }
        guard case .server(503, "req-9") = error else {
            Issue.record("expected server(503, req-9), got \(String(describing: error))")
            return
        }
        #expect(await exhausted.requests.count == 2, "maxAttempts counts every attempt")
    }

    @Test("a Retry-After beyond maxDelay is not waited for: rateLimited / server(503) at once")
    func retryAfterBeyondMaxDelay() async throws {
        let transport = ScriptedTransport([.answer(429, headers: ["Retry-After": "120"], body: "{}"), .answer(200, body: "{}")])
        let policy = RetryPolicy(maxAttempts: 5, baseDelay: 0.1, maxDelay: 10)
        let start = ContinuousClock.now
        let error = await #expect(throws: ChorusError.self) { try await session(transport, retry: policy).send(.get("/mobile/usage-stats")) }
        guard case .rateLimited(120) = error else {
            Issue.record("expected rateLimited(120), got \(String(describing: error))")
            return
        }
        #expect(Self.seconds(ContinuousClock.now - start) < 60, "the 120 s Retry-After was not waited for")
        #expect(await transport.requests.count == 1)
        #expect(error?.errorDescription == "Too many requests. Please try again in 120 seconds.")

        let unavailable = ScriptedTransport([.answer(503, headers: ["Retry-After": "60"], body: "{}"), .answer(200, body: "{}")])
        let unavailableError = await #expect(throws: ChorusError.self) {
            try await session(unavailable, retry: policy).send(.get("/mobile/usage-stats"))
        }
        guard case .server(503, _) = unavailableError else {
            Issue.record("expected server(503), got \(String(describing: unavailableError))")
            return
        }
        #expect(await unavailable.requests.count == 1)
    }

    @Test("a network failure is retried for a GET")
    func networkFailureGET() async throws {
        let transport = ScriptedTransport([.fail(URLError(.networkConnectionLost)), .fail(URLError(.timedOut)), .answer(200, body: "{}")])
        try await session(transport, retry: RetryPolicy(maxAttempts: 3, baseDelay: 0.01, maxDelay: 1)).send(.get("/mobile/voices"))
        #expect(await transport.requests.map(\.method) == ["GET", "GET", "GET"])

        let offline = ScriptedTransport(Array(repeating: .fail(URLError(.notConnectedToInternet)), count: 3))
        let error = await #expect(throws: ChorusError.self) {
            try await session(offline, retry: RetryPolicy(maxAttempts: 3, baseDelay: 0.01, maxDelay: 1)).send(.get("/mobile/voices"))
        }
        guard case .network(let underlying) = error, (underlying as? URLError)?.code == .notConnectedToInternet else {
            Issue.record("expected network(notConnectedToInternet), got \(String(describing: error))")
            return
        }
        #expect(await offline.requests.count == 3)
    }

    @Test("make-call after network failures is retried under one Idempotency-Key")
    func networkFailureMakeCall() async throws {
        let transport = ScriptedTransport([
            .fail(URLError(.networkConnectionLost)), .fail(URLError(.timedOut)), .answer(200, body: ScriptedTransport.makeCallBody),
        ])
        let chorus = client(transport, retry: RetryPolicy(maxAttempts: 3, baseDelay: 0.01, maxDelay: 1))
        let call = try await chorus.calls.makeCall(to: "+14155550100")
        #expect(call.sid == "CA-scripted")
        let requests = await transport.requests
        #expect(requests.count == 3)
        #expect(requests.allSatisfy { $0.method == "POST" && $0.path == "/mobile/make-call" })
        let keys = Set(requests.map(\.idempotencyKey))
        #expect(keys.count == 1 && keys.first??.isEmpty == false)
        #expect(Set(requests.map(\.body)).count == 1, "every attempt sends the same body")
    }

    @Test("a 409 'still in progress' after a lost answer is retried until the original answer is replayed")
    func inProgressAfterLostAnswer() async throws {
        let transport = ScriptedTransport([
            .fail(URLError(.networkConnectionLost)),
            .answer(409, body: #"{"detail":"A request with this Idempotency-Key is still in progress"}"#),
            .answer(200, body: ScriptedTransport.makeCallBody),
        ])
        let chorus = client(transport, retry: RetryPolicy(maxAttempts: 4, baseDelay: 0.01, maxDelay: 1))
        #expect(try await chorus.calls.makeCall(to: "+14155550100").sid == "CA-scripted")
        #expect(await transport.requests.count == 3)

        // Without a lost answer first, a 409 is an answer like any other.
        let conflict = ScriptedTransport([.answer(409, body: #"{"detail":"still in progress"}"#), .answer(200, body: "{}")])
        let error = await #expect(throws: ChorusError.self) {
            try await client(conflict, retry: RetryPolicy(maxAttempts: 4, baseDelay: 0.01, maxDelay: 1)).calls.makeCall(to: "+14155550100")
        }
        guard case .api(409, _) = error else {
            Issue.record("expected api(409), got \(String(describing: error))")
            return
        }
        #expect(await conflict.requests.count == 1)
    }

    @Test("a POST without an Idempotency-Key is never retried after a network failure")
    func networkFailurePOSTWithoutKey() async throws {
        let transport = ScriptedTransport([.fail(URLError(.networkConnectionLost)), .answer(200, body: "{}")])
        let session = session(transport, retry: RetryPolicy(maxAttempts: 5, baseDelay: 0.01, maxDelay: 1))
        let error = await #expect(throws: ChorusError.self) { try await session.send(.post("/mobile/check-call-permission")) }
        guard case .network = error else {
            Issue.record("expected network, got \(String(describing: error))")
            return
        }
        #expect(await transport.requests.count == 1)

        // 429 and 503 say nothing happened: those are retried for any request.
        let limited = ScriptedTransport([.answer(429, headers: ["Retry-After": "0"], body: "{}"), .answer(200, body: "{}")])
        try await self.session(limited, retry: RetryPolicy(maxAttempts: 2, baseDelay: 0.01, maxDelay: 1)).send(
            .post("/mobile/check-call-permission"))
        #expect(await limited.requests.count == 2)
    }

    @Test("cancelling during a backoff ends the wait at once with CancellationError")
    func cancellationDuringBackoff() async throws {
        let transport = ScriptedTransport([.answer(503, headers: ["Retry-After": "60"], body: "{}"), .answer(200, body: "{}")])
        let session = session(transport, retry: RetryPolicy(maxAttempts: 3, baseDelay: 0.1, maxDelay: 120))
        let task = Task { try await session.send(.get("/mobile/usage-stats")) }
        while await transport.requests.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(100))  // now waiting out Retry-After
        let start = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(Self.seconds(ContinuousClock.now - start) < 30, "the 60 s Retry-After was cut short")
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(await transport.requests.count == 1)
    }

    @Test("RetryPolicy.none sends once")
    func noRetries() async throws {
        let transport = ScriptedTransport([.answer(503, body: "{}"), .answer(200, body: "{}")])
        await #expect(throws: ChorusError.self) { try await session(transport, retry: .none).send(.get("/mobile/usage-stats")) }
        #expect(await transport.requests.count == 1)
    }

    @Test("backoff doubles from baseDelay, capped at maxDelay, with equal jitter")
    func backoffSchedule() {
        let policy = RetryPolicy(maxAttempts: 10, baseDelay: 0.5, maxDelay: 3)
        #expect(policy.backoff(after: 1, random: 0) == 0.25 && policy.backoff(after: 1, random: 1) == 0.5)
        #expect(policy.backoff(after: 2, random: 0) == 0.5 && policy.backoff(after: 2, random: 1) == 1)
        #expect(policy.backoff(after: 3, random: 1) == 2)
        #expect(policy.backoff(after: 4, random: 1) == 3 && policy.backoff(after: 40, random: 0.5) == 2.25)
        #expect(policy.delay(after: .answer(status: 429, retryAfter: 2), attempt: 1, idempotent: false, lostAnswerEarlier: false) == 2)
        #expect(policy.delay(after: .answer(status: 429, retryAfter: 4), attempt: 1, idempotent: true, lostAnswerEarlier: false) == nil)
        #expect(policy.delay(after: .answer(status: 500, retryAfter: nil), attempt: 1, idempotent: true, lostAnswerEarlier: true) == nil)
        #expect(policy.delay(after: .networkFailure, attempt: 1, idempotent: false, lostAnswerEarlier: true) == nil)
        #expect(policy.delay(after: .networkFailure, attempt: 9, idempotent: true, lostAnswerEarlier: true) != nil)
        #expect(policy.delay(after: .networkFailure, attempt: 10, idempotent: true, lostAnswerEarlier: true) == nil)
    }

    @Test("idempotency: GET, PUT, DELETE and keyed POSTs; an explicit flag wins")
    func idempotency() throws {
        #expect(APIRequest.get("/x").isIdempotent)
        #expect(APIRequest(method: "DELETE", path: "/x").isIdempotent && APIRequest(method: "PUT", path: "/x").isIdempotent)
        #expect(!APIRequest.post("/x").isIdempotent)
        var keyed = APIRequest.post("/x")
        keyed.headers["idempotency-key"] = "k"
        #expect(keyed.isIdempotent)
        var flagged = APIRequest.post("/auth/logout")
        flagged.idempotent = true
        #expect(flagged.isIdempotent)
    }
}

/// Answers from a script, one step per request, and records what was sent.
actor ScriptedTransport: HTTPTransport {
    enum Step: Sendable {
        case answer(Int, headers: [String: String] = [:], body: String)
        case fail(URLError)
    }

    struct Sent: Sendable {
        var method: String
        var path: String
        var idempotencyKey: String?
        var authorization: String?
        var body: Data?
        var time: ContinuousClock.Instant
    }

    static let makeCallBody =
        #"{"call_sid":"CA-scripted","status":"initiated","duration_limit":60,"usage_stats":{"calls_remaining_this_week":2,"#
        + #""calls_remaining_this_month":2,"addon_calls_remaining":0,"upgrade_recommended":false}}"#

    private var steps: [Step]
    private(set) var requests: [Sent] = []

    init(_ steps: [Step]) {
        self.steps = steps
    }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let url = try #require(request.url)
        requests.append(
            Sent(
                method: request.httpMethod ?? "GET", path: url.path, idempotencyKey: request.value(forHTTPHeaderField: "Idempotency-Key"),
                authorization: request.value(forHTTPHeaderField: "Authorization"), body: request.httpBody, time: .now
            ))
        guard !steps.isEmpty else { throw URLError(.cannotConnectToHost) }
        switch steps.removeFirst() {
        case .answer(let status, let headers, let body):
            let fields = ["Content-Type": "application/json"].merging(headers) { $1 }
            let response = try #require(HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields))
            return (Data(body.utf8), response)
        case .fail(let error):
            throw error
        }
    }
}
