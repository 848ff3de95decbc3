import ChorusAPI
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One API request, before the base URL and credentials are applied.
struct APIRequest: Sendable {
    enum Body: Sendable {
        case json(Data)
        case form(Data)
    }

    var method: String
    var path: String
    var query: [URLQueryItem] = []
    var body: Body?
    var headers: [String: String] = [:]
    /// Whether the request carries the access token (and may refresh it once on 401).
    var authenticated = true
    /// Whether sending the request twice is harmless, so that it may be retried after a network failure; `nil`:
    /// derived (see ``isIdempotent``).
    var idempotent: Bool?

    /// Whether the request may be retried after a network failure: as set in ``idempotent``, else true for GET,
    /// HEAD, PUT and DELETE and for requests carrying an `Idempotency-Key` (which the server deduplicates).
    var isIdempotent: Bool {
        if let idempotent { return idempotent }
        return ["GET", "HEAD", "OPTIONS", "PUT", "DELETE"].contains(method.uppercased()) || idempotencyKey != nil
    }

    /// The `Idempotency-Key` header, if the request carries one (the name matched case-insensitively).
    var idempotencyKey: String? {
        headers.first { $0.key.caseInsensitiveCompare("Idempotency-Key") == .orderedSame }?.value
    }

    static func get(_ path: String, query: [URLQueryItem] = []) -> APIRequest {
        APIRequest(method: "GET", path: path, query: query)
    }

    static func post(_ path: String, json: some Encodable, authenticated: Bool = true) throws -> APIRequest {
        let data: Data
        do {
            data = try ChorusJSON.makeEncoder().encode(json)
        } catch {
            throw ChorusError.decoding("Could not encode \(type(of: json)): \(error)")
        }
        return APIRequest(method: "POST", path: path, body: .json(data), authenticated: authenticated)
    }

    static func post(_ path: String) -> APIRequest {
        APIRequest(method: "POST", path: path)
    }
}

/// The machinery shared by the feature clients: builds requests, attaches the session, refreshes it once on 401,
/// retries per ``ChorusClientOptions/retry`` (see `RetryPolicy.delay(after:attempt:idempotent:lostAnswerEarlier:random:)`
/// for the rules), and turns answers into DTOs or ``ChorusError``s.
///
/// Every attempt of one request — retries and the replay after a refresh — is the same request: same body, same
/// headers, same `Idempotency-Key`.
final class APISession: Sendable {
    let baseURL: URL
    let transport: any HTTPTransport
    let tokenStore: any TokenStore
    let options: ChorusClientOptions
    private let refresher: TokenRefresher

    init(baseURL: URL, tokenStore: any TokenStore, transport: any HTTPTransport, options: ChorusClientOptions = ChorusClientOptions()) {
        self.baseURL = baseURL
        self.transport = transport
        self.tokenStore = tokenStore
        self.options = options
        self.refresher = TokenRefresher(store: tokenStore)
    }

    /// Sends `request` and decodes a 2xx body as `Response`.
    func send<Response: Decodable>(_ request: APIRequest, as _: Response.Type = Response.self) async throws -> Response {
        let data = try await send(request)
        do {
            return try ChorusJSON.makeDecoder().decode(Response.self, from: data)
        } catch {
            throw ChorusError.decoding("\(request.method) \(request.path): could not decode \(Response.self): \(error)")
        }
    }

    /// Sends `request` and returns a 2xx body; throws ``ChorusError`` for every other answer.
    @discardableResult
    func send(_ request: APIRequest) async throws -> Data {
        guard request.authenticated else {
            return try Self.check(try await perform(request, accessToken: nil))
        }
        guard let tokens = try await tokenStore.load() else { throw ChorusError.signedOut }
        let first = try await perform(request, accessToken: tokens.accessToken)
        guard first.response.statusCode == 401 else { return try Self.check(first) }

        // The access token was refused (expired — `WWW-Authenticate: Bearer error="invalid_token",
        // error_description="The access token expired"` — or garbage): renew the session once, shared with every other
        // request refused at the same time, and replay the identical request (same Idempotency-Key).
        let renewed = try await refresher.tokens(replacing: tokens.accessToken) { try await self.refresh(with: $0) }
        let second = try await perform(request, accessToken: renewed.accessToken)
        if second.response.statusCode == 401 {
            // A renewed token called expired: the session holds (the refresh token was accepted), the server's clock
            // does not agree with the token's lifetime. Keep the session.
            if ChorusError.isTokenExpired(second.response) { throw ChorusError.tokenExpired }
            // A fresh token refused otherwise: the account or session is gone.
            try await tokenStore.clear(ifHolding: renewed)
            throw ChorusError.signedOut
        }
        return try Self.check(second)
    }

