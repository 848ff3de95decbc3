import ChorusAPI
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything a ``ChorusClient`` call can fail with. Each case has a message fit to show the user
/// (``errorDescription``); switch on the case to react (offer a plan, show the sign-in screen, retry later).
///
/// Answers that say "try again" (429, 503) and network failures of idempotent requests have already been retried
/// according to ``ChorusClientOptions/retry`` by the time one of these errors reaches you.
public enum ChorusError: Error, LocalizedError {
    /// 402: the user's allowance does not cover this. ``PaymentRequired/reason`` says why (e.g. the trial is used up)
    /// and ``PaymentRequired/upgradeOptions`` what would help.
    case paymentRequired(PaymentRequired)
    /// 429: too many requests. `retryAfter` is the server's `Retry-After` in seconds, when it sent one.
    ///
    /// Thrown once the retries are used up, or at once when the server asks for a longer wait than
    /// ``RetryPolicy/maxDelay``.
    case rateLimited(retryAfter: TimeInterval?)
    /// 422: the request had invalid fields (e.g. `phone_number` not in E.164 form).
    case validation([FieldError])
    /// 422 with a code: a rule refused the request (e.g. `persona_refused` for a custom persona, with its
    /// ``Refusal/categories``; `scenario_disabled`). Nothing was saved or charged.
    case refused(Refusal)
    /// 401 to a request that carries credentials but no session, e.g. a login with a wrong email or password.
    case unauthorized
    /// 401 `invalid_token` "The access token expired", even for a freshly renewed access token: the server's clock
    /// runs ahead of the token's lifetime. An expired access token is otherwise renewed by itself (`POST /auth/refresh`,
    /// once for all the requests refused at the same time) and the request replayed, so this reaches the app only when
    /// the renewal did not help. The session is kept: try again later; signing in again is not needed.
    case tokenExpired
    /// There is no session, or the server ended it (refresh token expired, revoked or reused): the stored tokens
    /// are gone and the user must sign in again.
    case signedOut
    /// 404: what was asked for does not exist (for this user).
    case notFound
    /// 5xx: the server failed (`status` 503: it is temporarily unavailable). Quote `requestID` to support so they can
    /// find the request.
    case server(status: Int, requestID: String?)
    /// Any other refusal, with the server's explanation (e.g. 400 "Email already registered", 409).
    case api(status: Int, detail: String)
    /// No answer arrived: offline, timed out, DNS, TLS… `underlying` is the transport's error (usually a `URLError`).
    case network(any Error)
    /// An answer arrived but could not be read (an incompatible server version or a proxy's page).
    case decoding(String)

    /// A message fit to show the user.
    public var errorDescription: String? {
        switch self {
        case .paymentRequired(let refusal):
            return refusal.message.isEmpty ? "Your plan does not cover this. Please upgrade to continue." : refusal.message
        case .rateLimited(let retryAfter):
            guard let retryAfter, retryAfter > 0 else { return "Too many requests. Please wait a moment and try again." }
            // `rateLimited` is public: an app may build one from any number, so the conversion cannot trap either.
            let seconds = Int(min(retryAfter, 1e15).rounded(.up))
            return "Too many requests. Please try again in \(seconds) second\(seconds == 1 ? "" : "s")."
        case .refused(let refusal):
            return refusal.message
        case .validation(let errors):
            guard !errors.isEmpty else { return "Some of the information entered is not valid." }
            return errors.map { "\(Self.label(forField: $0.field)): \($0.message)" }.joined(separator: "\n")
        case .unauthorized:
            return "The email or password is incorrect."
        case .tokenExpired:
            return "Your sign-in could not be renewed just now. Please try again in a moment."
        case .signedOut:
            return "Your session has ended. Please sign in again."
        case .notFound:
            return "This item could not be found."
        case .server(let status, let requestID):
            let base =
                status == 503
                ? "Chorus is temporarily unavailable. Please try again in a few minutes."
                : "Something went wrong on our side. Please try again later."
            return requestID.map { "\(base) (Request ID: \($0))" } ?? base
        case .api(_, let detail):
            return detail
        case .network(let error):
            if let urlError = error as? URLError, urlError.code == .timedOut {
                return "The request timed out. Check your internet connection and try again."
            }
            return "Could not reach Chorus. Check your internet connection and try again."
        case .decoding:
            return "The server sent an unexpected response. Please update the app or try again later."
        }
    }

    /// `phone_number` → `Phone number`, `data.scenario` → `Scenario`.
    static func label(forField field: String) -> String {
        let last = field.split(separator: ".").last.map(String.init) ?? field
        let words = last.replacingOccurrences(of: "_", with: " ")
        return words.prefix(1).uppercased() + words.dropFirst()
    }

