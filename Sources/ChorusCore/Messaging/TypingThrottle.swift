import Foundation

/// How often a member's typing indicator is relayed: at most once per ``interval`` for each user and conversation.
/// An indicator shows for a few seconds, so more events say nothing new; a client sending one per keystroke is thinned
/// and a flooding one cannot make the server fan out thousands of events.
///
/// Plain value with the time passed in. It remembers at most ``capacity`` (user, conversation) pairs: when full it
/// forgets the pairs whose interval is over (they would be admitted anyway), and if every pair is still recent it
/// starts afresh rather than grow (admitting a few extra events, never refusing everyone).
public struct TypingThrottle: Sendable {
    /// The default: one typing event per user and conversation every 2 seconds.
    public static let standardInterval: TimeInterval = 2

    public let interval: TimeInterval
    public let capacity: Int
    private var lastAdmitted: [String: Date] = [:]

    public init(interval: TimeInterval = Self.standardInterval, capacity: Int = 100_000) {
        self.interval = interval
        self.capacity = max(1, capacity)
    }

    /// Whether a typing event of `userID` in `conversationID` at `now` is relayed (and, if so, counts from `now`).
    public mutating func admit(userID: String, conversationID: String, at now: Date) -> Bool {
        let key = userID + "\n" + conversationID
        if let last = lastAdmitted[key], now >= last, now.timeIntervalSince(last) < interval { return false }
        if lastAdmitted[key] == nil, lastAdmitted.count >= capacity {
            lastAdmitted = lastAdmitted.filter { now >= $0.value && now.timeIntervalSince($0.value) < interval }
            if lastAdmitted.count >= capacity { lastAdmitted.removeAll(keepingCapacity: true) }
        }
        lastAdmitted[key] = now
        return true
    }

    /// How many pairs are remembered.
    public var trackedCount: Int { lastAdmitted.count }
}
