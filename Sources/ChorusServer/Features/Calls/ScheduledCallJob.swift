import ChorusAPI
import Foundation
import Logging
import SQLKit

/// Places a scheduled call when its job comes due. The destination, the callee's calling hours, the number's limits and
/// the permission are checked again and the call charged now; a refusal ends the schedule as `refused` with the reason
/// (a call whose moment has slipped into quiet hours is not placed, and nothing is charged). The call row is unique per
/// schedule, so a retried job never places a second call.
struct ScheduledCallJob {
    let services: ChorusServices

    func run(_ job: ClaimedJob, store: ChorusStore, logger: Logger) async throws {
        guard let id = Int(job.payload), let schedule = try await store.schedules.schedule(id: id) else {
            throw JobRunner.PermanentFailure(description: "unknown schedule \(job.payload)")
        }
        switch schedule.state {
        case .scheduled:
            guard try await store.schedules.transitionSchedule(id: id, from: .scheduled, to: .placing) else { return }  // cancelled meanwhile
        case .placing:
            break  // a previous attempt was interrupted
        default:  // placed, refused, failed or cancelled: over
            return
        }
        if let existing = try await store.calls.call(scheduleID: id) {
            _ = try await store.schedules.transitionSchedule(id: id, from: .placing, to: .placed, callID: existing.id)
            return
        }
        let placement = CallPlacement(services: services, store: store, logger: logger)
        do {
            let scenario = try await placement.resolveScenario(schedule.scenario, userID: schedule.userID)
            let call = try await placement.place(
                userID: schedule.userID, phoneNumber: schedule.phoneNumber, scenario: scenario, scheduleID: id
            )
            _ = try await store.schedules.transitionSchedule(id: id, from: .placing, to: .placed, callID: call.id)
        } catch CallPlacementError.refused(let refusal) {
            // Quiet hours where the number is (the job ran late), a per-number limit, or a destination no longer allowed:
            // not placed, nothing charged.
            _ = try await store.schedules.transitionSchedule(id: id, from: .placing, to: .refused, reason: refusal.message)
            logger.info("scheduled call refused", metadata: ["schedule_id": .stringConvertible(id), "status": .string(refusal.error)])
        } catch CallPlacementError.paymentRequired(let payload) {
            _ = try await store.schedules.transitionSchedule(id: id, from: .placing, to: .refused, reason: payload.detail.message)
            logger.info("scheduled call refused", metadata: ["schedule_id": .stringConvertible(id), "status": .string(payload.detail.error)])
        } catch CallPlacementError.budgetSpent(let period, let retryAfter) {
            // The Calls budget is spent (issue 18): the call is not placed and nothing is charged; the schedule ends.
            let error = CallPlacementError.budgetSpent(period: period, retryAfter: retryAfter)
            _ = try await store.schedules.transitionSchedule(id: id, from: .placing, to: .refused, reason: error.message)
            logger.info("scheduled call refused", metadata: ["schedule_id": .stringConvertible(id), "status": "calls_budget_spent"])
        } catch let error as CallPlacementError where error == .accountDeleted || error.isUnknownScenario {
            _ = try await store.schedules.transitionSchedule(id: id, from: .placing, to: .failed, reason: error.message)
        } catch {
            if job.attempts >= job.maxAttempts {
                _ = try await store.schedules.transitionSchedule(id: id, from: .placing, to: .failed, reason: "The phone service was unavailable")
            }
            throw error
        }
    }
}
