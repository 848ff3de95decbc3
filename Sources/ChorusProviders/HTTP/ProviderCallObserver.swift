import Foundation
import Tracing

/// Told about every exchange with a provider — each attempt, retries included — so operators can see each
/// provider's error rate and latency (the console's provider health).
public protocol ProviderCallObserver: Sendable {
    /// One exchange with `provider` for `operation` took `duration`; `failure` is `nil` when it succeeded, otherwise
    /// a short classification (``ProviderCallFailure``) that never carries a message, a key or personal data.
    func providerCall(provider: String, operation: String, failure: String?, duration: Duration)

    /// Makes a span of each exchange and sends its `traceparent` (``ProviderTracing``); `nil` (the default): exchanges
    /// are not traced.
    var tracer: (any Tracer)? { get }
}

extension ProviderCallObserver {
    public var tracer: (any Tracer)? { nil }
}

/// The classifications of failed provider exchanges.
///
/// An exchange fails when the provider is unhealthy or refuses us: no answer, a timeout, 408, 429, a 5xx, or 401/403
/// (a key or account problem). Other answers — 2xx, 3xx, and 4xx such as a rejected phone number, a missing object or
/// a content-policy refusal — mean the provider works.
public enum ProviderCallFailure {
    /// `http_<status>` for a status that means the provider failed, `nil` for an answer.
    public static func status(_ status: Int) -> String? {
        [401, 403, 408, 429].contains(status) || status >= 500 ? "http_\(status)" : nil
    }
    /// No answer within the deadline.
    public static let timeout = "timeout"
    /// The provider could not be reached (connection refused, TLS, DNS).
    public static let unreachable = "unreachable"
    /// An answer that could not be understood.
    public static let invalidResponse = "invalid_response"

    /// The classification of a ``ProviderError`` thrown for an exchange.
    public static func of(_ error: ProviderError) -> String? {
        switch error {
        case .rejected(let status, _, _): Self.status(status)
        case .quotaExceeded, .rateLimited: "http_429"
        case .unavailable(let message): message.hasSuffix("timed out") ? timeout : unreachable
        case .invalidResponse: invalidResponse
        }
    }
}
