import Foundation

/// The hours of the callee's local day in which calls are placed (`CHORUS_CALL_HOURS`, default `09:00-20:00`).
///
/// A number whose zone is not certain (a country or area code spanning several) may be called only while the local
/// time is inside the window in every one of its zones: from the window's start in the latest zone to its end in the
/// earliest one.
public struct CallingHours: Sendable, Equatable, CustomStringConvertible {
    /// Minutes after local midnight: calls from `start` (included) to `end` (excluded).
    public var start: Int
    public var end: Int

    public static let standard = CallingHours(start: 9 * 60, end: 20 * 60)

    public init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

    /// `HH:MM-HH:MM` with the start before the end (`24:00` is the end of the day); `nil` for anything else.
    public static func parse(_ text: String) -> CallingHours? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let start = minutes(parts[0]), let end = minutes(parts[1]), start < end else { return nil }
        return CallingHours(start: start, end: end)
    }

    private static func minutes(_ text: Substring) -> Int? {
        let pieces = text.trimmingCharacters(in: .whitespaces).split(separator: ":", omittingEmptySubsequences: false)
        guard pieces.count == 2, pieces[0].count == 2, pieces[1].count == 2, let hours = Int(pieces[0]), let minutes = Int(pieces[1]),
            (0...24).contains(hours), (0...59).contains(minutes), hours * 60 + minutes <= 24 * 60
        else { return nil }
        return hours * 60 + minutes
    }

    /// `09:00-20:00`.
    public var description: String { "\(Self.format(start))-\(Self.format(end))" }

    private static func format(_ minutes: Int) -> String {
        let hours = minutes / 60
        let rest = minutes % 60
        return (hours < 10 ? "0" : "") + "\(hours):" + (rest < 10 ? "0" : "") + "\(rest)"
    }

    /// Whether `date` is inside the window in every zone of `zones`.
    public func allows(_ date: Date, in zones: [TimeZone]) -> Bool {
        zones.allSatisfy { zone in
            let minute = Self.minuteOfDay(date, in: zone)
            return minute >= start && minute < end
        }
    }

    /// The first moment at or after `date` inside the window in every zone; `nil` when the zones are so far apart that
    /// the windows never overlap.
    public func nextAllowed(atOrAfter date: Date, in zones: [TimeZone]) -> Date? {
        if allows(date, in: zones) { return date }
        // The allowed stretches open when the window opens in one of the zones: try those moments, in order.
        var candidates: [Date] = []
        for zone in zones {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let today = calendar.startOfDay(for: date)
            for offset in -1...8 {
                guard let day = calendar.date(byAdding: .day, value: offset, to: today),
                    let opening = calendar.date(bySettingHour: start / 60, minute: start % 60, second: 0, of: day),
                    opening > date
                else { continue }
                candidates.append(opening)
            }
        }
        return candidates.sorted().first { allows($0, in: zones) }
    }

    static func minuteOfDay(_ date: Date, in zone: TimeZone) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
    }
}
