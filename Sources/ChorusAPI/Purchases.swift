import Foundation

/// `POST /mobile/purchase-subscription` body. Send `signed_transaction` (StoreKit 2) or `receipt_data` (legacy).
public struct PurchaseRequest: Codable, Sendable, Equatable {
    public var receiptData: String?
    /// Ignored by the server, which decides the environment itself; accepted for compatibility.
    public var isSandbox: Bool?
    public var productID: String
    public var signedTransaction: String?

    public init(receiptData: String? = nil, isSandbox: Bool? = nil, productID: String, signedTransaction: String? = nil) {
        self.receiptData = receiptData
        self.isSandbox = isSandbox
        self.productID = productID
        self.signedTransaction = signedTransaction
    }

    enum CodingKeys: String, CodingKey {
        case receiptData = "receipt_data"
        case isSandbox = "is_sandbox"
        case productID = "product_id"
        case signedTransaction = "signed_transaction"
    }
}

/// The `usage_stats` of a purchase or legacy upgrade answer: every member of `GET /mobile/usage-stats`
/// (``UsageStatsResponse``) plus the endpoint reference's `calls_remaining_this_week` and `calls_remaining_this_month`,
/// in one flat object. The integration guide's Swift client decodes it as its full `UsageStats`, while its endpoint
/// reference shows five members (issue 21): this satisfies both.
public struct PurchaseUsageStats: Codable, Sendable, Equatable {
    /// The usage-stats members.
    public var usage: UsageStatsResponse
    /// Calls left in the current 7-day cycle of the plan or trial (add-on calls not included).
    public var callsRemainingThisWeek: Int
    /// Calls left in the current 30-day cycle of the plan or trial (add-on calls not included).
    public var callsRemainingThisMonth: Int

    public init(usage: UsageStatsResponse, callsRemainingThisWeek: Int, callsRemainingThisMonth: Int) {
        self.usage = usage
        self.callsRemainingThisWeek = callsRemainingThisWeek
        self.callsRemainingThisMonth = callsRemainingThisMonth
    }

    /// The plan tier's wire name, or `nil`.
    public var subscriptionTier: String? { usage.subscriptionTier }
    /// Whether a plan is active.
    public var isSubscribed: Bool { usage.isSubscribed }
    /// Calls left from add-on packs.
    public var addonCallsRemaining: Int { usage.addonCallsRemaining }

    enum CodingKeys: String, CodingKey {
        case callsRemainingThisWeek = "calls_remaining_this_week"
        case callsRemainingThisMonth = "calls_remaining_this_month"
    }

    public init(from decoder: any Decoder) throws {
        usage = try UsageStatsResponse(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        callsRemainingThisWeek = try container.decode(Int.self, forKey: .callsRemainingThisWeek)
        callsRemainingThisMonth = try container.decode(Int.self, forKey: .callsRemainingThisMonth)
    }

    /// One flat object: the usage-stats members, then the two remaining-calls members.
    public func encode(to encoder: any Encoder) throws {
        try usage.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(callsRemainingThisWeek, forKey: .callsRemainingThisWeek)
        try c.encode(callsRemainingThisMonth, forKey: .callsRemainingThisMonth)
    }
}

/// `POST /mobile/purchase-subscription` answer.
public struct PurchaseResponse: Codable, Sendable, Equatable {
    public var success: Bool
    public var message: String
    public var usageStats: PurchaseUsageStats

    public init(success: Bool, message: String, usageStats: PurchaseUsageStats) {
        self.success = success
        self.message = message
        self.usageStats = usageStats
    }

    enum CodingKeys: String, CodingKey {
        case success
        case message
        case usageStats = "usage_stats"
    }
}

/// `POST /mobile/upgrade-subscription` body (legacy).
public struct UpgradeSubscriptionRequest: Codable, Sendable, Equatable {
    public var receiptData: String
    public var isSandbox: Bool?
    /// `mobile_weekly` (the Basic plan), `mobile_basic` or `mobile_premium`.
    public var subscriptionTier: String

    public init(receiptData: String, isSandbox: Bool? = nil, subscriptionTier: String = "mobile_weekly") {
        self.receiptData = receiptData
        self.isSandbox = isSandbox
        self.subscriptionTier = subscriptionTier
    }

    enum CodingKeys: String, CodingKey {
        case receiptData = "receipt_data"
        case isSandbox = "is_sandbox"
        case subscriptionTier = "subscription_tier"
    }

    /// `subscription_tier` defaults to `mobile_weekly`, as in the original API.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        receiptData = try container.decode(String.self, forKey: .receiptData)
        isSandbox = try container.decodeIfPresent(Bool.self, forKey: .isSandbox)
        subscriptionTier = try container.decodeIfPresent(String.self, forKey: .subscriptionTier) ?? "mobile_weekly"
    }
}

/// `POST /mobile/upgrade-subscription` answer (legacy).
public struct UpgradeSubscriptionResponse: Codable, Sendable, Equatable {
    public var success: Bool
    public var message: String
    public var subscriptionTier: String
    /// The purchase answer's `usage_stats`, except that its `subscription_tier` is the requested tier name (e.g.
    /// `mobile_weekly`), as the legacy answer always said.
    public var usageStats: PurchaseUsageStats

    public init(success: Bool, message: String, subscriptionTier: String, usageStats: PurchaseUsageStats) {
        self.success = success
        self.message = message
        self.subscriptionTier = subscriptionTier
        self.usageStats = usageStats
    }

