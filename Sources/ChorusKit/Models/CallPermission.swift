import ChorusAPI
import Foundation

/// Whether the user may place a call now and, if not, why and what would help
/// (`POST /mobile/check-call-permission`), from ``CallsClient/callPermission()``.
public struct CallPermission: Sendable, Hashable {
    /// Which allowance the next call would use, or why it is refused.
    public enum Status: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// A free trial call is left (`trial_call_available`).
        case trialCallAvailable
        /// The Basic plan covers the call (`basic_call_available`).
        case basicCallAvailable
        /// The Premium plan covers the call (`premium_call_available`).
        case premiumCallAvailable
        /// An add-on pack covers the call (`addon_call_available`).
        case addOnCallAvailable
        /// The free trial is used up or over (`trial_exhausted`): offer a plan.
        case trialExhausted
        /// The Basic plan's calls for this week are used (`weekly_limit_reached`): offer Premium or a pack.
        case weeklyLimitReached
        /// The Premium plan's calls for this month are used (`monthly_limit_reached`): offer a pack.
        case monthlyLimitReached
        /// Calls need a plan (`upgrade_required`).
        case upgradeRequired
        /// A status this version of the SDK does not know; ``CallPermission/canMakeCall`` still says whether to call.
        case unknown(String)

        /// Reads the server's value.
        public init(rawValue: String) {
            switch rawValue {
            case "trial_call_available": self = .trialCallAvailable
            case "basic_call_available": self = .basicCallAvailable
            case "premium_call_available": self = .premiumCallAvailable
            case "addon_call_available": self = .addOnCallAvailable
            case "trial_exhausted": self = .trialExhausted
            case "weekly_limit_reached": self = .weeklyLimitReached
            case "monthly_limit_reached": self = .monthlyLimitReached
            case "upgrade_required": self = .upgradeRequired
            default: self = .unknown(rawValue)
            }
        }

        /// The server's value, e.g. `trial_exhausted`.
        public var rawValue: String {
            switch self {
            case .trialCallAvailable: "trial_call_available"
            case .basicCallAvailable: "basic_call_available"
            case .premiumCallAvailable: "premium_call_available"
            case .addOnCallAvailable: "addon_call_available"
            case .trialExhausted: "trial_exhausted"
            case .weeklyLimitReached: "weekly_limit_reached"
            case .monthlyLimitReached: "monthly_limit_reached"
            case .upgradeRequired: "upgrade_required"
            case .unknown(let value): value
            }
        }

        /// The same as ``rawValue``.
        public var description: String { rawValue }
    }

    /// Whether a call may be placed now.
    public var canMakeCall: Bool
    /// Which allowance the call would use, or why it is refused.
    public var status: Status
    /// Calls left in the current week of the plan (or of the trial), when it applies.
    public var callsRemainingThisWeek: Int?
    /// Calls left in the current month of the plan (or of the trial), when it applies.
    public var callsRemainingThisMonth: Int?
    /// How long the next call may last, when one is allowed.
    public var durationLimit: TimeInterval?
    /// Calls left from add-on packs.
    public var addOnCallsRemaining: Int?
    /// When the trial period ends, while it is open.
    public var trialEnds: Date?
    /// A sentence for the user, e.g. "You have 4 calls remaining this week".
    public var message: String?
    /// What the user could buy, when the call is refused (empty otherwise).
    public var upgradeOptions: [UpgradeOffer]

    /// Calls the user can still place now: the plan's or trial's calls left plus add-on calls, 0 when refused.
    public var callsRemaining: Int {
        guard canMakeCall else { return 0 }
        // Both come from the server: a sum past Int.max saturates instead of trapping in the app.
        let (sum, overflow) = (callsRemainingThisWeek ?? 0).addingReportingOverflow(addOnCallsRemaining ?? 0)
        return overflow ? (sum < 0 ? .max : .min) : sum
    }

    /// Converts the wire format.
    public init(_ dto: CallPermissionResponse) {
        canMakeCall = dto.canMakeCall
        status = Status(rawValue: dto.status)
        callsRemainingThisWeek = dto.details.callsRemainingThisWeek
        callsRemainingThisMonth = dto.details.callsRemainingThisMonth
        durationLimit = dto.details.durationLimit.map(TimeInterval.init)
        addOnCallsRemaining = dto.details.addonCallsRemaining
        trialEnds = dto.details.trialEnds
        message = dto.details.message
        upgradeOptions = (dto.details.upgradeOptions ?? []).map(UpgradeOffer.init)
    }
}

/// Something the user can buy to be allowed more calls, offered when a call is refused.
public struct UpgradeOffer: Sendable, Hashable {
    /// What the offer sells.
    public enum Kind: Sendable, Hashable {
        /// A subscription plan.
        case plan(PlanTier)
        /// A pack of additional calls (`addon`).
        case addOnPack
    }

    /// A plan (``PlanTier/unknown(_:)`` for a product this SDK version does not know) or an add-on pack.
    public var kind: Kind
    /// The display price, e.g. `$4.99`.
    public var price: String
    /// What it gives, for display, e.g. `5/week` or `10 additional`.
    public var calls: String
    /// The App Store product id to buy with StoreKit, e.g. `speech_assistant_basic_weekly`.
    public var productID: String

    /// Converts the wire format.
    public init(_ dto: UpgradeOption) {
        kind = dto.plan == "addon" ? .addOnPack : .plan(PlanTier(rawValue: dto.plan))
        price = dto.price
        calls = dto.calls
        productID = dto.productID
    }
}
