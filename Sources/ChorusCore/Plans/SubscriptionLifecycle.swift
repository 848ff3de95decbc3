import Foundation

/// A subscription's status as `GET /mobile/subscription-status` reports it (`subscription_status`).
public enum SubscriptionStatus: String, Sendable, Equatable, CaseIterable {
    /// Paid up and renewing.
    case active
    /// Paid up until `expiresAt`, but the user turned auto-renew off.
    case cancelled
    /// A renewal failed; Apple's billing grace period keeps access until `graceExpiresAt`.
    case gracePeriod = "grace_period"
    /// A renewal failed and Apple is retrying the charge; no access meanwhile.
    case billingRetry = "billing_retry"
    /// Ended (period over, or Apple reported it expired).
    case expired
    /// Refunded or revoked by Apple (including Family Sharing removal): no access.
    case revoked

    /// Whether the status gives access to the plan (the time check is the evaluator's).
    public var grantsAccess: Bool { self == .active || self == .cancelled || self == .gracePeriod }
}

/// The billing side of a subscription between renewals.
public enum BillingState: Sendable, Equatable {
    /// The last renewal was paid.
    case current
    /// A renewal failed; access continues until the grace period ends.
    case gracePeriod(until: Date)
    /// A renewal failed and no grace period applies (or it ended): no access while Apple retries.
    case retrying
}

/// The stored state of one App Store subscription (one `originalTransactionId`), as far as entitlements go.
public struct SubscriptionSnapshot: Sendable, Equatable {
    /// The subscription's first transaction id: its identity at Apple.
    public var originalTransactionID: String
    /// The product the user currently has (changes at an upgrade, or at the renewal after a downgrade).
    public var productID: String
    /// The latest transaction applied.
    public var latestTransactionID: String
    /// When the latest transaction was bought.
    public var purchaseDate: Date
    /// When the paid period ends.
    public var expiresAt: Date
    /// Quota cycles are counted from here: the first purchase, a tier change or a resubscription after a lapse.
    public var anchor: Date
    /// Whether the subscription renews automatically.
    public var willRenew: Bool
    /// The product it renews to, when that differs from `productID` (a pending downgrade).
    public var autoRenewProductID: String?
    /// The billing state between renewals.
    public var billing: BillingState
    /// When Apple reported the subscription expired, if it did.
    public var expiredAt: Date?
    /// When Apple refunded or revoked the subscription, if it did.
    public var revokedAt: Date?
    /// The `signedDate` of the newest App Store data applied; older data arriving later is not applied.
    public var lastEventAt: Date

    /// Creates a snapshot from its fields.
    public init(
        originalTransactionID: String, productID: String, latestTransactionID: String, purchaseDate: Date, expiresAt: Date, anchor: Date,
        willRenew: Bool = true, autoRenewProductID: String? = nil, billing: BillingState = .current, expiredAt: Date? = nil,
        revokedAt: Date? = nil, lastEventAt: Date
    ) {
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.latestTransactionID = latestTransactionID
        self.purchaseDate = purchaseDate
        self.expiresAt = expiresAt
        self.anchor = anchor
        self.willRenew = willRenew
        self.autoRenewProductID = autoRenewProductID
        self.billing = billing
        self.expiredAt = expiredAt
        self.revokedAt = revokedAt
        self.lastEventAt = lastEventAt
    }
}

/// A transaction of a subscription, as the lifecycle needs it.
public struct SubscriptionTransaction: Sendable, Equatable {
    public var transactionID: String
    public var originalTransactionID: String
    public var productID: String
    public var purchaseDate: Date
    public var expiresDate: Date
    /// Set when Apple refunded or revoked this transaction.
    public var revocationDate: Date?

    /// Creates a transaction from its fields.
    public init(
        transactionID: String, originalTransactionID: String, productID: String, purchaseDate: Date, expiresDate: Date,
        revocationDate: Date? = nil
    ) {
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
    }
}

/// Renewal preferences that come with App Store data (`signedRenewalInfo`).
public struct RenewalPreferences: Sendable, Equatable {
    public var willRenew: Bool?
    public var autoRenewProductID: String?
    public var gracePeriodExpiresDate: Date?

    /// Creates renewal preferences from their fields.
    public init(willRenew: Bool? = nil, autoRenewProductID: String? = nil, gracePeriodExpiresDate: Date? = nil) {
        self.willRenew = willRenew
        self.autoRenewProductID = autoRenewProductID
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
    }
}

/// Something the App Store said about a subscription.
public enum SubscriptionEvent: Sendable, Equatable {
    /// A purchase, renewal, upgrade, offer redemption, renewal extension or reversed refund: the transaction is paid for.
    case paid(SubscriptionTransaction)
    /// Auto-renew turned on or off, or the next renewal's product changed (downgrade, crossgrade).
    case renewalChanged
    /// A renewal failed; with a grace period end date when Apple's billing grace period applies.
    case billingFailed(graceUntil: Date?)
    /// The billing grace period ended without payment.
    case gracePeriodExpired
    /// The subscription expired (voluntarily, billing, price increase, product withdrawn).
    case expired
    /// Apple refunded or revoked the subscription (refund, Family Sharing removal).
    case revoked(at: Date)
    /// Nothing that changes the subscription (informational notification).
    case none
}

