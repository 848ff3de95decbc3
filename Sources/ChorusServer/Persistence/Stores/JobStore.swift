import Foundation
import SQLKit

/// Kinds of durable jobs.
enum JobKind {
    static let scheduledCall = "scheduled_call"
    static let reconcileCall = "reconcile_call"
    static let purgeTranscript = "purge_transcript"
    static let applyAppStoreNotification = "apply_app_store_notification"
    static let transcribeMessageAudio = "transcribe_message_audio"
    static let conversationDigest = "conversation_digest"
    static let deleteProviderVoice = "delete_provider_voice"
    static let classifyMessageUrgency = "classify_message_urgency"
    static let storyText = "story_text"
    static let storyScenes = "story_scenes"
    static let storyNarration = "story_narration"
    static let storyIllustrations = "story_illustrations"

    /// Every kind above (`/metrics` shows each one's queue, 0 when empty; a test keeps it equal to the handlers' kinds).
    static let all = [
        scheduledCall, reconcileCall, purgeTranscript, applyAppStoreNotification, transcribeMessageAudio, conversationDigest,
        deleteProviderVoice, classifyMessageUrgency, storyText, storyScenes, storyNarration, storyIllustrations,
    ]
}

/// A job claimed by one worker for a lease.
struct ClaimedJob: Sendable, Equatable {
    var id: Int
    var kind: String
    var payload: String
    var attempts: Int
    var maxAttempts: Int
}

/// One job kind's queue now (`/metrics`).
struct JobQueueFigures: Sendable, Equatable {
    var kind: String
    /// Pending and due.
    var due: Int
    /// Pending for later (a scheduled call, a retry's backoff).
    var scheduled: Int
    var running: Int
    /// When the oldest due job became due.
    var oldestDue: Date?
}

/// The durable job queue (`jobs`): enqueue, lease, complete, fail, cancel.
///
/// Reached as `store.jobs`, or `tx.jobs` inside ``ChorusStore/writeTransaction(_:)``.
struct JobStore: StoreArea {
    let base: ChorusStore

    @discardableResult
    func enqueueJob(kind: String, payload: String, runAt: Date, now: Date, maxAttempts: Int = 5) async throws -> Int {
        guard
            let row = try await sql.raw(
                """
                INSERT INTO jobs (kind, payload, status, run_at, attempts, max_attempts, created_at, updated_at)
                VALUES (\(bind: kind), \(bind: payload), 'pending', \(bind: runAt.epochMillis), 0, \(bind: Int64(maxAttempts)),
                  \(bind: now.epochMillis), \(bind: now.epochMillis))
                RETURNING id
                """
            ).first()
        else { throw ChorusStoreError.missingRow("jobs") }
        return try row.int("id")
    }

    /// Claims the next due job (or one whose lease expired) for `owner` until `leaseUntil`.
    ///
    /// One statement: on PostgreSQL the candidate row is locked with `FOR UPDATE SKIP LOCKED`, so instances never
    /// wait on each other; on SQLite the statement runs under the database's single write lock. The status check in
    /// the outer `WHERE` makes the claim a compare-and-set either way.
    func claimJob(owner: String, now: Date, leaseUntil: Date) async throws -> ClaimedJob? {
        let lock: SQLQueryString = dialect == .postgres ? "FOR UPDATE SKIP LOCKED" : ""
        let due: SQLQueryString = """
            ((status = 'pending' AND run_at <= \(bind: now.epochMillis)) OR (status = 'running' AND lease_until < \(bind: now.epochMillis)))
            """
        let row = try await sql.raw(
            """
            UPDATE jobs SET status = 'running', lease_owner = \(bind: owner), lease_until = \(bind: leaseUntil.epochMillis),
              attempts = attempts + 1, updated_at = \(bind: now.epochMillis)
            WHERE id = (SELECT id FROM jobs WHERE \(due) ORDER BY run_at, id LIMIT 1 \(lock)) AND \(due)
            RETURNING id, kind, payload, attempts, max_attempts
            """
        ).first()
        guard let row else { return nil }
        return ClaimedJob(
            id: try row.int("id"), kind: try row.string("kind"), payload: try row.string("payload"), attempts: try row.int("attempts"),
            maxAttempts: try row.int("max_attempts")
        )
    }

    /// A finished job is deleted: the effects are recorded where they belong (calls, schedules).
    func completeJob(id: Int, owner: String) async throws {
        try await sql.raw(
            """
            DELETE FROM jobs WHERE id = \(bind: Int64(id)) AND lease_owner = \(bind: owner) AND status = 'running'
            """
        ).run()
    }

    /// Puts the job back for a retry at `retryAt`, or marks it failed when it has no attempts left.
    func failJob(id: Int, owner: String, error: String, retryAt: Date?, now: Date) async throws {
        let status = retryAt == nil ? "failed" : "pending"
        try await sql.raw(
            """
            UPDATE jobs SET status = \(bind: status), run_at = COALESCE(\(bind: retryAt?.epochMillis), run_at), lease_owner = NULL,
              lease_until = NULL, last_error = \(bind: String(error.prefix(500))), updated_at = \(bind: now.epochMillis)
            WHERE id = \(bind: Int64(id)) AND lease_owner = \(bind: owner) AND status = 'running'
            """
        ).run()
    }

    /// Keeps a running job's lease (the worker is alive); a no-op when the job is no longer this owner's.
    func extendJobLease(id: Int, owner: String, until: Date) async throws {
        try await sql.raw(
            """
            UPDATE jobs SET lease_until = \(bind: until.epochMillis)
            WHERE id = \(bind: Int64(id)) AND lease_owner = \(bind: owner) AND status = 'running'
            """
        ).run()
    }

    /// The queue per kind: one aggregate over the pending and running jobs (`jobs_due` index), one row per kind.
    func queueFigures(now: Date) async throws -> [JobQueueFigures] {
        let due: SQLQueryString = "status = 'pending' AND run_at <= \(bind: now.epochMillis)"
        return try await reader.raw(
            """
            SELECT kind, COUNT(CASE WHEN \(due) THEN 1 END) AS due,
              COUNT(CASE WHEN status = 'pending' AND run_at > \(bind: now.epochMillis) THEN 1 END) AS scheduled,
              COUNT(CASE WHEN status = 'running' THEN 1 END) AS running, MIN(CASE WHEN \(due) THEN run_at END) AS oldest_due
            FROM jobs WHERE status IN ('pending', 'running') GROUP BY kind
            """
        ).all().map { row in
            JobQueueFigures(
                kind: try row.string("kind"), due: try row.int("due"), scheduled: try row.int("scheduled"), running: try row.int("running"),
                oldestDue: try row.optionalDate("oldest_due"))
        }
    }

    func cancelJob(id: Int, now: Date) async throws {
        try await sql.raw(
            """
            UPDATE jobs SET status = 'cancelled', updated_at = \(bind: now.epochMillis) WHERE id = \(bind: Int64(id)) AND status = 'pending'
            """
        ).run()
    }
}
