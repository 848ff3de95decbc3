import ChorusAPI
import Foundation

/// A call of the user's history (`GET /mobile/call-history`), from ``CallsClient/callHistory(limit:)``.
public struct Call: Sendable, Hashable, Identifiable {
    /// Where the call is in its life, as the phone network reports it: the wire's open value, ChorusAPI's `CallStatus`
    /// (`isFinal` tells whether the call is over; a value a newer server added is kept as is, `isKnown` is `false`).
    public typealias Status = CallStatus

    /// Why a call ended: the wire's open value, ChorusAPI's `EndedReason`.
    public typealias EndReason = EndedReason

    /// The call's id (`CA…`); pass it to ``CallsClient/call(sid:)`` for the transcript.
    public var sid: String
    /// The number called, E.164.
    public var phoneNumber: String
    /// The scenario id used (built-in or custom).
    public var scenarioID: String
    /// Where the call is in its life.
    public var status: Status
    /// When the call was requested.
    public var createdAt: Date
    /// How long the call lasted, once over.
    public var duration: TimeInterval?
    /// Why the call ended, once over.
    public var endedReason: EndReason?
    /// How long the call could last.
    public var durationLimit: TimeInterval

    /// The call's id, ``sid``.
    public var id: String { sid }

    /// Converts the wire format.
    public init(_ dto: CallHistoryItem) {
        sid = dto.callSid
        phoneNumber = dto.phoneNumber
        scenarioID = dto.scenario
        status = dto.status
        createdAt = dto.createdAt
        duration = dto.durationSeconds.map(TimeInterval.init)
        endedReason = dto.endedReason
        durationLimit = TimeInterval(dto.durationLimit)
    }
}

/// One page of the call history, from ``CallsClient/callHistory(limit:)``.
public struct CallHistory: Sendable, Hashable {
    /// The most recent calls, newest first.
    public var calls: [Call]
    /// How many calls the user has made in all, not only on this page.
    public var totalCalls: Int

    /// Converts the wire format.
    public init(_ dto: CallHistoryResponse) {
        calls = dto.callHistory.map(Call.init)
        totalCalls = dto.totalCalls
    }
}

/// One call with its timeline, transcript and latency figures (`GET /mobile/calls/{call_sid}`), from
/// ``CallsClient/call(sid:)``.
public struct CallDetail: Sendable, Hashable, Identifiable {
    /// One line of the conversation.
    public struct TranscriptLine: Sendable, Hashable {
        /// Who spoke: the wire's open value, ChorusAPI's `CallTranscriptLine.Speaker` (`assistant`, the AI persona, or
        /// `callee`, the person called; a value a newer server added is kept as is, `isKnown` is `false`).
        public typealias Speaker = CallTranscriptLine.Speaker

        /// Who spoke.
        public var speaker: Speaker
        /// What was said.
        public var text: String
        /// When, counted from the start of the conversation.
        public var offset: TimeInterval
        /// The callee interrupted this AI line: only part of it was heard.
        public var interrupted: Bool

        /// Converts the wire format.
        public init(_ dto: CallTranscriptLine) {
            speaker = dto.speaker
            text = dto.text
            offset = TimeInterval(dto.atMs) / 1_000
            interrupted = dto.interrupted
        }
    }

    /// How quickly the AI answered during the call.
    public struct Latency: Sendable, Hashable {
        /// From the callee answering to the AI's first audio.
        public var firstAudio: TimeInterval?
        /// From the end of the callee's speech to the AI's next audio: the median over the turns.
        public var turnMedian: TimeInterval?
        /// The same, 90th percentile.
        public var turnP90: TimeInterval?
        /// How many turns were measured.
        public var turns: Int

        /// Converts the wire format.
        public init(_ dto: CallLatency) {
            firstAudio = dto.firstAudioMs.map { TimeInterval($0) / 1_000 }
            turnMedian = dto.turnP50Ms.map { TimeInterval($0) / 1_000 }
            turnP90 = dto.turnP90Ms.map { TimeInterval($0) / 1_000 }
            turns = dto.turns
        }
    }