    /// Opens the WebSocket of `path` (an endpoint's path, relative to the base URL like every request), signed with
    /// `accessToken`, through the transport when it can open WebSockets (else URLSession).
    func openWebSocket(path: String, accessToken: String) async throws -> any WebSocketConnection {
        guard var components = URLComponents(url: baseURL.appendingPathComponent(String(path.drop { $0 == "/" })), resolvingAgainstBaseURL: false) else {
            throw ChorusError.network(URLError(.badURL))
        }
        components.scheme = components.scheme?.lowercased() == "https" ? "wss" : "ws"
        guard let url = components.url else { throw ChorusError.network(URLError(.badURL)) }
        var request = URLRequest(url: url, timeoutInterval: options.timeout)
        request.setValue("Bearer \(accessToken)", forHTTPHeaderField: "Authorization")
        request.setValue("mobile", forHTTPHeaderField: "X-App-Type")
        let transport = (transport as? any WebSocketTransport) ?? URLSessionTransport()
        return try await transport.openWebSocket(request)
    }

    /// Forces a refresh now (joining one already in flight).
    func refreshNow() async throws {
        _ = try await refresher.tokens(replacing: nil) { try await self.refresh(with: $0) }
    }

    /// `POST /auth/refresh` with `tokens.refreshToken`. A refusal ends the session: the store is cleared and
    /// ``ChorusError/signedOut`` thrown. Other failures (offline, 5xx) leave the session for a later attempt.
    private func refresh(with tokens: StoredTokens) async throws -> StoredTokens {
        let request = try API.Auth.refresh.request(json: RefreshRequest(refreshToken: tokens.refreshToken), authenticated: false).request
        let answer = try await perform(request, accessToken: nil)
        if answer.response.statusCode == 401 {
            try await tokenStore.clear(ifHolding: tokens)
            throw ChorusError.signedOut
        }
        let pair: TokenResponse
        do {
            pair = try ChorusJSON.makeDecoder().decode(TokenResponse.self, from: try Self.check(answer))
        } catch let error as ChorusError {
            throw error
        } catch {
            throw ChorusError.decoding("POST /auth/refresh: could not decode TokenResponse: \(error)")
        }
        let renewed = StoredTokens(accessToken: pair.accessToken, refreshToken: pair.refreshToken)
        // Only replace the session this refresh was for: a logout or another sign-in meanwhile wins.
        guard try await tokenStore.load() == tokens else {
            guard let current = try await tokenStore.load() else { throw ChorusError.signedOut }
            return current
        }
        try await tokenStore.save(renewed)
        return renewed
    }

    // MARK: Transport

    private struct Answer {
        var data: Data
        var response: HTTPURLResponse
    }

    /// Sends `request` until it gets an answer to deliver, retrying per ``options``' retry policy. Throws
    /// ``ChorusError/network(_:)`` when the last attempt got no answer, `CancellationError` when cancelled (also
    /// while waiting between attempts).
    private func perform(_ request: APIRequest, accessToken: String?) async throws -> Answer {
        let urlRequest = try makeURLRequest(request, accessToken: accessToken)
        let policy = options.retry
        var lostAnswer = false
        var attempt = 1
        while true {
            try Task.checkCancellation()
            let delay: TimeInterval
            do {
                let answer = try await performOnce(urlRequest)
                let retryAfter = answer.response.header("Retry-After").flatMap(ChorusError.parseRetryAfter)
                let outcome = RetryPolicy.Outcome.answer(status: answer.response.statusCode, retryAfter: retryAfter)
                guard let wait = policy.delay(after: outcome, attempt: attempt, idempotent: request.isIdempotent, lostAnswerEarlier: lostAnswer)
                else { return answer }
                delay = wait
            } catch ChorusError.network(let underlying) {
                lostAnswer = true
                guard let wait = policy.delay(after: .networkFailure, attempt: attempt, idempotent: request.isIdempotent, lostAnswerEarlier: true)
                else { throw ChorusError.network(underlying) }
                delay = wait
            }
            if delay > 0 {
                try await Task.sleep(for: .seconds(delay))  // throws CancellationError at once when cancelled
            }
            attempt += 1
        }
    }

