import Foundation
import SQLKit

/// A signed-in operator.
struct ConsoleSession: Sendable, Equatable {
    var userID: String
    var email: String
    var csrfToken: String
    var expiresAt: Date
}

/// One audited operator action.
struct AuditRecord: Sendable, Equatable {
    var id: Int
    var actorEmail: String
    var action: String
    var target: String
    var detail: String?
    var createdAt: Date
}

/// The operator console: admin roles, console sessions, the audit log, the overview figures and operator actions.
///
/// Reached as `store.console`, or `tx.console` inside ``ChorusStore/writeTransaction(_:)``.
struct ConsoleStore: StoreArea {
    let base: ChorusStore

    /// Sets the role of the account with `email`; `false` when there is none.
    func setRole(email: String, role: String) async throws -> Bool {
        try await sql.raw("UPDATE users SET role = \(bind: role) WHERE email = \(bind: email) RETURNING id").first() != nil
    }

    func role(userID: String) async throws -> String? {
        try await sql.raw("SELECT role FROM users WHERE id = \(bind: userID)").first().map { try $0.string("role") }
    }

    func createConsoleSession(tokenHash: String, userID: String, csrfToken: String, now: Date, expiresAt: Date) async throws {
        try await sql.raw(
            """
            INSERT INTO console_sessions (token_hash, user_id, csrf_token, created_at, expires_at)
            VALUES (\(bind: tokenHash), \(bind: userID), \(bind: csrfToken), \(bind: now.epochMillis), \(bind: expiresAt.epochMillis))
            """
        ).run()
    }

    /// The unexpired session of `tokenHash` whose account is still an admin.
    func consoleSession(tokenHash: String, now: Date) async throws -> (session: ConsoleSession, admin: Bool)? {
        guard
            let row = try await sql.raw(
                """
                SELECT s.user_id, s.csrf_token, s.expires_at, u.email, u.role FROM console_sessions s JOIN users u ON u.id = s.user_id
                WHERE s.token_hash = \(bind: tokenHash) AND s.expires_at > \(bind: now.epochMillis)
                """
            ).first()
        else { return nil }
        let session = ConsoleSession(
            userID: try row.string("user_id"), email: try row.string("email"), csrfToken: try row.string("csrf_token"),
            expiresAt: try row.date("expires_at"))
        return (session, try row.string("role") == "admin")
    }

    func deleteConsoleSession(tokenHash: String) async throws {
        try await sql.raw("DELETE FROM console_sessions WHERE token_hash = \(bind: tokenHash)").run()
    }

    /// Ends every session of the account: its refresh-token families (the app must sign in again once its access
    /// token expires) and its console sessions. Returns how many app sessions were revoked.
    func revokeAllSessions(userID: String, now: Date) async throws -> Int {
        try await writeTransaction { store in
            let revoked = try await store.sql.raw(
                """
                UPDATE refresh_families SET revoked_at = \(bind: now.epochMillis) WHERE user_id = \(bind: userID) AND revoked_at IS NULL
                RETURNING id
                """
            ).all().count
            try await store.sql.raw("DELETE FROM console_sessions WHERE user_id = \(bind: userID)").run()
            return revoked
        }
    }

    func recordAudit(actor: ConsoleSession, action: String, target: String, detail: String?, now: Date) async throws {
        try await sql.raw(
            """
            INSERT INTO console_audit (actor_user_id, actor_email, action, target, detail, created_at)
            VALUES (\(bind: actor.userID), \(bind: actor.email), \(bind: action), \(bind: target), \(bind: detail), \(bind: now.epochMillis))
            """
        ).run()
    }

    func auditLog(limit: Int) async throws -> [AuditRecord] {
        try await reader.raw("SELECT * FROM console_audit ORDER BY id DESC LIMIT \(bind: Int64(limit))").all().map { row in
            AuditRecord(
                id: try row.int("id"), actorEmail: try row.string("actor_email"), action: try row.string("action"), target: try row.string("target"),
                detail: try row.optionalString("detail"), createdAt: try row.date("created_at"))
        }
    }
}

/// The raw figures of the console overview (the controller adds plans and budgets from configuration).
struct ConsoleFigures: Sendable {
    var callsInProgress = 0
    var callsToday = 0
    var answeredToday = 0
    var endedToday = 0
    var endedReasons: [(String, Int)] = []
    var averageDuration: Double?
    var averageLimit: Double?
    var callsPerHour: [Int64: Int] = [:]
    var users = 0
    var jobs: [String: Int] = [:]
    var failedJobsByKind: [(String, Int)] = []
    var notifications: [(String, Int)] = []
    var spendPerDay: [String: [String: Int64]] = [:]
}

