import ChorusCore
import Foundation
import SQLKit

/// A stored account.
struct UserRecord: Sendable, Equatable {
    var id: String
    var email: String
    var passwordHash: String
    var appType: String
    var createdAt: Date
}

/// The outcome of presenting a refresh token.
enum RefreshRotation: Sendable, Equatable {
    /// The token was valid and is now used; `userID`/`familyID` get the successor.
    case rotated(userID: String, familyID: String)
    /// The token was already used or revoked: its family is now revoked.
    case reused
    /// Unknown or expired.
    case invalid
}

/// Accounts and sign-in: users (`users`) and refresh-token families and tokens (`refresh_families`, `refresh_tokens`).
///
/// Reached as `store.accounts`, or `tx.accounts` inside ``ChorusStore/writeTransaction(_:)``.
struct AccountStore: StoreArea {
    let base: ChorusStore

    // MARK: Users

    /// Creates the user and its trial allowance. Returns `nil` when the email is taken.
    func createUser(_ user: UserRecord, trial: QuotaBucket) async throws -> UserRecord? {
        try await writeTransaction { tx in
            let inserted = try await tx.sql.raw(
                """
                INSERT INTO users (id, email, password_hash, app_type, created_at)
                VALUES (\(bind: user.id), \(bind: user.email), \(bind: user.passwordHash), \(bind: user.appType), \
                \(bind: user.createdAt.epochMillis))
                ON CONFLICT (email) DO NOTHING RETURNING id
                """
            ).first()
            guard inserted != nil else { return nil }
            try await tx.usage.insertBucket(trial, userID: user.id)
            return user
        }
    }

    func user(email: String) async throws -> UserRecord? {
        try await reader.raw("SELECT * FROM users WHERE email = \(bind: email)").first().map(Self.userRecord)
    }

    /// Whether an account with this id exists.
    func userExists(id: String) async throws -> Bool {
        try await sql.raw("SELECT id FROM users WHERE id = \(bind: id)").first() != nil
    }

    private static func userRecord(_ row: any SQLRow) throws -> UserRecord {
        UserRecord(
            id: try row.string("id"), email: try row.string("email"), passwordHash: try row.string("password_hash"),
            appType: try row.string("app_type"), createdAt: try row.date("created_at")
        )
    }

    // MARK: Refresh tokens

    /// Starts a new token family (one sign-in) and stores its first token.
    func startRefreshFamily(familyID: String, userID: String, tokenHash: String, now: Date, expiresAt: Date) async throws {
        try await writeTransaction { tx in
            try await tx.sql.raw(
                """
                INSERT INTO refresh_families (id, user_id, created_at) VALUES (\(bind: familyID), \(bind: userID), \(bind: now.epochMillis))
                """
            ).run()
            try await tx.accounts.insertRefreshToken(hash: tokenHash, userID: userID, familyID: familyID, now: now, expiresAt: expiresAt)
        }
    }

    func insertRefreshToken(hash: String, userID: String, familyID: String, now: Date, expiresAt: Date) async throws {
        try await sql.raw(
            """
            INSERT INTO refresh_tokens (token_hash, user_id, family_id, created_at, expires_at)
            VALUES (\(bind: hash), \(bind: userID), \(bind: familyID), \(bind: now.epochMillis), \(bind: expiresAt.epochMillis))
            """
        ).run()
    }

    /// Marks the token used with one compare-and-set (unused, unexpired, family not revoked).
    /// Presenting a token that was already used revokes its whole family, successors included.
    func rotateRefreshToken(hash: String, now: Date) async throws -> RefreshRotation {
        let claimed = try await sql.raw(
            """
            UPDATE refresh_tokens SET used_at = \(bind: now.epochMillis)
            WHERE token_hash = \(bind: hash) AND used_at IS NULL AND expires_at > \(bind: now.epochMillis)
              AND NOT EXISTS (SELECT 1 FROM refresh_families f WHERE f.id = refresh_tokens.family_id AND f.revoked_at IS NOT NULL)
            RETURNING user_id, family_id
            """
        ).first()
        if let claimed {
            return .rotated(userID: try claimed.string("user_id"), familyID: try claimed.string("family_id"))
        }
        guard let existing = try await sql.raw("SELECT family_id, used_at FROM refresh_tokens WHERE token_hash = \(bind: hash)").first()
        else { return .invalid }
        guard try existing.optionalDate("used_at") != nil else { return .invalid }  // expired or family revoked, never used
        try await revokeFamily(try existing.string("family_id"), now: now)
        return .reused
    }

    /// Whether the refresh-token family `familyID` of `userID` exists (it goes with a deleted account) and is not revoked.
    func sessionIsActive(familyID: String, userID: String) async throws -> Bool {
        try await reader.raw(
            "SELECT revoked_at FROM refresh_families WHERE id = \(bind: familyID) AND user_id = \(bind: userID)"
        ).first().map { try $0.decode(column: "revoked_at", as: Int64?.self) == nil } ?? false
    }

    func revokeFamily(_ familyID: String, now: Date) async throws {
        try await sql.raw(
            """
            UPDATE refresh_families SET revoked_at = \(bind: now.epochMillis) WHERE id = \(bind: familyID) AND revoked_at IS NULL
            """
        ).run()
    }

    /// Revokes the family of `hash` if it belongs to `userID`. Returns whether a token matched.
    func revokeFamily(ofToken hash: String, userID: String, now: Date) async throws -> Bool {
        guard
            let row = try await sql.raw(
                """
                SELECT family_id FROM refresh_tokens WHERE token_hash = \(bind: hash) AND user_id = \(bind: userID)
                """
            ).first()
        else { return false }
        try await revokeFamily(try row.string("family_id"), now: now)
        return true
    }
}
