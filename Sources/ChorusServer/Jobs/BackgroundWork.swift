import Foundation
import NIOConcurrencyHelpers

/// Work started by a request or a connection that finishes on its own (saving a call's outcome, announcing
/// presence), tracked so that the server's shutdown waits for it before closing the database connections it uses.
final class BackgroundWork: Sendable {
    private let pending = NIOLockedValueBox<[UUID: Task<Void, Never>]>([:])

    /// Runs `work` in the background until it is done.
    func track(_ work: @escaping @Sendable () async -> Void) {
        let id = UUID()
        pending.withLockedValue { pending in
            pending[id] = Task { [weak self] in
                await work()
                self?.pending.withLockedValue { _ = $0.removeValue(forKey: id) }
            }
        }
    }

    /// Waits until no tracked work is left (work started meanwhile included).
    func drain() async {
        while true {
            let tasks = pending.withLockedValue { Array($0.values) }
            guard !tasks.isEmpty else { return }
            for task in tasks { await task.value }
        }
    }
}
