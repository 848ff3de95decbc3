import Foundation

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
    public var status: String
    /// Seconds the call may last.
    public var durationLimit: Int
    public var usageStats: CallUsageSnapshot

    public init(callSid: String, status: String, durationLimit: Int, usageStats: CallUsageSnapshot) {
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

/// A scheduled call: the answer of schedule-call and an item of `GET /mobile/scheduled-calls`.
public struct ScheduledCallDTO: Codable, Sendable, Equatable {
    public var scheduleID: Int
    public var phoneNumber: String
    public var scenario: String
    public var scheduledTime: Date
    /// `scheduled`, `placing`, `placed`, `refused`, `failed` or `cancelled`.
    public var status: String
    /// The call placed for it, once placed.
    public var callSid: String?
    /// Why it was not placed (`refused`/`failed`).
    public var failureReason: String?

    public init(
        scheduleID: Int, phoneNumber: String, scenario: String, scheduledTime: Date, status: String,
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
    /// `initiated`, `queued`, `ringing`, `in-progress`, `completed`, `busy`, `no-answer`, `failed`, `canceled`.
    public var status: String
    public var createdAt: Date
    public var callSid: String
    public var durationSeconds: Int?
    /// Why the call ended, once it has: `completed`, `duration_limit`, `busy`, `no_answer`, `failed`, `canceled`.
    public var endedReason: String?
    public var durationLimit: Int

    public init(
        id: Int, phoneNumber: String, scenario: String, status: String, createdAt: Date, callSid: String,
        durationSeconds: Int?, endedReason: String?, durationLimit: Int
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
