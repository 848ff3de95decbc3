import Foundation

/// Which kind of account this is, set when it was registered (usage-stats' and check-call-permission's `app_type`).
/// Open: a value this version does not know decodes as itself (``isKnown`` is then `false`).
public struct AppType: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// An account created by the mobile app.
    public static let mobileConsumer: AppType = "mobile_consumer"
    /// An account created by the web app.
    public static let webBusiness: AppType = "web_business"

    /// The known kinds.
    public static let allCases: [AppType] = [.mobileConsumer, .webBusiness]
}

/// `GET /mobile/usage-stats`: the 17 fields of the contract. Optional fields are always present, as `null`.
public struct UsageStatsResponse: Codable, Sendable, Equatable {
    public var appType: AppType
    public var isTrialActive: Bool
    public var trialCallsRemaining: Int
    public var trialCallsUsed: Int
    public var callsMadeToday: Int
    public var callsMadeThisWeek: Int
    public var callsMadeThisMonth: Int
    public var callsMadeTotal: Int
    public var isSubscribed: Bool
    public var subscriptionTier: String?
    public var upgradeRecommended: Bool
    public var totalCallDurationThisWeek: Int
    public var totalCallDurationThisMonth: Int
    public var addonCallsRemaining: Int
    public var addonCallsExpiry: Date?
    public var weekStartDate: Date
    public var monthStartDate: Date

    public init(
        appType: AppType, isTrialActive: Bool, trialCallsRemaining: Int, trialCallsUsed: Int, callsMadeToday: Int,
        callsMadeThisWeek: Int, callsMadeThisMonth: Int, callsMadeTotal: Int, isSubscribed: Bool,
        subscriptionTier: String?, upgradeRecommended: Bool, totalCallDurationThisWeek: Int,
        totalCallDurationThisMonth: Int, addonCallsRemaining: Int, addonCallsExpiry: Date?, weekStartDate: Date,
        monthStartDate: Date
    ) {
        self.appType = appType
        self.isTrialActive = isTrialActive
        self.trialCallsRemaining = trialCallsRemaining
        self.trialCallsUsed = trialCallsUsed
        self.callsMadeToday = callsMadeToday
        self.callsMadeThisWeek = callsMadeThisWeek
        self.callsMadeThisMonth = callsMadeThisMonth
        self.callsMadeTotal = callsMadeTotal
        self.isSubscribed = isSubscribed
        self.subscriptionTier = subscriptionTier
        self.upgradeRecommended = upgradeRecommended
        self.totalCallDurationThisWeek = totalCallDurationThisWeek
        self.totalCallDurationThisMonth = totalCallDurationThisMonth
        self.addonCallsRemaining = addonCallsRemaining
        self.addonCallsExpiry = addonCallsExpiry
        self.weekStartDate = weekStartDate
        self.monthStartDate = monthStartDate
    }

    enum CodingKeys: String, CodingKey {
        case appType = "app_type"
        case isTrialActive = "is_trial_active"
        case trialCallsRemaining = "trial_calls_remaining"
        case trialCallsUsed = "trial_calls_used"
        case callsMadeToday = "calls_made_today"
        case callsMadeThisWeek = "calls_made_this_week"
        case callsMadeThisMonth = "calls_made_this_month"
        case callsMadeTotal = "calls_made_total"
        case isSubscribed = "is_subscribed"
        case subscriptionTier = "subscription_tier"
        case upgradeRecommended = "upgrade_recommended"
        case totalCallDurationThisWeek = "total_call_duration_this_week"
        case totalCallDurationThisMonth = "total_call_duration_this_month"
        case addonCallsRemaining = "addon_calls_remaining"
        case addonCallsExpiry = "addon_calls_expiry"
        case weekStartDate = "week_start_date"
        case monthStartDate = "month_start_date"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(appType, forKey: .appType)
        try c.encode(isTrialActive, forKey: .isTrialActive)
        try c.encode(trialCallsRemaining, forKey: .trialCallsRemaining)
        try c.encode(trialCallsUsed, forKey: .trialCallsUsed)
        try c.encode(callsMadeToday, forKey: .callsMadeToday)
        try c.encode(callsMadeThisWeek, forKey: .callsMadeThisWeek)
        try c.encode(callsMadeThisMonth, forKey: .callsMadeThisMonth)
        try c.encode(callsMadeTotal, forKey: .callsMadeTotal)
        try c.encode(isSubscribed, forKey: .isSubscribed)
        try c.encode(subscriptionTier, forKey: .subscriptionTier)
        try c.encode(upgradeRecommended, forKey: .upgradeRecommended)
        try c.encode(totalCallDurationThisWeek, forKey: .totalCallDurationThisWeek)
        try c.encode(totalCallDurationThisMonth, forKey: .totalCallDurationThisMonth)
        try c.encode(addonCallsRemaining, forKey: .addonCallsRemaining)
        try c.encode(addonCallsExpiry, forKey: .addonCallsExpiry)
        try c.encode(weekStartDate, forKey: .weekStartDate)
        try c.encode(monthStartDate, forKey: .monthStartDate)
    }
}

/// The `details` object of `POST /mobile/check-call-permission`. Keys that do not apply are left out.
public struct CallPermissionDetails: Codable, Sendable, Equatable {
    public var callsRemainingThisWeek: Int?
    public var callsRemainingThisMonth: Int?
    public var durationLimit: Int?
    public var addonCallsRemaining: Int?
    public var trialEnds: Date?
    public var appType: AppType?
    public var message: String?
    public var upgradeOptions: [UpgradeOption]?

