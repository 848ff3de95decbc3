import Foundation
import NIOConcurrencyHelpers

/// Whether the sign-in session (refresh-token family) an access token belongs to still holds: not revoked (logout,
/// refresh-token reuse, the console's revoke) and its account not deleted. Checked on every authenticated request.
///
/// Answers are remembered for ``lifetime`` of physical time, so the check costs one database read per session every
/// few seconds instead of one per request. A revocation made on this instance forgets every remembered answer at once
/// (the next request of that session is refused); one made on another instance is seen here within ``lifetime``.
final class SessionCheck: Sendable {
    /// How long an answer is trusted: the longest a session revoked elsewhere keeps working here.
    static let lifetime: Duration = .seconds(5)
    /// Bounds memory: when full, answers that have lapsed are dropped (all of them if none has).
    private static let capacity = 100_000

    private struct Answer {
        var active: Bool
        var checkedAt: ContinuousClock.Instant
    }

    private struct State {
        var answers: [String: Answer] = [:]
        /// Bumped by every ``forgetAll()``: an answer read before a revocation is not remembered after it.
        var generation = 0
    }

    private let state = NIOLockedValueBox(State())

    /// Whether the session `sessionID` of `userID` is still active.
    func isActive(sessionID: String, userID: String, store: ChorusStore) async throws -> Bool {
        let key = userID + "\u{0}" + sessionID
        let now = ContinuousClock.now
        let (cached, generation) = state.withLockedValue { ($0.answers[key], $0.generation) }
        if let cached, now - cached.checkedAt < Self.lifetime { return cached.active }
        let active = try await store.accounts.sessionIsActive(familyID: sessionID, userID: userID)
        state.withLockedValue { state in
            guard state.generation == generation else { return }
            if state.answers.count >= Self.capacity {
                state.answers = state.answers.filter { now - $0.value.checkedAt < Self.lifetime }
                if state.answers.count >= Self.capacity { state.answers.removeAll(keepingCapacity: true) }
            }
            state.answers[key] = Answer(active: active, checkedAt: now)
        }
        return active
    }

    /// Forgets every remembered answer: a session was revoked on this instance.
    func forgetAll() {
        state.withLockedValue { state in
            state.answers.removeAll(keepingCapacity: true)
            state.generation &+= 1
        }
    }
}
