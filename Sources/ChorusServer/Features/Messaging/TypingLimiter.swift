import ChorusCore
import Foundation
import NIOConcurrencyHelpers

/// The ``TypingThrottle`` of this instance's `/ws` connections, shared between them. Per instance: behind a load
/// balancer a user connected to several instances is limited on each.
final class TypingLimiter: Sendable {
    private let throttle: NIOLockedValueBox<TypingThrottle>

    init(_ throttle: TypingThrottle = TypingThrottle()) {
        self.throttle = NIOLockedValueBox(throttle)
    }

    func admit(userID: String, conversationID: String, at now: Date) -> Bool {
        throttle.withLockedValue { $0.admit(userID: userID, conversationID: conversationID, at: now) }
    }
}
