import ChorusAPI
import Foundation

/// A call of the user's history (`GET /mobile/call-history`), from ``CallsClient/callHistory(limit:)``.
public struct Call: Sendable, Hashable, Identifiable {
    /// Where the call is in its life, as the phone network reports it.
    public enum Status: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// Requested, not yet queued by the phone network (`initiated`).
        case initiated
        /// `queued`
        case queued
        /// `ringing`
        case ringing
        /// Answered and going on (`in-progress`).
        case inProgress
        /// `completed`
        case completed
        /// `busy`
        case busy
        /// Not answered (`no-answer`).
        case noAnswer
        /// `failed`
        case failed
        /// `canceled`
        case canceled
        /// A status this version of the SDK does not know.
        case unknown(String)

        /// Reads the server's value.
        public init(rawValue: String) {
            switch rawValue {
            case "initiated": self = .initiated
            case "queued": self = .queued
            case "ringing": self = .ringing
            case "in-progress": self = .inProgress
            case "completed": self = .completed
            case "busy": self = .busy
            case "no-answer": self = .noAnswer
            case "failed": self = .failed
            case "canceled": self = .canceled
            default: self = .unknown(rawValue)
            }
        }

        /// The server's value, e.g. `in-progress`.
        public var rawValue: String {
            switch self {
            case .initiated: "initiated"
            case .queued: "queued"
            case .ringing: "ringing"
            case .inProgress: "in-progress"
            case .completed: "completed"
            case .busy: "busy"
            case .noAnswer: "no-answer"
            case .failed: "failed"
            case .canceled: "canceled"
            case .unknown(let value): value
            }
        }

        /// Whether the call is over (completed, busy, not answered, failed or canceled).
        public var isFinal: Bool {
            switch self {
            case .completed, .busy, .noAnswer, .failed, .canceled: true
            case .initiated, .queued, .ringing, .inProgress, .unknown: false
            }
        }

        /// The same as ``rawValue``.
        public var description: String { rawValue }
    }

    /// Why a call ended.
    public enum EndReason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The conversation ended normally (`completed`).
        case completed
        /// The call reached its duration limit (`max_duration`).
        case maxDuration
        /// The person called hung up (`callee_hangup`).
        case calleeHangup
        /// `busy`
        case busy
        /// Not answered (`no_answer`).
        case noAnswer
        /// `failed`
        case failed
        /// `canceled`
        case canceled
        /// The call could not be started (`failed_to_start`).
        case failedToStart
        /// The AI service failed during the call (`error_openai`).
        case errorOpenAI
        /// The audio stream failed during the call (`error_stream`).
        case errorStream
        /// An answering machine answered; the call hung up without a word and was not charged (`voicemail`).
        case voicemail
        /// An answering machine answered and the persona left a message (`voicemail_message`).
        case voicemailMessage
        /// A fax machine answered; the call was not charged (`fax`).
        case fax
        /// The person called asked not to be called again (said so, or pressed 9): the number is on the do-not-call
        /// list and further calls to it are refused with ``ChorusError/refused(_:)`` code `number_opted_out`
        /// (`opted_out`).
        case optedOut
        /// A reason this version of the SDK does not know.
        case unknown(String)

        /// Reads the server's value.
        public init(rawValue: String) {
            switch rawValue {
            case "completed": self = .completed
            case "max_duration": self = .maxDuration
            case "callee_hangup": self = .calleeHangup
            case "busy": self = .busy
            case "no_answer": self = .noAnswer
            case "failed": self = .failed
            case "canceled": self = .canceled
            case "failed_to_start": self = .failedToStart
            case "error_openai": self = .errorOpenAI
            case "error_stream": self = .errorStream
            case "voicemail": self = .voicemail
            case "voicemail_message": self = .voicemailMessage
            case "fax": self = .fax
            case "opted_out": self = .optedOut
            default: self = .unknown(rawValue)
            }
        }

        /// The server's value, e.g. `max_duration`.
        public var rawValue: String {
            switch self {
            case .completed: "completed"
            case .maxDuration: "max_duration"
            case .calleeHangup: "callee_hangup"
            case .busy: "busy"
            case .noAnswer: "no_answer"
            case .failed: "failed"
            case .canceled: "canceled"
            case .failedToStart: "failed_to_start"
            case .errorOpenAI: "error_openai"
            case .errorStream: "error_stream"
            case .voicemail: "voicemail"
            case .voicemailMessage: "voicemail_message"
            case .fax: "fax"
            case .optedOut: "opted_out"
            case .unknown(let value): value
            }
        }

        /// The same as ``rawValue``.
        public var description: String { rawValue }
    }

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
        status = Status(rawValue: dto.status)
        createdAt = dto.createdAt
        duration = dto.durationSeconds.map(TimeInterval.init)
        endedReason = dto.endedReason.map(EndReason.init(rawValue:))
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
        /// Who spoke.
        public enum Speaker: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
            /// The AI persona (`assistant`).
            case assistant
            /// The person called (`callee`).
            case callee
            /// A speaker this version of the SDK does not know.
            case unknown(String)

            /// Reads the server's value.
            public init(rawValue: String) {
                switch rawValue {
                case "assistant": self = .assistant
                case "callee": self = .callee
                default: self = .unknown(rawValue)
                }
            }

            /// The server's value.
            public var rawValue: String {
                switch self {
                case .assistant: "assistant"
                case .callee: "callee"
                case .unknown(let value): value
                }
            }

            /// The same as ``rawValue``.
            public var description: String { rawValue }
        }

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
            speaker = Speaker(rawValue: dto.speaker)
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
        status = Call.Status(rawValue: dto.status)
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
    /// Where the schedule is in its life.
    public enum Status: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// Waiting for its time (`scheduled`); it can still be cancelled.
        case scheduled
        /// Being placed now (`placing`).
        case placing
        /// Placed: see ``ScheduledCall/callSid`` (`placed`).
        case placed
        /// Not placed because the allowance was used up by then (`refused`).
        case refused
        /// Not placed because of an error (`failed`).
        case failed
        /// Cancelled by the user (`cancelled`).
        case cancelled
        /// A status this version of the SDK does not know.
        case unknown(String)

        /// Reads the server's value.
        public init(rawValue: String) {
            switch rawValue {
            case "scheduled": self = .scheduled
            case "placing": self = .placing
            case "placed": self = .placed
            case "refused": self = .refused
            case "failed": self = .failed
            case "cancelled": self = .cancelled
            default: self = .unknown(rawValue)
            }
        }

        /// The server's value.
        public var rawValue: String {
            switch self {
            case .scheduled: "scheduled"
            case .placing: "placing"
            case .placed: "placed"
            case .refused: "refused"
            case .failed: "failed"
            case .cancelled: "cancelled"
            case .unknown(let value): value
            }
        }

        /// The same as ``rawValue``.
        public var description: String { rawValue }
    }

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
    /// Why it was not placed (``Status-swift.enum/refused`` or ``Status-swift.enum/failed``).
    public var failureReason: String?

    /// Converts the wire format.
    public init(_ dto: ScheduledCallDTO) {
        id = dto.scheduleID
        phoneNumber = dto.phoneNumber
        scenarioID = dto.scenario
        scheduledTime = dto.scheduledTime
        status = Status(rawValue: dto.status)
        callSid = dto.callSid
        failureReason = dto.failureReason
    }
}
