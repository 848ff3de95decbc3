import Foundation

/// A paid plan: Basic (weekly calls) or Premium (monthly calls).
///
/// The server names plans in two ways — `basic`/`premium` in pricing and upgrade offers, `mobile_basic`/`mobile_premium`
/// (and the legacy `mobile_weekly` for Basic) in usage and subscription answers — and both map to the same case. A
/// name this version of the SDK does not know becomes ``unknown(_:)``, so a new plan never breaks an old app.
public enum PlanTier: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The Basic plan: a few calls per week.
    case basic
    /// The Premium plan: more calls per month.
    case premium
    /// A plan this version of the SDK does not know, with the server's name for it.
    case unknown(String)

    /// Reads a plan name as the server sends it (`basic`, `mobile_basic`, `mobile_weekly`, `premium`, `mobile_premium`).
    public init(rawValue: String) {
        switch rawValue {
        case "basic", "mobile_basic", "mobile_weekly": self = .basic
        case "premium", "mobile_premium": self = .premium
        default: self = .unknown(rawValue)
        }
    }

    /// The plan's short name: `basic`, `premium`, or the unknown name as received.
    public var rawValue: String {
        switch self {
        case .basic: "basic"
        case .premium: "premium"
        case .unknown(let value): value
        }
    }

    /// The same as ``rawValue``.
    public var description: String { rawValue }
}

/// How often a plan is billed: the wire's open value, ChorusAPI's `BillingPeriod` (`weekly`, `monthly`; another cycle
/// is kept as the server describes it, e.g. `every 10 days` on a server configured that way, with `isKnown` `false`).
public typealias BillingCycle = BillingPeriod
