import ChorusAPI
import Foundation

/// Where and when calls may go: the numbering-plan refusals, the allowed countries (`CHORUS_CALL_DESTINATIONS`), the
/// fictional range (sandbox telephony only) and the calling hours (`CHORUS_CALL_HOURS`).
public struct CallDestinationPolicy: Sendable, Equatable {
    /// ISO 3166 alpha-2 codes calls may go to.
    public var allowedCountries: Set<String>
    /// Whether the NANP's fictional 555 numbers may be called (sandbox telephony only).
    public var allowsFictionalNumbers: Bool
    /// The callee's local hours calls are placed in; `nil`: any time.
    public var hours: CallingHours?

    public init(allowedCountries: Set<String>, allowsFictionalNumbers: Bool, hours: CallingHours?) {
        self.allowedCountries = allowedCountries
        self.allowsFictionalNumbers = allowsFictionalNumbers
        self.hours = hours
    }

    /// The destination of `e164`, or why it is never called (whatever the time).
    public func destination(of e164: String) -> Result<PhoneDestination, CallRefusal> {
        switch NumberingPlan.classify(e164) {
        case .refused(let refusal):
            return .failure(.number(refusal))
        case .unknownCountry:
            return .failure(.destinationNotAllowed(country: nil))
        case .callable(let destination):
            if let reason = destination.fictionalReason, !allowsFictionalNumbers {
                return .failure(.number(NumberRefusal(.fictional, reason)))
            }
            guard allowedCountries.contains(destination.country) else {
                return .failure(.destinationNotAllowed(country: destination.country))
            }
            return .success(destination)
        }
    }

    /// `nil` when a call may ring at `date` where `destination` is; otherwise the quiet-hours refusal with the next
    /// moment it may.
    public func quietHours(_ destination: PhoneDestination, at date: Date) -> CallRefusal? {
        guard let hours else { return nil }
        let zones = destination.timeZones.compactMap(TimeZone.init(identifier:))
        guard !zones.isEmpty else { return nil }
        if hours.allows(date, in: zones) { return nil }
        return .quietHours(hours, next: hours.nextAllowed(atOrAfter: date, in: zones))
    }
}

/// Why a call is refused before anything is charged: a 422 with `error` (the code), `message` and, when calling will
/// become possible, `retry_at`.
public struct CallRefusal: Error, Sendable, Equatable {
    public var code: String
    public var message: String
    public var retryAt: Date?

    public init(code: String, message: String, retryAt: Date? = nil) {
        self.code = code
        self.message = message
        self.retryAt = retryAt
    }

    /// The number is never called (premium-rate, service, impossible, international service, fictional).
    public static func number(_ refusal: NumberRefusal) -> CallRefusal {
        CallRefusal(code: refusal.code, message: refusal.message)
    }

    /// `destination_not_allowed`: a country outside `CHORUS_CALL_DESTINATIONS` (`nil`: one Chorus has no data for).
    public static func destinationNotAllowed(country: String?) -> CallRefusal {
        let place = country.map { "\(NumberingPlan.name(of: $0)) (\($0))" } ?? "this country"
        return CallRefusal(code: "destination_not_allowed", message: "Calls to \(place) are not available on this service.")
    }

    /// `quiet_hours`: outside the calling hours where the number is.
    public static func quietHours(_ hours: CallingHours, next: Date?) -> CallRefusal {
        guard let next else {
            return CallRefusal(
                code: "quiet_hours", message: "Calls to this number are never within the calling hours (\(hours), the callee's local time).")
        }
        return CallRefusal(
            code: "quiet_hours",
            message: "It is outside the calling hours (\(hours), the callee's local time) where this number is. "
                + "Calls to it can be placed from \(ChorusJSON.formatDate(next)).",
            retryAt: next)
    }

    /// `number_daily_limit`: the number has had its calls of the (UTC) day, from every account together.
    public static func numberDailyLimit(_ limit: Int, until: Date) -> CallRefusal {
        CallRefusal(
            code: "number_daily_limit",
            message: "This number has already been called \(limit) time\(limit == 1 ? "" : "s") today, the most a number is called "
                + "in a day. It can be called again from \(ChorusJSON.formatDate(until)).",
            retryAt: until)
    }

    /// `number_account_limit`: the number has been called from the most accounts a week allows.
    public static func numberAccountLimit(_ limit: Int, until: Date) -> CallRefusal {
        CallRefusal(
            code: "number_account_limit",
            message: "This number has been called from \(limit) different account\(limit == 1 ? "" : "s") this week, the most a "
                + "number is called from. It can be called from another account again from \(ChorusJSON.formatDate(until)).",
            retryAt: until)
    }
}

/// The UTC day and week (Monday to Sunday) the per-number limits count in.
public enum NumberLimitPeriods {
    /// `2026-11-26` and the start of the next UTC day.
    public static func day(of date: Date) -> (key: String, ends: Date) {
        let start = utcCalendar.startOfDay(for: date)
        return (key(start), utcCalendar.date(byAdding: .day, value: 1, to: start)!)
    }

    /// The Monday starting `date`'s UTC week (`2026-11-23`) and the start of the next week.
    public static func week(of date: Date) -> (key: String, ends: Date) {
        let start = utcCalendar.startOfDay(for: date)
        // Gregorian weekday: Sunday 1 … Saturday 7; days since Monday: (weekday + 5) % 7.
        let sinceMonday = (utcCalendar.component(.weekday, from: start) + 5) % 7
        let monday = utcCalendar.date(byAdding: .day, value: -sinceMonday, to: start)!
        return (key(monday), utcCalendar.date(byAdding: .day, value: 7, to: monday)!)
    }

    private static func key(_ date: Date) -> String {
        let parts = utcCalendar.dateComponents([.year, .month, .day], from: date)
        let year = parts.year ?? 0
        let month = parts.month ?? 0
        let day = parts.day ?? 0
        return "\(year)-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)"
    }

    private static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}
