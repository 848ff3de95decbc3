import ChorusAPI
import Foundation

/// Whether the user may place a call now and, if not, why and what would help
/// (`POST /mobile/check-call-permission`), from ``CallsClient/callPermission()``.
public struct CallPermission: Sendable, Hashable {
    /// Which allowance the next call would use, or why it is refused: the wire's open value, ChorusAPI's
    /// `CallPermissionStatus` (a value a newer server added is kept as is, `isKnown` is `false`; ``canMakeCall`` still
    /// says whether to call).
    public typealias Status = CallPermissionStatus

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
        status = dto.status
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
