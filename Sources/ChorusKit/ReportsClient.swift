import ChorusAPI
import Foundation

/// Content reports (seed 000, "Reporting and Moderation System"): report a scenario or a call to the operators, and
/// follow what became of the reports. Reached through ``ChorusClient/reports``.
public struct ReportsClient: Sendable {
    let session: APISession

    /// Reports a scenario: a built-in ``Scenario/id`` or one of the user's ``CustomScenario/id``s.
    ///
    /// - Parameters:
    ///   - description: what happened, 1 to 1,000 characters.
    /// - Throws: ``ChorusError/validation(_:)`` for an unknown scenario or a description that is empty or too long;
    ///   ``ChorusError/rateLimited(retryAfter:)`` after 20 reports in a day.
    public func report(scenario scenarioID: String, reason: ReportReason, description: String) async throws -> ContentReport {
        try await file(CreateReportRequest(scenarioID: scenarioID, reason: reason, description: description))
    }

    /// Reports one of the user's calls (``Call/sid``).
    ///
    /// - Throws: as ``report(scenario:reason:description:)``; a call that is not the user's is a validation error.
    public func report(call callSid: String, reason: ReportReason, description: String) async throws -> ContentReport {
        try await file(CreateReportRequest(callSid: callSid, reason: reason, description: description))
    }

    /// The user's reports, newest first, with their status.
    public func reports() async throws -> [ContentReport] {
        try await session.send(API.Calls.reports.request()).reports.map(ContentReport.init)
    }

    private func file(_ body: CreateReportRequest) async throws -> ContentReport {
        ContentReport(try await session.send(try API.Calls.createReport.request(json: body)))
    }
}

/// A content report the user filed.
public struct ContentReport: Sendable, Hashable, Identifiable {
    /// Where the report is in the operators' queue.
    public enum Status: Sendable, Hashable {
        case pending, reviewed, resolved, dismissed
        /// A status added by a newer server.
        case unknown(String)

        init(rawValue: String) {
            switch ReportStatus(rawValue: rawValue) {
            case .pending: self = .pending
            case .reviewed: self = .reviewed
            case .resolved: self = .resolved
            case .dismissed: self = .dismissed
            case nil: self = .unknown(rawValue)
            }
        }
    }

    public var id: String
    /// The reported scenario, or `nil` for a call report.
    public var scenarioID: String?
    /// The reported call, or `nil` for a scenario report.
    public var callSid: String?
    /// The reason; `nil` for a reason a newer server added.
    public var reason: ReportReason?
    public var description: String
    public var status: Status
    public var createdAt: Date
    public var updatedAt: Date

    /// Converts the wire format.
    public init(_ dto: ReportDTO) {
        id = dto.id
        scenarioID = dto.scenarioID
        callSid = dto.callSid
        reason = ReportReason(rawValue: dto.reason)
        description = dto.description
        status = Status(rawValue: dto.status)
        createdAt = dto.createdAt
        updatedAt = dto.updatedAt
    }
}
