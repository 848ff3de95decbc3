import ChorusKit
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one test with a fake transport: it controls timing so that every request is refused before any refresh
/// finishes, which a real server cannot guarantee.
@Suite("ChorusKit single-flight refresh")
struct SingleFlightRefreshTests {
    @Test("10 concurrent requests refused with 401 share exactly one refresh, then replay with the same key")
    func concurrentRefusalsShareOneRefresh() async throws {
        let server = FakeServer(expectedRefusals: 10)
        let store = InMemoryTokenStore(StoredTokens(accessToken: "access-1", refreshToken: "refresh-1"))
        let chorus = ChorusClient(environment: .custom(URL(string: "https://chorus.invalid/api")!), tokenStore: store, transport: server)

        let sids = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<10 {
                group.addTask { try await chorus.calls.makeCall(to: "+1415555010\(index)").sid }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }

        #expect(sids.count == 10 && Set(sids).count == 10)
        let log = await server.log
        #expect(log.filter { $0.path == "/api/auth/refresh" }.count == 1)
        let calls = log.filter { $0.path == "/api/mobile/make-call" }
        #expect(calls.count == 20)
        #expect(calls.allSatisfy { $0.appType == "mobile" })
        // Each logical call: refused with the old token, replayed with the new one, under one Idempotency-Key.
        let byKey = Dictionary(grouping: calls, by: { $0.idempotencyKey ?? "" })
        #expect(byKey.count == 10 && !byKey.keys.contains(""))
        #expect(byKey.values.allSatisfy { $0.map(\.authorization) == ["Bearer access-1", "Bearer access-2"] })
        #expect(await store.load() == StoredTokens(accessToken: "access-2", refreshToken: "refresh-2"))
    }
}

/// Answers make-call with 401 for `access-1` (holding every refusal until `expectedRefusals` requests are waiting)
/// and 200 for `access-2`; answers refresh for `refresh-1` only.
private actor FakeServer: HTTPTransport {
    struct Entry: Sendable {
        var path: String
        var authorization: String?
        var idempotencyKey: String?
        var appType: String?
    }

    private(set) var log: [Entry] = []
    private var waiting: [CheckedContinuation<Void, Never>] = []
    private let expectedRefusals: Int
    private var sequence = 0

    init(expectedRefusals: Int) {
        self.expectedRefusals = expectedRefusals
    }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let url = try #require(request.url)
        log.append(
            Entry(
                path: url.path, authorization: request.value(forHTTPHeaderField: "Authorization"),
                idempotencyKey: request.value(forHTTPHeaderField: "Idempotency-Key"), appType: request.value(forHTTPHeaderField: "X-App-Type")
            ))
        switch url.path {
        case "/api/auth/refresh":
            let body = try ChorusJSON.makeDecoder().decode(RefreshRequest.self, from: try #require(request.httpBody))
            try await Task.sleep(for: .milliseconds(50))
            guard body.refreshToken == "refresh-1" else { return try Self.answer(url, 401, ErrorResponse(detail: "Invalid refresh token")) }
            return try Self.answer(url, 200, TokenResponse(accessToken: "access-2", refreshToken: "refresh-2", expiresIn: 900))
        case "/api/mobile/make-call" where request.value(forHTTPHeaderField: "Authorization") == "Bearer access-2":
            sequence += 1
            let snapshot = CallUsageSnapshot(callsRemainingThisWeek: 0, callsRemainingThisMonth: 0, addonCallsRemaining: 0, upgradeRecommended: true)
            return try Self.answer(url, 200, MakeCallResponse(callSid: "CA\(sequence)", status: "initiated", durationLimit: 60, usageStats: snapshot))
        case "/api/mobile/make-call":
            // Hold the refusal until every request has been refused: none can see a refreshed token early.
            if log.filter({ $0.authorization == "Bearer access-1" }).count >= expectedRefusals {
                waiting.forEach { $0.resume() }
                waiting = []
            } else {
                await withCheckedContinuation { waiting.append($0) }
            }
            return try Self.answer(url, 401, ErrorResponse(detail: "Could not validate credentials"))
        default:
            return try Self.answer(url, 404, ErrorResponse(detail: "Not Found"))
        }
    }

    private static func answer(_ url: URL, _ status: Int, _ body: some Encodable) throws -> (Data, HTTPURLResponse) {
        let response = try #require(
            HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: ["Content-Type": "application/json"]))
        return (try ChorusJSON.makeEncoder().encode(body), response)
    }
}
