import NIOConcurrencyHelpers

/// Admits one write transaction at a time within this process (SQLite only).
///
/// SQLite serialises writers anyway; without the gate a second `BEGIN IMMEDIATE` would wait inside SQLite's busy
/// handler, which spins on a blocking-pool thread while the transaction holding the lock may need that thread to
/// finish. Queuing in Swift instead costs nothing and never holds a thread.
final class WriteGate: Sendable {
    private struct State {
        var busy = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = NIOLockedValueBox(State())

    func withPermit<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLockedValue { state -> Bool in
                if state.busy {
                    state.waiters.append(continuation)
                    return false
                }
                state.busy = true
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.busy = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
