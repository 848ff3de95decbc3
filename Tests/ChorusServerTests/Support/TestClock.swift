import Foundation
import NIOConcurrencyHelpers

/// A clock tests move forward by hand (trial expiry, new cycles) while real time keeps running underneath.
final class TestClock: Sendable {
    private let offset = NIOLockedValueBox<TimeInterval>(0)

    var now: Date { Date().addingTimeInterval(offset.withLockedValue { $0 }) }

    func advance(days: Double) {
        offset.withLockedValue { $0 += days * 86_400 }
    }

    var closure: @Sendable () -> Date { { [self] in now } }
}
