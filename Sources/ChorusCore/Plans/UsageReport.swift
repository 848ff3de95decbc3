import ChorusAPI
import Foundation

/// The windows calls are counted in for the usage report.
public struct UsageWindows: Sendable, Equatable {
    /// Midnight UTC today.
    public var dayStart: Date
    /// The current 7-day cycle, anchored at the plan's start (or registration without a plan).
    public var weekStart: Date
    /// The current 30-day cycle, same anchor.
    public var monthStart: Date

    public init(dayStart: Date, weekStart: Date, monthStart: Date) {
        self.dayStart = dayStart
        self.weekStart = weekStart
        self.monthStart = monthStart
    }

    public static func of(_ position: UsagePosition, registeredAt: Date) -> UsageWindows {
        let anchor = position.plan?.anchor ?? registeredAt
        return UsageWindows(
            dayStart: BillingCycle.utcDayStart(of: position.now),
            weekStart: BillingCycle.interval(containing: position.now, anchor: anchor, length: 7 * 86_400).start,
            monthStart: BillingCycle.interval(containing: position.now, anchor: anchor, length: 30 * 86_400).start
        )
    }
}

/// Counts of the calls that counted against the allowance (placed and not refunded) in each window.
public struct CallTally: Sendable, Equatable {
    public var today: Int
    public var thisWeek: Int
    public var thisMonth: Int
    public var total: Int
    public var durationThisWeek: Int
    public var durationThisMonth: Int

    public init(today: Int = 0, thisWeek: Int = 0, thisMonth: Int = 0, total: Int = 0, durationThisWeek: Int = 0, durationThisMonth: Int = 0) {
        self.today = today
        self.thisWeek = thisWeek
        self.thisMonth = thisMonth
        self.total = total
        self.durationThisWeek = durationThisWeek
        self.durationThisMonth = durationThisMonth
    }
}

/// Builds the contract's usage answers from a position. Pure.
public enum UsageReport {
    public static func usageStats(
        _ position: UsagePosition, account: UsageAccount, windows: UsageWindows, tally: CallTally
    ) -> UsageStatsResponse {
        UsageStatsResponse(
            appType: AppType(rawValue: account.appType),
            isTrialActive: position.isTrialActive,
            trialCallsRemaining: position.trialRemaining,
            trialCallsUsed: position.trial.used,
            callsMadeToday: tally.today,
            callsMadeThisWeek: tally.thisWeek,
            callsMadeThisMonth: tally.thisMonth,
            callsMadeTotal: tally.total,
            isSubscribed: position.isSubscribed,
            subscriptionTier: position.plan?.tier.wireName,
            upgradeRecommended: position.upgradeRecommended,
            totalCallDurationThisWeek: tally.durationThisWeek,
            totalCallDurationThisMonth: tally.durationThisMonth,
            addonCallsRemaining: position.addonRemaining,
            addonCallsExpiry: position.addonExpiry,
            weekStartDate: windows.weekStart,
            monthStartDate: windows.monthStart
        )
    }

    public static func permission(_ decision: CallPermission, appType: String) -> CallPermissionResponse {
        let position = decision.position
        let details = CallPermissionDetails(
            callsRemainingThisWeek: position.includedRemaining,
            callsRemainingThisMonth: position.includedRemaining,
            durationLimit: decision.charge?.durationLimitSeconds,
            addonCallsRemaining: position.addonRemaining,
            trialEnds: position.trialPeriodOpen ? position.trialEnds : nil,
            appType: AppType(rawValue: appType),
            message: decision.message,
            upgradeOptions: decision.allowed ? nil : decision.upgradeOptions
        )
        let status = CallPermissionStatus(rawValue: decision.status.rawValue)
        return CallPermissionResponse(canMakeCall: decision.allowed, status: status, details: details)
    }

    public static func paymentRequired(_ decision: CallPermission) -> PaymentRequiredResponse {
        PaymentRequiredResponse(
            detail: PaymentRequiredDetail(
                error: decision.status.rawValue, message: decision.message, upgradeOptions: decision.upgradeOptions,
                timestamp: decision.position.now
            )
        )
    }

    public static func callSnapshot(_ position: UsagePosition) -> CallUsageSnapshot {
        CallUsageSnapshot(
            callsRemainingThisWeek: position.includedRemaining, callsRemainingThisMonth: position.includedRemaining,
            addonCallsRemaining: position.addonRemaining, upgradeRecommended: position.upgradeRecommended
        )
    }

    /// A purchase answer's `usage_stats`: the usage stats plus the calls left in the plan's (or trial's) cycle.
    public static func purchaseSnapshot(
        _ position: UsagePosition, account: UsageAccount, windows: UsageWindows, tally: CallTally
    ) -> PurchaseUsageStats {
        PurchaseUsageStats(
            usage: usageStats(position, account: account, windows: windows, tally: tally),
            callsRemainingThisWeek: position.includedRemaining, callsRemainingThisMonth: position.includedRemaining
        )
    }

    public static func pricing(_ catalog: PlanCatalog) -> PricingResponse {
        func plan(_ terms: PlanTerms) -> PricingPlan {
            let minutes = terms.durationLimitSeconds / 60
            let duration =
                terms.durationLimitSeconds % 60 == 0
                ? "\(minutes) minute\(minutes == 1 ? "" : "s") per call" : "\(terms.durationLimitSeconds) seconds per call"
            return PricingPlan(
                id: terms.tier.rawValue, name: terms.name, price: terms.price, billing: BillingPeriod(rawValue: terms.billing),
                calls: "\(terms.callsPerCycle) calls per \(terms.cycleUnit)", durationLimit: duration, features: terms.features,
                productID: terms.productID
            )
        }
        let addon = catalog.addon
        return PricingResponse(
            plans: [plan(catalog.basic), plan(catalog.premium)],
            addon: AddonPricing(
                id: "addon", name: addon.name, price: addon.price, calls: "\(addon.calls) additional calls",
                expires: "\(Int(addon.validity / 86_400)) days", description: addon.description, productID: addon.productID
            )
        )
    }
}
