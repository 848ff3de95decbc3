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
        try await session.send(API.Calls.reports.request()).reports
    }

    private func file(_ body: CreateReportRequest) async throws -> ContentReport {
        try await session.send(try API.Calls.createReport.request(json: body))
    }
}

/// A content report the user filed: the wire's ``ReportDTO`` itself (its ``ReportDTO/reason`` and
/// ``ReportDTO/status`` are open values: one a newer server added decodes as itself, with `isKnown` false).
public typealias ContentReport = ReportDTO
