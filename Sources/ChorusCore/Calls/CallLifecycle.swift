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
