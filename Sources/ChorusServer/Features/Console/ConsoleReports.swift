import ChorusAPI
import ChorusCore
import Foundation
import Vapor

/// The console's report queue (issue 17): content reports from the app, oldest first, and their review.
extension ConsoleController {
    /// `GET /console/api/reports?status=pending`: reports in a status (all when left out), oldest first, at most 100.
    @Sendable
    func reports(_ req: Request) async throws -> ConsoleReportsDTO {
        let text = try req.query.get(String?.self, at: "status")
        let status = text.flatMap { ReportStatus(known: $0) }
        if text != nil && status == nil {
            throw APIError.invalid("status", "Must be one of \(ReportStatus.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let queue = try await req.store.reports.reportQueue(status: status)
        var items: [ConsoleReportDTO] = []
        for record in queue.reports {
            var disabledAt: Date?
            if let subject = record.subjectScenario, let rowID = CustomScenarioRecord.rowID(fromPublicID: subject) {
                disabledAt = try await req.store.scenarios.customScenario(id: rowID)?.disabledAt
            }
            items.append(Self.dto(record, scenarioDisabledAt: disabledAt))
        }
        return ConsoleReportsDTO(pending: queue.pending, reports: items)
    }

    /// `POST /console/api/reports/{report_id}/status` `{status, disable_scenario?}`: moves a report along the queue
    /// (``ReportReview``); with `resolved`, `disable_scenario: true` disables the custom scenario it is about. Audited.
    @Sendable
    func changeReportStatus(_ req: Request) async throws -> ConsoleActionResultDTO {
        let operator_ = try req.consoleSession
        let body = try req.body(of: API.Operations.consoleReportStatus)
        guard let status = ReportStatus(known: body.status.rawValue), status != .pending else {
            throw APIError.invalid("status", "Must be one of reviewed, resolved, dismissed")
        }
        let disable = body.disableScenario ?? false
        guard let id = req.parameters.get("report_id"), let report = try await req.store.reports.report(id: id) else {
            throw APIError.notFound("Report not found")
        }
        var scenarioRow: Int?
        if disable {
            guard status == .resolved else { throw APIError.invalid("disable_scenario", "Only a resolution can disable the scenario") }
            guard let subject = report.subjectScenario, let rowID = CustomScenarioRecord.rowID(fromPublicID: subject),
                try await req.store.scenarios.customScenario(id: rowID) != nil
            else {
                throw APIError.invalid(
                    "disable_scenario", "The report is not about a custom scenario that still exists (built-in scenarios cannot be disabled)")
            }
            scenarioRow = rowID
        }
        switch try await req.store.reports.changeReportStatus(
            id: id, to: status, operatorEmail: operator_.email, disableScenario: scenarioRow, now: services.now())
        {
        case .notFound:
            throw APIError.notFound("Report not found")
        case .notAllowed(let current):
            throw APIError.detail(.conflict, "The report is \(current.rawValue) and cannot become \(status.rawValue)")
        case .changed(let from, let record, let disabled):
            var detail = "\(from.rawValue) → \(record.status.rawValue)"
            if let disabled { detail += "; scenario \(disabled) disabled" }
            try await audited(req, operator_, action: "report_status", target: "report:\(id)", detail: detail)
            return ConsoleActionResultDTO(action: "report_status", target: "report:\(id)", detail: detail)
        }
    }

    static func dto(_ record: ContentReportRecord, scenarioDisabledAt: Date?) -> ConsoleReportDTO {
        ConsoleReportDTO(
            id: record.id, userID: record.userID, scenarioID: record.scenarioID, callSid: record.callSid, callID: record.callID,
            subjectScenario: record.subjectScenario, subjectText: record.subjectText, scenarioDisabledAt: scenarioDisabledAt, reason: record.reason,
            description: record.description, status: record.status, reviewedBy: record.reviewedBy, createdAt: record.createdAt,
            updatedAt: record.updatedAt)
    }
}
