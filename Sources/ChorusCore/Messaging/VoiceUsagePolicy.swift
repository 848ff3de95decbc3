import Foundation

/// A voice-messaging account's plan.
public enum VoiceTier: String, Sendable, Equatable, Hashable, CaseIterable, Codable {
    /// Monthly voice messages are capped.
    case free
    /// Unlimited voice messages.
    case paid
}

/// Per-user voice limits (issue 6: 50 speech generations a day; 100 voice messages a month on the free tier).
///
/// The limits and their texts; the server charges them with one conditional statement each (never a read followed by
/// a write), keyed by the periods below.
public struct VoiceUsagePolicy: Sendable, Equatable {
    public var dailyGenerationsPerUser: Int
    public var freeMonthlyVoiceMessages: Int

    public init(dailyGenerationsPerUser: Int = 50, freeMonthlyVoiceMessages: Int = 100) {
        self.dailyGenerationsPerUser = dailyGenerationsPerUser
        self.freeMonthlyVoiceMessages = freeMonthlyVoiceMessages
    }

    /// The monthly voice-message limit of a tier; `nil` is unlimited.
    public func monthlyVoiceMessageLimit(tier: VoiceTier) -> Int? {
        tier == .free ? freeMonthlyVoiceMessages : nil
    }

    /// The PRD's over-quota text (Appendix B), with the limit filled in.
    public static func overQuotaMessage(limit: Int) -> String {
        "You've reached your monthly voice limit (\(limit) messages). Upgrade for unlimited."
    }

    /// The text when a user's speech generations for the day are used up.
    public static func dailyLimitMessage(limit: Int) -> String {
        "You've reached today's limit of \(limit) voice generations. Cached audio still plays; try again tomorrow."
    }

    /// The counter key of a day's speech generations (`speech:2026-11-23`) and a month's voice messages
    /// (`voice_messages:2026-11`), in UTC.
    public static func dailyGenerationsKey(at date: Date) -> String { "speech:" + period(date, monthly: false) }
    public static func monthlyVoiceMessagesKey(at date: Date) -> String { "voice_messages:" + period(date, monthly: true) }

    /// `2026-11-23` or `2026-11` (UTC): the periods of counters and spend budgets.
    public static func period(_ date: Date, monthly: Bool) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        let month = String(format: "%04d-%02d", parts.year ?? 0, parts.month ?? 0)
        return monthly ? month : month + String(format: "-%02d", parts.day ?? 0)
    }
}