    public init(
        callsRemainingThisWeek: Int? = nil, callsRemainingThisMonth: Int? = nil, durationLimit: Int? = nil,
        addonCallsRemaining: Int? = nil, trialEnds: Date? = nil, appType: AppType? = nil, message: String? = nil,
        upgradeOptions: [UpgradeOption]? = nil
    ) {
        self.callsRemainingThisWeek = callsRemainingThisWeek
        self.callsRemainingThisMonth = callsRemainingThisMonth
        self.durationLimit = durationLimit
        self.addonCallsRemaining = addonCallsRemaining
        self.trialEnds = trialEnds
        self.appType = appType
        self.message = message
        self.upgradeOptions = upgradeOptions
    }

    enum CodingKeys: String, CodingKey {
        case callsRemainingThisWeek = "calls_remaining_this_week"
        case callsRemainingThisMonth = "calls_remaining_this_month"
        case durationLimit = "duration_limit"
        case addonCallsRemaining = "addon_calls_remaining"
        case trialEnds = "trial_ends"
        case appType = "app_type"
        case message
        case upgradeOptions = "upgrade_options"
    }
}

/// Which allowance the next call would use, or why it is refused (check-call-permission's `status`). Open: a value
/// this version does not know decodes as itself (``isKnown`` is then `false`); `can_make_call` still says whether to
/// call.
public struct CallPermissionStatus: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A free trial call is left.
    public static let trialCallAvailable: CallPermissionStatus = "trial_call_available"
    /// The Basic plan covers the call.
    public static let basicCallAvailable: CallPermissionStatus = "basic_call_available"
    /// The Premium plan covers the call.
    public static let premiumCallAvailable: CallPermissionStatus = "premium_call_available"
    /// An add-on pack covers the call.
    public static let addOnCallAvailable: CallPermissionStatus = "addon_call_available"
    /// The free trial is used up or over: offer a plan.
    public static let trialExhausted: CallPermissionStatus = "trial_exhausted"
    /// The Basic plan's calls for this week are used: offer Premium or a pack.
    public static let weeklyLimitReached: CallPermissionStatus = "weekly_limit_reached"
    /// The Premium plan's calls for this month are used: offer a pack.
    public static let monthlyLimitReached: CallPermissionStatus = "monthly_limit_reached"
    /// Calls need a plan.
    public static let upgradeRequired: CallPermissionStatus = "upgrade_required"

    /// The known statuses.
    public static let allCases: [CallPermissionStatus] = [
        .trialCallAvailable, .basicCallAvailable, .premiumCallAvailable, .addOnCallAvailable, .trialExhausted,
        .weeklyLimitReached, .monthlyLimitReached, .upgradeRequired,
    ]
}

/// `POST /mobile/check-call-permission`.
public struct CallPermissionResponse: Codable, Sendable, Equatable {
    public var canMakeCall: Bool
    public var status: CallPermissionStatus
    public var details: CallPermissionDetails

    public init(canMakeCall: Bool, status: CallPermissionStatus, details: CallPermissionDetails) {
        self.canMakeCall = canMakeCall
        self.status = status
        self.details = details
    }

    enum CodingKeys: String, CodingKey {
        case canMakeCall = "can_make_call"
        case status
        case details
    }
}

/// How often a plan is billed (pricing's `billing`, subscription-status' `billing_cycle`). Open: a value this version
/// does not know decodes as itself (``isKnown`` is then `false`), e.g. `every 10 days` on a server configured that way.
/// (Not ChorusCore's `BillingCycle`, which computes the cycles' dates.)
public struct BillingPeriod: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Every week.
    public static let weekly: BillingPeriod = "weekly"
    /// Every month.
    public static let monthly: BillingPeriod = "monthly"

    /// The known periods.
    public static let allCases: [BillingPeriod] = [.weekly, .monthly]
}

/// One subscription plan of `GET /mobile/pricing`.
public struct PricingPlan: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var price: String
    public var billing: BillingPeriod
    public var calls: String
    public var durationLimit: String
    public var features: [String]
    public var productID: String

    public init(
        id: String, name: String, price: String, billing: BillingPeriod, calls: String, durationLimit: String,
        features: [String], productID: String
    ) {
        self.id = id
        self.name = name
        self.price = price
        self.billing = billing
        self.calls = calls
        self.durationLimit = durationLimit
        self.features = features
        self.productID = productID
    }

    enum CodingKeys: String, CodingKey {
        case id
        case name
        case price
        case billing
        case calls
        case durationLimit = "duration_limit"
        case features
        case productID = "product_id"
    }
}

/// The add-on pack of `GET /mobile/pricing`.
public struct AddonPricing: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var price: String
    public var calls: String
    public var expires: String
    public var description: String
    public var productID: String

    public init(
        id: String, name: String, price: String, calls: String, expires: String, description: String,
        productID: String
    ) {
        self.id = id
        self.name = name
        self.price = price
        self.calls = calls
        self.expires = expires
        self.description = description
        self.productID = productID
    }

    enum CodingKeys: String, CodingKey {
        case id
        case name
        case price
        case calls
        case expires
        case description
        case productID = "product_id"
    }
}

/// `GET /mobile/pricing`.
public struct PricingResponse: Codable, Sendable, Equatable {
    public var plans: [PricingPlan]
    public var addon: AddonPricing

    public init(plans: [PricingPlan], addon: AddonPricing) {
        self.plans = plans
        self.addon = addon
    }

    enum CodingKeys: String, CodingKey {
        case plans
        case addon
    }
}
