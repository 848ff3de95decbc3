import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Where and how the ElevenLabs clients (``ElevenLabsVoiceCloner``, ``ElevenLabsSpeechSynthesizer``) reach the API:
/// base URL, API key (sent as `xi-api-key`), and the shared ``ProviderHTTP`` transport (provider name `elevenlabs`).
///
/// The key is only ever put in the `xi-api-key` header: it is not part of ``description`` and ``ProviderHTTP`` logs
/// no headers.
///
/// Error bodies come in three shapes, all accepted: the current `{"detail":{"type","code","message","status",
/// "request_id"}}`, the legacy `{"detail":{"status","message"}}` and FastAPI's validation list
/// `{"detail":[{"loc","msg","type"}]}` (or a plain `{"detail":"…"}`). The code is `detail.code`, else `detail.status`.
/// They are classified as:
/// - `quota_exceeded` (which ElevenLabs sends with 401) and 402 (`insufficient_credits`, `payment_required`) →
///   ``ProviderError/quotaExceeded(message:)``, never retried;
/// - 429 (`too_many_concurrent_requests`, `concurrent_limit_exceeded`, `system_busy`) →
///   ``ProviderError/rateLimited(retryAfter:message:)``, retried by ``ProviderHTTP`` first;
/// - 408 and 5xx → ``ProviderError/unavailable(_:)``, retried first;
/// - any other 4xx (401 `invalid_api_key`, 400 `voice_limit_reached` / `can_not_use_instant_voice_cloning` /
///   `max_character_limit_exceeded`, 404 `voice_not_found`, 422 validation) →
///   ``ProviderError/rejected(httpStatus:code:message:)`` with the code (422 lists: `validation_error`).
public struct ElevenLabsConnection: Sendable, CustomStringConvertible {
    /// `https://api.elevenlabs.io`.
    public static let defaultBaseURL = URL(string: "https://api.elevenlabs.io")!

    /// The API origin the `/v1/…` paths are appended to; a sandbox is e.g. `http://127.0.0.1:8080/sandbox/elevenlabs`.
    public let baseURL: URL
    /// The transport (timeouts, retries, logging).
    public let http: ProviderHTTP
    private let apiKey: String

    /// A connection over an existing transport (its `provider` should be `elevenlabs`).
    public init(apiKey: String, baseURL: URL = defaultBaseURL, http: ProviderHTTP) {
        self.apiKey = apiKey
        self.baseURL = baseURL
        self.http = http
    }

    /// A connection with its own ``ProviderHTTP`` named `elevenlabs`.
    ///
    /// - Parameters:
    ///   - timeout: The deadline of one HTTP exchange (10,000 characters of speech take tens of seconds).
    ///   - retry: How often transient failures (network, 408, 429, 5xx) are retried.
    public init(
        apiKey: String, baseURL: URL = defaultBaseURL, httpClient: HTTPClient, timeout: TimeAmount = .seconds(120),
        retry: ProviderHTTP.RetryPolicy = ProviderHTTP.RetryPolicy(), observer: (any ProviderCallObserver)? = nil, logger: Logger
    ) {
        self.init(
            apiKey: apiKey, baseURL: baseURL,
            http: ProviderHTTP(provider: "elevenlabs", client: httpClient, timeout: timeout, retry: retry, observer: observer, logger: logger))
    }

    /// The base URL, without the key.
    public var description: String { "ElevenLabsConnection(baseURL: \(baseURL.absoluteString))" }

    /// One request through ``ProviderHTTP`` with ElevenLabs' error classification. `path` starts with `/v1/` and is
    /// already percent-encoded.
    func send(
        operation: String, method: HTTPMethod, path: String, query: [(String, String)] = [], contentType: String? = nil,
        accept: String = "application/json", body: ByteBuffer? = nil, retryable: Bool = true
    ) async throws -> ProviderHTTP.Response {
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        var url = base + path
        if !query.isEmpty {
            url += "?" + query.map { "\(Self.queryEncoded($0.0))=\(Self.queryEncoded($0.1))" }.joined(separator: "&")
        }
        var headers = HTTPHeaders()
        headers.add(name: "xi-api-key", value: apiKey)
        headers.add(name: "Accept", value: accept)
        if let contentType { headers.add(name: "Content-Type", value: contentType) }
        return try await http.execute(
            operation: operation, retryable: retryable,
            { [url, headers] in
                var request = HTTPClientRequest(url: url)
                request.method = method
                request.headers = headers
                if let body { request.body = .bytes(body) }
                return request
            },
            mapError: Self.providerError(for:))
    }

    /// A path segment (a voice id) percent-encoded.
    static func pathSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?#"))) ?? text
    }

    private static func queryEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+"))) ?? text
    }

    // MARK: - Errors

    /// What an error body says: the machine code (when there is one) and the message.
    struct ErrorDetail: Equatable {
        var code: String?
        var message: String
    }

    /// Reads any of the three error shapes; `nil` when the body is not one of them.
    static func errorDetail(_ body: Data) -> ErrorDetail? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any], let detail = object["detail"] else {
            return nil
        }
        if let text = detail as? String { return ErrorDetail(code: nil, message: text) }
        if let fields = detail as? [String: Any] {
            let code = (fields["code"] as? String) ?? (fields["status"] as? String)
            let message = (fields["message"] as? String) ?? code ?? "ElevenLabs refused the request"
            return ErrorDetail(code: code, message: message)
        }
        if let items = detail as? [[String: Any]] {
            let message = items.map { item -> String in
                let location = (item["loc"] as? [Any])?.map { "\($0)" }.joined(separator: ".") ?? ""
                let text = (item["msg"] as? String) ?? "invalid"
                return location.isEmpty ? text : "\(location): \(text)"
            }.joined(separator: "; ")
            return ErrorDetail(code: "validation_error", message: message.isEmpty ? "invalid request" : message)
        }
        return nil
    }

    /// The classification described on the type.
    static func providerError(for response: ProviderHTTP.Response) -> ProviderError {
        let detail = errorDetail(response.data)
        let message = detail?.message ?? "ElevenLabs answered \(response.status)"
        let code = detail?.code
        if code == "quota_exceeded" || code == "insufficient_credits" || response.status == 402 {
            return .quotaExceeded(message: message)
        }
        switch response.status {
        case 429:
            return .rateLimited(retryAfter: ProviderHTTP.retryAfter(response.headers), message: message)
        case 408, 500...:
            return .unavailable("ElevenLabs \(code ?? String(response.status)): \(message)")
        default:
            return .rejected(httpStatus: response.status, code: code, message: message)
        }
    }
}
