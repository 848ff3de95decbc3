import Foundation

/// Why content is reported (seed 000, "Reporting and Moderation System": `ContentReport.ReportReason`). Open: a reason
/// this version does not know decodes as itself (``OpenEnum``).
public struct ReportReason: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let inappropriate: ReportReason = "inappropriate"
    public static let offensive: ReportReason = "offensive"
    public static let spam: ReportReason = "spam"
    public static let other: ReportReason = "other"

    /// The known reasons.
    public static let allCases: [ReportReason] = [.inappropriate, .offensive, .spam, .other]

    /// The seed's labels (an unknown reason shows as itself).
    public var displayName: String {
        switch self {
        case .inappropriate: "Inappropriate Content"
        case .offensive: "Offensive Language"
        case .spam: "Spam or Misleading"
        case .other: "Other"
        default: rawValue
        }
    }
}

/// Where a report is in the operators' queue (seed 000: `ContentReport.ReportStatus`). Open, like ``ReportReason``.
public struct ReportStatus: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let pending: ReportStatus = "pending"
    public static let reviewed: ReportStatus = "reviewed"
    public static let resolved: ReportStatus = "resolved"
    public static let dismissed: ReportStatus = "dismissed"

    /// The known statuses.
    public static let allCases: [ReportStatus] = [.pending, .reviewed, .resolved, .dismissed]
}

/// `POST /mobile/reports`: exactly one of `scenario_id` (a built-in scenario or one of the caller's custom ones) and
/// `call_sid` (one of the caller's calls), a `reason` and a `description` of 1 to 1,000 characters.
public struct CreateReportRequest: Codable, Sendable, Equatable {
    public var scenarioID: String?
    public var callSid: String?
    /// One of ``ReportReason``'s known values (checked by the server: an unknown reason is a field error).
    public var reason: ReportReason
    public var description: String

    public init(scenarioID: String? = nil, callSid: String? = nil, reason: ReportReason, description: String) {
        self.scenarioID = scenarioID
        self.callSid = callSid
        self.reason = reason
        self.description = description
    }

    enum CodingKeys: String, CodingKey {
        case scenarioID = "scenario_id"
        case callSid = "call_sid"
        case reason
        case description
    }
}

/// A content report as its reporter sees it.
public struct ReportDTO: Codable, Sendable, Hashable, Identifiable {
    /// A UUID.
    public var id: String
    public var scenarioID: String?
    public var callSid: String?
    /// Open: a reason added by a newer server still decodes.
    public var reason: ReportReason
    public var description: String
    public var status: ReportStatus
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: String, scenarioID: String?, callSid: String?, reason: ReportReason, description: String, status: ReportStatus, createdAt: Date,
        updatedAt: Date
    ) {
        self.id = id
        self.scenarioID = scenarioID
        self.callSid = callSid
        self.reason = reason
        self.description = description
        self.status = status
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case id
        case scenarioID = "scenario_id"
        case callSid = "call_sid"
        case reason
        case description
        case status
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    /// Encodes the subject not given as `null`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(scenarioID, forKey: .scenarioID)
        try container.encode(callSid, forKey: .callSid)
        try container.encode(reason, forKey: .reason)
        try container.encode(description, forKey: .description)
        try container.encode(status, forKey: .status)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
    }
}

/// `GET /mobile/reports`: the caller's reports, newest first.
public struct ReportsResponse: Codable, Sendable, Equatable {
    public var reports: [ReportDTO]

    public init(reports: [ReportDTO]) {
        self.reports = reports
    }

    enum CodingKeys: String, CodingKey {
        case reports
    }
}

/// A custom scenario's moderation verdict: the categories that refused it (empty: allowed), the moderation model asked
/// (`nil` when moderation was off) and when.
public struct PersonaModerationDTO: Codable, Sendable, Equatable {
    public var categories: [String]
    public var model: String?
    public var checkedAt: Date

