/// A single-pass scanner over JSON text that reports scalar object members without building a document.
///
/// The media bridge handles about 100 frames per second per call; decoding each with `JSONDecoder` would cost more
/// than everything else it does. The scanner walks the bytes once, tracks nesting, and hands each string or number
/// member (key and raw value bytes) to a callback. Values with escape sequences are reported as escaped so the caller
/// can fall back to a full decoder; the fields the bridge reads (event names, ids, base64 audio, numbers) never
/// contain any.
public enum JSONMemberScanner {
    /// One scalar member.
    public struct Member {
        /// The key, as raw UTF-8 bytes (without quotes).
        public let key: UnsafeBufferPointer<UInt8>
        /// The value's raw bytes (a string's contents without quotes, or a number/literal's text).
        public let value: UnsafeBufferPointer<UInt8>
        /// Whether the value was a JSON string.
        public let isString: Bool
        /// Whether the string contained escape sequences (its raw bytes are then not its value).
        public let hasEscapes: Bool
        /// Nesting depth of the member: 1 for the top-level object; every enclosing object or array adds one.
        public let depth: Int

        /// Whether the key is `name`.
        public func keyIs(_ name: StaticString) -> Bool {
            guard key.count == name.utf8CodeUnitCount else { return false }
            return name.withUTF8Buffer { expected in
                for index in 0..<expected.count where expected[index] != key[index] { return false }
                return true
            }
        }

        /// The value as a `String`.
        public var string: String { String(decoding: value, as: UTF8.self) }

        /// Whether the value is a string of base64 characters only (`A–Z a–z 0–9 + / =`): audio payloads are relayed as
        /// the received bytes, so anything else (stray bytes, invalid UTF-8) is refused here.
        public var isBase64: Bool {
            isString
                && value.allSatisfy { byte in
                    (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2B
                        || byte == 0x2F || byte == 0x3D
                }
        }

        /// The value as an integer: a number, or a string of digits (Twilio sends numbers as strings); `nil` when it is
        /// not one or does not fit an `Int` (the digits come from the peer: accumulated with overflow reported, never
        /// wrapped and then negated, which trapped on `-9223372036854775808`).
        public var integer: Int? {
            guard !value.isEmpty else { return nil }
            var result = 0
            var negative = false
            for (index, byte) in value.enumerated() {
                if index == 0 && byte == UInt8(ascii: "-") {
                    negative = true
                    continue
                }
                if byte == UInt8(ascii: ".") { break }
                guard byte >= 48 && byte <= 57 else { return nil }
                let digit = Int(byte - 48)
                let (scaled, overflow) = result.multipliedReportingOverflow(by: 10)
                let (sum, carry) = negative ? scaled.subtractingReportingOverflow(digit) : scaled.addingReportingOverflow(digit)
                guard !overflow, !carry else { return nil }
                result = sum
            }
            return result
        }
    }

    /// Scans `text`, calling `visit` for each scalar member at a depth of at most `maxDepth`; `visit` returns `false`
    /// to stop early. Returns `false` if the text is not a JSON object (or is cut short).
    @discardableResult
    public static func scan(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 3, _ visit: (Member) -> Bool) -> Bool {
        let count = bytes.count
        var index = 0
        var depth = 0
        // Bit i of `arrays` is set when nesting level i+1 is an array.
        var arrays: UInt64 = 0
        var expectingKey = false

        func skipWhitespace(_ i: inout Int) {
            while i < count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
        }
        /// Reads a string whose opening quote is at `i - 1`; returns its end (the closing quote) and escapes.
        func readString(_ i: inout Int) -> (start: Int, end: Int, escaped: Bool)? {
            let start = i
            var escaped = false
            while i < count {
                let byte = bytes[i]
                if byte == UInt8(ascii: "\\") {
                    escaped = true
                    i += 2
                    continue
                }
                if byte == UInt8(ascii: "\"") {
                    let end = i
                    i += 1
                    return (start, end, escaped)
                }
                i += 1
            }
            return nil
        }
        func slice(_ start: Int, _ end: Int) -> UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(rebasing: bytes[start..<end])
        }

        skipWhitespace(&index)
        guard index < count, bytes[index] == UInt8(ascii: "{") else { return false }
        while index < count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"):
                depth += 1
                if depth < 64 { arrays &= ~(1 << UInt64(depth - 1)) }
                expectingKey = true
                index += 1
            case UInt8(ascii: "["):
                depth += 1
                if depth < 64 { arrays |= 1 << UInt64(depth - 1) }
                expectingKey = false
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                expectingKey = false
                index += 1
                if depth == 0 { return true }
            case UInt8(ascii: ","):
                expectingKey = depth > 0 && depth <= 64 && arrays & (1 << UInt64(depth - 1)) == 0
                index += 1
            case UInt8(ascii: "\""):
                index += 1
                guard let key = readString(&index) else { return false }
                guard expectingKey else { continue }
                expectingKey = false
                skipWhitespace(&index)
                guard index < count, bytes[index] == UInt8(ascii: ":") else { return false }
                index += 1
                skipWhitespace(&index)
                guard index < count else { return false }
                let first = bytes[index]
                if first == UInt8(ascii: "\"") {
                    index += 1
                    guard let value = readString(&index) else { return false }
                    if depth <= maxDepth {
                        let member = Member(
                            key: slice(key.start, key.end), value: slice(value.start, value.end), isString: true,
                            hasEscapes: value.escaped, depth: depth)
                        if !visit(member) { return true }
                    }
                } else if first != UInt8(ascii: "{") && first != UInt8(ascii: "[") {
                    let start = index
                    while index < count {
                        let next = bytes[index]
                        if next == UInt8(ascii: ",") || next == UInt8(ascii: "}") || next == UInt8(ascii: "]") || next == 0x20
                            || next == 0x0A || next == 0x0D || next == 0x09
                        {
                            break
                        }
                        index += 1
                    }
                    if depth <= maxDepth {
                        let member = Member(
                            key: slice(key.start, key.end), value: slice(start, index), isString: false, hasEscapes: false,
                            depth: depth)
                        if !visit(member) { return true }
                    }
                }
            default:
                index += 1
            }
        }
        return false
    }
}
