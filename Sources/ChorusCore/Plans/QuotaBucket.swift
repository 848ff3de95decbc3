import Foundation

/// A counted allowance of calls valid in a time window: the trial, one cycle of a plan, or one add-on pack.
///
/// Buckets are the unit of atomic charging: a call is charged by incrementing `used` of exactly one bucket
/// with a compare-and-set (`used < capacity`), and refunded by decrementing it.
public struct QuotaBucket: Sendable, Equatable {
    public enum Kind: String, Sendable, Codable {
        case trial
        case plan
        case addon
    }

    /// Unique per user: `trial`, `plan:<tier>:<cycle start, epoch seconds>` or `addon:<transaction id>`.
    public var key: String
    public var kind: Kind
    public var periodStart: Date
    public var periodEnd: Date
    public var capacity: Int
    public var used: Int

    public init(key: String, kind: Kind, periodStart: Date, periodEnd: Date, capacity: Int, used: Int) {
        self.key = key
        self.kind = kind
        self.periodStart = periodStart
        self.periodEnd = periodEnd
        self.capacity = capacity
        self.used = used
    }

    public var remaining: Int { max(0, capacity - used) }

    public func isOpen(at now: Date) -> Bool { periodStart <= now && now < periodEnd }

    public static let trialKey = "trial"

    public static func planKey(tier: PlanTier, cycleStart: Date) -> String {
        "plan:\(tier.rawValue):\(Int(cycleStart.timeIntervalSince1970))"
    }

    public static func addonKey(transactionID: String) -> String { "addon:\(transactionID)" }

    /// The trial bucket of an account registered at `registeredAt`.
    public static func trial(registeredAt: Date, terms: TrialTerms, used: Int = 0) -> QuotaBucket {
        QuotaBucket(
            key: trialKey, kind: .trial, periodStart: registeredAt, periodEnd: registeredAt.addingTimeInterval(terms.period),
            capacity: terms.calls, used: used
        )
    }

    /// An add-on pack bought at `purchasedAt`.
    public static func addonPack(transactionID: String, purchasedAt: Date, terms: AddonTerms) -> QuotaBucket {
        QuotaBucket(
            key: addonKey(transactionID: transactionID), kind: .addon, periodStart: purchasedAt,
            periodEnd: purchasedAt.addingTimeInterval(terms.validity), capacity: terms.calls, used: 0
        )
    }
}

/// The subscription plan of an account, as far as quota is concerned.
public struct ActivePlan: Sendable, Equatable {
    public var tier: PlanTier
    /// Cycles are anchored here: the start of the plan.
    public var anchor: Date
    public var expiresAt: Date

    public init(tier: PlanTier, anchor: Date, expiresAt: Date) {
        self.tier = tier
        self.anchor = anchor
        self.expiresAt = expiresAt
    }

    public func isActive(at now: Date) -> Bool { anchor <= now && now < expiresAt }
}

/// Everything the permission decision needs about one account, read from storage.
public struct UsageAccount: Sendable, Equatable {
    public var registeredAt: Date
    public var appType: String
    public var trialUsed: Int
    /// The user's plan (possibly expired; the policy checks).
    public var plan: ActivePlan?
    /// Buckets of kind `.plan` and `.addon` the user holds (any period; closed ones are ignored).
    public var buckets: [QuotaBucket]

    public init(registeredAt: Date, appType: String, trialUsed: Int, plan: ActivePlan?, buckets: [QuotaBucket]) {
        self.registeredAt = registeredAt
        self.appType = appType
        self.trialUsed = trialUsed
        self.plan = plan
        self.buckets = buckets
    }
}
