import ChorusAPI
import ChorusCore
import Foundation
import Vapor

/// The console's view of the do-not-call list (issue 17): its figures, and removing a number when its owner asks to be
/// called again. The list holds keyed hashes, so it cannot be browsed; the operator types the number.
extension ConsoleController {
    /// `GET /console/api/opt-outs`.
    @Sendable
    func optOuts(_ req: Request) async throws -> ConsoleOptOutsDTO {
        let counts = try await req.store.destinations.optOutCounts(now: services.now())
        return ConsoleOptOutsDTO(
            total: counts.total, lastDay: counts.lastDay, lastWeek: counts.lastWeek, bySpeech: counts.bySpeech, byKey: counts.byKey)
    }

    /// `POST /console/api/opt-outs/remove` `{phone_number}`: 404 when the number is not on the list. Audited, with the
    /// number masked (the audit log never holds a whole number).
    @Sendable
    func removeOptOut(_ req: Request) async throws -> ConsoleActionResultDTO {
        let operator_ = try req.consoleSession
        let body = try req.body(of: API.Operations.consoleRemoveOptOut)
        let number = body.phoneNumber.trimmingCharacters(in: .whitespaces)
        guard PhoneNumber.isE164(number) else { throw APIError.invalid("phone_number", "Must be an E.164 number such as +14155550123") }
        guard try await req.store.destinations.removeOptOut(hash: services.numberHasher.hash(number)) else {
            throw APIError.notFound("This number is not on the do-not-call list")
        }
        let target = "number:\(PhoneNumberMask.mask(number))"
        let detail = "removed from the do-not-call list on request"
        try await audited(req, operator_, action: "remove_opt_out", target: target, detail: detail)
        return ConsoleActionResultDTO(action: "remove_opt_out", target: target, detail: detail)
    }
}
