import ChorusAPI
import Foundation

/// The user's plan, trial and usage counters (`GET /mobile/usage-stats`), from ``CallsClient/usageStats()``.
public struct Usage: Sendable, Hashable {
    /// Which kind of account this is, set when it was registered: the wire's open value, ChorusAPI's `AppType`
    /// (`mobileConsumer`, `webBusiness`; a value a newer server added is kept as is, `isKnown` is `false`).
    public typealias AppType = ChorusAPI.AppType

    /// The kind of account.
    public var appType: AppType
    /// Whether trial calls are left and the trial period is still open.
    public var isTrialActive: Bool
    /// Free trial calls left.
    public var trialCallsRemaining: Int
    /// Free trial calls used.
    public var trialCallsUsed: Int
    /// Calls charged since midnight UTC.
    public var callsMadeToday: Int
    /// Calls charged in the current 7-day cycle (which starts at ``weekStartDate``).
    public var callsMadeThisWeek: Int
    /// Calls charged in the current 30-day cycle (which starts at ``monthStartDate``).
    public var callsMadeThisMonth: Int
    /// Every call charged since the account was created.
    public var callsMadeTotal: Int
    /// Whether a plan is active.
    public var isSubscribed: Bool
    /// The active plan, or `nil`.
    public var plan: PlanTier?
    /// No plan, and at most one trial call left or the trial over: a good moment to show the plans.
    public var upgradeRecommended: Bool
    /// Talk time in the current 7-day cycle.
    public var talkTimeThisWeek: TimeInterval
    /// Talk time in the current 30-day cycle.
    public var talkTimeThisMonth: TimeInterval
    /// Calls left from add-on packs.
    public var addOnCallsRemaining: Int
    /// When the soonest-expiring add-on pack with calls left expires, or `nil`.
    public var addOnCallsExpiry: Date?
    /// The start of the current 7-day cycle.
    public var weekStartDate: Date
    /// The start of the current 30-day cycle.
    public var monthStartDate: Date

    /// Converts the wire format.
    public init(_ dto: UsageStatsResponse) {
        appType = dto.appType
        isTrialActive = dto.isTrialActive
        trialCallsRemaining = dto.trialCallsRemaining
        trialCallsUsed = dto.trialCallsUsed
        callsMadeToday = dto.callsMadeToday
        callsMadeThisWeek = dto.callsMadeThisWeek
        callsMadeThisMonth = dto.callsMadeThisMonth
        callsMadeTotal = dto.callsMadeTotal
        isSubscribed = dto.isSubscribed
        plan = dto.subscriptionTier.map(PlanTier.init(rawValue:))
        upgradeRecommended = dto.upgradeRecommended
        talkTimeThisWeek = TimeInterval(dto.totalCallDurationThisWeek)
        talkTimeThisMonth = TimeInterval(dto.totalCallDurationThisMonth)
        addOnCallsRemaining = dto.addonCallsRemaining
        addOnCallsExpiry = dto.addonCallsExpiry
        weekStartDate = dto.weekStartDate
        monthStartDate = dto.monthStartDate
    }
}