/// What applying an event did.
public enum SubscriptionChange: Sendable, Equatable {
    /// The subscription's new state.
    case updated(SubscriptionSnapshot)
    /// The event was signed before data already applied (Apple retries arrive out of order): nothing changes.
    case stale
    /// The event changes nothing.
    case unchanged
}

/// The rules of a subscription's life, as pure functions of App Store events. The server stores the snapshot and
/// applies each event with a compare-and-set on the snapshot it read.
public enum SubscriptionLifecycle {
    /// Slack allowed between one period's end and the next renewal's purchase date for the renewal to continue the
    /// same quota cycles (Apple renews up to a day early; sandbox renewals are minutes apart).
    public static let continuityTolerance: TimeInterval = 86_400

    /// The subscription the first transaction seen of it starts. Its cycles start at the purchase, or when Apple
    /// signed the data if that is earlier (a renewal seen first may be bought ahead of its period).
    public static func start(_ transaction: SubscriptionTransaction, signedAt: Date, renewal: RenewalPreferences = .init()) -> SubscriptionSnapshot {
        var snapshot = SubscriptionSnapshot(
            originalTransactionID: transaction.originalTransactionID, productID: transaction.productID,
            latestTransactionID: transaction.transactionID, purchaseDate: transaction.purchaseDate, expiresAt: transaction.expiresDate,
            anchor: min(transaction.purchaseDate, signedAt), lastEventAt: signedAt
        )
        if let revoked = transaction.revocationDate { snapshot.revokedAt = revoked }
        applyRenewal(renewal, to: &snapshot)
        return snapshot
    }

    /// Applies `event`, signed by Apple at `signedAt`, to `snapshot`.
    ///
    /// - Parameter tierOf: The plan tier a product id stands for (tier changes restart the quota cycles).
    public static func apply(
        _ event: SubscriptionEvent, signedAt: Date, renewal: RenewalPreferences = .init(), to snapshot: SubscriptionSnapshot,
        tierOf: (String) -> PlanTier?
    ) -> SubscriptionChange {
        guard signedAt >= snapshot.lastEventAt else { return .stale }
        var next = snapshot
        next.lastEventAt = signedAt
        switch event {
        case .paid(let transaction):
            if let revoked = transaction.revocationDate {
                next.revokedAt = revoked
                break
            }
            // An older transaction (the app re-sending an earlier renewal) never rolls the subscription back.
            guard transaction.purchaseDate >= snapshot.purchaseDate else { break }
            let tierChanges = tierOf(transaction.productID) != tierOf(snapshot.productID)
            let continues = transaction.purchaseDate <= accessEnd(of: snapshot).addingTimeInterval(continuityTolerance)
            if tierChanges || !continues || snapshot.revokedAt != nil || snapshot.expiredAt != nil {
                next.anchor = transaction.purchaseDate
            }
            next.productID = transaction.productID
            next.latestTransactionID = transaction.transactionID
            next.purchaseDate = transaction.purchaseDate
            next.expiresAt = transaction.expiresDate
            next.billing = .current
            next.expiredAt = nil
            next.revokedAt = nil
            if next.autoRenewProductID == transaction.productID { next.autoRenewProductID = nil }
        case .renewalChanged:
            break
        case .billingFailed(let graceUntil):
            if let graceUntil, graceUntil > snapshot.expiresAt {
                next.billing = .gracePeriod(until: graceUntil)
            } else {
                next.billing = .retrying
            }
        case .gracePeriodExpired:
            next.billing = .retrying
        case .expired:
            next.expiredAt = signedAt
            next.willRenew = false
        case .revoked(let at):
            next.revokedAt = at
            next.willRenew = false
        case .none:
            break
        }
        applyRenewal(renewal, to: &next)
        if case .billingFailed = event, let grace = renewal.gracePeriodExpiresDate, grace > next.expiresAt {
            next.billing = .gracePeriod(until: grace)
        }
        var unchangedComparison = next
        unchangedComparison.lastEventAt = snapshot.lastEventAt
        return unchangedComparison == snapshot ? .unchanged : .updated(next)
    }

    /// Until when the subscription gives access, ignoring the clock: the paid period, or the grace period's end.
    public static func accessEnd(of snapshot: SubscriptionSnapshot) -> Date {
        if case .gracePeriod(let until) = snapshot.billing { return max(until, snapshot.expiresAt) }
        return snapshot.expiresAt
    }

    private static func applyRenewal(_ renewal: RenewalPreferences, to snapshot: inout SubscriptionSnapshot) {
        if let willRenew = renewal.willRenew { snapshot.willRenew = willRenew }
        if let product = renewal.autoRenewProductID {
            snapshot.autoRenewProductID = product == snapshot.productID ? nil : product
        }
    }
}
