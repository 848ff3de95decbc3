import ChorusCore
import Foundation
import Logging

/// Settles a call whose final status callback never arrived: once the call must be over (ring timeout + duration
/// limit + a margin), asks the provider for its status and applies it exactly as the callback would have —
/// unanswered calls are refunded once. A call that never reached the provider (the server stopped between the
/// charge and the request) is released.
struct CallReconciliationJob {
    /// The provider still reports the call as active: try again later.
    struct StillActive: Error, CustomStringConvertible {
        var status: String
        var description: String { "the provider still reports the call as \(status)" }
    }

    let services: ChorusServices

    func run(_ job: ClaimedJob, store: ChorusStore, logger: Logger) async throws {
        guard let id = Int(job.payload) else { throw JobRunner.PermanentFailure(description: "bad call id \(job.payload)") }
        guard let call = try await store.call(id: id), !call.status.isTerminal else { return }
        guard let sid = call.callSid else {
            try await store.releaseCall(id: id, now: services.now())
            logger.warning("released a call that never reached the provider", metadata: ["call_id": .stringConvertible(id)])
            return
        }
        let reported = try await services.telephony.callStatus(callSid: sid)
        guard let status = CallStatus(rawValue: reported.status), status.isTerminal else { throw StillActive(status: reported.status) }
        let update = try await store.applyCallStatus(
            callID: id, callSid: sid, status: status, durationSeconds: reported.durationSeconds, now: services.now()
        )
        if update.applied { await services.publishCallStatus(callID: id, store: store) }
        logger.notice(
            "call reconciled from the provider",
            metadata: [
                "call_sid": .string(sid), "status": .string(status.rawValue), "applied": .stringConvertible(update.applied),
                "refunded": .stringConvertible(update.refunded),
            ])
    }
}
