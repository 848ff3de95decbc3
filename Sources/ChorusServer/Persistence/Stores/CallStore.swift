import ChorusAPI
import ChorusCore
import Foundation
import SQLKit

/// How a call is paid for.
enum ChargeState: String, Sendable {
    /// One call was taken from `bucket_key`.
    case charged
    /// Charged, then given back (unanswered).
    case refunded
    /// Charged, then given back because the provider refused to place it.
    case released
    /// A development test call, never charged.
    case free
}

struct CallRecord: Sendable, Equatable {
    var id: Int
    var userID: String
    var callSid: String?
    var phoneNumber: String
    var scenario: String
    var status: CallStatus
    var chargeState: ChargeState
    var bucketKey: String?
    var durationLimit: Int
    var durationSeconds: Int?
    var endedReason: String?
    var scheduleID: Int?
    var createdAt: Date
    var answeredAt: Date? = nil
    var endedAt: Date? = nil
    var streamStartedAt: Date? = nil
    /// Why the media bridge ended the call, when it did.
    var bridgeReason: EndedReason? = nil
    var firstAudioMilliseconds: Int? = nil
    var turnLatencyP50Milliseconds: Int? = nil
    var turnLatencyP90Milliseconds: Int? = nil
    var turns: Int? = nil
    var bargeIns: Int? = nil
    var transcriptDeletedAt: Date? = nil

    var historyItem: CallHistoryItem? {
        guard let callSid else { return nil }
        return CallHistoryItem(
            id: id, phoneNumber: phoneNumber, scenario: scenario, status: status, createdAt: createdAt, callSid: callSid,
            durationSeconds: durationSeconds, endedReason: endedReason.map(EndedReason.init(rawValue:)), durationLimit: durationLimit
        )
    }
}

/// A new call to record.
struct NewCall: Sendable {
    var userID: String
    var phoneNumber: String
    var scenario: String
    var durationLimit: Int
    var scheduleID: Int?
}

/// What a status callback changed.
struct CallStatusUpdate: Sendable, Equatable {
    var applied: Bool
    var refunded: Bool
    var call: CallRecord?
}

/// Calls (`calls`): reserving one against quota, its status from the telephony provider, history and lookups.
///
/// Reached as `store.calls`, or `tx.calls` inside ``ChorusStore/writeTransaction(_:)``.
struct CallStore: StoreArea {
    let base: ChorusStore

    /// Charges `bucket` and records the call in one transaction. `nil` when the bucket was emptied meanwhile.
    ///
    /// A call from the trial bucket also counts against `trialCallsPerDay` (all accounts, per UTC day) in the same
    /// transaction; when that cap is reached nothing is charged and ``TrialCallsExhausted`` is thrown.
    func reserveCall(_ call: NewCall, bucket: QuotaBucket?, now: Date, trialCallsPerDay: Int? = nil) async throws -> CallRecord? {
        try await writeTransaction { tx in
            if let bucket {
                guard try await tx.usage.takeCall(from: bucket, userID: call.userID, now: now) else { return nil }
                if bucket.kind == .trial, let cap = trialCallsPerDay,
                    try await tx.usageLimits.chargeAdmission([AdmissionCharge(scope: UsageLimitStore.trialCallsScope, period: UsageLimitStore.admissionDay(now), limit: cap)]) != nil
                {
                    throw TrialCallsExhausted()  // rolls the bucket's charge back
                }
            }
            let state: ChargeState = bucket == nil ? .free : .charged
            let row = try await tx.sql.raw(
                """
                INSERT INTO calls (user_id, phone_number, scenario, status, status_rank, bucket_key, charge_state, duration_limit,
                  schedule_id, created_at, updated_at)
                VALUES (\(bind: call.userID), \(bind: call.phoneNumber), \(bind: call.scenario), \(bind: CallStatus.initiated.rawValue), 0,
                  \(bind: bucket?.key), \(bind: state.rawValue), \(bind: Int64(call.durationLimit)), \(bind: call.scheduleID.map(Int64.init)),
                  \(bind: now.epochMillis), \(bind: now.epochMillis))
                RETURNING id
                """
            ).first()
            guard let row else { throw ChorusStoreError.missingRow("calls") }
            let id = try row.int("id")
            // If the final status callback never arrives, this job asks the provider once the call must be over.
            let mustBeOver = CallTiming.mustBeOver(placedAt: now, durationLimit: call.durationLimit)
            try await tx.jobs.enqueueJob(kind: JobKind.reconcileCall, payload: String(id), runAt: mustBeOver, now: now, maxAttempts: 8)
            return CallRecord(
                id: id, userID: call.userID, callSid: nil, phoneNumber: call.phoneNumber, scenario: call.scenario,
                status: .initiated, chargeState: state, bucketKey: bucket?.key, durationLimit: call.durationLimit, durationSeconds: nil,
                endedReason: nil, scheduleID: call.scheduleID, createdAt: now
            )
        }
    }

    func attachSid(_ sid: String, toCall id: Int, now: Date) async throws {
        try await sql.raw(
            """
            UPDATE calls SET call_sid = \(bind: sid), updated_at = \(bind: now.epochMillis) WHERE id = \(bind: Int64(id)) AND call_sid IS NULL
            """
        ).run()
    }

