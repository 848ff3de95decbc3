import Foundation

/// The status of a call, as Twilio reports it (plus `initiated`, ours before Twilio answers).
public enum CallStatus: String, Sendable, Codable, CaseIterable {
    case initiated
    case queued
    case ringing
    case inProgress = "in-progress"
    case completed
    case busy
    case noAnswer = "no-answer"
    case failed
    case canceled

    /// Statuses only move forward: a callback with a lower or equal rank is a duplicate or arrived late.
    public var rank: Int {
        switch self {
        case .initiated: 0
        case .queued: 1
        case .ringing: 2
        case .inProgress: 3
        case .completed, .busy, .noAnswer, .failed, .canceled: 4
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

/// Why a call ended.
public enum EndedReason: String, Sendable, Codable, CaseIterable {
    /// The conversation ended normally (reported by the provider without a more precise cause).
    case completed
    /// The plan's duration limit ended the call.
    case maxDuration = "max_duration"
    /// The callee hung up.
    case calleeHangup = "callee_hangup"
    case busy
    case noAnswer = "no_answer"
    case failed
    case canceled
    /// The telephony provider refused to place the call; nothing was charged.
    case failedToStart = "failed_to_start"
    /// The AI voice (OpenAI Realtime) failed or closed mid-call; the call was ended.
    case errorOpenAI = "error_openai"
    /// The call's media stream failed (it never connected, or dropped without Twilio's `stop`).
    case errorStream = "error_stream"
    /// An answering machine answered (Twilio's answering-machine detection) and the call was hung up without a word;
    /// nothing was charged.
    case voicemail
    /// An answering machine answered and the scenario left a short message after the greeting (charged).
    case voicemailMessage = "voicemail_message"
    /// A fax machine answered; the call was hung up and nothing was charged.
    case fax
    /// The callee asked not to be called again (said so, or pressed the opt-out key): the AI said goodbye, the call
    /// was hung up and the number joined the do-not-call list. Charged like any answered call.
    case optedOut = "opted_out"

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
        case .initiated, .queued, .ringing, .inProgress: nil
        }
    }
}
