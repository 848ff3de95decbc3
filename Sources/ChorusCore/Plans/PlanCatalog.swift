import Foundation

/// A paid subscription tier.
public enum PlanTier: String, Sendable, Codable, CaseIterable {
    case basic
    case premium

    /// The tier as the contract names it (`subscription_tier`).
    public var wireName: String { "mobile_\(rawValue)" }

    /// Parses `mobile_basic`, `mobile_premium` and the legacy `mobile_weekly` (the weekly Basic plan).
    public init?(wireName: String) {
        switch wireName {
        case "mobile_basic", "mobile_weekly", "basic": self = .basic
        case "mobile_premium", "premium": self = .premium
        default: return nil
        }
    }
}

/// Terms of the free trial every account starts with.
public struct TrialTerms: Sendable, Equatable {
    public var calls: Int
    public var period: TimeInterval
    public var durationLimitSeconds: Int

    public init(calls: Int = 3, period: TimeInterval = 7 * 86_400, durationLimitSeconds: Int = 60) {
        self.calls = calls
        self.period = period
        self.durationLimitSeconds = durationLimitSeconds
    }
}

/// Terms of a subscription plan: calls per cycle, cycle length, per-call duration, price.
public struct PlanTerms: Sendable, Equatable {
    public var tier: PlanTier
    public var productID: String
    public var name: String
    public var price: String
    public var callsPerCycle: Int
    public var cycleLength: TimeInterval
    public var durationLimitSeconds: Int
    public var features: [String]
    /// Older product ids that buy the same plan (the seed's `speech_assistant_weekly` for Basic).
    public var legacyProductIDs: [String]

    public init(
        tier: PlanTier, productID: String, name: String, price: String, callsPerCycle: Int, cycleLength: TimeInterval,
        durationLimitSeconds: Int, features: [String], legacyProductIDs: [String] = []
    ) {
        self.tier = tier
        self.productID = productID
        self.name = name
        self.price = price
        self.callsPerCycle = callsPerCycle
        self.cycleLength = cycleLength
        self.durationLimitSeconds = durationLimitSeconds
        self.features = features
        self.legacyProductIDs = legacyProductIDs
    }

    /// `weekly` for 7-day cycles, `monthly` for 30-day cycles, otherwise `every N days`.
    public var billing: String {
        switch Int(cycleLength / 86_400) {
        case 7: "weekly"
        case 30: "monthly"
        case let days: "every \(days) days"
        }
    }

    /// `week` or `month`: the unit the plan's allowance is counted in.
    public var cycleUnit: String { Int(cycleLength / 86_400) == 7 ? "week" : "month" }
}

/// Terms of the add-on call pack.
public struct AddonTerms: Sendable, Equatable {
    public var productID: String
    public var name: String
    public var price: String
    public var calls: Int
    public var validity: TimeInterval
    /// Duration of an add-on call when the user has no plan (with a plan, the plan's limit applies).
    public var durationLimitWithoutPlanSeconds: Int
    public var description: String

    public init(
        productID: String = "speech_assistant_addon_calls", name: String = "Additional Calls", price: String = "$4.99",
        calls: Int = 5, validity: TimeInterval = 30 * 86_400, durationLimitWithoutPlanSeconds: Int = 60,
        description: String = "Perfect when you need a few more calls"
    ) {
        self.productID = productID
        self.name = name
        self.price = price
        self.calls = calls
        self.validity = validity
        self.durationLimitWithoutPlanSeconds = durationLimitWithoutPlanSeconds
        self.description = description
    }
}

/// What an App Store product id buys.
public enum CatalogProduct: Sendable, Equatable {
    case plan(PlanTerms)
    case addon(AddonTerms)
}

/// Every plan, price and limit. Built from configuration; `standard` holds the contract's defaults.
public struct PlanCatalog: Sendable, Equatable {
    public var trial: TrialTerms
    public var basic: PlanTerms
    public var premium: PlanTerms
    public var addon: AddonTerms

    public init(trial: TrialTerms, basic: PlanTerms, premium: PlanTerms, addon: AddonTerms) {
        self.trial = trial
        self.basic = basic
        self.premium = premium
        self.addon = addon
    }

    public static let standard = PlanCatalog(
        trial: TrialTerms(),
        basic: PlanTerms(
            tier: .basic, productID: "speech_assistant_basic_weekly", name: "Basic Plan", price: "$4.99", callsPerCycle: 5,
            cycleLength: 7 * 86_400, durationLimitSeconds: 60,
            features: ["Unlimited scenarios", "Call history", "Basic support"], legacyProductIDs: ["speech_assistant_weekly"]
        ),
        premium: PlanTerms(
            tier: .premium, productID: "speech_assistant_premium_monthly", name: "Premium Plan", price: "$25.00",
            callsPerCycle: 30, cycleLength: 30 * 86_400, durationLimitSeconds: 120,
            features: ["All Basic features", "Priority support", "Advanced analytics"]
        ),
        addon: AddonTerms()
    )

    public func plan(_ tier: PlanTier) -> PlanTerms {
        switch tier {
        case .basic: basic
        case .premium: premium
        }
    }

    /// The product an App Store product id stands for, if it is one of ours.
    public func product(id: String) -> CatalogProduct? {
        if id == basic.productID || basic.legacyProductIDs.contains(id) { return .plan(basic) }
        if id == premium.productID || premium.legacyProductIDs.contains(id) { return .plan(premium) }
        if id == addon.productID { return .addon(addon) }
        return nil
    }
}