    /// The provider refused to place the call: mark it failed and give the charge back, once. The call no longer
    /// holds its schedule, so a retried scheduled call can be placed again. `true` when this ended the call.
    @discardableResult
    func releaseCall(id: Int, now: Date) async throws -> Bool {
        try await writeTransaction { tx in
            let row = try await tx.sql.raw(
                """
                UPDATE calls SET status = \(bind: CallStatus.failed.rawValue), status_rank = 4,
                  ended_reason = \(bind: EndedReason.failedToStart.rawValue), ended_at = \(bind: now.epochMillis),
                  updated_at = \(bind: now.epochMillis), schedule_id = NULL,
                  charge_state = CASE WHEN charge_state = 'charged' THEN 'released' ELSE charge_state END
                WHERE id = \(bind: Int64(id)) AND status_rank < 4
                RETURNING user_id, bucket_key, charge_state, created_at
                """
            ).first()
            if let row, try row.string("charge_state") == ChargeState.released.rawValue, let key = try row.optionalString("bucket_key") {
                try await tx.usage.returnCall(toBucket: key, userID: try row.string("user_id"))
                // A trial call that never reached the phone network does not count against the day's trial calls.
                if key == QuotaBucket.trialKey {
                    try await tx.usageLimits.refundAdmission(scope: UsageLimitStore.trialCallsScope, period: UsageLimitStore.admissionDay(try row.date("created_at")))
                }
            }
            // A call that never reached the phone network spends nothing: its Calls budget reservation is given back
            // (issue 18), whichever path released it (placement, an abandoned request, reconciliation).
            if row != nil { try await tx.metering.settleCallSpend(callID: id) }
            return row != nil
        }
    }

    /// Releases (fails, gives the charge back) the user's calls created before `createdBefore` that never got a sid:
    /// no request runs that long, so the one that charged them died before reaching the provider. Returns how many
    /// this ended.
    func releaseAbandonedCalls(userID: String, createdBefore: Date, now: Date) async throws -> Int {
        let abandoned = try await sql.raw(
            """
            SELECT id FROM calls WHERE user_id = \(bind: userID) AND call_sid IS NULL AND status_rank < 4
              AND created_at < \(bind: createdBefore.epochMillis)
            """
        ).all().map { try $0.int("id") }
        var released = 0
        for id in abandoned {
            if try await releaseCall(id: id, now: now) { released += 1 }
        }
        return released
    }

    /// Applies a provider status report: statuses only move forward, so duplicates and late reports change nothing.
    /// An unanswered end refunds the charge in the same transaction.
    func applyCallStatus(
        callID: Int?, callSid: String, status: CallStatus, durationSeconds: Int?, now: Date
    ) async throws -> CallStatusUpdate {
        try await writeTransaction { tx in
            let selector: SQLQueryString =
                callID.map { "id = \(bind: Int64($0)) AND (call_sid IS NULL OR call_sid = \(bind: callSid))" }
                ?? "call_sid = \(bind: callSid)"
            guard let current = try await tx.sql.raw("SELECT * FROM calls WHERE \(selector)").first().map(Self.callRecord) else {
                return CallStatusUpdate(applied: false, refunded: false, call: nil)
            }
            guard CallLifecycle.accepts(status, after: current.status) else {
                return CallStatusUpdate(applied: false, refunded: false, call: current)
            }
            // Twilio's figure, clamped to a day (its longest call): two Int.max durations overflowed the usage sums.
            let duration = status.isTerminal ? min(max(0, durationSeconds ?? 0), 86_400) : nil
            let reason = CallLifecycle.endedReason(
                for: status, durationSeconds: duration ?? 0, durationLimit: current.durationLimit, bridgeReason: current.bridgeReason)
            // The bridge may record its reason concurrently: the statement re-reads `bridge_reason` from the row it updates.
            let reasonSQL: SQLQueryString =
                status == .completed
                ? "CASE WHEN bridge_reason IS NOT NULL THEN bridge_reason ELSE \(bind: reason?.rawValue) END"
                : "\(bind: reason?.rawValue)"
            let answered: SQLQueryString = status == .inProgress ? "answered_at = COALESCE(answered_at, \(bind: now.epochMillis))," : ""
            let ended: SQLQueryString = status.isTerminal ? "ended_at = \(bind: now.epochMillis)," : ""
            // The charge is not written from what was read above: a console refund may commit in between (PostgreSQL's
            // READ COMMITTED), and writing the state read back would refund twice or undo the refund.
            let updated = try await tx.sql.raw(
                """
                UPDATE calls SET status = \(bind: status.rawValue), status_rank = \(bind: Int64(status.rank)), \(answered) \(ended)
                  call_sid = \(bind: callSid), duration_seconds = \(bind: duration.map(Int64.init)),
                  ended_reason = \(reasonSQL), updated_at = \(bind: now.epochMillis)
                WHERE id = \(bind: Int64(current.id)) AND status_rank < \(bind: Int64(status.rank))
                RETURNING charge_state
                """
            ).first()
            guard let updated else { return CallStatusUpdate(applied: false, refunded: false, call: current) }
            var call = current
            call.chargeState = ChargeState(rawValue: try updated.string("charge_state")) ?? current.chargeState
            // An unanswered end gives the charge back with a compare-and-set of its own: of this and any concurrent
            // refund, exactly one moves `charged → refunded` and returns the call to its bucket.
            var refunded = false
            if status.isUnanswered,
                let row = try await tx.sql.raw(
                    """
                    UPDATE calls SET charge_state = \(bind: ChargeState.refunded.rawValue)
                    WHERE id = \(bind: Int64(current.id)) AND charge_state = \(bind: ChargeState.charged.rawValue)
                    RETURNING user_id, bucket_key
                    """
                ).first()
            {
                refunded = true
                call.chargeState = .refunded
                if let key = try row.optionalString("bucket_key") { try await tx.usage.returnCall(toBucket: key, userID: try row.string("user_id")) }
            }
            call.status = status
            call.callSid = callSid
            call.durationSeconds = duration
            call.endedReason = reason?.rawValue
            return CallStatusUpdate(applied: true, refunded: refunded, call: call)
        }
    }

