import Foundation

/// Fixed-length cycles anchored at a start date: cycle n covers [anchor + n·length, anchor + (n+1)·length).
///
/// Nothing is reset or stored: the current cycle is computed from the anchor and the time, so cycles never drift.
public enum BillingCycle {
    /// The cycle containing `now`. Before the anchor, the first cycle.
    public static func interval(containing now: Date, anchor: Date, length: TimeInterval) -> DateInterval {
        precondition(length > 0, "cycle length must be positive")
        let elapsed = now.timeIntervalSince(anchor)
        let index = elapsed <= 0 ? 0 : (elapsed / length).rounded(.down)
        let start = anchor.addingTimeInterval(index * length)
        return DateInterval(start: start, duration: length)
    }

    /// Midnight UTC of the day containing `now`.
    public static func utcDayStart(of now: Date) -> Date {
        let seconds = now.timeIntervalSince1970
        return Date(timeIntervalSince1970: (seconds / 86_400).rounded(.down) * 86_400)
    }
}
