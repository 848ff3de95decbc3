import ChorusAPI
import ChorusCore
import Foundation
import SQLKit

/// What the media bridge learned about a call, saved once when it ends.
struct BridgeOutcome: Sendable, Equatable {
    var reason: EndedReason
    var firstAudioMilliseconds: Int?
    var turnLatencyP50Milliseconds: Int?
    var turnLatencyP90Milliseconds: Int?
    var turns: Int
    var bargeIns: Int
    var transcript: [MediaStreamBridgeMachine.TranscriptLine]
}

/// A saved transcript line.
struct TranscriptLineRecord: Sendable, Equatable {
    var speaker: String
    var text: String
    var atMilliseconds: Int
    var interrupted: Bool
}

/// The live call bridge: the media stream token and bridge outcome on `calls`, the transcript (`call_transcript_lines`) and
/// the shared dial pacing (`dial_pacing`).
///
/// Reached as `store.callBridge`, or `tx.callBridge` inside ``ChorusStore/writeTransaction(_:)``.
struct CallBridgeStore: StoreArea {
    let base: ChorusStore

    /// Stores the hash of the one-time token the call's TwiML hands to its media stream, and notes the answer (Twilio
    /// fetches TwiML when the callee picks up) if the `answered` callback has not. A call whose stream has started or
    /// that has ended gets none (`false`).
    func issueStreamToken(callID: Int, callSid: String, tokenHash: String, now: Date) async throws -> Bool {
        try await writeTransaction { tx in
            try await tx.sql.raw(
                """
                UPDATE calls SET stream_token_hash = \(bind: tokenHash), updated_at = \(bind: now.epochMillis),
                  answered_at = COALESCE(answered_at, \(bind: now.epochMillis))
                WHERE id = \(bind: Int64(callID)) AND (call_sid IS NULL OR call_sid = \(bind: callSid))
                  AND stream_started_at IS NULL AND status_rank < 4
                RETURNING id
                """
            ).first() != nil
        }
    }

    /// Uses a stream token: the call it belongs to, once. A replayed or unknown token, or a call that has ended,
    /// gives `nil` (compare-and-set on `stream_started_at`).
    func claimStream(tokenHash: String, now: Date) async throws -> CallRecord? {
        try await writeTransaction { tx in
            try await tx.sql.raw(
                """
                UPDATE calls SET stream_started_at = \(bind: now.epochMillis), updated_at = \(bind: now.epochMillis)
                WHERE stream_token_hash = \(bind: tokenHash) AND stream_started_at IS NULL AND status_rank < 4
                RETURNING *
                """
            ).first().map(CallStore.callRecord)
        }
    }

    /// Saves the bridge's outcome and transcript. A call already reported `completed` takes the bridge's reason
    /// (it knows whether the callee hung up or the limit was reached); the status callback does the same if it comes
    /// later. The transcript is purged after `retention`.
    func recordBridgeOutcome(callID: Int, outcome: BridgeOutcome, retention: TimeInterval, now: Date) async throws {
        try await writeTransaction { tx in
            let applied = try await tx.sql.raw(
                """
                UPDATE calls SET bridge_reason = \(bind: outcome.reason.rawValue),
                  ended_reason = CASE WHEN status = 'completed' THEN \(bind: outcome.reason.rawValue) ELSE ended_reason END,
                  first_audio_ms = \(bind: outcome.firstAudioMilliseconds.map(Int64.init)),
                  turn_latency_p50_ms = \(bind: outcome.turnLatencyP50Milliseconds.map(Int64.init)),
                  turn_latency_p90_ms = \(bind: outcome.turnLatencyP90Milliseconds.map(Int64.init)),
                  turns = \(bind: Int64(outcome.turns)), barge_ins = \(bind: Int64(outcome.bargeIns)),
                  updated_at = \(bind: now.epochMillis)
                WHERE id = \(bind: Int64(callID)) AND bridge_reason IS NULL
                RETURNING id
                """
            ).first() != nil
            // A machine or fax answered: no conversation, so the call goes back to the allowance — once, with the same
            // compare-and-set as an unanswered call's refund.
            if applied, outcome.reason.releasesCharge,
                let row = try await tx.sql.raw(
                    """
                    UPDATE calls SET charge_state = \(bind: ChargeState.refunded.rawValue)
                    WHERE id = \(bind: Int64(callID)) AND charge_state = \(bind: ChargeState.charged.rawValue)
                    RETURNING user_id, bucket_key
                    """
                ).first(), let key = try row.optionalString("bucket_key")
            {
                try await tx.usage.returnCall(toBucket: key, userID: try row.string("user_id"))
            }
            for (position, line) in outcome.transcript.enumerated() {
                try await tx.sql.raw(
                    """
                    INSERT INTO call_transcript_lines (call_id, position, speaker, text, at_ms, interrupted)
                    VALUES (\(bind: Int64(callID)), \(bind: Int64(position)), \(bind: line.speaker.rawValue), \(bind: line.text),
                      \(bind: Int64(line.atMilliseconds)), \(bind: line.interrupted))
                    """
                ).run()
            }
            if !outcome.transcript.isEmpty {
                try await tx.jobs.enqueueJob(
                    kind: JobKind.purgeTranscript, payload: String(callID), runAt: now.addingTimeInterval(retention), now: now)
            }
        }
    }

    /// The call's transcript, in order.
    func transcript(callID: Int) async throws -> [TranscriptLineRecord] {
        try await reader.raw(
            """
            SELECT speaker, text, at_ms, interrupted FROM call_transcript_lines WHERE call_id = \(bind: Int64(callID))
            ORDER BY position
            """
        ).all().map { row in
            TranscriptLineRecord(
                speaker: try row.string("speaker"), text: try row.string("text"), atMilliseconds: try row.int("at_ms"),
                interrupted: try row.decode(column: "interrupted", as: Bool.self))
        }
    }

    /// Deletes the call's transcript (the user's request, or retention) and notes when.
    func deleteTranscript(callID: Int, now: Date) async throws {
        try await writeTransaction { tx in
            try await tx.sql.raw("DELETE FROM call_transcript_lines WHERE call_id = \(bind: Int64(callID))").run()
            try await tx.sql.raw(
                """
                UPDATE calls SET transcript_deleted_at = \(bind: now.epochMillis)
                WHERE id = \(bind: Int64(callID)) AND transcript_deleted_at IS NULL
                """
            ).run()
        }
    }

    /// Reserves the next moment an outbound call may be placed, `interval` after the previous one, across every
    /// instance sharing the database (one compare-and-set statement). Returns when to dial.
    func reserveDialSlot(interval: TimeInterval, now: Date) async throws -> Date {
        let step = Int64((interval * 1000).rounded(.up))
        let row = try await writeTransaction { tx in
            try await tx.sql.raw(
                """
                UPDATE dial_pacing SET next_slot = CASE WHEN next_slot > \(bind: now.epochMillis) THEN next_slot + \(bind: step)
                  ELSE \(bind: now.epochMillis + step) END
                WHERE id = 1 RETURNING next_slot
                """
            ).first()
        }
        guard let row else { throw ChorusStoreError.missingRow("dial_pacing") }
        return Date(epochMillis: try row.decode(column: "next_slot", as: Int64.self) - step)
    }
}
