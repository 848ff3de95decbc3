import ChorusCore
import Foundation
import Testing

@Suite("Typing throttle")
struct MessagingTypingThrottleTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// What `admit` answers for each (user, conversation, seconds after `start`), in order.
    func answers(_ throttle: inout TypingThrottle, _ events: [(String, String, TimeInterval)]) -> [Bool] {
        events.map { throttle.admit(userID: $0.0, conversationID: $0.1, at: start.addingTimeInterval($0.2)) }
    }

    @Test("one typing event per user and conversation per interval")
    func onePerInterval() {
        var throttle = TypingThrottle(interval: 2)
        let burst = answers(&throttle, Array(repeating: ("alice", "c1", 0), count: 2_000))
        #expect(burst.filter { $0 }.count == 1 && burst.first == true)
        let later = answers(
            &throttle,
            [
                ("alice", "c1", 1.999), ("alice", "c1", 2),
                // Other conversations and other users have their own allowance.
                ("alice", "c2", 0), ("bob", "c1", 0),
                // A clock that went back does not lock anyone out.
                ("bob", "c1", -60),
            ])
        #expect(later == [false, true, true, true, true])
    }

    @Test("a full throttle forgets finished intervals first, and never grows past its capacity")
    func bounded() {
        var throttle = TypingThrottle(interval: 2, capacity: 3)
        #expect(answers(&throttle, [("a", "c", 0), ("b", "c", 0), ("c", "c", 0)]) == [true, true, true])
        // The intervals of "a" to "c" are over at +5 s: they are forgotten to make room for "d".
        #expect(answers(&throttle, [("d", "c", 5)]) == [true])
        #expect(throttle.trackedCount == 1)
        #expect(answers(&throttle, [("e", "c", 5), ("f", "c", 5)]) == [true, true])
        // Every remembered pair is recent: starting afresh rather than growing.
        #expect(answers(&throttle, [("g", "c", 5)]) == [true])
        #expect(throttle.trackedCount == 1)
        #expect(answers(&throttle, [("g", "c", 6)]) == [false])
    }
}
