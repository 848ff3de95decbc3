import Foundation
import Testing

@testable import ChorusKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The mapping of answers the live server is hard to provoke into (5xx, an HTTP-date Retry-After), and the
/// pure helpers behind the requests.
@Suite("ChorusKit error mapping and encoding")
struct ErrorMappingTests {
    private func map(_ status: Int, _ body: String, headers: [String: String] = [:]) throws -> ChorusError {
        let url = URL(string: "https://chorus.invalid/mobile/make-call")!
        let response = try #require(HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers))
        return ChorusError.from(status: status, body: Data(body.utf8), response: response)
    }

    @Test("5xx keeps the X-Request-ID header, or the body's request_id, for support")
    func serverError() throws {
        let body = #"{"detail":"An unexpected error occurred. Please try again later.","request_id":"from-body"}"#
        guard case .server(500, "from-header") = try map(500, body, headers: ["x-request-id": "from-header"]) else {
            Issue.record("expected server(500, from-header)")
            return
        }
        let fromBody = try map(503, body)
        guard case .server(503, "from-body") = fromBody else {
            Issue.record("expected server(503, from-body), got \(fromBody)")
            return
        }
        #expect(fromBody.errorDescription?.hasSuffix("(Request ID: from-body)") == true)
        guard case .server(502, nil) = try map(502, "<html>Bad Gateway</html>") else {
            Issue.record("expected server(502, nil)")
            return
        }
    }

    @Test("Retry-After as seconds or as an HTTP date")
    func retryAfter() throws {
        guard case .rateLimited(let seconds) = try map(429, #"{"detail":"Rate limit exceeded"}"#, headers: ["Retry-After": "17"]) else {
            Issue.record("expected rateLimited")
            return
        }
        #expect(seconds == 17)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let date = formatter.string(from: Date().addingTimeInterval(120))
        let parsed = try #require(ChorusError.parseRetryAfter(date))
        #expect((110...120).contains(parsed))
        guard case .rateLimited(nil) = try map(429, "{}") else {
            Issue.record("expected rateLimited(nil) without the header")
            return
        }
    }

    @Test("402 becomes PaymentRequired: a typed reason (unknown values kept), the message and the offers")
    func paymentRequired() throws {
        let body = #"""
            {"detail":{"error":"trial_exhausted","message":"Your free trial calls are used up.","timestamp":"2025-01-06T12:00:00Z",
            "upgrade_options":[{"plan":"basic","price":"$4.99","calls":"5/week","product_id":"speech_assistant_basic_weekly"},
            {"plan":"addon","price":"$4.99","calls":"5 additional","product_id":"speech_assistant_addon_calls"}]}}
            """#
        let error = try map(402, body)
        guard case .paymentRequired(let refusal) = error else {
            Issue.record("expected paymentRequired, got \(error)")
            return
        }
        #expect(refusal.reason == .trialExhausted)
        #expect(refusal.message == "Your free trial calls are used up." && error.errorDescription == refusal.message)
        #expect(refusal.upgradeOptions.map(\.productID) == ["speech_assistant_basic_weekly", "speech_assistant_addon_calls"])
        #expect(refusal.upgradeOptions.map(\.kind) == [.plan(.basic), .addOnPack])

        let future = try map(402, body.replacingOccurrences(of: "trial_exhausted", with: "family_plan_required"))
        guard case .paymentRequired(let unknown) = future else {
            Issue.record("expected paymentRequired, got \(future)")
            return
        }
        #expect(unknown.reason == "family_plan_required" && !unknown.reason.isKnown, "a new server value never breaks an old app")
        guard case .api(402, _) = try map(402, #"{"detail":"Payment required"}"#) else {
            Issue.record("expected api(402) for a body that is not the contract's")
            return
        }
    }

    @Test("every case has a message for the user")
    func messages() {
        let cases: [ChorusError] = [
            .rateLimited(retryAfter: nil), .rateLimited(retryAfter: 1), .validation([]), .unauthorized, .signedOut, .notFound,
            .server(status: 500, requestID: nil), .server(status: 503, requestID: "r"), .api(status: 400, detail: "Bad"),
            .network(URLError(.timedOut)), .network(URLError(.cannotFindHost)), .decoding("x"),
        ]
        for error in cases {
            #expect(error.errorDescription?.isEmpty == false, "\(error)")
        }
        #expect(ChorusError.rateLimited(retryAfter: 1).errorDescription == "Too many requests. Please try again in 1 second.")
        #expect(ChorusError.server(status: 503, requestID: "r").errorDescription?.contains("temporarily unavailable") == true)
        #expect(ChorusError.network(URLError(.timedOut)).errorDescription?.contains("timed out") == true)
    }

    @Test("other statuses: detail text, notFound, and a fallback for bodies that are not the contract's")
    func otherStatuses() throws {
        guard
            case .api(409, "A request with this Idempotency-Key is still in progress") = try map(
                409, #"{"detail":"A request with this Idempotency-Key is still in progress"}"#
            )
        else {
            Issue.record("expected api(409)")
            return
        }
        guard case .notFound = try map(404, #"{"detail":"Call not found"}"#) else {
            Issue.record("expected notFound")
            return
        }
        let opaque = try map(418, "teapot")
        guard case .api(418, let detail) = opaque else {
            Issue.record("expected api(418), got \(opaque)")
            return
        }
        #expect(!detail.isEmpty && opaque.errorDescription == detail)
        #expect(ChorusError.network(URLError(.notConnectedToInternet)).errorDescription?.contains("internet connection") == true)
    }

    @Test("form encoding percent-encodes everything outside the unreserved set")
    func formEncoding() {
        let data = AuthClient.formEncoded([("username", "a+b@example.com"), ("password", "p&ss=w rd%é~")])
        #expect(String(decoding: data, as: UTF8.self) == "username=a%2Bb%40example.com&password=p%26ss%3Dw%20rd%25%C3%A9~")
    }

    @Test("environments and request URLs")
    func urls() throws {
        #expect(ChorusEnvironment.development.baseURL.absoluteString == "http://localhost:5050")
        #expect(!ChorusEnvironment.development.isProduction)
        let production = ChorusEnvironment.production(URL(string: "https://api.example.com")!)
        #expect(production.isProduction && production.baseURL.host == "api.example.com")
        let session = APISession(
            baseURL: URL(string: "https://example.com/v1")!, tokenStore: InMemoryTokenStore(), transport: URLSessionTransport()
        )
        let request = try session.makeURLRequest(.get("/mobile/call-history", query: [URLQueryItem(name: "limit", value: "5")]), accessToken: "t")
        #expect(request.url?.absoluteString == "https://example.com/v1/mobile/call-history?limit=5")
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer t")
        #expect(request.value(forHTTPHeaderField: "X-App-Type") == "mobile")
    }
}
