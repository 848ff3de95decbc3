import ChorusAPI
import ChorusCore
import Vapor

/// Errors answered to clients with the contract's bodies. Everything else becomes a generic 500.
enum APIError: Error {
    /// `{"detail": "<message>"}` with `status`.
    case detail(HTTPResponseStatus, String)
    /// 422 `{"detail": "<summary>", "errors": [...]}`.
    case validation(summary: String, errors: [FieldError])
    /// 402 `{"detail": {"error", "message", "upgrade_options", "timestamp"}}`.
    case paymentRequired(PaymentRequiredResponse)
    /// 401 `{"detail":"Not authenticated"}`: no bearer token.
    case notAuthenticated
    /// 401 `{"detail":"Could not validate credentials"}` with `WWW-Authenticate: Bearer error="invalid_token"`: a bad or
    /// wrong-type token, or one of a session or account that no longer holds.
    case invalidCredentials
    /// 401 with `WWW-Authenticate: Bearer error="invalid_token", error_description="The access token expired"`: a
    /// genuine access token past its expiry; the client refreshes it (`POST /auth/refresh`) or signs in again.
    case tokenExpired
    /// 429 with `Retry-After`.
    case rateLimited(retryAfter: Int, limit: Int, window: Int)
    /// 503 with `Retry-After`: a provider the request needs cannot be reached; nothing changed.
    case unavailable(retryAfter: Int, detail: String)
    /// 429 `{"detail": "<message>"}` with `Retry-After`: a daily limit of the caller (operations, summaries, signups)
    /// is used up.
    case limitReached(retryAfter: Int, detail: String)
    /// 422 `{"detail": {"error": "<code>", "message", "field"?, "categories"?}}`: a request refused by a rule, with a code
    /// clients can switch on (e.g. `persona_refused`).
    case refused(RefusalDetail)

    static func badRequest(_ message: String) -> APIError { .detail(.badRequest, message) }
    static func notFound(_ message: String) -> APIError { .detail(.notFound, message) }

    static func invalid(_ field: String, _ message: String) -> APIError {
        .validation(summary: "Validation error", errors: [FieldError(field: field, message: message)])
    }
}

extension APIError {
    /// The contract's answer to a call that was not placed (or may not be): the one place ``CallPlacementError`` becomes
    /// HTTP, used by the error middleware for every endpoint that places or checks calls.
    init(_ error: CallPlacementError) {
        switch error {
        case .unknownScenario: self = .badRequest(error.message)
        case .accountDeleted: self = .invalidCredentials
        case .paymentRequired(let payload): self = .paymentRequired(payload)
        case .refused(let refusal): self = .refused(refusal)
        case .trialCallsPaused(let retryAfter), .dialQueueFull(let retryAfter), .budgetSpent(_, let retryAfter):
            self = .unavailable(retryAfter: retryAfter, detail: error.message)
        case .contended: self = .detail(.serviceUnavailable, error.message)
        case .telephonyRejected, .telephonyUnavailable: self = .detail(.badGateway, error.message)
        }
    }
}

/// Collects field errors; throws one 422 listing them all.
struct FieldValidator {
    private(set) var errors: [FieldError] = []

    mutating func check(_ condition: Bool, _ field: String, _ message: String) {
        if !condition { errors.append(FieldError(field: field, message: message)) }
    }

    func throwIfInvalid() throws {
        if !errors.isEmpty { throw APIError.validation(summary: "Validation error", errors: errors) }
    }
}
