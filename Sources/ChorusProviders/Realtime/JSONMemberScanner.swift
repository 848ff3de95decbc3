/// A single-pass validating scanner over JSON text that reports scalar object members without building a document.
///
/// The media bridge handles about 100 frames per second per call, and the sandbox's Twilio emulator reads the frames of
/// hundreds of benchmark calls; decoding each with `JSONDecoder` would cost more than everything else they do. The
/// scanner walks the bytes once, checks them against the JSON grammar (RFC 8259), and hands each string, number or
/// literal member (key, raw value bytes, the key of the enclosing object) to a callback. Values with escape sequences
/// are flagged so the caller can decode them (``Member/unescaped``) or fall back to a full decoder; the fields the
/// bridge reads (event names, ids, base64 audio, numbers) never contain any.
public enum JSONMemberScanner {
    /// Objects and arrays nested deeper than this make the text invalid (the scanner recurses once per level).
    public static let nestingLimit = 64

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
        /// The key whose value is the object holding this member (`media` for `media.payload`); empty for members of
        /// the top-level object and of objects in arrays.
        public let container: UnsafeBufferPointer<UInt8>

        /// Whether the key is `name`.
        public func keyIs(_ name: StaticString) -> Bool { Self.equals(key, name) }

        /// Whether the enclosing object is the value of the key `name`.
        public func containerIs(_ name: StaticString) -> Bool { Self.equals(container, name) }

