import Foundation

/// The JSON coders of the wire format: ISO-8601 dates in UTC with `Z` (fractional seconds accepted on input).
public enum ChorusJSON {
    /// An encoder producing the contract's dates, e.g. `2024-01-15T10:30:00Z`, with object members in sorted key order
    /// (`.sortedKeys`), so the same answer is the same bytes on every call (Foundation's own order varies between
    /// calls on Linux).
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(formatDate(date))
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// A decoder accepting ISO-8601 dates with or without fractional seconds and with any UTC offset.
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parseDate(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "Expected an ISO-8601 date-time such as 2024-01-15T14:30:00Z"
                )
            }
            return date
        }
        return decoder
    }

    /// Formats a date as ISO-8601 UTC with `Z`, whole seconds.
    public static func formatDate(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// Parses ISO-8601 date-times (`Z` or `±hh:mm`, optional fractional seconds).
    public static func parseDate(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        return try? Date(text, strategy: fractional)
    }
}
