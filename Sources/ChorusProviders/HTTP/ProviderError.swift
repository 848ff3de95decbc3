import Foundation

/// Why a call to an AI or storage provider failed, classified for the caller's retry and error decisions.
///
/// Transient failures (``rateLimited(retryAfter:message:)`` and ``unavailable(_:)``) are retried by
/// ``ProviderHTTP`` before they surface; what reaches a caller has already used up its retries.
public enum ProviderError: Error, Sendable, Equatable {
    /// The provider refused the request as malformed or not allowed (4xx other than 408/409/429). Retrying the
    /// same request fails the same way. `code` is the provider's machine-readable code when it sent one.
    case rejected(httpStatus: Int, code: String?, message: String)
    /// The account ran out of credit or quota (OpenAI `insufficient_quota`, ElevenLabs `quota_exceeded`): needs an
    /// operator, never retried.
    case quotaExceeded(message: String)
    /// The provider asked us to slow down (429) and kept asking after the retries.
    case rateLimited(retryAfter: Duration?, message: String)
    /// The provider could not be reached, timed out or failed (5xx); the request may succeed later.
    case unavailable(String)
    /// The provider answered 2xx with a body we cannot use.
    case invalidResponse(String)

    /// Whether trying again later may succeed.
    public var isTransient: Bool {
        switch self {
        case .rateLimited, .unavailable: true
        case .rejected, .quotaExceeded, .invalidResponse: false
        }
    }
}
