import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Logging

/// Settles a call whose final status callback never arrived: once the call must be over (ring timeout + duration
/// limit + a margin), asks the provider for its status and applies it exactly as the callback would have —
/// unanswered calls are refunded once. A call that never reached the provider (the server stopped between the
/// charge and the request) is released. A call the provider answers 404 for (it does not know the sid) is final after
/// ``notFoundAttempts`` attempts: failed, and refunded once.
struct CallReconciliationJob {
    /// Attempts that must all find the call unknown to the provider before it is settled as failed (a call the
    /// provider just created can briefly be missing from its API; every later answer is the same).
    static let notFoundAttempts = 3

    /// The provider still reports the call as active: try again later.
    struct StillActive: Error, CustomStringConvertible {
        var status: String
        var description: String { "the provider still reports the call as \(status)" }
    }

    let services: ChorusServices

    func run(_ job: ClaimedJob, store: ChorusStore, logger: Logger) async throws {
        guard let id = Int(job.payload) else { throw JobRunner.PermanentFailure(description: "bad call id \(job.payload)") }
        guard let call = try await store.calls.call(id: id), !call.status.isTerminal else { return }
        guard let sid = call.callSid else {
            if try await store.calls.releaseCall(id: id, now: services.now()) { services.instruments.callsReleased(1) }
            logger.warning("released a call that never reached the provider", metadata: ["call_id": .stringConvertible(id)])
            return
        }
        let reported: ProviderCallStatus
        do {
            reported = try await services.telephony.callStatus(callSid: sid)
        } catch TelephonyError.rejected(404, let code, _) where job.attempts >= Self.notFoundAttempts {
            let update = try await store.calls.applyCallStatus(callID: id, callSid: sid, status: .failed, durationSeconds: 0, now: services.now())
            services.instruments.callStatusApplied(update)
            if update.applied { await services.publishCallStatus(callID: id, store: store) }
            if let settled = update.call { await services.callCosts.settle(settled, store: store, logger: logger) }
            logger.warning(
                "the provider does not know the call: settled as failed",
                metadata: [
                    "call_sid": .string(sid), "attempts": .stringConvertible(job.attempts), "twilio_code": .string(code.map(String.init) ?? "none"),
                    "refunded": .stringConvertible(update.refunded),
                ])
            return
        }
        guard let status = CallStatus(known: reported.status), status.isTerminal else { throw StillActive(status: reported.status) }
        let update = try await store.calls.applyCallStatus(
            callID: id, callSid: sid, status: status, durationSeconds: reported.durationSeconds, now: services.now()
        )
        services.instruments.callStatusApplied(update)
        if update.applied { await services.publishCallStatus(callID: id, store: store) }
        if let settled = update.call { await services.callCosts.settle(settled, store: store, logger: logger) }
        logger.notice(
            "call reconciled from the provider",
            metadata: [
                "call_sid": .string(sid), "status": .string(status.rawValue), "applied": .stringConvertible(update.applied),
                "refunded": .stringConvertible(update.refunded),
            ])
    }
}
