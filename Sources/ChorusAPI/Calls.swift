import Foundation

/// Where a call is in its life, as the phone network (Twilio) reports it, plus `initiated` (requested, not yet queued).
/// Open: a value this version does not know decodes as itself (``isKnown`` is then `false`).
public struct CallStatus: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Requested, not yet queued by the phone network.
    public static let initiated: CallStatus = "initiated"
    public static let queued: CallStatus = "queued"
    public static let ringing: CallStatus = "ringing"
    /// Answered and going on.
    public static let inProgress: CallStatus = "in-progress"
    public static let completed: CallStatus = "completed"
    public static let busy: CallStatus = "busy"
    /// Not answered.
    public static let noAnswer: CallStatus = "no-answer"
    public static let failed: CallStatus = "failed"
    public static let canceled: CallStatus = "canceled"

    /// The known statuses, in the order a call goes through them.
    public static let allCases: [CallStatus] = [.initiated, .queued, .ringing, .inProgress, .completed, .busy, .noAnswer, .failed, .canceled]

    /// Whether the call is over (completed, busy, not answered, failed or canceled); `false` for an unknown value.
    public var isFinal: Bool { [.completed, .busy, .noAnswer, .failed, .canceled].contains(self) }
}

/// Why a call ended. Open: a value this version does not know decodes as itself (``isKnown`` is then `false`).
public struct EndedReason: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The conversation ended normally (reported by the provider without a more precise cause).
    public static let completed: EndedReason = "completed"
    /// The plan's duration limit ended the call.
    public static let maxDuration: EndedReason = "max_duration"
    /// The callee hung up.
    public static let calleeHangup: EndedReason = "callee_hangup"
    public static let busy: EndedReason = "busy"
    /// Not answered.
    public static let noAnswer: EndedReason = "no_answer"
    public static let failed: EndedReason = "failed"
    public static let canceled: EndedReason = "canceled"
    /// The telephony provider refused to place the call; nothing was charged.
    public static let failedToStart: EndedReason = "failed_to_start"
    /// The AI voice (OpenAI Realtime) failed or closed mid-call; the call was ended.
    public static let errorOpenAI: EndedReason = "error_openai"
    /// The call's media stream failed (it never connected, or dropped without Twilio's `stop`).
    public static let errorStream: EndedReason = "error_stream"
    /// An answering machine answered (answering-machine detection) and the call was hung up without a word; nothing
    /// was charged.
    public static let voicemail: EndedReason = "voicemail"
    /// An answering machine answered and the scenario left a short message after the greeting (charged).
    public static let voicemailMessage: EndedReason = "voicemail_message"
    /// A fax machine answered; the call was hung up and nothing was charged.
    public static let fax: EndedReason = "fax"
    /// The callee asked not to be called again (said so, or pressed the opt-out key): the AI said goodbye, the call
    /// was hung up and the number joined the do-not-call list (further calls to it are refused with
    /// `number_opted_out`). Charged like any answered call.
    public static let optedOut: EndedReason = "opted_out"

    /// The known reasons.
    public static let allCases: [EndedReason] = [
        .completed, .maxDuration, .calleeHangup, .busy, .noAnswer, .failed, .canceled, .failedToStart, .errorOpenAI, .errorStream,
        .voicemail, .voicemailMessage, .fax, .optedOut,
    ]
}

/// `POST /mobile/make-call` body (also `POST /test/test-call`).
public struct MakeCallRequest: Codable, Sendable, Equatable {
    /// E.164, e.g. `+14155550123`.
    public var phoneNumber: String
    /// A scenario id of `GET /mobile/scenarios` or a custom scenario id.
    public var scenario: String

    public init(phoneNumber: String, scenario: String = "default") {
        self.phoneNumber = phoneNumber
        self.scenario = scenario
    }

    enum CodingKeys: String, CodingKey {
        case phoneNumber = "phone_number"
        case scenario
    }

    /// `scenario` may be left out: it defaults to `default`, as in the original API.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        phoneNumber = try container.decode(String.self, forKey: .phoneNumber)
        scenario = try container.decodeIfPresent(String.self, forKey: .scenario) ?? "default"
    }
}

/// The remaining allowance after a call was placed.
public struct CallUsageSnapshot: Codable, Sendable, Equatable {
    public var callsRemainingThisWeek: Int
    public var callsRemainingThisMonth: Int
    public var addonCallsRemaining: Int
    public var upgradeRecommended: Bool

