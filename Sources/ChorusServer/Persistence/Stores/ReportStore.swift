import ChorusAPI
import ChorusCore
import Foundation
import SQLKit

/// A stored content report.
struct ContentReportRecord: Sendable, Equatable {
    var id: String
    var userID: String
    var scenarioID: String?
    var callID: Int?
    var callSid: String?
    /// The scenario the report is about (`scenario_id`, or the reported call's scenario).
    var subjectScenario: String?
    /// A custom subject's name and persona when reported.
    var subjectText: String?
    var reason: ReportReason
    var description: String
    var status: ReportStatus
    var reviewedBy: String?
    var createdAt: Date
    var updatedAt: Date

    var dto: ReportDTO {
        ReportDTO(
            id: id, scenarioID: scenarioID, callSid: callSid, reason: reason, description: description, status: status, createdAt: createdAt,
            updatedAt: updatedAt)
    }
}

/// What a status change did.
enum ReportStatusChange: Sendable, Equatable {
    case notFound
    /// The report is in a status that cannot move there.
    case notAllowed(ReportStatus)
    case changed(from: ReportStatus, record: ContentReportRecord, disabledScenario: String?)
}

/// Content reports (`content_reports`) and their review queue.
///
/// Reached as `store.reports`, or `tx.reports` inside ``ChorusStore/writeTransaction(_:)``.
struct ReportStore: StoreArea {
    let base: ChorusStore

    /// Inserts the report unless the user filed `limit` in the day before `now`; `nil` then, with the time the oldest
    /// of them leaves the window. The count and the insert hold the user's row lock (PostgreSQL) or the write lock
    /// (SQLite), so concurrent reports cannot overshoot.
    func createReport(_ report: ContentReportRecord, limit: Int, now: Date) async throws -> (ContentReportRecord?, retryAt: Date?) {
        try await writeTransaction { tx in
            if tx.dialect == .postgres {
                _ = try await tx.sql.raw("SELECT id FROM users WHERE id = \(bind: report.userID) FOR UPDATE").first()
            }
            let since = now.addingTimeInterval(-86_400).epochMillis
            let recent = try await tx.sql.raw(
                """
                SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM content_reports
                WHERE user_id = \(bind: report.userID) AND created_at > \(bind: since)
                """
            ).first()
            let count = try recent?.int("n") ?? 0
            if count >= limit {
                let oldest = try recent?.optionalDate("oldest") ?? now
                return (nil, oldest.addingTimeInterval(86_400))
            }
            try await tx.sql.raw(
                """
                INSERT INTO content_reports (id, user_id, scenario_id, call_id, call_sid, subject_scenario, subject_text, reason, description,
                  status, created_at, updated_at)
                VALUES (\(bind: report.id), \(bind: report.userID), \(bind: report.scenarioID), \(bind: report.callID.map(Int64.init)),
                  \(bind: report.callSid), \(bind: report.subjectScenario), \(bind: report.subjectText), \(bind: report.reason.rawValue),
                  \(bind: report.description), \(bind: report.status.rawValue), \(bind: report.createdAt.epochMillis),
                  \(bind: report.updatedAt.epochMillis))
                """
            ).run()
            return (report, nil)
        }
    }

    /// The user's reports, newest first (at most 100).
    func reports(userID: String) async throws -> [ContentReportRecord] {
        try await reader.raw("SELECT * FROM content_reports WHERE user_id = \(bind: userID) ORDER BY created_at DESC, id LIMIT 100").all()
            .map(Self.reportRecord)
    }

    /// The queue: reports in `status` (every status when `nil`), oldest first, at most 100; and the pending count.
    func reportQueue(status: ReportStatus?) async throws -> (reports: [ContentReportRecord], pending: Int) {
        let rows =
            if let status {
                try await reader.raw(
                    "SELECT * FROM content_reports WHERE status = \(bind: status.rawValue) ORDER BY created_at, id LIMIT 100"
                ).all()
            } else {
                try await reader.raw("SELECT * FROM content_reports ORDER BY created_at, id LIMIT 100").all()
            }
        let pending = try await reader.raw("SELECT COUNT(*) AS n FROM content_reports WHERE status = 'pending'").first()?.int("n") ?? 0
        return (try rows.map(Self.reportRecord), pending)
    }

    func report(id: String) async throws -> ContentReportRecord? {
        try await reader.raw("SELECT * FROM content_reports WHERE id = \(bind: id)").first().map(Self.reportRecord)
    }

    /// Moves a report to `status` if ``ReportReview`` allows it from the status it has now (compare-and-set: two
    /// operators acting at once change it once), and disables `disableScenario` (a custom scenario's row id) with it.
    func changeReportStatus(
        id: String, to status: ReportStatus, operatorEmail: String, disableScenario: Int?, now: Date
    ) async throws -> ReportStatusChange {
        try await writeTransaction { tx in
            guard let current = try await tx.sql.raw("SELECT * FROM content_reports WHERE id = \(bind: id)").first().map(Self.reportRecord) else {
                return .notFound
            }
            guard ReportReview.allows(from: current.status, to: status) else { return .notAllowed(current.status) }
            guard
                let row = try await tx.sql.raw(
                    """
                    UPDATE content_reports SET status = \(bind: status.rawValue), reviewed_by = \(bind: operatorEmail),
                      updated_at = \(bind: now.epochMillis)
                    WHERE id = \(bind: id) AND status = \(bind: current.status.rawValue) RETURNING *
                    """
                ).first()
            else { return .notAllowed(current.status) }
            var disabled: String?
            if let scenario = disableScenario {
                let updated = try await tx.sql.raw(
                    """
                    UPDATE custom_scenarios SET disabled_at = \(bind: now.epochMillis), disabled_reason = \(bind: "report \(id)")
                    WHERE id = \(bind: Int64(scenario)) AND disabled_at IS NULL RETURNING id
                    """
                ).first()
                if updated != nil { disabled = CustomScenarioRecord.publicID(scenario) }
            }
            return .changed(from: current.status, record: try Self.reportRecord(row), disabledScenario: disabled)
        }
    }

    static func reportRecord(_ row: any SQLRow) throws -> ContentReportRecord {
        ContentReportRecord(
            id: try row.string("id"), userID: try row.string("user_id"), scenarioID: try row.optionalString("scenario_id"),
            callID: try row.optionalInt("call_id"), callSid: try row.optionalString("call_sid"), subjectScenario: try row.optionalString("subject_scenario"),
            subjectText: try row.optionalString("subject_text"), reason: ReportReason(known: try row.string("reason")) ?? .other,
            description: try row.string("description"), status: ReportStatus(known: try row.string("status")) ?? .pending,
            reviewedBy: try row.optionalString("reviewed_by"), createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"))
    }
}
