import ChorusAPI
import Foundation

/// The operators' report queue: which status changes are allowed, and when a resolution may disable a scenario.
///
/// A report starts `pending`; an operator marks it `reviewed` (looked at, decision pending), `resolved` (acted on) or
/// `dismissed` (nothing wrong). `reviewed` may still become `resolved` or `dismissed`; `resolved` and `dismissed` are
/// final. Only a resolution may disable a scenario, and only a custom one (built-in scenarios are part of the product).
public enum ReportReview {
    /// Whether `from` may become `to`.
    public static func allows(from: ReportStatus, to: ReportStatus) -> Bool {
        switch (from, to) {
        case (.pending, .reviewed), (.pending, .resolved), (.pending, .dismissed), (.reviewed, .resolved), (.reviewed, .dismissed): true
        default: false
        }
    }

    /// Whether the report queue shows it as work to do.
    public static func isOpen(_ status: ReportStatus) -> Bool { status == .pending || status == .reviewed }

    /// Reports one user may file in a rolling day (spam of the queue is itself abuse).
    public static let reportsPerDay = 20
    /// The description's length, in characters.
    public static let descriptionLength = 1...1_000
    /// The description's size, in UTF-8 bytes (four per character at most).
    public static let descriptionBytes = 4_000
}