extension ConsoleStore {
    /// Counts for the console: calls since `dayStart` and per hour since `hoursSince`, accounts,
    /// the job queue, App Store notifications by outcome, and each feature's spend per day since `spendSince`.
    func consoleFigures(now: Date, dayStart: Date, hoursSince: Date, spendSince: String) async throws -> ConsoleFigures {
        var figures = ConsoleFigures()
        let day = dayStart.epochMillis
        if let row = try await reader.raw(
            """
            SELECT COUNT(*) AS today,
              CAST(COALESCE(SUM(CASE WHEN answered_at IS NOT NULL THEN 1 ELSE 0 END), 0) AS BIGINT) AS answered,
              CAST(COALESCE(SUM(CASE WHEN status_rank >= 4 THEN 1 ELSE 0 END), 0) AS BIGINT) AS ended,
              CAST(AVG(CASE WHEN answered_at IS NOT NULL AND duration_seconds IS NOT NULL THEN duration_seconds * 1.0 END) AS DOUBLE PRECISION) AS avg_duration,
              CAST(AVG(CASE WHEN answered_at IS NOT NULL AND duration_seconds IS NOT NULL THEN duration_limit * 1.0 END) AS DOUBLE PRECISION) AS avg_limit
            FROM calls WHERE created_at >= \(bind: day)
            """
        ).first() {
            figures.callsToday = try row.int("today")
            figures.answeredToday = try row.int("answered")
            figures.endedToday = try row.int("ended")
            figures.averageDuration = try row.decode(column: "avg_duration", as: Double?.self)
            figures.averageLimit = try row.decode(column: "avg_limit", as: Double?.self)
        }
        figures.callsInProgress =
            try await reader.raw(
                "SELECT COUNT(*) AS n FROM calls WHERE status_rank < 4 AND created_at >= \(bind: hoursSince.epochMillis)"
            ).first()?.int("n") ?? 0
        figures.endedReasons = try await reader.raw(
            """
            SELECT COALESCE(ended_reason, status) AS reason, COUNT(*) AS n FROM calls WHERE created_at >= \(bind: day) AND status_rank >= 4
            GROUP BY COALESCE(ended_reason, status) ORDER BY n DESC
            """
        ).all().map { (try $0.string("reason"), try $0.int("n")) }
        for row in try await reader.raw(
            """
            SELECT created_at / 3600000 AS hour, COUNT(*) AS n FROM calls WHERE created_at >= \(bind: hoursSince.epochMillis)
            GROUP BY created_at / 3600000
            """
        ).all() {
            figures.callsPerHour[try row.decode(column: "hour", as: Int64.self)] = try row.int("n")
        }
        figures.users = try await reader.raw("SELECT COUNT(*) AS n FROM users").first()?.int("n") ?? 0
        for row in try await reader.raw("SELECT status, COUNT(*) AS n FROM jobs GROUP BY status").all() {
            figures.jobs[try row.string("status")] = try row.int("n")
        }
        figures.failedJobsByKind = try await reader.raw(
            "SELECT kind, COUNT(*) AS n FROM jobs WHERE status = 'failed' GROUP BY kind ORDER BY n DESC"
        ).all().map { (try $0.string("kind"), try $0.int("n")) }
        figures.notifications = try await reader.raw(
            "SELECT outcome, COUNT(*) AS n FROM app_store_notifications GROUP BY outcome ORDER BY outcome"
        ).all().map { (try $0.string("outcome"), try $0.int("n")) }
        for row in try await reader.raw(
            "SELECT feature, period, usd_micros FROM feature_spend WHERE period >= \(bind: spendSince) AND period LIKE 'day:%'"
        ).all() {
            figures.spendPerDay[try row.string("feature"), default: [:]][try row.string("period")] = try row.decode(
                column: "usd_micros", as: Int64.self)
        }
        return figures
    }
}

/// The outcome of an operator's refund of a call.
enum ConsoleRefund: Sendable, Equatable {
    case refunded(userID: String)
    /// The call is not charged (never charged, or refunded already).
    case notCharged
    case notFound
}

extension ConsoleStore {
    /// Gives a charged call back to the user's quota: the call's charge state moves `charged → refunded` with a
    /// compare-and-set and its bucket gets the call back, in one transaction (of concurrent refunds one wins).
    func refundCall(id: Int, now: Date) async throws -> ConsoleRefund {
        try await writeTransaction { tx in
            guard
                let row = try await tx.sql.raw(
                    """
                    UPDATE calls SET charge_state = 'refunded', updated_at = \(bind: now.epochMillis)
                    WHERE id = \(bind: Int64(id)) AND charge_state = 'charged' RETURNING user_id, bucket_key
                    """
                ).first()
            else {
                return try await tx.sql.raw("SELECT id FROM calls WHERE id = \(bind: Int64(id))").first() == nil ? .notFound : .notCharged
            }
            let userID = try row.string("user_id")
            if let key = try row.optionalString("bucket_key") { try await tx.usage.returnCall(toBucket: key, userID: userID) }
            return .refunded(userID: userID)
        }
    }

