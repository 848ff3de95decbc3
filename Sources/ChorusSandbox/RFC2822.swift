import Foundation

/// Formats dates the way Twilio's REST API and webhooks do: `Tue, 31 Aug 2010 20:36:28 +0000` (UTC).
enum RFC2822 {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func string(from date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
        let weekday = weekdays[(parts.weekday ?? 1) - 1]
        let month = months[(parts.month ?? 1) - 1]
        return "\(weekday), \(pad(parts.day)) \(month) \(parts.year ?? 1970) "
            + "\(pad(parts.hour)):\(pad(parts.minute)):\(pad(parts.second)) +0000"
    }

    private static func pad(_ value: Int?) -> String {
        let value = value ?? 0
        return value < 10 ? "0\(value)" : "\(value)"
    }
}
