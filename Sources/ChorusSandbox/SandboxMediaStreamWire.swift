import ChorusCore
import ChorusProviders
import Foundation

/// The JSON text frames of a Twilio bidirectional Media Stream, built and parsed cheaply.
///
/// A benchmark runs hundreds of emulated calls at 50 frames per second each, so the frames Twilio sends are built by
/// string concatenation (no `JSONEncoder`), and the frames the application sends are read by ``JSONMemberScanner`` (the
/// validating scanner the call bridge reads Twilio's frames with), which picks out only `event`, `media.payload` and
/// `mark.name`, decoding base64 straight from the received bytes.
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
            var event: String?
            var payload: JSONMemberScanner.Member?
            var name: String?
            let valid = JSONMemberScanner.scan(bytes, maxDepth: 2) { member in
                if member.depth == 1, member.keyIs("event"), member.isString {
                    event = member.unescaped
                } else if member.depth == 2, member.containerIs("media"), member.keyIs("payload"), member.isString {
                    payload = member
                } else if member.depth == 2, member.containerIs("mark"), member.keyIs("name"), member.isString {
                    name = member.unescaped
                }
                return true
            }
            guard valid else { return .invalid("invalid JSON") }
            guard let event else { return .invalid("no \"event\"") }
            switch event {
            case "media":
                guard let payload else { return .invalid("media without media.payload") }
                let decoded: [UInt8]?
                if payload.hasEscapes {
                    var unescaped = payload.unescaped
                    decoded = unescaped.withUTF8 { Base64.decode(UnsafeBufferPointer(rebasing: $0[...])) }
                } else {
                    decoded = Base64.decode(payload.value)
                }
                guard let decoded else { return .invalid("media.payload is not base64") }
                return .media(decoded)
            case "mark":
                guard let name else { return .invalid("mark without mark.name") }
                return .mark(name)
            case "clear":
                return .clear
            default:
                return .other(event)
            }
        }
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