    /// Puts a failed job back in the queue, due now with its attempts reset; `false` when it is not failed.
    func rerunFailedJob(id: Int, now: Date) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE jobs SET status = 'pending', attempts = 0, run_at = \(bind: now.epochMillis), last_error = NULL, updated_at = \(bind: now.epochMillis)
            WHERE id = \(bind: Int64(id)) AND status = 'failed' RETURNING id
            """
        ).first() != nil
    }
}

extension ConsoleStore {
    /// An account's id, email, role and creation time (never its password hash).
    func consoleUser(id: String) async throws -> (email: String, role: String, createdAt: Date)? {
        try await reader.raw("SELECT email, role, created_at FROM users WHERE id = \(bind: id)").first().map {
            (try $0.string("email"), try $0.string("role"), try $0.date("created_at"))
        }
    }
}

/// A call found by a console look-up, with its owner.
struct ConsoleCallMatch: Sendable, Equatable {
    var id: Int
    var userID: String
    var userEmail: String
    var phoneNumber: String
    var status: String
    var createdAt: Date
}

extension ConsoleStore {
    /// The console's look-ups: an account by email or id, calls by number, SID or id, a story's owner.
    func consoleUser(email: String) async throws -> (id: String, email: String)? {
        try await reader.raw("SELECT id, email FROM users WHERE email = \(bind: email)").first().map { (try $0.string("id"), try $0.string("email")) }
    }

    func consoleUserEmail(id: String) async throws -> String? {
        try await reader.raw("SELECT email FROM users WHERE id = \(bind: id)").first().map { try $0.string("email") }
    }

    /// The 50 most recent calls to `phoneNumber` (as stored: E.164).
    func consoleCalls(phoneNumber: String) async throws -> [ConsoleCallMatch] {
        try await consoleCalls(where: "c.phone_number = \(bind: phoneNumber)")
    }

    func consoleCalls(callSid: String) async throws -> [ConsoleCallMatch] {
        try await consoleCalls(where: "c.call_sid = \(bind: callSid)")
    }

    func consoleCalls(id: Int64) async throws -> [ConsoleCallMatch] {
        try await consoleCalls(where: "c.id = \(bind: id)")
    }

    private func consoleCalls(where condition: SQLQueryString) async throws -> [ConsoleCallMatch] {
        try await reader.raw(
            """
            SELECT c.id, c.user_id, u.email, c.phone_number, c.status, c.created_at FROM calls c JOIN users u ON u.id = c.user_id
            WHERE \(condition) ORDER BY c.id DESC LIMIT 50
            """
        ).all().map { row in
            ConsoleCallMatch(
                id: try row.int("id"), userID: try row.string("user_id"), userEmail: try row.string("email"),
                phoneNumber: try row.string("phone_number"), status: try row.string("status"), createdAt: try row.date("created_at"))
        }
    }

    /// App sessions (refresh-token families) of the account not revoked.
    func activeSessionCount(userID: String) async throws -> Int {
        try await reader.raw("SELECT COUNT(*) AS n FROM refresh_families WHERE user_id = \(bind: userID) AND revoked_at IS NULL").first()?.int("n")
            ?? 0
    }

    /// The story's jobs that failed for good (a story's jobs carry its id, or `id#n` for one illustration).
    func failedJobs(storyID: String) async throws -> [(id: Int, kind: String, lastError: String?)] {
        try await reader.raw(
            """
            SELECT id, kind, last_error FROM jobs WHERE status = 'failed' AND (payload = \(bind: storyID) OR payload LIKE \(bind: storyID + "#%"))
            ORDER BY id
            """
        ).all().map { (try $0.int("id"), try $0.string("kind"), try $0.optionalString("last_error")) }
    }

    /// Every subscription that may give access at `now` (not revoked, not reported expired, and paid or in a grace
    /// period then), with its owner: the overview counts each user once, by the plan that decides their limits.
    func possiblyActiveSubscriptions(now: Date) async throws -> [SubscriptionRecord] {
        try await reader.raw(
            """
            SELECT * FROM app_store_subscriptions WHERE revoked_at IS NULL AND expired_at IS NULL
            AND (expires_at > \(bind: now.epochMillis) OR grace_expires_at > \(bind: now.epochMillis))
            """
        ).all().map(PurchaseStore.subscriptionRecord)
    }
}