    enum CodingKeys: String, CodingKey {
        case success
        case message
        case subscriptionTier = "subscription_tier"
        case usageStats = "usage_stats"
    }
}

/// `POST /mobile/app-store/webhook` body: App Store Server Notifications V2 send only `signedPayload`.
/// The seed's `notificationType` and `data` are accepted and ignored: only the signed payload is trusted.
public struct AppStoreNotificationRequest: Codable, Sendable, Equatable {
    public var signedPayload: String

    public init(signedPayload: String) {
        self.signedPayload = signedPayload
    }

    enum CodingKeys: String, CodingKey {
        case signedPayload
    }
}

/// `POST /mobile/app-store/webhook` answer.
public struct AppStoreNotificationResponse: Codable, Sendable, Equatable {
    public var status: String
    public var message: String

    public init(status: String, message: String) {
        self.status = status
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case status
        case message
    }
}

/// Where an App Store subscription is in its life (subscription-status's `subscription_status`). Open: a value this
/// version does not know decodes as itself (``isKnown`` is then `false`); `is_subscribed` still says whether the plan's
/// calls are available.
public struct SubscriptionState: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Paid and renewing.
    public static let active: SubscriptionState = "active"
    /// Will not renew; calls are allowed until the end date.
    public static let cancelled: SubscriptionState = "cancelled"
    /// A renewal failed; calls are allowed until `grace_period_expires_date` while Apple retries.
    public static let gracePeriod: SubscriptionState = "grace_period"
    /// A renewal failed; no calls while Apple retries.
    public static let billingRetry: SubscriptionState = "billing_retry"
    /// Ended.
    public static let expired: SubscriptionState = "expired"
    /// Refunded or revoked.
    public static let revoked: SubscriptionState = "revoked"
    /// Never subscribed.
    public static let none: SubscriptionState = "none"

    /// The known states.
    public static let allCases: [SubscriptionState] = [.active, .cancelled, .gracePeriod, .billingRetry, .expired, .revoked, .none]
}

/// `GET /mobile/subscription-status`. Fields without a value are `null`.
public struct SubscriptionStatusResponse: Codable, Sendable, Equatable {
    public var subscriptionTier: String?
    public var subscriptionStatus: SubscriptionState
    public var isSubscribed: Bool
    public var subscriptionStartDate: Date?
    public var subscriptionEndDate: Date?
    public var nextPaymentDate: Date?
    public var billingCycle: BillingPeriod?
    public var appStoreTransactionID: String?
    public var appStoreProductID: String?
    /// Whether the subscription renews automatically; `null` without a subscription.
    public var willRenew: Bool?
    /// The product the subscription renews to when it differs (a downgrade takes effect at renewal).
    public var renewsToProductID: String?
    /// The end of Apple's billing grace period while in `grace_period`.
    public var gracePeriodExpiresDate: Date?

    public init(
        subscriptionTier: String?, subscriptionStatus: SubscriptionState, isSubscribed: Bool, subscriptionStartDate: Date?,
        subscriptionEndDate: Date?, nextPaymentDate: Date?, billingCycle: BillingPeriod?, appStoreTransactionID: String?,
        appStoreProductID: String?, willRenew: Bool? = nil, renewsToProductID: String? = nil, gracePeriodExpiresDate: Date? = nil
    ) {
        self.subscriptionTier = subscriptionTier
        self.subscriptionStatus = subscriptionStatus
        self.isSubscribed = isSubscribed
        self.subscriptionStartDate = subscriptionStartDate
        self.subscriptionEndDate = subscriptionEndDate
        self.nextPaymentDate = nextPaymentDate
        self.billingCycle = billingCycle
        self.appStoreTransactionID = appStoreTransactionID
        self.appStoreProductID = appStoreProductID
        self.willRenew = willRenew
        self.renewsToProductID = renewsToProductID
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
    }

    enum CodingKeys: String, CodingKey {
        case subscriptionTier = "subscription_tier"
        case subscriptionStatus = "subscription_status"
        case isSubscribed = "is_subscribed"
        case subscriptionStartDate = "subscription_start_date"
        case subscriptionEndDate = "subscription_end_date"
        case nextPaymentDate = "next_payment_date"
        case billingCycle = "billing_cycle"
        case appStoreTransactionID = "app_store_transaction_id"
        case appStoreProductID = "app_store_product_id"
        case willRenew = "will_renew"
        case renewsToProductID = "renews_to_product_id"
        case gracePeriodExpiresDate = "grace_period_expires_date"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(subscriptionTier, forKey: .subscriptionTier)
        try c.encode(subscriptionStatus, forKey: .subscriptionStatus)
        try c.encode(isSubscribed, forKey: .isSubscribed)
        try c.encode(subscriptionStartDate, forKey: .subscriptionStartDate)
        try c.encode(subscriptionEndDate, forKey: .subscriptionEndDate)
        try c.encode(nextPaymentDate, forKey: .nextPaymentDate)
        try c.encode(billingCycle, forKey: .billingCycle)
        try c.encode(appStoreTransactionID, forKey: .appStoreTransactionID)
        try c.encode(appStoreProductID, forKey: .appStoreProductID)
        try c.encode(willRenew, forKey: .willRenew)
        try c.encode(renewsToProductID, forKey: .renewsToProductID)
        try c.encode(gracePeriodExpiresDate, forKey: .gracePeriodExpiresDate)
    }
}