    public init(callsRemainingThisWeek: Int, callsRemainingThisMonth: Int, addonCallsRemaining: Int, upgradeRecommended: Bool) {
        self.callsRemainingThisWeek = callsRemainingThisWeek
        self.callsRemainingThisMonth = callsRemainingThisMonth
        self.addonCallsRemaining = addonCallsRemaining
        self.upgradeRecommended = upgradeRecommended
    }

    enum CodingKeys: String, CodingKey {
        case callsRemainingThisWeek = "calls_remaining_this_week"
        case callsRemainingThisMonth = "calls_remaining_this_month"
        case addonCallsRemaining = "addon_calls_remaining"
        case upgradeRecommended = "upgrade_recommended"
    }
}

/// `POST /mobile/make-call` answer.
public struct MakeCallResponse: Codable, Sendable, Equatable {
    public var callSid: String
    /// `initiated`.
    public var status: CallStatus
    /// Seconds the call may last.
    public var durationLimit: Int
    public var usageStats: CallUsageSnapshot

    public init(callSid: String, status: CallStatus, durationLimit: Int, usageStats: CallUsageSnapshot) {
        self.callSid = callSid
        self.status = status
        self.durationLimit = durationLimit
        self.usageStats = usageStats
    }

    enum CodingKeys: String, CodingKey {
        case callSid = "call_sid"
        case status
        case durationLimit = "duration_limit"
        case usageStats = "usage_stats"
    }
}

/// `POST /mobile/schedule-call` body.
public struct ScheduleCallRequest: Codable, Sendable, Equatable {
    public var phoneNumber: String
    public var scenario: String
    /// ISO-8601; defaults to one minute from now.
    public var scheduledTime: Date?

    public init(phoneNumber: String, scenario: String = "default", scheduledTime: Date? = nil) {
        self.phoneNumber = phoneNumber
        self.scenario = scenario
        self.scheduledTime = scheduledTime
    }

    enum CodingKeys: String, CodingKey {
        case phoneNumber = "phone_number"
        case scenario
        case scheduledTime = "scheduled_time"
    }

    /// `scenario` defaults to `default` and `scheduled_time` to one minute from now when left out.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        phoneNumber = try container.decode(String.self, forKey: .phoneNumber)
        scenario = try container.decodeIfPresent(String.self, forKey: .scenario) ?? "default"
        scheduledTime = try container.decodeIfPresent(Date.self, forKey: .scheduledTime)
    }
}

/// Where a scheduled call is in its life. Open: a value this version does not know decodes as itself (``isKnown`` is
/// then `false`). The server's schedules move `scheduled` → `placing` → `placed`/`refused`/`failed`, or `scheduled` →
/// `cancelled`.
public struct ScheduledCallStatus: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Waiting for its time; it can still be cancelled.
    public static let scheduled: ScheduledCallStatus = "scheduled"
    /// Being placed now.
    public static let placing: ScheduledCallStatus = "placing"
    /// Placed: see the schedule's `call_sid`.
    public static let placed: ScheduledCallStatus = "placed"
    /// Not placed because the allowance was used up by then (or the call was refused).
    public static let refused: ScheduledCallStatus = "refused"
    /// Not placed because of an error.
    public static let failed: ScheduledCallStatus = "failed"
    /// Cancelled by the user.
    public static let cancelled: ScheduledCallStatus = "cancelled"

    /// The known statuses.
    public static let allCases: [ScheduledCallStatus] = [.scheduled, .placing, .placed, .refused, .failed, .cancelled]
}

/// A scheduled call: the answer of schedule-call and an item of `GET /mobile/scheduled-calls`.
public struct ScheduledCallDTO: Codable, Sendable, Equatable {
    public var scheduleID: Int
    public var phoneNumber: String
    public var scenario: String
    public var scheduledTime: Date
    public var status: ScheduledCallStatus
    /// The call placed for it, once placed.
    public var callSid: String?
    /// Why it was not placed (`refused`/`failed`).
    public var failureReason: String?

    public init(
        scheduleID: Int, phoneNumber: String, scenario: String, scheduledTime: Date, status: ScheduledCallStatus,
        callSid: String? = nil, failureReason: String? = nil
    ) {
        self.scheduleID = scheduleID
        self.phoneNumber = phoneNumber
        self.scenario = scenario
        self.scheduledTime = scheduledTime
        self.status = status
        self.callSid = callSid
        self.failureReason = failureReason
    }

    enum CodingKeys: String, CodingKey {
        case scheduleID = "schedule_id"
        case phoneNumber = "phone_number"
        case scenario
        case scheduledTime = "scheduled_time"
        case status
        case callSid = "call_sid"
        case failureReason = "failure_reason"
    }
}

