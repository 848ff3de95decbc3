import ChorusAPI
import Foundation

/// The permission statuses of the contract.
public enum PermissionStatus: String, Sendable, Codable, CaseIterable {
    case trialCallAvailable = "trial_call_available"
    case basicCallAvailable = "basic_call_available"
    case premiumCallAvailable = "premium_call_available"
    case addonCallAvailable = "addon_call_available"
    case trialExhausted = "trial_exhausted"
    case weeklyLimitReached = "weekly_limit_reached"
    case monthlyLimitReached = "monthly_limit_reached"
    case upgradeRequired = "upgrade_required"

    public var allowsCall: Bool {
        switch self {
        case .trialCallAvailable, .basicCallAvailable, .premiumCallAvailable, .addonCallAvailable: true
        case .trialExhausted, .weeklyLimitReached, .monthlyLimitReached, .upgradeRequired: false
        }
    }
}

/// Where the allowance of an account stands at one instant: the numbers every answer is built from.
public struct UsagePosition: Sendable, Equatable {
    public var now: Date
    public var trial: QuotaBucket
    public var trialPeriodOpen: Bool
    public var plan: ActivePlan?
    public var planTerms: PlanTerms?
    /// The current cycle of the plan (computed), with its usage (0 when no call was charged yet).
    public var planCycle: QuotaBucket?
    /// Open add-on packs with calls left, soonest-expiring first.
    public var addonPacks: [QuotaBucket]

    public var trialRemaining: Int { trialPeriodOpen ? trial.remaining : 0 }
    public var planRemaining: Int { planCycle?.remaining ?? 0 }
    public var addonRemaining: Int { addonPacks.reduce(0) { $0 + $1.remaining } }
    /// The soonest expiry of an add-on pack with calls left.
    public var addonExpiry: Date? { addonPacks.first?.periodEnd }
    public var isSubscribed: Bool { plan != nil }
    public var isTrialActive: Bool { trialRemaining > 0 }
    public var trialEnds: Date { trial.periodEnd }

    /// Calls available from the trial and the plan's current cycle (add-ons are counted separately).
    public var includedRemaining: Int { trialRemaining + planRemaining }

    /// No plan, and at most one trial call left or the trial over.
    public var upgradeRecommended: Bool { plan == nil && (!trialPeriodOpen || trial.remaining <= 1) }
}

/// The bucket a permitted call is charged to.
public struct ChargeTarget: Sendable, Equatable {
    /// The bucket as it must exist (plan cycle buckets are created on first use).
    public var bucket: QuotaBucket
    public var durationLimitSeconds: Int
}

/// The decision for one call attempt.
public struct CallPermission: Sendable, Equatable {
    public var status: PermissionStatus
    public var position: UsagePosition
    /// Set when the call is allowed.
    public var charge: ChargeTarget?
    public var message: String
    public var upgradeOptions: [UpgradeOption]

    public var allowed: Bool { charge != nil }
}

/// Decides whether an account may place a call now, and which allowance pays for it.
///
/// Order: trial → plan → add-on (soonest-expiring pack first). Pure: time and state are inputs.
public struct CallPermissionPolicy: Sendable {
    public var catalog: PlanCatalog

    public init(catalog: PlanCatalog) {
        self.catalog = catalog
    }

    /// The position of `account` at `now`.
    public func position(of account: UsageAccount, at now: Date) -> UsagePosition {
        let trial = QuotaBucket.trial(registeredAt: account.registeredAt, terms: catalog.trial, used: account.trialUsed)
        var plan: ActivePlan?
        var terms: PlanTerms?
        var cycle: QuotaBucket?
        if let candidate = account.plan, candidate.isActive(at: now) {
            let planTerms = catalog.plan(candidate.tier)
            let window = BillingCycle.interval(containing: now, anchor: candidate.anchor, length: planTerms.cycleLength)
            let key = QuotaBucket.planKey(tier: candidate.tier, cycleStart: window.start)
            let used = account.buckets.first { $0.key == key }?.used ?? 0
            plan = candidate
            terms = planTerms
            cycle = QuotaBucket(
                key: key, kind: .plan, periodStart: window.start, periodEnd: window.end,
                capacity: account.buckets.first { $0.key == key }?.capacity ?? planTerms.callsPerCycle, used: used
            )
        }
        let packs = account.buckets
            .filter { $0.kind == .addon && $0.isOpen(at: now) && $0.remaining > 0 }
            .sorted { ($0.periodEnd, $0.key) < ($1.periodEnd, $1.key) }
        return UsagePosition(
            now: now, trial: trial, trialPeriodOpen: trial.isOpen(at: now), plan: plan, planTerms: terms,
            planCycle: cycle, addonPacks: packs
        )
    }

