import Crypto
import Foundation

/// One voice setting that changes the generated audio (ElevenLabs stability, OpenAI instructions, speed, …).
public enum SpeechSettingValue: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral
{
    case text(String)
    /// Encoded as Swift's shortest round-tripping decimal (`0.5`, `1.0`), the same on every platform.
    case number(Double)
    case flag(Bool)

    public init(stringLiteral value: String) { self = .text(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .flag(value) }

    fileprivate var encoded: (tag: UInt8, text: String) {
        switch self {
        case .text(let value): (0x74, value)  // "t"
        case .number(let value): (0x6E, value.description)  // "n"
        case .flag(let value): (0x62, value ? "true" : "false")  // "b"
        }
    }
}

/// The identity of a piece of generated speech: equal keys mean the same audio may be served again.
///
/// The key is the SHA-256 (lower-case hex) of a canonical encoding of every input that changes the audio: the text
/// (NFC-normalised, leading and trailing whitespace trimmed, so visually identical texts share their audio), the
/// provider, voice id, model, output format and settings. The encoding is unambiguous: it starts with the ASCII
/// ``domain`` string, then each field as a one-byte tag, an 8-byte big-endian UTF-8 length and the UTF-8 bytes, in
/// the fixed order text (`T`), provider (`P`), voice (`V`), model (`M`), format (`F`), then the number of settings
/// (8 bytes) and each setting, sorted by the UTF-8 bytes of its name, as its name (`K`) and value (`t`, `n` or `b`
/// for text, number, flag). No two different inputs encode alike, so no concatenation can collide.
public struct SpeechCacheKey: Sendable, Hashable, CustomStringConvertible {
    /// Starts every encoding; a new version of the encoding changes this and with it every key.
    public static let domain = "chorus.speech-cache.v1"

    /// 64 lower-case hexadecimal digits.
    public let hexDigest: String

    public init(
        text: String, provider: String, voiceID: String, model: String, format: String,
        settings: [String: SpeechSettingValue] = [:]
    ) {
        var encoder = Encoder()
        encoder.bytes.append(contentsOf: Array(Self.domain.utf8))
        encoder.field(0x54, Self.canonicalText(text))  // "T"
        encoder.field(0x50, provider)  // "P"
        encoder.field(0x56, voiceID)  // "V"
        encoder.field(0x4D, model)  // "M"
        encoder.field(0x46, format)  // "F"
        encoder.length(settings.count)
        for (name, value) in settings.sorted(by: { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }) {
            encoder.field(0x4B, name)  // "K"
            let (tag, text) = value.encoded
            encoder.field(tag, text)
        }
        hexDigest = SHA256.hash(data: encoder.bytes).map { String(format: "%02x", $0) }.joined()
    }

    public var description: String { hexDigest }

    /// The text as it is keyed: NFC, trimmed of whitespace and newlines at both ends.
    public static func canonicalText(_ text: String) -> String {
        text.precomposedStringWithCanonicalMapping.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private struct Encoder {
        var bytes: [UInt8] = []

        mutating func length(_ value: Int) {
            let value = UInt64(value)
            bytes.append(contentsOf: (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) })
        }

        mutating func field(_ tag: UInt8, _ text: String) {
            let utf8 = Array(text.utf8)
            bytes.append(tag)
            length(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }
}
