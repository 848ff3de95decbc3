import Foundation

/// One `Range` header (RFC 9110 §14.2) against a representation of known size.
///
/// Every number in the header comes from the client: digits only (no sign, no spaces inside), values that do not fit
/// a 64-bit integer are unsatisfiable rather than trapped on, and the end of a range is clamped to the size without
/// adding to a value the client chose.
public enum ByteRange: Equatable, Sendable {
    /// No usable `Range` (another unit, several ranges, a malformed spec): serve the whole representation.
    case none
    /// A well-formed range that selects nothing of this representation: 416.
    case unsatisfiable
    /// The bytes to send.
    case range(Range<Int64>)

    /// Parses `bytes=a-b`, `bytes=a-` and `bytes=-n`; anything else (other units, several ranges) is `.none` (serve
    /// the whole blob).
    public static func parse(_ header: String, size: Int64) -> ByteRange {
        guard size >= 0 else { return .none }
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes="), !trimmed.contains(",") else { return .none }
        let spec = trimmed.dropFirst("bytes=".count)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .none }
        let first = parts[0].trimmingCharacters(in: .whitespaces)
        let last = parts[1].trimmingCharacters(in: .whitespaces)
        if first.isEmpty {
            // A suffix longer than the representation selects all of it, however many digits it has.
            switch Self.number(last) {
            case .invalid: return .none
            case .tooLarge: return size == 0 ? .unsatisfiable : .range(0..<size)
            case .value(let suffix):
                guard suffix > 0, size > 0 else { return .unsatisfiable }
                return .range((suffix >= size ? 0 : size - suffix)..<size)
            }
        }
        let start: Int64
        switch Self.number(first) {
        case .invalid: return .none
        case .tooLarge: return .unsatisfiable
        case .value(let value): start = value
        }
        guard start < size else { return .unsatisfiable }
        if last.isEmpty { return .range(start..<size) }
        switch Self.number(last) {
        case .invalid: return .none
        case .tooLarge: return .range(start..<size)
        case .value(let end):
            guard end >= start else { return .none }
            // `end < size` makes `end + 1` safe; a larger end is clamped to the last byte.
            return .range(start..<(end < size ? end + 1 : size))
        }
    }

    private enum Number {
        case value(Int64)
        case tooLarge
        case invalid
    }

    /// `1*DIGIT`: a value, `tooLarge` for digits beyond `Int64.max`, `invalid` for anything else (signs included).
    private static func number(_ text: String) -> Number {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return .invalid
        }
        return Int64(text).map(Number.value) ?? .tooLarge
    }
}