        private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
            guard bytes.count == name.utf8CodeUnitCount else { return false }
            return name.withUTF8Buffer { expected in
                for index in 0..<expected.count where expected[index] != bytes[index] { return false }
                return true
            }
        }

        /// The value's raw bytes as a `String` (escape sequences as written).
        public var string: String { String(decoding: value, as: UTF8.self) }

        /// The value as a `String`, escape sequences decoded.
        public var unescaped: String {
            hasEscapes ? JSONMemberScanner.unescape(value) : string
        }

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

    /// Scans `bytes`, calling `visit` for each scalar member at a depth of at most `maxDepth`; `visit` returns `false`
    /// to stop early (the rest is then not checked). Returns `false` unless the text is one JSON object (white space
    /// around it allowed) nested at most ``nestingLimit`` deep.
    @discardableResult
    public static func scan(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 3, _ visit: (Member) -> Bool) -> Bool {
        var scanner = Grammar(bytes: bytes)
        return scanner.document(maxDepth: maxDepth, visit)
    }

    /// The JSON grammar over `bytes`, one production per method; `index` is the next byte.
    private struct Grammar {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// Set when the visitor asked to stop: every production then returns `true` at once.
        var stopped = false

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        mutating func document(maxDepth: Int, _ visit: (Member) -> Bool) -> Bool {
            skipSpace()
            guard peek == UInt8(ascii: "{"), object(depth: 1, container: 0..<0, maxDepth: maxDepth, visit) else { return false }
            if stopped { return true }
            skipSpace()
            return index == bytes.count
        }

        private var peek: UInt8 { index < bytes.count ? bytes[index] : 0 }

        private func slice(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: bytes[range]) }

        private mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
                default: return
                }
            }
        }

        private mutating func object(depth: Int, container: Range<Int>, maxDepth: Int, _ visit: (Member) -> Bool) -> Bool {
            guard depth <= JSONMemberScanner.nestingLimit else { return false }
            index += 1
            skipSpace()
            if peek == UInt8(ascii: "}") {
                index += 1
                return true
            }
            while true {
                skipSpace()
                guard peek == UInt8(ascii: "\""), let (key, _) = string() else { return false }
                skipSpace()
                guard peek == UInt8(ascii: ":") else { return false }
                index += 1
                skipSpace()
                // A scalar value: its bytes, whether it is a string, and whether it has escapes.
                var scalarValue: (range: Range<Int>, isString: Bool, escaped: Bool)?
                switch peek {
                case UInt8(ascii: "\""):
                    guard let (range, escaped) = string() else { return false }
                    scalarValue = (range, true, escaped)
                case UInt8(ascii: "{"):
                    guard object(depth: depth + 1, container: key, maxDepth: maxDepth, visit) else { return false }
                case UInt8(ascii: "["):
                    guard array(depth: depth + 1, maxDepth: maxDepth, visit) else { return false }
                default:
                    let start = index
                    guard scalar() else { return false }
                    scalarValue = (start..<index, false, false)
                }
                if stopped { return true }
                if let scalarValue, depth <= maxDepth {
                    let member = Member(
                        key: slice(key), value: slice(scalarValue.range), isString: scalarValue.isString, hasEscapes: scalarValue.escaped,
                        depth: depth, container: slice(container))
                    if !visit(member) {
                        stopped = true
                        return true
                    }
                }
                skipSpace()
                switch peek {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"):
                    index += 1
                    return true
                default: return false
                }
            }
        }

        private mutating func array(depth: Int, maxDepth: Int, _ visit: (Member) -> Bool) -> Bool {
            guard depth <= JSONMemberScanner.nestingLimit else { return false }
            index += 1
            skipSpace()
            if peek == UInt8(ascii: "]") {
                index += 1
                return true
            }
            while true {
                skipSpace()
                switch peek {
                case UInt8(ascii: "\""): guard string() != nil else { return false }
                case UInt8(ascii: "{"): guard object(depth: depth + 1, container: 0..<0, maxDepth: maxDepth, visit) else { return false }
                case UInt8(ascii: "["): guard array(depth: depth + 1, maxDepth: maxDepth, visit) else { return false }
                default: guard scalar() else { return false }
                }
                if stopped { return true }
                skipSpace()
                switch peek {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"):
                    index += 1
                    return true
                default: return false
                }
            }
        }

        /// A number or `true`, `false`, `null`.
        private mutating func scalar() -> Bool {
            switch peek {
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number()
            }
        }

        private mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard count <= bytes.count - index else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        private mutating func number() -> Bool {
            let start = index
            if peek == UInt8(ascii: "-") { index += 1 }
            var digits = 0
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
                case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"), UInt8(ascii: "-"): break
                default: return digits > 0 && index > start
                }
                index += 1
            }
            return digits > 0
        }

        /// Scans a string starting at its opening quote; returns the range between the quotes and whether it has escapes.
        private mutating func string() -> (Range<Int>, Bool)? {
            index += 1
            let start = index
            var escaped = false
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    defer { index += 1 }
                    return (start..<index, escaped)
                }
                if byte < 0x20 { return nil }
                if byte == UInt8(ascii: "\\") {
                    escaped = true
                    guard index + 1 < bytes.count else { return nil }
                    switch bytes[index + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        index += 2
                    case UInt8(ascii: "u"):
                        guard JSONMemberScanner.hex4(bytes, at: index + 2) != nil else { return nil }
                        index += 6
                    default: return nil
                    }
                    continue
                }
                index += 1
            }
            return nil
        }
    }

    /// The value of the four hex digits at `position`, or `nil`.
    private static func hex4(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> UInt32? {
        guard position >= 0, position <= bytes.count - 4 else { return nil }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = bytes[position + offset]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
            value = value << 4 | digit
        }
        return value
    }

    /// The contents of a JSON string (between its quotes) with its escape sequences decoded; a surrogate pair becomes
    /// one scalar, an unpaired surrogate or a malformed escape U+FFFD.
    static func unescape(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        var scalars = String.UnicodeScalarView()
        var utf8: [UInt8] = []
        var position = 0
        func flush() {
            if !utf8.isEmpty {
                scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
                utf8.removeAll(keepingCapacity: true)
            }
        }
        while position < bytes.count {
            let byte = bytes[position]
            guard byte == UInt8(ascii: "\\"), position + 1 < bytes.count else {
                utf8.append(byte)
                position += 1
                continue
            }
            flush()
            let escape = bytes[position + 1]
            position += 2
            switch escape {
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                guard var code = hex4(bytes, at: position) else {
                    scalars.append("\u{FFFD}")
                    continue
                }
                position += 4
                if (0xD800..<0xDC00).contains(code), position + 6 <= bytes.count, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u"), let low = hex4(bytes, at: position + 2), (0xDC00..<0xE000).contains(low)
                {
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    position += 6
                }
                scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
            default: scalars.append(Unicode.Scalar(escape))
            }
        }
        flush()
        return String(scalars)
    }
}
