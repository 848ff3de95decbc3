import ChorusCore
import Foundation
import NIOConcurrencyHelpers

// Wire helpers of the OpenAI Realtime emulator: a small ordered JSON value for events and session objects, the
// append fast path (a flat-object scan and an allocation-free base64 decoder), G.711 A-law, and the shared cache of
// rendered reply audio.

// MARK: - JSON values

/// A JSON value whose objects keep their keys in insertion order (events read naturally: `type`, `event_id`, ...).
enum RealtimeJSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([RealtimeJSON])
    case object(RealtimeObject)

    /// The string, if this is one.
    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, if this is an integral number.
    var int: Int? {
        switch self {
        case .int(let value): return value
        case .double(let value) where value.rounded() == value && abs(value) < 1e15: return Int(value)
        default: return nil
        }
    }

    /// The number, if this is one.
    var number: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The boolean, if this is one.
    var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The object, if this is one.
    var object: RealtimeObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The array, if this is one.
    var array: [RealtimeJSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    var isNull: Bool { self == .null }

    /// A JSON type name for error messages.
    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int: return "integer"
        case .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// The compact JSON text.
    var text: String {
        var output = ""
        write(into: &output)
        return output
    }

    func write(into output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .int(let value): output += String(value)
        case .double(let value):
            if value.isFinite {
                output += value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(value)
            } else {
                output += "null"
            }
        case .string(let value): Self.writeString(value, into: &output)
        case .array(let values):
            output += "["
            for (index, value) in values.enumerated() {
                if index > 0 { output += "," }
                value.write(into: &output)
            }
            output += "]"
        case .object(let object): object.write(into: &output)
        }
    }

    static func writeString(_ value: String, into output: inout String) {
        output += "\""
        var plain = true
        for byte in value.utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            plain = false
            break
        }
        if plain {
            output += value
        } else {
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": output += "\\\""
                case "\\": output += "\\\\"
                case "\n": output += "\\n"
                case "\r": output += "\\r"
                case "\t": output += "\\t"
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }

    /// Parses JSON text; `nil` when it is not valid JSON.
    static func parse(_ text: String) -> RealtimeJSON? {
        try? JSONDecoder().decode(RealtimeJSON.self, from: Data(text.utf8))
    }
}

