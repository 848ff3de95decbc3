import Foundation

/// A day of the proleptic Gregorian calendar in UTC, as OpenAI writes `shutdown_date` (`YYYY-MM-DD`).
///
/// Parsing is strict (four-digit year, two-digit month and day, a real calendar day) and never traps; arithmetic is on
/// day numbers (days since 1970-01-01), so leap years and month lengths need no calendar object.
public struct CalendarDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// The day `text` names (`2027-01-06`), or `nil` when it is not a valid `YYYY-MM-DD` date.
    public init?(iso text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), day >= 1, day <= Self.daysInMonth(year: year, month: month)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The UTC day `date` falls on.
    public init(utc date: Date) {
        let seconds = date.timeIntervalSince1970
        // Dates a clock gives are finite; clamp anything else to the range day numbers cover.
        let clamped = seconds.isFinite ? min(max(seconds, -1e13), 1e13) : 0
        self.init(dayNumber: Int((clamped / 86_400).rounded(.down)))
    }

    /// The day `dayNumber` days after 1970-01-01 (Howard Hinnant's `civil_from_days`).
    init(dayNumber: Int) {
        let z = dayNumber + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        self.year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        self.month = month
        self.day = day
    }

    /// Days since 1970-01-01 (`days_from_civil`).
    public var dayNumber: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Days from this day to `other` (negative when `other` is earlier).
    public func days(until other: CalendarDay) -> Int { other.dayNumber - dayNumber }

    public var description: String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(String(repeating: "0", count: max(0, 4 - String(year).count)))\(year)-\(two(month))-\(two(day))"
    }

    public static func < (lhs: CalendarDay, rhs: CalendarDay) -> Bool { lhs.dayNumber < rhs.dayNumber }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// A provider model the configuration uses, with the setting that chooses it and the product it serves.
public struct ConfiguredModel: Sendable, Hashable {
    /// The model id (`gpt-realtime-2.1`).
    public var model: String
    /// The environment variable that sets it (`CHORUS_OPENAI_REALTIME_MODEL`).
    public var setting: String
    /// The product it works for (`calls`, `voice messages`, `stories`).
    public var product: String

    public init(model: String, setting: String, product: String) {
        self.model = model
        self.setting = setting
        self.product = product
    }
}

/// What the provider's model list says about one model id.
public enum ModelListing: Sendable, Equatable {
    /// Listed; `shutdownDate` is `nil` when no shutdown is announced.
    case listed(shutdownDate: CalendarDay?)
    /// Listed with a `shutdown_date` that is not a `YYYY-MM-DD` date (kept as received, for the report).
    case listedWithUnreadableDate(String)
    /// Not in the list (`GET /v1/models/{model}` would answer 404): every request naming it fails.
    case notListed
}

/// The lifecycle of each configured model on a given day: which still work, which shut down within the warning
/// window, which are gone. Pure: the model list and today's date are inputs.
public enum ModelLifecyclePolicy {
    /// A shutdown this many days ahead or fewer is warned about.
    public static let warningDays = 60

    /// One configured model's state.
    public struct Finding: Sendable, Equatable {
        public enum Status: Sendable, Equatable {
            /// Listed, no shutdown announced.
            case available
            /// Listed, shutting down more than ``ModelLifecyclePolicy/warningDays`` ahead.
            case scheduled(shutdownDate: CalendarDay, daysLeft: Int)
            /// Listed, shutting down within the warning window: `daysLeft` is 1 on the day before the shutdown date.
            case shuttingDown(shutdownDate: CalendarDay, daysLeft: Int)
            /// The shutdown date is today or past (`daysLeft` 0 or less): requests may fail at any moment of that UTC day.
            case shutDown(shutdownDate: CalendarDay, daysLeft: Int)
            /// The provider does not list the model: every request naming it fails.
            case notOffered
            /// Listed with a `shutdown_date` that cannot be read.
            case unreadableDate(String)
        }

        public var model: ConfiguredModel
        public var status: Status

        public init(model: ConfiguredModel, status: Status) {
            self.model = model
            self.status = status
        }

        /// The model cannot be used any more: production refuses to start with it.
        public var isUnusable: Bool {
            switch status {
            case .shutDown, .notOffered: true
            default: false
            }
        }

        /// Operators must hear about it (log, console): shutting down soon, gone, or an unreadable date.
        public var needsAttention: Bool {
            switch status {
            case .available, .scheduled: false
            default: true
            }
        }

        /// The announced shutdown date, if readable.
        public var shutdownDate: CalendarDay? {
            switch status {
            case .scheduled(let date, _), .shuttingDown(let date, _), .shutDown(let date, _): date
            default: nil
            }
        }

        /// Days until the shutdown date (0 on the day itself, negative after), if one is announced.
        public var daysLeft: Int? {
            switch status {
            case .scheduled(_, let days), .shuttingDown(_, let days), .shutDown(_, let days): days
            default: nil
            }
        }

        /// One sentence for the log and the console, naming the model, the setting and the date.
        public var summary: String {
            let who = "\(model.model) (\(model.setting), \(model.product))"
            switch status {
            case .available: return "\(who): no shutdown announced."
            case .scheduled(let date, let days): return "\(who) shuts down on \(date), in \(days) days."
            case .shuttingDown(let date, let days):
                return "\(who) shuts down on \(date), in \(days) day\(days == 1 ? "" : "s"): choose another model in \(model.setting)."
            case .shutDown(let date, _): return "\(who) was shut down on \(date): set \(model.setting) to a model the provider offers."
            case .notOffered:
                return "\(who) is not offered by the provider (absent from its model list): set \(model.setting) to a model it offers."
            case .unreadableDate(let text):
                return "\(who) has a shutdown date that cannot be read (\(text.prefix(40))): check the provider's deprecations page."
            }
        }
    }

    /// Classifies each of `models` by its entry in `listing` (by model id; an id without an entry is not listed) on
    /// `today`. The same model used by several settings yields one finding per setting, in the order given.
    public static func evaluate(
        _ models: [ConfiguredModel], listing: [String: ModelListing], today: CalendarDay, warningDays: Int = warningDays
    ) -> [Finding] {
        models.map { configured in
            let status: Finding.Status
            switch listing[configured.model] ?? .notListed {
            case .notListed: status = .notOffered
            case .listedWithUnreadableDate(let text): status = .unreadableDate(text)
            case .listed(shutdownDate: nil): status = .available
            case .listed(shutdownDate: let date?):
                let days = today.days(until: date)
                if days <= 0 {
                    status = .shutDown(shutdownDate: date, daysLeft: days)
                } else if days <= warningDays {
                    status = .shuttingDown(shutdownDate: date, daysLeft: days)
                } else {
                    status = .scheduled(shutdownDate: date, daysLeft: days)
                }
            }
            return Finding(model: configured, status: status)
        }
    }
}