    /// One attempt: no answer becomes ``ChorusError/network(_:)`` (or `CancellationError` when cancelled).
    private func performOnce(_ urlRequest: URLRequest) async throws -> Answer {
        do {
            let (data, response) = try await transport.send(urlRequest)
            return Answer(data: data, response: response)
        } catch let error as ChorusError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw ChorusError.network(error)
        }
    }

    func makeURLRequest(_ request: APIRequest, accessToken: String?) throws -> URLRequest {
        let relative = request.path.hasPrefix("/") ? String(request.path.dropFirst()) : request.path
        var url = baseURL.appendingPathComponent(relative)
        if !request.query.isEmpty {
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
                throw ChorusError.network(URLError(.badURL))
            }
            components.queryItems = request.query
            guard let withQuery = components.url else { throw ChorusError.network(URLError(.badURL)) }
            url = withQuery
        }
        var urlRequest = URLRequest(url: url, timeoutInterval: options.timeout)
        urlRequest.httpMethod = request.method
        urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
        urlRequest.setValue("mobile", forHTTPHeaderField: "X-App-Type")
        if let accessToken {
            urlRequest.setValue("Bearer \(accessToken)", forHTTPHeaderField: "Authorization")
        }
        switch request.body {
        case .json(let data):
            urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
            urlRequest.httpBody = data
        case .form(let data):
            urlRequest.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            urlRequest.httpBody = data
        case nil:
            break
        }
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        return urlRequest
    }

    private static func check(_ answer: Answer) throws -> Data {
        let status = answer.response.statusCode
        guard (200..<300).contains(status) else {
            throw ChorusError.from(status: status, body: answer.data, response: answer.response)
        }
        return answer.data
    }
}

/// Makes concurrent refreshes single-flight: the first request refused with 401 starts one refresh, every other
/// one refused meanwhile awaits the same task, and one refused with a token already replaced just uses the new one.
actor TokenRefresher {
    private let store: any TokenStore
    private var inFlight: Task<StoredTokens, any Error>?

    init(store: any TokenStore) {
        self.store = store
    }

    /// Valid tokens to replace the refused `accessToken` (`nil`: refresh unconditionally).
    ///
    /// No `await` happens between checking and setting ``inFlight``, so actor reentrancy cannot start a second refresh.
    func tokens(
        replacing accessToken: String?, refresh: @escaping @Sendable (StoredTokens) async throws -> StoredTokens
    ) async throws -> StoredTokens {
        if let inFlight { return try await inFlight.value }
        let store = self.store
        let task = Task<StoredTokens, any Error> {
            guard let current = try await store.load() else { throw ChorusError.signedOut }
            if let accessToken, current.accessToken != accessToken { return current }  // already renewed
            return try await refresh(current)
        }
        inFlight = task
        defer { inFlight = nil }
        return try await task.value
    }
}

extension TokenStore {
    /// Clears the store if it still holds `tokens` (a newer session is left alone).
    func clear(ifHolding tokens: StoredTokens) async throws {
        if try await load() == tokens { try await clear() }
    }
}

/// An ``APIRequest`` that knows the type of its answer: built from an ``Endpoint`` of the table, so the SDK never
/// spells a path or an answer type the table already names.
struct EndpointRequest<Answer: Sendable>: Sendable {
    var request: APIRequest
}

extension Endpoint {
    /// A request of this endpoint without a body; `parameters` fill the path template's parameters in order.
    func request(_ parameters: String..., query: [URLQueryItem] = [], authenticated: Bool = true) -> EndpointRequest<Answer> {
        EndpointRequest(request: APIRequest(method: method.rawValue, path: path(parameters), query: query, authenticated: authenticated))
    }

    /// A request of this endpoint with `body` as JSON.
    func request(_ parameters: String..., json body: Body, authenticated: Bool = true) throws -> EndpointRequest<Answer> where Body: Encodable {
        let data: Data
        do {
            data = try ChorusJSON.makeEncoder().encode(body)
        } catch {
            throw ChorusError.decoding("Could not encode \(Body.self): \(error)")
        }
        return EndpointRequest(
            request: APIRequest(method: method.rawValue, path: path(parameters), body: .json(data), authenticated: authenticated))
    }
}

extension APISession {
    /// Sends `request` and decodes the endpoint's answer.
    func send<Answer: Decodable>(_ request: EndpointRequest<Answer>) async throws -> Answer {
        try await send(request.request, as: Answer.self)
    }

    /// Sends `request`, whose endpoint answers no content.
    func send(_ request: EndpointRequest<NoContent>) async throws {
        try await send(request.request)
    }
}