/// `GET /mobile/scheduled-calls`.
public struct ScheduledCallsResponse: Codable, Sendable, Equatable {
    public var scheduledCalls: [ScheduledCallDTO]

    public init(scheduledCalls: [ScheduledCallDTO]) {
        self.scheduledCalls = scheduledCalls
    }

    enum CodingKeys: String, CodingKey {
        case scheduledCalls = "scheduled_calls"
    }
}

/// One call of `GET /mobile/call-history` (and `GET /mobile/calls/{call_sid}`).
public struct CallHistoryItem: Codable, Sendable, Equatable, Identifiable {
    public var id: Int
    public var phoneNumber: String
    public var scenario: String
    public var status: CallStatus
    public var createdAt: Date
    public var callSid: String
    public var durationSeconds: Int?
    /// Why the call ended, once it has.
    public var endedReason: EndedReason?
    public var durationLimit: Int

    public init(
        id: Int, phoneNumber: String, scenario: String, status: CallStatus, createdAt: Date, callSid: String,
        durationSeconds: Int?, endedReason: EndedReason?, durationLimit: Int
    ) {
        self.id = id
        self.phoneNumber = phoneNumber
        self.scenario = scenario
        self.status = status
        self.createdAt = createdAt
        self.callSid = callSid
        self.durationSeconds = durationSeconds
        self.endedReason = endedReason
        self.durationLimit = durationLimit
    }

    enum CodingKeys: String, CodingKey {
        case id
        case phoneNumber = "phone_number"
        case scenario
        case status
        case createdAt = "created_at"
        case callSid = "call_sid"
        case durationSeconds = "duration_seconds"
        case endedReason = "ended_reason"
        case durationLimit = "duration_limit"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(phoneNumber, forKey: .phoneNumber)
        try c.encode(scenario, forKey: .scenario)
        try c.encode(status, forKey: .status)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(callSid, forKey: .callSid)
        try c.encode(durationSeconds, forKey: .durationSeconds)
        try c.encode(endedReason, forKey: .endedReason)
        try c.encode(durationLimit, forKey: .durationLimit)
    }
}

/// `GET /mobile/call-history`.
public struct CallHistoryResponse: Codable, Sendable, Equatable {
    public var callHistory: [CallHistoryItem]
    /// Every call of the user, not only this page.
    public var totalCalls: Int

    public init(callHistory: [CallHistoryItem], totalCalls: Int) {
        self.callHistory = callHistory
        self.totalCalls = totalCalls
    }

    enum CodingKeys: String, CodingKey {
        case callHistory = "call_history"
        case totalCalls = "total_calls"
    }
}

/// `POST /test/bypass-rate-limit` body (development only).
public struct BypassRateLimitRequest: Codable, Sendable, Equatable {
    /// Only `/mobile/make-call` is supported.
    public var endpoint: String
    public var data: MakeCallRequest

    public init(endpoint: String, data: MakeCallRequest) {
        self.endpoint = endpoint
        self.data = data
    }

    enum CodingKeys: String, CodingKey {
        case endpoint
        case data
    }
}

/// One line of a call's transcript.
public struct CallTranscriptLine: Codable, Sendable, Equatable {
    /// Who spoke a line. Open: a value this version does not know decodes as itself (``isKnown`` is then `false`).
    public struct Speaker: OpenEnum, CaseIterable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The AI persona.
        public static let assistant: Speaker = "assistant"
        /// The person called.
        public static let callee: Speaker = "callee"

        /// The known speakers.
        public static let allCases: [Speaker] = [.assistant, .callee]
    }

    public var speaker: Speaker
    public var text: String
    /// Milliseconds after the conversation started.
    public var atMs: Int
    /// The callee interrupted this assistant line; only part of it was heard.
    public var interrupted: Bool

    public init(speaker: Speaker, text: String, atMs: Int, interrupted: Bool) {
        self.speaker = speaker
        self.text = text
        self.atMs = atMs
        self.interrupted = interrupted
    }

    enum CodingKeys: String, CodingKey {
        case speaker
        case text
        case atMs = "at_ms"
        case interrupted
    }
}

/// How quickly the AI answered on a call, measured by the media bridge.
public struct CallLatency: Codable, Sendable, Equatable {
    /// From the callee answering (stream start) to the AI's first audio.
    public var firstAudioMs: Int?
    /// From the end of the callee's speech to the AI's next audio, per turn: median and 90th percentile.
    public var turnP50Ms: Int?
    public var turnP90Ms: Int?
    /// Turns measured.
    public var turns: Int

    public init(firstAudioMs: Int?, turnP50Ms: Int?, turnP90Ms: Int?, turns: Int) {
        self.firstAudioMs = firstAudioMs
        self.turnP50Ms = turnP50Ms
        self.turnP90Ms = turnP90Ms
        self.turns = turns
    }

