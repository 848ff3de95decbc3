import ChorusAPI
import Foundation
import SQLKit

struct ScheduleRecord: Sendable, Equatable {
    var id: Int
    var userID: String
    var phoneNumber: String
    var scenario: String
    var scheduledTime: Date
    var state: ScheduledCallStatus
    var jobID: Int?
    var callID: Int?
    var failureReason: String?

    func dto(callSid: String?) -> ScheduledCallDTO {
        ScheduledCallDTO(
            scheduleID: id, phoneNumber: phoneNumber, scenario: scenario, scheduledTime: scheduledTime, status: state,
            callSid: callSid, failureReason: failureReason
        )
    }
}

/// Scheduled calls (`scheduled_calls`) and their state transitions.
///
/// Reached as `store.schedules`, or `tx.schedules` inside ``ChorusStore/writeTransaction(_:)``.
struct ScheduleStore: StoreArea {
    let base: ChorusStore

    /// Records the schedule and its job in one transaction.
    func createSchedule(userID: String, phoneNumber: String, scenario: String, at time: Date, now: Date) async throws -> ScheduleRecord {
        try await writeTransaction { tx in
            guard
                let row = try await tx.sql.raw(
                    """
                    INSERT INTO scheduled_calls (user_id, phone_number, scenario, scheduled_time, status, created_at)
                    VALUES (\(bind: userID), \(bind: phoneNumber), \(bind: scenario), \(bind: time.epochMillis),
                      \(bind: ScheduledCallStatus.scheduled.rawValue), \(bind: now.epochMillis))
                    RETURNING id
                    """
                ).first()
            else { throw ChorusStoreError.missingRow("scheduled_calls") }
            let id = try row.int("id")
            let jobID = try await tx.jobs.enqueueJob(kind: JobKind.scheduledCall, payload: String(id), runAt: time, now: now)
            try await tx.sql.raw("UPDATE scheduled_calls SET job_id = \(bind: Int64(jobID)) WHERE id = \(bind: Int64(id))").run()
            return ScheduleRecord(
                id: id, userID: userID, phoneNumber: phoneNumber, scenario: scenario, scheduledTime: time, state: .scheduled, jobID: jobID,
                callID: nil, failureReason: nil
            )
        }
    }

    func schedule(id: Int) async throws -> ScheduleRecord? {
        try await reader.raw("SELECT * FROM scheduled_calls WHERE id = \(bind: Int64(id))").first().map(Self.scheduleRecord)
    }

    /// The user's scheduled calls with the sid of the call placed for each, soonest first.
    func schedules(userID: String) async throws -> [(ScheduleRecord, String?)] {
        try await reader.raw(
            """
            SELECT s.*, c.call_sid AS placed_call_sid FROM scheduled_calls s LEFT JOIN calls c ON c.id = s.call_id
            WHERE s.user_id = \(bind: userID) ORDER BY s.scheduled_time ASC, s.id ASC
            """
        ).all().map { (try Self.scheduleRecord($0), try $0.optionalString("placed_call_sid")) }
    }

    /// Cancels a schedule that has not started: one compare-and-set on the schedule and one on its job.
    /// - Returns: the schedule after the attempt, or `nil` if the user has no such schedule.
    func cancelSchedule(id: Int, userID: String, now: Date) async throws -> (record: ScheduleRecord, cancelled: Bool)? {
        try await writeTransaction { tx in
            let cancelled = try await tx.sql.raw(
                """
                UPDATE scheduled_calls SET status = \(bind: ScheduledCallStatus.cancelled.rawValue)
                WHERE id = \(bind: Int64(id)) AND user_id = \(bind: userID) AND status = \(bind: ScheduledCallStatus.scheduled.rawValue)
                RETURNING job_id
                """
            ).first()
            if let cancelled, let jobID = try cancelled.optionalInt("job_id") {
                try await tx.jobs.cancelJob(id: jobID, now: now)
            }
            guard
                let record = try await tx.sql.raw(
                    """
                    SELECT * FROM scheduled_calls WHERE id = \(bind: Int64(id)) AND user_id = \(bind: userID)
                    """
                ).first().map(Self.scheduleRecord)
            else { return nil }
            return (record, cancelled != nil)
        }
    }

    /// Moves a schedule from `from` to `to` (compare-and-set). Returns whether it moved.
    func transitionSchedule(id: Int, from: ScheduledCallStatus, to: ScheduledCallStatus, callID: Int? = nil, reason: String? = nil) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE scheduled_calls SET status = \(bind: to.rawValue), call_id = COALESCE(\(bind: callID.map(Int64.init)), call_id),
              failure_reason = COALESCE(\(bind: reason), failure_reason)
            WHERE id = \(bind: Int64(id)) AND status = \(bind: from.rawValue)
            RETURNING id
            """
        ).first() != nil
    }

    static func scheduleRecord(_ row: any SQLRow) throws -> ScheduleRecord {
        ScheduleRecord(
            id: try row.int("id"), userID: try row.string("user_id"), phoneNumber: try row.string("phone_number"),
            scenario: try row.string("scenario"), scheduledTime: try row.date("scheduled_time"),
            state: ScheduledCallStatus(known: try row.string("status")) ?? .failed, jobID: try row.optionalInt("job_id"),
            callID: try row.optionalInt("call_id"), failureReason: try row.optionalString("failure_reason")
        )
    }
}
