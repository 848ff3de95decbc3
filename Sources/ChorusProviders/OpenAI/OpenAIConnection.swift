import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Where and how the OpenAI clients (``OpenAITranscriber``, ``OpenAISpeechSynthesizer``, ``OpenAITextGenerator``) reach
/// the API: base URL, API key (`Authorization: Bearer`), optional `OpenAI-Organization` / `OpenAI-Project` headers,
/// and the shared ``ProviderHTTP`` transport (provider name `openai`).
///
/// The key is only ever put in the `Authorization` header: it is not part of ``description`` and ``ProviderHTTP``
/// logs no headers.
///
/// Failures are classified from OpenAI's error envelope `{"error":{"message","type","param","code"}}`:
/// - 429 with `code` or `type` `insufficient_quota` → ``ProviderError/quotaExceeded(message:)`` (never retried);
/// - other 429 → ``ProviderError/rateLimited(retryAfter:message:)`` (retried by ``ProviderHTTP`` first);
/// - 408, 409 and 5xx → ``ProviderError/unavailable(_:)`` (408 and 5xx retried first);
/// - any other 4xx (400, 401, 403, 404, 413, 415, …) → ``ProviderError/rejected(httpStatus:code:message:)`` with the
///   envelope's `code` and `message`.
public struct OpenAIConnection: Sendable, CustomStringConvertible {
    /// `https://api.openai.com/v1`.
    public static let defaultBaseURL = URL(string: "https://api.openai.com/v1")!

    /// The API root the endpoint paths are appended to (`…/v1`); a sandbox is e.g. `http://127.0.0.1:8080/sandbox/openai/v1`.
    public let baseURL: URL
    /// Sent as `OpenAI-Organization` when set.
    public let organization: String?
    /// Sent as `OpenAI-Project` when set.
    public let project: String?
    /// The transport (timeouts, retries, logging).
    public let http: ProviderHTTP
    private let authorization: String

    /// A connection over an existing transport (its `provider` should be `openai`).
    public init(apiKey: String, baseURL: URL = defaultBaseURL, organization: String? = nil, project: String? = nil, http: ProviderHTTP) {
        self.authorization = "Bearer \(apiKey)"
        self.baseURL = baseURL
        self.organization = organization.flatMap { $0.isEmpty ? nil : $0 }
        self.project = project.flatMap { $0.isEmpty ? nil : $0 }
        self.http = http
    }

    /// A connection with its own ``ProviderHTTP`` named `openai`.
    ///
    /// - Parameters:
    ///   - timeout: The deadline of one HTTP exchange (speech for 4,096 characters and transcription of long audio
    ///     take tens of seconds).
    ///   - retry: How often transient failures (network, 408, 429 other than quota, 5xx) are retried.
    public init(
        apiKey: String, baseURL: URL = defaultBaseURL, organization: String? = nil, project: String? = nil,
        httpClient: HTTPClient, timeout: TimeAmount = .seconds(120), retry: ProviderHTTP.RetryPolicy = ProviderHTTP.RetryPolicy(),
        observer: (any ProviderCallObserver)? = nil, logger: Logger
    ) {
        self.init(
            apiKey: apiKey, baseURL: baseURL, organization: organization, project: project,
            http: ProviderHTTP(provider: "openai", client: httpClient, timeout: timeout, retry: retry, observer: observer, logger: logger))
    }

    /// The base URL and headers, without the key.
    public var description: String {
        "OpenAIConnection(baseURL: \(baseURL.absoluteString), organization: \(organization ?? "-"), project: \(project ?? "-"))"
    }

    /// `POST <baseURL>/<path>` with `body`, through ``ProviderHTTP`` with OpenAI's error classification.
    func post(operation: String, path: String, contentType: String, accept: String, body: ByteBuffer) async throws -> ProviderHTTP.Response {
        let url = baseURL.absoluteString.hasSuffix("/") ? baseURL.absoluteString + path : baseURL.absoluteString + "/" + path
        let headers = self.headers(contentType: contentType, accept: accept)
        return try await http.execute(
            operation: operation,
            {
                var request = HTTPClientRequest(url: url)
                request.method = .POST
                request.headers = headers
                request.body = .bytes(body)
                return request
            },
            mapError: Self.providerError(for:)
        )
    }

