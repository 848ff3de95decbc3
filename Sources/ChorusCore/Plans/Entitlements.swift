import Foundation

/// What a subscription gives its user at one moment: the plan tier, whether it is usable, and why.
public struct Entitlement: Sendable, Equatable {
    /// The plan tier the subscription's product stands for.
    public var tier: PlanTier
    /// The status at the evaluation time.
    public var status: SubscriptionStatus
    /// Whether calls may be made on this plan now.
    public var isActive: Bool
    /// Until when access lasts (the paid period, or the grace period's end); `nil` once there is none.
    public var accessUntil: Date?
    /// The subscription it derives from.
    public var subscription: SubscriptionSnapshot

    /// The plan as the quota rules see it, when the entitlement is active.
    public var activePlan: ActivePlan? {
        guard isActive, let accessUntil else { return nil }
        return ActivePlan(tier: tier, anchor: subscription.anchor, expiresAt: accessUntil)
    }
}

/// Derives entitlements from stored subscriptions and the time: pure, so every rule is tested without a database.
///
/// - Active until Apple's `expiresDate`; during a billing grace period until the grace period's end.
/// - Billing retry (a failed renewal without grace, or after it), expiry reported by Apple, refunds and revocations
///   give no access.
/// - Limits hang off the tier of the entitlement, never off raw product ids: products map to tiers through the catalog.
public struct EntitlementEvaluator: Sendable {
    public let catalog: PlanCatalog

    /// Creates an evaluator for the catalog's products.
    public init(catalog: PlanCatalog) {
        self.catalog = catalog
    }

    /// The tier a product id stands for, if it is one of the catalog's plans.
    public func tier(of productID: String) -> PlanTier? {
        if case .plan(let terms) = catalog.product(id: productID) { return terms.tier }
        return nil
    }

    /// The entitlement one subscription gives at `now`; `nil` when its product is not a plan of the catalog.
    public func entitlement(_ subscription: SubscriptionSnapshot, at now: Date) -> Entitlement? {
        guard let tier = tier(of: subscription.productID) else { return nil }
        let status: SubscriptionStatus
        var accessUntil: Date? = nil
        if subscription.revokedAt != nil {
            status = .revoked
        } else if subscription.expiredAt != nil {
            status = .expired
        } else {
            switch subscription.billing {
            case .retrying:
                status = .billingRetry
            case .gracePeriod(let until):
                if now < subscription.expiresAt {
                    status = subscription.willRenew ? .active : .cancelled
                    accessUntil = max(until, subscription.expiresAt)
                } else if now < until {
                    status = .gracePeriod
                    accessUntil = until
                } else {
                    status = .billingRetry
                }
            case .current:
                if now < subscription.expiresAt {
                    status = subscription.willRenew ? .active : .cancelled
                    accessUntil = subscription.expiresAt
                } else {
                    status = .expired
                }
            }
        }
        return Entitlement(
            tier: tier, status: status, isActive: status.grantsAccess && accessUntil != nil, accessUntil: accessUntil,
            subscription: subscription)
    }

    /// The entitlement that decides the user's plan at `now`: the best active one (the higher tier, then the one
    /// lasting longer); when none is active, the most recently bought one, so the user sees why.
    public func current(_ subscriptions: [SubscriptionSnapshot], at now: Date) -> Entitlement? {
        let entitlements = subscriptions.compactMap { entitlement($0, at: now) }
        let active = entitlements.filter(\.isActive)
        if let best = active.max(by: { Self.rank($0) < Self.rank($1) }) { return best }
        return entitlements.max { $0.subscription.purchaseDate < $1.subscription.purchaseDate }
    }

    private static func rank(_ entitlement: Entitlement) -> (Int, Date) {
        (entitlement.tier == .premium ? 1 : 0, entitlement.accessUntil ?? .distantPast)
    }
}
