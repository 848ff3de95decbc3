import ChorusAPI
import Foundation

/// The user's App Store subscription (`GET /mobile/subscription-status`), from
/// ``PurchasesClient/subscriptionStatus()``.
public struct SubscriptionStatus: Sendable, Hashable {
    /// Where the subscription is in its life.
    public enum State: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// Paid and renewing (`active`).
        case active
        /// Will not renew; calls are allowed until ``SubscriptionStatus/endDate`` (`cancelled`).
        case cancelled
        /// A renewal failed; calls are allowed until ``SubscriptionStatus/gracePeriodExpiresDate`` while Apple
        /// retries (`grace_period`). Ask the user to update their payment method.
        case gracePeriod
        /// A renewal failed; no calls while Apple retries (`billing_retry`).
        case billingRetry
        /// Ended (`expired`).
        case expired
        /// Refunded or revoked (`revoked`).
        case revoked
        /// Never subscribed (`none`).
        case none
        /// A state this version of the SDK does not know; ``SubscriptionStatus/isSubscribed`` still says whether
        /// the plan's calls are available.
        case unknown(String)

        /// Reads the server's value.
        public init(rawValue: String) {
            switch rawValue {
            case "active": self = .active
            case "cancelled": self = .cancelled
            case "grace_period": self = .gracePeriod
            case "billing_retry": self = .billingRetry
            case "expired": self = .expired
            case "revoked": self = .revoked
            case "none": self = .none
            default: self = .unknown(rawValue)
            }
        }

        /// The server's value, e.g. `grace_period`.
        public var rawValue: String {
            switch self {
            case .active: "active"
            case .cancelled: "cancelled"
            case .gracePeriod: "grace_period"
            case .billingRetry: "billing_retry"
            case .expired: "expired"
            case .revoked: "revoked"
            case .none: "none"
            case .unknown(let value): value
            }
        }

        /// The same as ``rawValue``.
        public var description: String { rawValue }
    }

    /// The plan, or `nil` without a subscription.
    public var plan: PlanTier?
    /// Where the subscription is in its life.
    public var state: State
    /// Whether the plan's calls are available now.
    public var isSubscribed: Bool
    /// When the subscription started.
    public var startDate: Date?
    /// When access ends (or ended) unless renewed.
    public var endDate: Date?
    /// When the next renewal is charged, while active.
    public var nextPaymentDate: Date?
    /// How often it is billed.
    public var billingCycle: BillingCycle?
    /// The App Store id of the latest transaction.
    public var transactionID: String?
    /// The App Store product id.
    public var productID: String?
    /// Whether it renews automatically; `nil` without a subscription.
    public var willRenew: Bool?
    /// The product it renews to when that differs from ``productID`` (a downgrade takes effect at renewal).
    public var renewsToProductID: String?
    /// The end of Apple's billing grace period, in ``State-swift.enum/gracePeriod``.
    public var gracePeriodExpiresDate: Date?

    /// Converts the wire format.
    public init(_ dto: SubscriptionStatusResponse) {
        plan = dto.subscriptionTier.map(PlanTier.init(rawValue:))
        state = State(rawValue: dto.subscriptionStatus)
        isSubscribed = dto.isSubscribed
        startDate = dto.subscriptionStartDate
        endDate = dto.subscriptionEndDate
        nextPaymentDate = dto.nextPaymentDate
        billingCycle = dto.billingCycle.map(BillingCycle.init(rawValue:))
        transactionID = dto.appStoreTransactionID
        productID = dto.appStoreProductID
        willRenew = dto.willRenew
        renewsToProductID = dto.renewsToProductID
        gracePeriodExpiresDate = dto.gracePeriodExpiresDate
    }
}

/// The outcome of a purchase the server accepted, from ``PurchasesClient/purchase(signedTransaction:productID:)``.
public struct PurchaseResult: Sendable, Hashable {
    /// A sentence for the user, e.g. "Purchase processed successfully!".
    public var message: String
    /// The active plan after the purchase, or `nil` (e.g. after buying only an add-on pack).
    public var plan: PlanTier?
    /// Whether a plan is active.
    public var isSubscribed: Bool
    /// Calls left in the current week of the plan or trial.
    public var callsRemainingThisWeek: Int
    /// Calls left in the current month of the plan or trial.
    public var callsRemainingThisMonth: Int
    /// Calls left from add-on packs.
    public var addOnCallsRemaining: Int

    /// Converts the wire format.
    public init(_ dto: PurchaseResponse) {
        message = dto.message
        plan = dto.usageStats.subscriptionTier.map(PlanTier.init(rawValue:))
        isSubscribed = dto.usageStats.isSubscribed
        callsRemainingThisWeek = dto.usageStats.callsRemainingThisWeek
        callsRemainingThisMonth = dto.usageStats.callsRemainingThisMonth
        addOnCallsRemaining = dto.usageStats.addonCallsRemaining
    }
}