    /// `GET <baseURL>/<path>`, through ``ProviderHTTP`` with OpenAI's error classification.
    func get(operation: String, path: String) async throws -> ProviderHTTP.Response {
        let url = baseURL.absoluteString.hasSuffix("/") ? baseURL.absoluteString + path : baseURL.absoluteString + "/" + path
        var getHeaders = self.headers(contentType: "application/json", accept: "application/json")
        getHeaders.remove(name: "Content-Type")
        let headers = getHeaders
        return try await http.execute(
            operation: operation,
            {
                var request = HTTPClientRequest(url: url)
                request.method = .GET
                request.headers = headers
                return request
            },
            mapError: Self.providerError(for:)
        )
    }

    /// `POST <baseURL>/<path>` whose answer is read as it arrives: a 2xx response's body chunks go to `onChunk`; a
    /// 4xx/5xx is classified like ``post(operation:path:contentType:accept:body:)``'s (not retried: a stream cannot be
    /// replayed once the caller has seen part of it).
    func postStreaming(
        operation: String, path: String, body: ByteBuffer, onChunk: (ByteBuffer) async throws -> Void
    ) async throws {
        let url = baseURL.absoluteString.hasSuffix("/") ? baseURL.absoluteString + path : baseURL.absoluteString + "/" + path
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers = headers(contentType: "application/json", accept: "text/event-stream")
        request.body = .bytes(body)
        let response: HTTPClientResponse
        let started = ContinuousClock.now
        do {
            response = try await ProviderTracing.exchange(
                tracer: http.observer?.tracer, provider: http.provider, operation: operation, request: request, status: { Int($0.status.code) }
            ) { try await http.client.execute($0, timeout: http.timeout, logger: http.logger) }
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            http.observe(operation, failure: ProviderCallFailure.timeout, since: started)
            throw ProviderError.unavailable("\(http.provider) timed out")
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            http.observe(operation, failure: ProviderCallFailure.unreachable, since: started)
            throw ProviderError.unavailable("\(http.provider) could not be reached: \(error)")
        }
        guard response.status.code < 400 else {
            http.observe(operation, failure: ProviderCallFailure.status(Int(response.status.code)), since: started)
            let body = try await response.body.collect(upTo: 1 << 20)
            let answer = ProviderHTTP.Response(status: Int(response.status.code), headers: response.headers, body: body)
            var metadata: Logger.Metadata = ["provider": "\(http.provider)", "operation": "\(operation)", "status": "\(answer.status)"]
            if let id = response.headers.first(name: "x-request-id") { metadata["provider_request_id"] = "\(id)" }
            http.logger.warning("provider request failed", metadata: metadata)
            throw Self.providerError(for: answer)
        }
        do {
            for try await chunk in response.body { try await onChunk(chunk) }
            http.observe(operation, failure: nil, since: started)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            http.observe(operation, failure: ProviderCallFailure.timeout, since: started)
            throw ProviderError.unavailable("\(http.provider) timed out")
        }
    }

    private func headers(contentType: String, accept: String) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: authorization)
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Accept", value: accept)
        if let organization { headers.add(name: "OpenAI-Organization", value: organization) }
        if let project { headers.add(name: "OpenAI-Project", value: project) }
        return headers
    }

    /// OpenAI's error envelope.
    struct ErrorEnvelope: Decodable {
        struct Detail: Decodable {
            let message: String?
            let type: String?
            let param: String?
            let code: String?
        }

        let error: Detail
    }

    /// The ``ProviderError`` for a final 4xx/5xx answer (see the type's documentation).
    static func providerError(for response: ProviderHTTP.Response) -> ProviderError {
        let detail = try? JSONDecoder().decode(ErrorEnvelope.self, from: response.data).error
        let message = detail?.message.flatMap { $0.isEmpty ? nil : $0 } ?? "OpenAI answered HTTP \(response.status)"
        switch response.status {
        case 429:
            if detail?.code == "insufficient_quota" || detail?.type == "insufficient_quota" {
                return .quotaExceeded(message: message)
            }
            return .rateLimited(retryAfter: ProviderHTTP.retryAfter(response.headers), message: message)
        case 408, 409, 500...:
            return .unavailable("OpenAI HTTP \(response.status): \(message)")
        default:
            return .rejected(httpStatus: response.status, code: detail?.code, message: message)
        }
    }

    /// Decodes a 2xx JSON body, or throws ``ProviderError/invalidResponse(_:)``.
    static func decode<Value: Decodable>(_ type: Value.Type, from response: ProviderHTTP.Response, operation: String) throws -> Value {
        do {
            return try JSONDecoder().decode(type, from: response.data)
        } catch {
            throw ProviderError.invalidResponse("OpenAI \(operation) returned an unreadable body: \(error)")
        }
    }
}
