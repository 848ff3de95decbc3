import ChorusCore
import Foundation

/// The JSON text frames of a Twilio bidirectional Media Stream, built and parsed cheaply.
///
/// A benchmark runs hundreds of emulated calls at 50 frames per second each, so the frames Twilio sends are built by
/// string concatenation (no `JSONEncoder`), and the frames the application sends are read by a small validating scanner
/// that picks out only `event`, `media.payload` and `mark.name`, decoding base64 straight from the received bytes.
enum MediaStreamWire {
    // MARK: - Frames Twilio sends

    /// `{"event":"connected","protocol":"Call","version":"1.0.0"}`, the first frame.
    static let connected = #"{"event":"connected","protocol":"Call","version":"1.0.0"}"#

    /// The `start` frame.
    static func start(
        sequenceNumber: Int, streamSID: String, accountSID: String, callSID: String, customParameters: [(String, String)]
    ) -> String {
        var parameters = ""
        for (index, (name, value)) in customParameters.enumerated() {
            if index > 0 { parameters += "," }
            parameters += quoted(name) + ":" + quoted(value)
        }
        return #"{"event":"start","sequenceNumber":""# + String(sequenceNumber) + #"","start":{"accountSid":"# + quoted(accountSID)
            + #","streamSid":"# + quoted(streamSID) + #","callSid":"# + quoted(callSID)
            + #","tracks":["inbound"],"customParameters":{"# + parameters
            + #"},"mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1}},"streamSid":"# + quoted(streamSID)
            + "}"
    }

    /// One 20 ms `media` frame of the callee's microphone; `payload` is already base64.
    static func media(sequenceNumber: Int, chunk: Int, timestamp: Int, payload: String, streamSID: String) -> String {
        var frame = ""
        frame.reserveCapacity(payload.utf8.count + 170)
        frame += #"{"event":"media","sequenceNumber":""#
        frame += String(sequenceNumber)
        frame += #"","media":{"track":"inbound","chunk":""#
        frame += String(chunk)
        frame += #"","timestamp":""#
        frame += String(timestamp)
        frame += #"","payload":""#
        frame += payload
        frame += #""},"streamSid":""#
        frame += streamSID
        frame += #""}"#
        return frame
    }

    /// A `mark` frame: the audio the application queued before the mark `name` has played (or was cleared).
    static func mark(sequenceNumber: Int, streamSID: String, name: String) -> String {
        #"{"event":"mark","sequenceNumber":""# + String(sequenceNumber) + #"","streamSid":""# + streamSID + #"","mark":{"name":"#
            + quoted(name) + "}}"
    }

    /// The `dtmf` frame of a key the callee pressed.
    static func dtmf(sequenceNumber: Int, streamSID: String, digit: String) -> String {
        #"{"event":"dtmf","streamSid":""# + streamSID + #"","sequenceNumber":""# + String(sequenceNumber)
            + #"","dtmf":{"track":"inbound_track","digit":"# + quoted(digit) + "}}"
    }

    /// The `stop` frame, the last one.
    static func stop(sequenceNumber: Int, streamSID: String, accountSID: String, callSID: String) -> String {
        #"{"event":"stop","sequenceNumber":""# + String(sequenceNumber) + #"","streamSid":""# + streamSID
            + #"","stop":{"accountSid":"# + quoted(accountSID) + #","callSid":"# + quoted(callSID) + "}}"
    }

    /// `text` as a JSON string literal.
    static func quoted(_ text: String) -> String {
        var result = ""
        RealtimeJSON.writeString(text, into: &result)
        return result
    }

    // MARK: - Frames the application sends

    /// A frame received from the application.
    enum Inbound: Equatable {
        /// Audio to play (μ-law bytes, decoded from base64).
        case media([UInt8])
        /// A mark to echo once the audio queued before it has played.
        case mark(String)
        /// Drop all queued audio.
        case clear
        /// An event the emulator ignores.
        case other(String)
        /// Not a valid frame; the reason.
        case invalid(String)
    }

    /// Parses one text frame from the application.
    static func parse(_ text: String) -> Inbound {
        var text = text
        return text.withUTF8 { bytes -> Inbound in
            var scanner = JSONFrameScanner(bytes: bytes)
            guard scanner.document() else { return .invalid("invalid JSON") }
            guard let event = scanner.event.map({ scanner.text($0, escaped: scanner.eventEscaped) }) else {
                return .invalid("no \"event\"")
            }
            switch event {
            case "media":
                guard let payload = scanner.payload else { return .invalid("media without media.payload") }
                let decoded: [UInt8]?
                if scanner.payloadEscaped {
                    var unescaped = scanner.text(payload, escaped: true)
                    decoded = unescaped.withUTF8 { Base64.decode(UnsafeBufferPointer(rebasing: $0[...])) }
                } else {
                    decoded = Base64.decode(UnsafeBufferPointer(rebasing: bytes[payload]))
                }
                guard let decoded else { return .invalid("media.payload is not base64") }
                return .media(decoded)
            case "mark":
                guard let name = scanner.name else { return .invalid("mark without mark.name") }
                return .mark(scanner.text(name, escaped: scanner.nameEscaped))
            case "clear":
                return .clear
            default:
                return .other(event)
            }
        }
    }
}