    enum CodingKeys: String, CodingKey {
        case firstAudioMs = "first_audio_ms"
        case turnP50Ms = "turn_p50_ms"
        case turnP90Ms = "turn_p90_ms"
        case turns
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(firstAudioMs, forKey: .firstAudioMs)
        try c.encode(turnP50Ms, forKey: .turnP50Ms)
        try c.encode(turnP90Ms, forKey: .turnP90Ms)
        try c.encode(turns, forKey: .turns)
    }
}

/// `GET /mobile/calls/{call_sid}`: the call as in the history, plus its timeline, transcript and latency figures.
public struct CallDetailResponse: Codable, Sendable, Equatable {
    public var call: CallHistoryItem
    public var answeredAt: Date?
    public var endedAt: Date?
    /// Both sides of the conversation, in order; empty before the call is over; `null` once deleted (by the user,
    /// or after the retention period).
    public var transcript: [CallTranscriptLine]?
    public var transcriptDeletedAt: Date?
    /// `null` until the media bridge has reported.
    public var latency: CallLatency?
    /// How many times the callee interrupted the AI.
    public var bargeIns: Int?

    public init(
        call: CallHistoryItem, answeredAt: Date?, endedAt: Date?, transcript: [CallTranscriptLine]?, transcriptDeletedAt: Date?,
        latency: CallLatency?, bargeIns: Int?
    ) {
        self.call = call
        self.answeredAt = answeredAt
        self.endedAt = endedAt
        self.transcript = transcript
        self.transcriptDeletedAt = transcriptDeletedAt
        self.latency = latency
        self.bargeIns = bargeIns
    }

    enum CodingKeys: String, CodingKey {
        case answeredAt = "answered_at"
        case endedAt = "ended_at"
        case transcript
        case transcriptDeletedAt = "transcript_deleted_at"
        case latency
        case bargeIns = "barge_ins"
    }

    /// The history fields sit at the top level, next to the detail fields.
    public init(from decoder: any Decoder) throws {
        call = try CallHistoryItem(from: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        answeredAt = try c.decodeIfPresent(Date.self, forKey: .answeredAt)
        endedAt = try c.decodeIfPresent(Date.self, forKey: .endedAt)
        transcript = try c.decodeIfPresent([CallTranscriptLine].self, forKey: .transcript)
        transcriptDeletedAt = try c.decodeIfPresent(Date.self, forKey: .transcriptDeletedAt)
        latency = try c.decodeIfPresent(CallLatency.self, forKey: .latency)
        bargeIns = try c.decodeIfPresent(Int.self, forKey: .bargeIns)
    }

    public func encode(to encoder: any Encoder) throws {
        try call.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(answeredAt, forKey: .answeredAt)
        try c.encode(endedAt, forKey: .endedAt)
        try c.encode(transcript, forKey: .transcript)
        try c.encode(transcriptDeletedAt, forKey: .transcriptDeletedAt)
        try c.encode(latency, forKey: .latency)
        try c.encode(bargeIns, forKey: .bargeIns)
    }
}

/// A change in one of the caller's calls, pushed as it happens: on the realtime WebSocket (`call.progress` events)
/// and on `GET /mobile/calls/{call_sid}/events` (server-sent events named after `type`).
///
/// - `snapshot`: the call as it is when the stream opens (`detail`).
/// - `status`: the call's status, ended reason or duration changed (`call`, `answered_at`, `ended_at`).
/// - `transcript`: a line of the conversation was transcribed (`line`), while the call is going on.
/// - `done`: the call is over and its transcript and figures are saved (`detail`); the event stream ends.
public struct CallProgressDTO: Codable, Sendable, Equatable {
    public var type: String
    public var callSid: String
    public var call: CallHistoryItem?
    public var answeredAt: Date?
    public var endedAt: Date?
    public var line: CallTranscriptLine?
    public var detail: CallDetailResponse?

    public init(
        type: String, callSid: String, call: CallHistoryItem? = nil, answeredAt: Date? = nil, endedAt: Date? = nil,
        line: CallTranscriptLine? = nil, detail: CallDetailResponse? = nil
    ) {
        self.type = type
        self.callSid = callSid
        self.call = call
        self.answeredAt = answeredAt
        self.endedAt = endedAt
        self.line = line
        self.detail = detail
    }

    enum CodingKeys: String, CodingKey {
        case type, call, line, detail
        case callSid = "call_sid"
        case answeredAt = "answered_at"
        case endedAt = "ended_at"
    }
}