    /// The error for a non-2xx answer, read from the contract's error bodies and headers.
    static func from(status: Int, body: Data, response: HTTPURLResponse) -> ChorusError {
        let decoder = ChorusJSON.makeDecoder()
        switch status {
        case 401:
            return isTokenExpired(response) ? .tokenExpired : .unauthorized
        case 402:
            if let payload = try? decoder.decode(PaymentRequiredResponse.self, from: body) {
                return .paymentRequired(PaymentRequired(payload.detail))
            }
        case 404:
            return .notFound
        case 422:
            if let payload = try? decoder.decode(RefusalResponse.self, from: body) { return .refused(Refusal(payload.detail)) }
            if let payload = try? decoder.decode(ValidationErrorResponse.self, from: body) { return .validation(payload.errors) }
        case 429:
            return .rateLimited(retryAfter: response.header("Retry-After").flatMap(parseRetryAfter))
        case 500...599:
            let fromBody = (try? decoder.decode(ErrorResponse.self, from: body))?.requestID
            return .server(status: status, requestID: response.header("X-Request-ID") ?? fromBody)
        default:
            break
        }
        let detail = (try? decoder.decode(ErrorResponse.self, from: body))?.detail
        return .api(status: status, detail: detail ?? HTTPURLResponse.localizedString(forStatusCode: status).capitalized)
    }

    /// Whether a 401 says the access token expired: `WWW-Authenticate: Bearer error="invalid_token",
    /// error_description="The access token expired"` (RFC 6750 §3). Other refusals (garbage, a revoked session) have
    /// no such description.
    static func isTokenExpired(_ response: HTTPURLResponse) -> Bool {
        guard let challenge = response.header("WWW-Authenticate")?.lowercased(), challenge.hasPrefix("bearer") else { return false }
        let compact = challenge.replacingOccurrences(of: " ", with: "")
        return compact.contains(#"error="invalid_token""#) && compact.contains(#"error_description="theaccesstokenexpired""#)
    }

    /// The longest `Retry-After` kept as it is (a year); longer ones are clamped to it.
    static let longestRetryAfter: TimeInterval = 366 * 86_400

    /// `Retry-After` as delta-seconds or an HTTP date.
    static func parseRetryAfter(_ value: String) -> TimeInterval? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        // From the server or a proxy: `inf`, `nan` and `1e300` parse as doubles; only finite values are kept, clamped to
        // a year so that the message and any wait computed from them stay representable.
        if let seconds = TimeInterval(trimmed) { return seconds.isFinite ? min(max(0, seconds), longestRetryAfter) : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: trimmed).map { max(0, $0.timeIntervalSinceNow) }
    }
}

extension HTTPURLResponse {
    /// A header's value, matching the name case-insensitively on every platform.
    func header(_ name: String) -> String? {
        if let value = value(forHTTPHeaderField: name) { return value }
        return allHeaderFields.first { ($0.key as? String)?.caseInsensitiveCompare(name) == .orderedSame }?.value as? String
    }
}

/// Why a request was refused with 402 Payment Required, and what the user can buy to go on.
///
/// Built from the server's 402 body (`{"detail": {"error", "message", "upgrade_options", "timestamp"}}`); the
/// reason uses the same values as ``CallPermission/status``, the offers the same type as
/// ``CallPermission/upgradeOptions``.
/// ```swift
/// } catch ChorusError.paymentRequired(let refusal) {
///     if refusal.reason == .trialExhausted { showPaywall(offers: refusal.upgradeOptions) }
/// }
/// ```
public struct PaymentRequired: Sendable, Hashable {
    /// Why the request was refused (the body's `error`): `trialExhausted`, `weeklyLimitReached`, `monthlyLimitReached`,
    /// `upgradeRequired`, or a reason this SDK version does not know, kept as is (`isKnown` is `false`).
    public var reason: CallPermission.Status
    /// The server's explanation, fit to show the user (also ``ChorusError/errorDescription``).
    public var message: String
    /// What the user could buy to go on, in the server's order of recommendation; empty when nothing would help.
    public var upgradeOptions: [UpgradeOffer]
    /// When the server refused the request.
    public var timestamp: Date

    /// A refusal built by hand, e.g. for a SwiftUI preview of a paywall.
    ///
    /// - Parameters:
    ///   - reason: why the request was refused.
    ///   - message: the explanation for the user.
    ///   - upgradeOptions: what would help.
    ///   - timestamp: when it was refused.
    public init(reason: CallPermission.Status, message: String, upgradeOptions: [UpgradeOffer] = [], timestamp: Date = Date()) {
        self.reason = reason
        self.message = message
        self.upgradeOptions = upgradeOptions
        self.timestamp = timestamp
    }

    /// Converts the wire format.
    public init(_ dto: PaymentRequiredDetail) {
        reason = CallPermission.Status(rawValue: dto.error)
        message = dto.message
        upgradeOptions = dto.upgradeOptions.map(UpgradeOffer.init)
        timestamp = dto.timestamp
    }
}

/// Why a rule refused a request (422 `{"detail": {"error", "message", …}}`).
public struct Refusal: Sendable, Hashable {
    /// The code, e.g. `persona_refused`, `scenario_disabled`.
    public var code: String
    /// A sentence fit to show the user.
    public var message: String
    /// The request field it is about, if one (`persona`, `scenario`).
    public var field: String?
    /// `persona_refused`: the categories that refused the text (`impersonation`, `credentials`, `moderation:violence`…).
    public var categories: [String]
    /// When the request may succeed, if the refusal says so.
    public var retryAt: Date?

    init(_ detail: RefusalDetail) {
        code = detail.error
        message = detail.message
        field = detail.field
        categories = detail.categories ?? []
        retryAt = detail.retryAt
    }
}