/// A single-pass validating JSON scanner that remembers where `event` (top level), `media.payload` and `mark.name`
/// are in the frame.
struct JSONFrameScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var event: Range<Int>?
    var eventEscaped = false
    var payload: Range<Int>?
    var payloadEscaped = false
    var name: Range<Int>?
    var nameEscaped = false

    private static let maxDepth = 32
    private static let invalidHex: UInt32 = 0xFFFF_FFFF

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Scans the whole text; `true` when it is one valid JSON object.
    mutating func document() -> Bool {
        skipSpace()
        guard peek == UInt8(ascii: "{"), object(depth: 1, container: nil) else { return false }
        skipSpace()
        return index == bytes.count
    }

    /// The string at `range` (the bytes between the quotes), unescaped when needed.
    func text(_ range: Range<Int>, escaped: Bool) -> String {
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        guard escaped else { return String(decoding: slice, as: UTF8.self) }
        var scalars = String.UnicodeScalarView()
        var utf8: [UInt8] = []
        var position = range.lowerBound
        func flush() {
            if !utf8.isEmpty {
                scalars.append(contentsOf: String(decoding: utf8, as: UTF8.self).unicodeScalars)
                utf8.removeAll(keepingCapacity: true)
            }
        }
        while position < range.upperBound {
            let byte = bytes[position]
            guard byte == UInt8(ascii: "\\"), position + 1 < range.upperBound else {
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
                var code = hex4(at: position)
                position += 4
                if (0xD800..<0xDC00).contains(code), position + 6 <= range.upperBound, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                {
                    let low = hex4(at: position + 2)
                    if (0xDC00..<0xE000).contains(low) {
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        position += 6
                    }
                }
                scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
            default: scalars.append(Unicode.Scalar(escape))
            }
        }
        flush()
        return String(scalars)
    }

    // MARK: - Grammar

    private var peek: UInt8 { index < bytes.count ? bytes[index] : 0 }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): index += 1
            default: return
            }
        }
    }

    private mutating func object(depth: Int, container: Range<Int>?) -> Bool {
        guard depth <= Self.maxDepth else { return false }
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
            switch peek {
            case UInt8(ascii: "\""):
                guard let (value, escaped) = string() else { return false }
                note(depth: depth, container: container, key: key, value: value, escaped: escaped)
            case UInt8(ascii: "{"):
                guard object(depth: depth + 1, container: key) else { return false }
            default:
                guard value(depth: depth + 1) else { return false }
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

    private mutating func array(depth: Int) -> Bool {
        guard depth <= Self.maxDepth else { return false }
        index += 1
        skipSpace()
        if peek == UInt8(ascii: "]") {
            index += 1
            return true
        }
        while true {
            skipSpace()
            guard value(depth: depth + 1) else { return false }
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

    private mutating func value(depth: Int) -> Bool {
        switch peek {
        case UInt8(ascii: "\""): return string() != nil
        case UInt8(ascii: "{"): return object(depth: depth, container: nil)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        default: return number()
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
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
                    guard index + 6 <= bytes.count, hex4(at: index + 2) != Self.invalidHex else { return nil }
                    index += 6
                default: return nil
                }
                continue
            }
            index += 1
        }
        return nil
    }

    /// The value of four hex digits at `position`, or ``invalidHex``.
    private func hex4(at position: Int) -> UInt32 {
        guard position + 4 <= bytes.count else { return Self.invalidHex }
        var value: UInt32 = 0
        for offset in 0..<4 {
            let byte = bytes[position + offset]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: return Self.invalidHex
            }
            value = value << 4 | digit
        }
        return value
    }

    private mutating func note(depth: Int, container: Range<Int>?, key: Range<Int>, value: Range<Int>, escaped: Bool) {
        if depth == 1 {
            if equals(key, "event") { (event, eventEscaped) = (value, escaped) }
        } else if depth == 2, let container {
            if equals(container, "media"), equals(key, "payload") {
                (payload, payloadEscaped) = (value, escaped)
            } else if equals(container, "mark"), equals(key, "name") {
                (name, nameEscaped) = (value, escaped)
            }
        }
    }

    private func equals(_ range: Range<Int>, _ word: StaticString) -> Bool {
        guard range.count == word.utf8CodeUnitCount else { return false }
        for offset in 0..<range.count where bytes[range.lowerBound + offset] != word.utf8Start[offset] { return false }
        return true
    }
}

/// Standard base64 (RFC 4648 §4) decoding straight from UTF-8 bytes; padding is optional.
enum Base64 {
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(byte)] = UInt8(index)
        }
        return table
    }()

    /// The decoded bytes, or `nil` if `text` is not base64.
    static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var count = text.count
        while count > 0, text[count - 1] == UInt8(ascii: "=") { count -= 1 }
        guard text.count - count <= 2, count % 4 != 1 else { return nil }
        var output = [UInt8]()
        output.reserveCapacity(count / 4 * 3 + 2)
        var accumulator: UInt32 = 0
        var bits = 0
        let table = Self.table
        for position in 0..<count {
            let value = table[Int(text[position])]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return output
    }
}
