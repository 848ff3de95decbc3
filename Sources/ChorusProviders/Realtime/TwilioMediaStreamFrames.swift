import Foundation
import NIOCore

/// A frame Twilio sends on a bidirectional Media Stream (`<Connect><Stream>`).
///
/// `media` frames (50 per second) are parsed with ``JSONMemberScanner`` and keep the base64 payload as a slice of the
/// received bytes, so relaying it copies nothing; the rare frames (`start`, `stop`) are decoded with `JSONDecoder`.
public enum TwilioMediaStreamFrame: Sendable, Equatable {
    /// The first frame: the WebSocket is connected.
    case connected
    /// The stream started: the call was answered and audio begins.
    case start(TwilioStreamStart)
    /// 20 ms of the callee's audio (base64 μ-law, 8 kHz), with Twilio's `timestamp` (ms since the stream started).
    case media(payload: ByteBuffer, timestamp: Int?)
    /// Audio queued before the mark `name` has played (or was cleared).
    case mark(name: String)
    /// A key the callee pressed.
    case dtmf(digit: String)
    /// The last frame: the stream is over.
    case stop
    /// An event this bridge does not use.
    case other(event: String)

    /// Parses one text message, or `nil` when it is not a Twilio frame.
    public static func parse(_ text: ByteBuffer) -> TwilioMediaStreamFrame? {
        let scanned = text.withUnsafeReadableBytes { raw -> Scanned? in
            let bytes = raw.bindMemory(to: UInt8.self)
            var scanned = Scanned()
            let base = bytes.baseAddress
            let valid = JSONMemberScanner.scan(bytes) { member in
                if member.depth == 1, member.keyIs("event") {
                    scanned.event = member.string
                } else if member.depth == 2, member.keyIs("payload"), member.isBase64, let base {
                    let start = member.value.baseAddress.map { $0 - base } ?? 0
                    scanned.payload = start..<(start + member.value.count)
                } else if member.depth == 2, member.keyIs("timestamp") {
                    scanned.timestamp = member.integer
                } else if member.depth == 2, member.keyIs("name"), !member.hasEscapes {
                    scanned.markName = member.string
                } else if member.depth == 2, member.keyIs("digit") {
                    scanned.digit = member.string
                }
                return true
            }
            if valid, scanned.event == "start" { scanned.start = try? JSONDecoder().decode(StartFrame.self, from: Data(bytes)).start }
            return valid ? scanned : nil
        }
        guard let scanned, let event = scanned.event else { return nil }
        switch event {
        case "media":
            guard let payload = scanned.payload,
                let slice = text.getSlice(at: text.readerIndex + payload.lowerBound, length: payload.count)
            else { return nil }
            return .media(payload: slice, timestamp: scanned.timestamp)
        case "connected": return .connected
        case "start": return scanned.start.map { .start($0) }
        case "mark": return scanned.markName.map { .mark(name: $0) }
        case "dtmf": return .dtmf(digit: scanned.digit ?? "")
        case "stop": return .stop
        default: return .other(event: event)
        }
    }

    private struct Scanned {
        var event: String?
        var payload: Range<Int>?
        var timestamp: Int?
        var markName: String?
        var digit: String?
        var start: TwilioStreamStart?
    }

    private struct StartFrame: Decodable {
        let start: TwilioStreamStart

        enum CodingKeys: String, CodingKey {
            case start
        }
    }
}

/// The `start` frame's details.
public struct TwilioStreamStart: Sendable, Equatable, Codable {
    public let streamSid: String
    public let accountSid: String
    public let callSid: String
    public let tracks: [String]
    /// The `<Parameter>`s of the `<Stream>` verb.
    public let customParameters: [String: String]
    public let mediaFormat: MediaFormat

    /// The audio format of the stream (`audio/x-mulaw`, 8000 Hz, mono).
    public struct MediaFormat: Sendable, Equatable, Codable {
        public let encoding: String
        public let sampleRate: Int
        public let channels: Int

        public init(encoding: String, sampleRate: Int, channels: Int) {
            self.encoding = encoding
            self.sampleRate = sampleRate
            self.channels = channels
        }

        enum CodingKeys: String, CodingKey {
            case encoding
            case sampleRate
            case channels
        }
    }

    public init(
        streamSid: String, accountSid: String, callSid: String, tracks: [String], customParameters: [String: String],
        mediaFormat: MediaFormat
    ) {
        self.streamSid = streamSid
        self.accountSid = accountSid
        self.callSid = callSid
        self.tracks = tracks
        self.customParameters = customParameters
        self.mediaFormat = mediaFormat
    }

    enum CodingKeys: String, CodingKey {
        case streamSid
        case accountSid
        case callSid
        case tracks
        case customParameters
        case mediaFormat
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        streamSid = try container.decode(String.self, forKey: .streamSid)
        accountSid = try container.decodeIfPresent(String.self, forKey: .accountSid) ?? ""
        callSid = try container.decode(String.self, forKey: .callSid)
        tracks = try container.decodeIfPresent([String].self, forKey: .tracks) ?? ["inbound"]
        customParameters = try container.decodeIfPresent([String: String].self, forKey: .customParameters) ?? [:]
        mediaFormat =
            try container.decodeIfPresent(MediaFormat.self, forKey: .mediaFormat)
            ?? MediaFormat(encoding: "audio/x-mulaw", sampleRate: 8_000, channels: 1)
    }
}

/// The three frames a server may send on a bidirectional Media Stream, written straight into a buffer (with room for
/// the WebSocket frame header in front, see ``MediaWebSocket/messageBuffer(capacity:allocator:)``).
public enum TwilioMediaStreamOutbound {
    /// `{"event":"media","streamSid":…,"media":{"payload":…}}`.
    public static func media(streamSid: String, payload: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = MediaWebSocket.messageBuffer(capacity: 64 + streamSid.utf8.count + payload.readableBytes, allocator: allocator)
        buffer.writeStaticString("{\"event\":\"media\",\"streamSid\":\"")
        buffer.writeString(streamSid)
        buffer.writeStaticString("\",\"media\":{\"payload\":\"")
        buffer.writeImmutableBuffer(payload)
        buffer.writeStaticString("\"}}")
        return buffer
    }

    /// `{"event":"mark","streamSid":…,"mark":{"name":…}}`.
    public static func mark(streamSid: String, name: String, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = MediaWebSocket.messageBuffer(capacity: 64 + streamSid.utf8.count + name.utf8.count, allocator: allocator)
        buffer.writeStaticString("{\"event\":\"mark\",\"streamSid\":\"")
        buffer.writeString(streamSid)
        buffer.writeStaticString("\",\"mark\":{\"name\":\"")
        buffer.writeString(name)
        buffer.writeStaticString("\"}}")
        return buffer
    }

    /// `{"event":"clear","streamSid":…}`.
    public static func clear(streamSid: String, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = MediaWebSocket.messageBuffer(capacity: 48 + streamSid.utf8.count, allocator: allocator)
        buffer.writeStaticString("{\"event\":\"clear\",\"streamSid\":\"")
        buffer.writeString(streamSid)
        buffer.writeStaticString("\"}")
        return buffer
    }
}
