import ChorusAPI
import ChorusCore
import Foundation
import Vapor

/// Content reports (seed 000, "Reporting and Moderation System"): `POST /mobile/reports` and `GET /mobile/reports`.
///
/// A report is about exactly one subject the caller can see: a scenario (built-in, or one of their own custom ones) or
/// one of their own calls. A custom subject's name and persona are kept with the report, so operators read what was
/// reported even if the scenario changes or is deleted. At most ``ReportReview/reportsPerDay`` per user in any 24 hours
/// (429 with `Retry-After`), counted in the database so every instance agrees.
struct ReportsController: RouteCollection {
    let services: ChorusServices

    func boot(routes: any RoutesBuilder) throws {
        let user = routes.grouped(UserAuthenticator(services: services))
        user.on(API.Calls.createReport, use: create)
        user.on(API.Calls.reports, use: list)
    }

    @Sendable
    func create(_ req: Request) async throws -> ReportDTO {
        let user = try req.user
        let body = try req.body(of: API.Calls.createReport)
        let description = body.description.trimmingCharacters(in: .whitespacesAndNewlines)
        let reason = ReportReason(known: body.reason.rawValue)
        var validator = FieldValidator()
        validator.check(
            (body.scenarioID == nil) != (body.callSid == nil), body.scenarioID == nil ? "scenario_id" : "call_sid",
            "Give exactly one of scenario_id and call_sid")
        validator.check(
            reason != nil, "reason", "Must be one of \(ReportReason.allCases.map(\.rawValue).joined(separator: ", "))")
        validator.check(
            UserText.fits(description, characters: ReportReview.descriptionLength, bytes: ReportReview.descriptionBytes), "description",
            "Must be 1 to 1,000 characters")
        try validator.throwIfInvalid()

        var subjectScenario: String?
        var subjectText: String?
        var callID: Int?
        if let scenarioID = body.scenarioID {
            if services.scenarios.scenario(id: scenarioID) != nil {
                subjectScenario = scenarioID
            } else if let rowID = CustomScenarioRecord.rowID(fromPublicID: scenarioID),
                let custom = try await req.store.scenarios.customScenario(id: rowID, userID: user.id)
            {
                subjectScenario = custom.publicID
                subjectText = custom.screenedText
            } else {
                throw APIError.invalid("scenario_id", "Unknown scenario: report a built-in scenario or one of your custom scenarios")
            }
        } else if let sid = body.callSid {
            guard let call = try await req.store.calls.call(sid: sid, userID: user.id) else {
                throw APIError.invalid("call_sid", "Unknown call: report one of your own calls")
            }
            callID = call.id
            subjectScenario = call.scenario
            if let rowID = CustomScenarioRecord.rowID(fromPublicID: call.scenario), let custom = try await req.store.scenarios.customScenario(id: rowID) {
                subjectText = custom.screenedText
            }
        }
        let now = services.now()
        let record = ContentReportRecord(
            id: UUID().uuidString.lowercased(), userID: user.id, scenarioID: body.scenarioID, callID: callID, callSid: body.callSid,
            subjectScenario: subjectScenario, subjectText: subjectText, reason: reason ?? .other, description: description, status: .pending,
            reviewedBy: nil, createdAt: now, updatedAt: now)
        let (created, retryAt) = try await req.store.reports.createReport(record, limit: ReportReview.reportsPerDay, now: now)
        guard let created else {
            let wait = max(1, Int((retryAt ?? now).timeIntervalSince(now).rounded(.up)))
            throw APIError.limitReached(
                retryAfter: wait, detail: "You can send at most \(ReportReview.reportsPerDay) reports a day. Please try again later.")
        }
        req.logger.notice(
            "content report filed",
            metadata: ["report_id": .string(created.id), "reason": .string(created.reason.rawValue), "subject": .string(subjectScenario ?? "")])
        return created.dto
    }

    @Sendable
    func list(_ req: Request) async throws -> ReportsResponse {
        let user = try req.user
        return ReportsResponse(reports: try await req.store.reports.reports(userID: user.id).map(\.dto))
    }
}
