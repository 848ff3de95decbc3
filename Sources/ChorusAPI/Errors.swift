import Foundation

/// The error body used everywhere: `{"detail": "<text>"}`.
public struct ErrorResponse: Codable, Sendable, Equatable {
    public var detail: String
    /// The request id, present on 500 answers so support can find the log lines.
    public var requestID: String?

    public init(detail: String, requestID: String? = nil) {
        self.detail = detail
        self.requestID = requestID
    }

    enum CodingKeys: String, CodingKey {
        case detail
        case requestID = "request_id"
    }
}

/// One invalid field of a 422 answer.
public struct FieldError: Codable, Sendable, Equatable {
    public var field: String
    public var message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case field
        case message
    }
}

/// 422 body: `{"detail": "<summary>", "errors": [{"field": ..., "message": ...}]}`.
public struct ValidationErrorResponse: Codable, Sendable, Equatable {
    public var detail: String
    public var errors: [FieldError]

    public init(detail: String, errors: [FieldError]) {
        self.detail = detail
        self.errors = errors
    }

    enum CodingKeys: String, CodingKey {
        case detail
        case errors
    }
}

/// The `detail` object of a coded refusal (422): the seed's `{"detail": {"error", "message"}}` shape of refusals,
/// e.g. `persona_refused`, with what the client needs to act on it.
public struct RefusalDetail: Codable, Sendable, Equatable {
    /// A stable code, e.g. `persona_refused`, `scenario_disabled`.
    public var error: String
    /// A sentence fit to show the user.
    public var message: String
    /// The request field the refusal is about, if one.
    public var field: String?
    /// Why: the policy or moderation categories that refused the text (`persona_refused`).
    public var categories: [String]?
    /// When what was refused becomes possible (`quiet_hours`: the callee's calling hours start; `number_daily_limit`,
    /// `number_account_limit`: the number's day or week starts again).
    public var retryAt: Date?

    public init(error: String, message: String, field: String? = nil, categories: [String]? = nil, retryAt: Date? = nil) {
        self.error = error
        self.message = message
        self.field = field
        self.categories = categories
        self.retryAt = retryAt
    }

    enum CodingKeys: String, CodingKey {
        case error
        case message
        case field
        case categories
        case retryAt = "retry_at"
    }
}

/// 422 body of a coded refusal: `{"detail": {"error", "message", "field"?, "categories"?, "retry_at"?}}`.
public struct RefusalResponse: Codable, Sendable, Equatable {
    public var detail: RefusalDetail

    public init(detail: RefusalDetail) {
        self.detail = detail
    }

    enum CodingKeys: String, CodingKey {
        case detail
    }
}

/// An offer shown when a call is refused: `{plan, price, calls, product_id}`.
public struct UpgradeOption: Codable, Sendable, Equatable {
    public var plan: String
    public var price: String
    public var calls: String
    public var productID: String

    public init(plan: String, price: String, calls: String, productID: String) {
        self.plan = plan
        self.price = price
        self.calls = calls
        self.productID = productID
    }

    enum CodingKeys: String, CodingKey {
        case plan
        case price
        case calls
        case productID = "product_id"
    }
}

/// The `detail` object of a 402 answer.
public struct PaymentRequiredDetail: Codable, Sendable, Equatable {
    /// The permission status that refused the call, e.g. `trial_exhausted`.
    public var error: String
    public var message: String
    public var upgradeOptions: [UpgradeOption]
    public var timestamp: Date

    public init(error: String, message: String, upgradeOptions: [UpgradeOption], timestamp: Date) {
        self.error = error
        self.message = message
        self.upgradeOptions = upgradeOptions
        self.timestamp = timestamp
    }

    enum CodingKeys: String, CodingKey {
        case error
        case message
        case upgradeOptions = "upgrade_options"
        case timestamp
    }
}

/// 402 body: `{"detail": {"error", "message", "upgrade_options", "timestamp"}}`.
public struct PaymentRequiredResponse: Codable, Sendable, Equatable {
    public var detail: PaymentRequiredDetail

    public init(detail: PaymentRequiredDetail) {
        self.detail = detail
    }

    enum CodingKeys: String, CodingKey {
        case detail
    }
}

/// `GET /health`.
public struct HealthResponse: Codable, Sendable, Equatable {
    /// `ok`, `unavailable` (the database does not answer) or `draining` (the instance is stopping).
    public var status: String
    public var version: String
    public var environment: String
    public var database: String
    public var providers: [String: String]
    /// The instance is draining (SIGTERM): it refuses new requests while its calls in progress end.
    public var draining: Bool

    public init(
        status: String, version: String, environment: String, database: String, providers: [String: String], draining: Bool = false
    ) {
        self.status = status
        self.version = version
        self.environment = environment
        self.database = database
        self.providers = providers
        self.draining = draining
    }

    enum CodingKeys: String, CodingKey {
        case status
        case version
        case environment
        case database
        case providers
        case draining
    }
}
