import ChorusAPI
import Foundation

/// The user's App Store subscription (`GET /mobile/subscription-status`), from
/// ``PurchasesClient/subscriptionStatus()``.
public struct SubscriptionStatus: Sendable, Hashable {
    /// Where the subscription is in its life: the wire's open value, ChorusAPI's `SubscriptionState` (`active`,
    /// `cancelled`, `gracePeriod` — ask the user to update their payment method —, `billingRetry`, `expired`, `revoked`,
    /// `none`; a value a newer server added is kept as is, `isKnown` is `false`, and ``isSubscribed`` still says whether
    /// the plan's calls are available).
    public typealias State = SubscriptionState

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
    /// The end of Apple's billing grace period, in the `gracePeriod` state.
    public var gracePeriodExpiresDate: Date?

    /// Converts the wire format.
    public init(_ dto: SubscriptionStatusResponse) {
        plan = dto.subscriptionTier.map(PlanTier.init(rawValue:))
        state = dto.subscriptionStatus
        isSubscribed = dto.isSubscribed
        startDate = dto.subscriptionStartDate
        endDate = dto.subscriptionEndDate
        nextPaymentDate = dto.nextPaymentDate
        billingCycle = dto.billingCycle
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
    /// The usage stats after the purchase, as ``CallsClient/usageStats()`` gives them.
    public var usage: Usage

    /// Converts the wire format.
    public init(_ dto: PurchaseResponse) {
        usage = Usage(dto.usageStats.usage)
        message = dto.message
        plan = dto.usageStats.subscriptionTier.map(PlanTier.init(rawValue:))
        isSubscribed = dto.usageStats.isSubscribed
        callsRemainingThisWeek = dto.usageStats.callsRemainingThisWeek
        callsRemainingThisMonth = dto.usageStats.callsRemainingThisMonth
        addOnCallsRemaining = dto.usageStats.addonCallsRemaining
    }
}