extension RealtimeJSON: Decodable {
    init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var values: [RealtimeJSON] = []
            while !array.isAtEnd { values.append(try array.decode(RealtimeJSON.self)) }
            self = .array(values)
            return
        }
        if let keyed = try? decoder.container(keyedBy: AnyKey.self) {
            var object = RealtimeObject()
            // Decoded objects lose their key order; sorting keeps the result deterministic.
            for key in keyed.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                object[key.stringValue] = try keyed.decode(RealtimeJSON.self, forKey: key)
            }
            self = .object(object)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int.self) {
            self = .int(value)
        } else if let value = try? single.decode(Double.self) {
            self = .double(value)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    private struct AnyKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

extension RealtimeJSON: Encodable {
    func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .int(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .double(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .string(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .array(let values):
            var array = encoder.unkeyedContainer()
            for value in values { try array.encode(value) }
        case .object(let object):
            var keyed = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in object.members { try keyed.encode(value, forKey: AnyKey(stringValue: key)) }
        }
    }
}

extension RealtimeJSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral
{
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int) { self = .int(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(floatLiteral value: Double) { self = .double(value) }
    init(arrayLiteral elements: RealtimeJSON...) { self = .array(elements) }
    init(nilLiteral: ()) { self = .null }
    init(dictionaryLiteral elements: (String, RealtimeJSON)...) {
        var object = RealtimeObject()
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}

/// A JSON object with ordered keys (small objects: lookups are linear).
struct RealtimeObject: Sendable, Equatable {
    private(set) var members: [(String, RealtimeJSON)] = []

    init() {}

    var keys: [String] { members.map(\.0) }

    func contains(_ key: String) -> Bool { members.contains { $0.0 == key } }

    /// The member's value; setting `nil` removes the member, setting a value replaces it in place or appends it.
    subscript(key: String) -> RealtimeJSON? {
        get { members.first { $0.0 == key }?.1 }
        set {
            if let index = members.firstIndex(where: { $0.0 == key }) {
                if let newValue { members[index].1 = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append((key, newValue))
            }
        }
    }

    func write(into output: inout String) {
        output += "{"
        for (index, (key, value)) in members.enumerated() {
            if index > 0 { output += "," }
            RealtimeJSON.writeString(key, into: &output)
            output += ":"
            value.write(into: &output)
        }
        output += "}"
    }

    static func == (lhs: RealtimeObject, rhs: RealtimeObject) -> Bool {
        lhs.members.count == rhs.members.count && lhs.members.allSatisfy { rhs[$0.0] == $0.1 }
    }
}

// MARK: - The append fast path

/// The members of a flat JSON object whose values are all plain strings (no escapes): exactly what an
/// `input_audio_buffer.append` event is. Anything else (nesting, numbers, escapes) is left to the full decoder.
struct RealtimeFlatMembers {
    var type: Range<Int>?
    var audio: Range<Int>?
    var eventID: Range<Int>?

    /// Scans `bytes`; `nil` when the text is not a flat object of plain string members.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> RealtimeFlatMembers? {
        let count = bytes.count
        var index = 0
        var result = RealtimeFlatMembers()
        @inline(__always) func skipSpace() {
            while index < count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }
        /// Reads a plain string whose opening quote is at `index`; returns its contents' range.
        @inline(__always) func readString() -> Range<Int>? {
            guard index < count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            let start = index
            while index < count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return start..<(index - 1)
                }
                if byte == UInt8(ascii: "\\") { return nil }
                index += 1
            }
            return nil
        }
        func keyIs(_ range: Range<Int>, _ name: StaticString) -> Bool {
            guard range.count == name.utf8CodeUnitCount else { return false }
            let expected = name.utf8Start
            for offset in 0..<range.count where bytes[range.lowerBound + offset] != expected[offset] { return false }
            return true
        }

        skipSpace()
        guard index < count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        skipSpace()
        if index < count, bytes[index] == UInt8(ascii: "}") { return result }
        while true {
            skipSpace()
            guard let key = readString() else { return nil }
            skipSpace()
            guard index < count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            skipSpace()
            guard let value = readString() else { return nil }
            if keyIs(key, "type") {
                result.type = value
            } else if keyIs(key, "audio") {
                result.audio = value
            } else if keyIs(key, "event_id") {
                result.eventID = value
            }
            skipSpace()
            guard index < count else { return nil }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { return nil }
            index += 1
            skipSpace()
            return index == count ? result : nil
        }
    }

    static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ text: StaticString) -> Bool {
        guard range.count == text.utf8CodeUnitCount else { return false }
        let expected = text.utf8Start
        for offset in 0..<range.count where bytes[range.lowerBound + offset] != expected[offset] { return false }
        return true
    }
}

/// Standard base64 (RFC 4648 §4) decoding straight from UTF-8 bytes, without intermediate allocations.
enum RealtimeBase64 {
    private static let invalid: UInt8 = 0xFF
    private static let padding: UInt8 = 0xFE

    private static let table: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(byte)] = UInt8(index)
        }
        table[Int(UInt8(ascii: "="))] = padding
        return table
    }()

    /// Decodes `bytes[range]` and appends the result to `output`; returns `false` (leaving `output` unchanged) when the
    /// text is not valid base64.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, appendingTo output: inout [UInt8]) -> Bool {
        guard range.count % 4 == 0 else { return false }
        guard !range.isEmpty else { return true }
        let start = output.count
        let capacity = range.count / 4 * 3
        output.append(contentsOf: repeatElement(0, count: capacity))
        let produced = output.withUnsafeMutableBufferPointer { output in
            table.withUnsafeBufferPointer { table -> Int? in
                var written = start
                var index = range.lowerBound
                while index < range.upperBound {
                    let a = table[Int(bytes[index])]
                    let b = table[Int(bytes[index + 1])]
                    let c = table[Int(bytes[index + 2])]
                    let d = table[Int(bytes[index + 3])]
                    index += 4
                    guard a < 64, b < 64 else { return nil }
                    output[written] = a << 2 | b >> 4
                    written += 1
                    if c == padding {
                        guard d == padding, index == range.upperBound else { return nil }
                        break
                    }
                    guard c < 64 else { return nil }
                    output[written] = b << 4 | c >> 2
                    written += 1
                    if d == padding {
                        guard index == range.upperBound else { return nil }
                        break
                    }
                    guard d < 64 else { return nil }
                    output[written] = c << 6 | d
                    written += 1
                }
                return written - start
            }
        }
        guard let produced else {
            output.removeLast(capacity)
            return false
        }
        output.removeLast(capacity - produced)
        return true
    }
}

// MARK: - G.711 A-law

/// G.711 A-law (`audio/pcma`), the European telephone format.
enum RealtimeALaw {
    /// Encodes one 16-bit linear PCM sample.
    static func encode(_ sample: Int16) -> UInt8 {
        var value = Int32(sample) >> 3
        let mask: Int32
        if value >= 0 {
            mask = 0xD5
        } else {
            mask = 0x55
            value = -value - 1
        }
        let segmentEnds: [Int32] = [0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF]
        var segment: Int32 = 0
        while segment < 8 && value > segmentEnds[Int(segment)] { segment += 1 }
        if segment >= 8 { return UInt8(truncatingIfNeeded: 0x7F ^ mask) }
        var encoded = segment << 4
        encoded |= segment < 2 ? (value >> 1) & 0x0F : (value >> segment) & 0x0F
        return UInt8(truncatingIfNeeded: encoded ^ mask)
    }