    public init(categories: [String], model: String?, checkedAt: Date) {
        self.categories = categories
        self.model = model
        self.checkedAt = checkedAt
    }

    enum CodingKeys: String, CodingKey {
        case categories
        case model
        case checkedAt = "checked_at"
    }
}

/// A report in the console's queue: the reporter, the subject and, for a custom scenario, its text when reported.
public struct ConsoleReportDTO: Codable, Sendable, Equatable {
    public var id: String
    public var userID: String
    public var scenarioID: String?
    public var callSid: String?
    /// The internal call id (console call look-up) of a call report.
    public var callID: Int?
    /// The scenario the report is about: `scenario_id`, or the reported call's scenario.
    public var subjectScenario: String?
    /// The custom scenario's name and persona when the report was made (a custom scenario may change or be deleted).
    public var subjectText: String?
    /// When the subject custom scenario was disabled, if it is.
    public var scenarioDisabledAt: Date?
    public var reason: ReportReason
    public var description: String
    public var status: ReportStatus
    /// The operator who last changed the status.
    public var reviewedBy: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: String, userID: String, scenarioID: String?, callSid: String?, callID: Int?, subjectScenario: String?, subjectText: String?,
        scenarioDisabledAt: Date?, reason: ReportReason, description: String, status: ReportStatus, reviewedBy: String?, createdAt: Date,
        updatedAt: Date
    ) {
        self.id = id
        self.userID = userID
        self.scenarioID = scenarioID
        self.callSid = callSid
        self.callID = callID
        self.subjectScenario = subjectScenario
        self.subjectText = subjectText
        self.scenarioDisabledAt = scenarioDisabledAt
        self.reason = reason
        self.description = description
        self.status = status
        self.reviewedBy = reviewedBy
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case id
        case userID = "user_id"
        case scenarioID = "scenario_id"
        case callSid = "call_sid"
        case callID = "call_id"
        case subjectScenario = "subject_scenario"
        case subjectText = "subject_text"
        case scenarioDisabledAt = "scenario_disabled_at"
        case reason
        case description
        case status
        case reviewedBy = "reviewed_by"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    /// Encodes absent values as `null`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(userID, forKey: .userID)
        try container.encode(scenarioID, forKey: .scenarioID)
        try container.encode(callSid, forKey: .callSid)
        try container.encode(callID, forKey: .callID)
        try container.encode(subjectScenario, forKey: .subjectScenario)
        try container.encode(subjectText, forKey: .subjectText)
        try container.encode(scenarioDisabledAt, forKey: .scenarioDisabledAt)
        try container.encode(reason, forKey: .reason)
        try container.encode(description, forKey: .description)
        try container.encode(status, forKey: .status)
        try container.encode(reviewedBy, forKey: .reviewedBy)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
    }
}

/// `GET /console/api/reports`: the queue, oldest first (at most 100), and how many are pending.
public struct ConsoleReportsDTO: Codable, Sendable, Equatable {
    public var pending: Int
    public var reports: [ConsoleReportDTO]

    public init(pending: Int, reports: [ConsoleReportDTO]) {
        self.pending = pending
        self.reports = reports
    }

    enum CodingKeys: String, CodingKey {
        case pending
        case reports
    }
}

/// `POST /console/api/reports/{report_id}/status`: the new status; `disable_scenario` (with `resolved` only) disables
/// the custom scenario the report is about.
public struct ConsoleReportStatusRequest: Codable, Sendable, Equatable {
    /// The new status: `reviewed`, `resolved` or `dismissed` (anything else is a field error).
    public var status: ReportStatus
    public var disableScenario: Bool?

    public init(status: ReportStatus, disableScenario: Bool? = nil) {
        self.status = status
        self.disableScenario = disableScenario
    }

    enum CodingKeys: String, CodingKey {
        case status
        case disableScenario = "disable_scenario"
    }
}