    /// The permission decision for `account` at `now`.
    public func evaluate(_ account: UsageAccount, at now: Date) -> CallPermission {
        let position = position(of: account, at: now)
        let planDuration = position.planTerms?.durationLimitSeconds
        if position.trialRemaining > 0 {
            let duration = max(catalog.trial.durationLimitSeconds, planDuration ?? 0)
            return allowed(.trialCallAvailable, position, bucket: position.trial, duration: duration)
        }
        if let cycle = position.planCycle, let terms = position.planTerms, cycle.remaining > 0 {
            let status: PermissionStatus = terms.tier == .basic ? .basicCallAvailable : .premiumCallAvailable
            return allowed(status, position, bucket: cycle, duration: terms.durationLimitSeconds)
        }
        if let pack = position.addonPacks.first {
            let duration = planDuration ?? catalog.addon.durationLimitWithoutPlanSeconds
            return allowed(.addonCallAvailable, position, bucket: pack, duration: duration)
        }
        let status: PermissionStatus
        if let terms = position.planTerms {
            status = terms.tier == .basic ? .weeklyLimitReached : .monthlyLimitReached
        } else if position.trialPeriodOpen {
            status = .trialExhausted
        } else {
            status = .upgradeRequired
        }
        return CallPermission(
            status: status, position: position, charge: nil, message: refusalMessage(status),
            upgradeOptions: upgradeOptions(for: status)
        )
    }

    private func allowed(_ status: PermissionStatus, _ position: UsagePosition, bucket: QuotaBucket, duration: Int) -> CallPermission {
        CallPermission(
            status: status, position: position, charge: ChargeTarget(bucket: bucket, durationLimitSeconds: duration),
            message: availableMessage(status, position), upgradeOptions: []
        )
    }

    private func availableMessage(_ status: PermissionStatus, _ position: UsagePosition) -> String {
        switch status {
        case .trialCallAvailable:
            return "You have \(calls(position.trialRemaining, "trial call")) remaining"
        case .basicCallAvailable, .premiumCallAvailable:
            let unit = position.planTerms?.cycleUnit ?? "week"
            return "You have \(calls(position.planRemaining, "call")) remaining this \(unit)"
        case .addonCallAvailable:
            return "You have \(calls(position.addonRemaining, "add-on call")) remaining"
        default:
            return refusalMessage(status)
        }
    }

    /// The message shown when a call is refused with `status`.
    public func refusalMessage(_ status: PermissionStatus) -> String {
        let basic = catalog.basic
        let addon = catalog.addon
        switch status {
        case .trialExhausted:
            return "Trial calls exhausted. Upgrade to Basic (\(basic.price)/\(basic.cycleUnit)) for "
                + "\(basic.callsPerCycle) calls per \(basic.cycleUnit)!"
        case .weeklyLimitReached:
            return "Weekly limit reached. Upgrade to Premium or buy \(addon.calls) more calls for \(addon.price)!"
        case .monthlyLimitReached:
            return "Monthly limit reached. Buy \(addon.calls) more calls for \(addon.price)!"
        case .upgradeRequired:
            return "Please upgrade to continue making calls"
        case .trialCallAvailable, .basicCallAvailable, .premiumCallAvailable, .addonCallAvailable:
            return ""
        }
    }

    /// The offers that fit a refusal: plans for trial users, Premium or a pack for Basic, a pack for Premium.
    public func upgradeOptions(for status: PermissionStatus) -> [UpgradeOption] {
        switch status {
        case .trialExhausted, .upgradeRequired: [option(catalog.basic), option(catalog.premium)]
        case .weeklyLimitReached: [option(catalog.premium), addonOption]
        case .monthlyLimitReached: [addonOption]
        default: []
        }
    }

    private func option(_ terms: PlanTerms) -> UpgradeOption {
        UpgradeOption(
            plan: terms.tier.rawValue, price: terms.price, calls: "\(terms.callsPerCycle)/\(terms.cycleUnit)",
            productID: terms.productID
        )
    }

    private var addonOption: UpgradeOption {
        UpgradeOption(plan: "addon", price: catalog.addon.price, calls: "\(catalog.addon.calls) additional", productID: catalog.addon.productID)
    }

    private func calls(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
}