    func call(id: Int) async throws -> CallRecord? {
        try await reader.raw("SELECT * FROM calls WHERE id = \(bind: Int64(id))").first().map(Self.callRecord)
    }

    func call(sid: String, userID: String) async throws -> CallRecord? {
        try await reader.raw("SELECT * FROM calls WHERE call_sid = \(bind: sid) AND user_id = \(bind: userID)").first().map(Self.callRecord)
    }

    func call(scheduleID: Int) async throws -> CallRecord? {
        try await reader.raw("SELECT * FROM calls WHERE schedule_id = \(bind: Int64(scheduleID))").first().map(Self.callRecord)
    }

    /// How many calls are not over yet, by status, of those created since `since` (`/metrics`).
    func inProgressCounts(since: Date) async throws -> [(status: CallStatus, count: Int)] {
        try await reader.raw(
            """
            SELECT status, COUNT(*) AS n FROM calls WHERE status_rank < 4 AND created_at >= \(bind: since.epochMillis) GROUP BY status
            """
        ).all().map { (CallStatus(rawValue: try $0.string("status")), try $0.int("n")) }
    }

    /// Calls not over yet, created since `since` (older ones are stale: their final callback was lost), oldest
    /// first, at most 500.
    func liveCalls(since: Date) async throws -> [CallRecord] {
        try await reader.raw(
            """
            SELECT * FROM calls WHERE status_rank < 4 AND created_at >= \(bind: since.epochMillis) ORDER BY created_at, id LIMIT 500
            """
        ).all().map(Self.callRecord)
    }

    /// The user's placed calls, newest first, and how many there are in all.
    func callHistory(userID: String, limit: Int) async throws -> (calls: [CallRecord], total: Int) {
        let rows = try await reader.raw(
            """
            SELECT * FROM calls WHERE user_id = \(bind: userID) AND call_sid IS NOT NULL
            ORDER BY created_at DESC, id DESC LIMIT \(bind: Int64(limit))
            """
        ).all()
        let total =
            try await reader.raw("SELECT COUNT(*) AS total FROM calls WHERE user_id = \(bind: userID) AND call_sid IS NOT NULL")
            .first()?.int("total") ?? 0
        return (try rows.map(Self.callRecord), total)
    }

    static func callRecord(_ row: any SQLRow) throws -> CallRecord {
        CallRecord(
            id: try row.int("id"), userID: try row.string("user_id"), callSid: try row.optionalString("call_sid"),
            phoneNumber: try row.string("phone_number"), scenario: try row.string("scenario"),
            status: CallStatus(known: try row.string("status")) ?? .failed,
            chargeState: ChargeState(rawValue: try row.string("charge_state")) ?? .charged, bucketKey: try row.optionalString("bucket_key"),
            durationLimit: try row.int("duration_limit"), durationSeconds: try row.optionalInt("duration_seconds"),
            endedReason: try row.optionalString("ended_reason"), scheduleID: try row.optionalInt("schedule_id"),
            createdAt: try row.date("created_at"), answeredAt: try row.optionalDate("answered_at"), endedAt: try row.optionalDate("ended_at"),
            streamStartedAt: try row.optionalDate("stream_started_at"),
            bridgeReason: try row.optionalString("bridge_reason").flatMap(EndedReason.init(known:)),
            firstAudioMilliseconds: try row.optionalInt("first_audio_ms"), turnLatencyP50Milliseconds: try row.optionalInt("turn_latency_p50_ms"),
            turnLatencyP90Milliseconds: try row.optionalInt("turn_latency_p90_ms"), turns: try row.optionalInt("turns"),
            bargeIns: try row.optionalInt("barge_ins"), transcriptDeletedAt: try row.optionalDate("transcript_deleted_at")
        )
    }
}

enum ChorusStoreError: Error {
    case missingRow(String)
    /// A compare-and-set kept losing to concurrent writers.
    case conflict(String)
}
