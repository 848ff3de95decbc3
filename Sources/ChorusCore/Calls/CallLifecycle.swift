import ChorusAPI
import Foundation

// The call's status and ended reason are the wire's open values, ``ChorusAPI/CallStatus`` and
// ``ChorusAPI/EndedReason``; the lifecycle's rules about them live here.

extension CallStatus {
    /// Statuses only move forward: a callback with a lower or equal rank is a duplicate or arrived late. A status this
    /// version does not know ranks 0 (the server refuses it on input, see ``isKnown``).
    public var rank: Int {
        switch self {
        case .initiated: 0
        case .queued: 1
        case .ringing: 2
        case .inProgress: 3
        case .completed, .busy, .noAnswer, .failed, .canceled: 4
        default: 0
        }
    }

    public var isTerminal: Bool { rank == 4 }

    /// The callee never talked: the call is refunded.
    public var isUnanswered: Bool {
        switch self {
        case .busy, .noAnswer, .failed, .canceled: true
        default: false
        }
    }
}

extension EndedReason {
    /// An ending that gives the call back to the user's allowance: no conversation took place.
    public var releasesCharge: Bool { self == .voicemail || self == .fax }
}

/// Rules of the call lifecycle. Pure.
public enum CallLifecycle {
    /// Whether a report of `next` may replace `current`.
    public static func accepts(_ next: CallStatus, after current: CallStatus) -> Bool { next.rank > current.rank }

    /// The ended reason for a terminal status. The media bridge knows best why a completed call ended (`bridgeReason`);
    /// without it, a completed call that lasted its whole limit (1 s of tolerance: Twilio rounds durations) ended
    /// because of the limit.
    public static func endedReason(
        for status: CallStatus, durationSeconds: Int, durationLimit: Int, bridgeReason: EndedReason? = nil
    ) -> EndedReason? {
        switch status {
        case .completed: bridgeReason ?? (durationSeconds >= durationLimit - 1 ? .maxDuration : .completed)
        case .busy: .busy
        case .noAnswer: .noAnswer
        case .failed: .failed
        case .canceled: .canceled
        default: nil
        }
    }
}