    /// The call as it appears in the history.
    public var call: Call
    /// When the callee answered, if they did.
    public var answeredAt: Date?
    /// When the call ended, once over.
    public var endedAt: Date?
    /// Both sides of the conversation, in order: empty until the call is over, `nil` once deleted (by the user or
    /// after the retention period, see ``transcriptDeletedAt``).
    public var transcript: [TranscriptLine]?
    /// When the transcript was deleted.
    public var transcriptDeletedAt: Date?
    /// How quickly the AI answered; `nil` until measured.
    public var latency: Latency?
    /// How many times the callee interrupted the AI.
    public var bargeIns: Int?

    /// The call's id.
    public var id: String { call.sid }

    /// Converts the wire format.
    public init(_ dto: CallDetailResponse) {
        call = Call(dto.call)
        answeredAt = dto.answeredAt
        endedAt = dto.endedAt
        transcript = dto.transcript?.map(TranscriptLine.init)
        transcriptDeletedAt = dto.transcriptDeletedAt
        latency = dto.latency.map(Latency.init)
        bargeIns = dto.bargeIns
    }
}

/// A call just placed, from ``CallsClient/makeCall(to:scenario:idempotencyKey:)``.
public struct PlacedCall: Sendable, Hashable, Identifiable {
    /// The call's id (`CA…`).
    public var sid: String
    /// Its status when placed (`initiated`).
    public var status: Call.Status
    /// How long the call may last.
    public var durationLimit: TimeInterval
    /// The allowance left after this call.
    public var remaining: RemainingCalls

    /// The call's id, ``sid``.
    public var id: String { sid }

    /// Converts the wire format.
    public init(_ dto: MakeCallResponse) {
        sid = dto.callSid
        status = dto.status
        durationLimit = TimeInterval(dto.durationLimit)
        remaining = RemainingCalls(dto.usageStats)
    }
}

/// The calls left after a call was placed.
public struct RemainingCalls: Sendable, Hashable {
    /// Calls left in the current week of the plan or trial.
    public var thisWeek: Int
    /// Calls left in the current month of the plan or trial.
    public var thisMonth: Int
    /// Calls left from add-on packs.
    public var addOnCalls: Int
    /// Whether it is a good moment to show the plans.
    public var upgradeRecommended: Bool

    /// Converts the wire format.
    public init(_ dto: CallUsageSnapshot) {
        thisWeek = dto.callsRemainingThisWeek
        thisMonth = dto.callsRemainingThisMonth
        addOnCalls = dto.addonCallsRemaining
        upgradeRecommended = dto.upgradeRecommended
    }
}

/// A call scheduled for later (`POST /mobile/schedule-call`, `GET /mobile/scheduled-calls`).
public struct ScheduledCall: Sendable, Hashable, Identifiable {
    /// Where the schedule is in its life: the wire's open value, ChorusAPI's `ScheduledCallStatus` (`scheduled`,
    /// `placing`, `placed`, `refused`, `failed`, `cancelled`; a value a newer server added is kept as is).
    public typealias Status = ScheduledCallStatus

    /// The schedule's id; pass it to ``CallsClient/cancelScheduledCall(id:)``.
    public var id: Int
    /// The number to call, E.164.
    public var phoneNumber: String
    /// The scenario id.
    public var scenarioID: String
    /// When the call is (or was) to be placed.
    public var scheduledTime: Date
    /// Where the schedule is in its life.
    public var status: Status
    /// The call placed for it, once placed.
    public var callSid: String?
    /// Why it was not placed (status `refused` or `failed`).
    public var failureReason: String?

    /// Converts the wire format.
    public init(_ dto: ScheduledCallDTO) {
        id = dto.scheduleID
        phoneNumber = dto.phoneNumber
        scenarioID = dto.scenario
        scheduledTime = dto.scheduledTime
        status = dto.status
        callSid = dto.callSid
        failureReason = dto.failureReason
    }
}