    /// Decodes one A-law byte to 16-bit linear PCM.
    static func decode(_ byte: UInt8) -> Int16 {
        let value = Int32(byte ^ 0x55)
        var magnitude = (value & 0x0F) << 4
        let segment = (value & 0x70) >> 4
        switch segment {
        case 0: magnitude += 8
        case 1: magnitude += 0x108
        default: magnitude = (magnitude + 0x108) << (segment - 1)
        }
        return Int16(value & 0x80 != 0 ? magnitude : -magnitude)
    }
}

// MARK: - Audio formats

/// The three Realtime audio formats (`RealtimeAudioFormats`).
enum RealtimeAudioFormat: String, Sendable, Equatable {
    /// 24 kHz 16-bit little-endian PCM.
    case pcm = "audio/pcm"
    /// 8 kHz G.711 μ-law.
    case pcmu = "audio/pcmu"
    /// 8 kHz G.711 A-law.
    case pcma = "audio/pcma"

    /// Bytes per millisecond of audio.
    var bytesPerMillisecond: Int { self == .pcm ? 48 : 8 }

    /// The format object as the session shows it.
    var json: RealtimeJSON {
        self == .pcm ? ["type": "audio/pcm", "rate": 24_000] : ["type": .string(rawValue)]
    }

    /// Converts 8 kHz μ-law speech to this format.
    func convert(fromMuLaw audio: [UInt8]) -> [UInt8] {
        switch self {
        case .pcmu:
            return audio
        case .pcma:
            return audio.map { RealtimeALaw.encode(MuLaw.decode($0)) }
        case .pcm:
            let upsampled = WAV.resample(MuLaw.decode(audio), from: MuLaw.sampleRate, to: 24_000)
            var bytes = [UInt8]()
            bytes.reserveCapacity(upsampled.count * 2)
            for sample in upsampled {
                let bits = UInt16(bitPattern: sample)
                bytes.append(UInt8(truncatingIfNeeded: bits))
                bytes.append(UInt8(truncatingIfNeeded: bits >> 8))
            }
            return bytes
        }
    }
}

// MARK: - Rendered replies

/// A reply line rendered in one voice and format, cut into base64 chunks ready for `response.output_audio.delta`.
struct RenderedSpeech: Sendable {
    /// Base64 of each chunk, in order.
    let chunks: [String]
    /// Bytes per full chunk (the last one may be shorter).
    let chunkBytes: Int
    /// All audio bytes.
    let totalBytes: Int
    /// The format's bytes per millisecond.
    let bytesPerMillisecond: Int

    /// Milliseconds of audio in the first `count` chunks.
    func milliseconds(chunks count: Int) -> Int {
        min(count * chunkBytes, totalBytes) / bytesPerMillisecond
    }

    var durationMs: Int { totalBytes / bytesPerMillisecond }
}

/// Renders reply lines once and shares them between sessions: 200 concurrent calls saying the same lines cost one
/// synthesis each. Concurrent requests for one line wait for the same rendering.
final class RealtimeSpeechCache: Sendable {
    struct Key: Hashable, Sendable {
        let text: String
        let voice: Int
        let format: RealtimeAudioFormat
        let chunkMs: Int
    }

    private let entries = NIOLockedValueBox<[Key: Task<RenderedSpeech, Never>]>([:])
    private let finished = NIOLockedValueBox<[Key: RenderedSpeech]>([:])
    private let capacity = 512

    /// The rendering if it is ready.
    func cached(_ key: Key) -> RenderedSpeech? {
        finished.withLockedValue { $0[key] }
    }

    /// Renders (or waits for the rendering of) `key`.
    func render(_ key: Key) async -> RenderedSpeech {
        let task = entries.withLockedValue { entries -> Task<RenderedSpeech, Never> in
            if let existing = entries[key] { return existing }
            if entries.count >= capacity { entries.removeAll() }
            let task = Task.detached(priority: .medium) { Self.render(key) }
            entries[key] = task
            return task
        }
        let speech = await task.value
        finished.withLockedValue { finished in
            if finished.count >= capacity { finished.removeAll() }
            finished[key] = speech
        }
        return speech
    }

    static func render(_ key: Key) -> RenderedSpeech {
        let audio = key.format.convert(fromMuLaw: SandboxSpeech.speak(key.text, voice: key.voice))
        let chunkBytes = max(1, key.chunkMs * key.format.bytesPerMillisecond)
        var chunks: [String] = []
        chunks.reserveCapacity(audio.count / chunkBytes + 1)
        var start = 0
        while start < audio.count {
            let end = min(start + chunkBytes, audio.count)
            chunks.append(Data(audio[start..<end]).base64EncodedString())
            start = end
        }
        return RenderedSpeech(
            chunks: chunks, chunkBytes: chunkBytes, totalBytes: audio.count, bytesPerMillisecond: key.format.bytesPerMillisecond)
    }
}

// MARK: - Identifiers

enum RealtimeIdentifier {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)

    /// `prefix` + `_` + 21 random alphanumerics, like OpenAI's ids (`sess_C9G5QPteg4UIbotdKLoYQ`).
    static func make(_ prefix: String, length: Int = 21) -> String {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
        return prefix + "_" + String(decoding: random, as: UTF8.self)
    }
}
