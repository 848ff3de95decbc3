import ChorusCore
import ChorusProviders
import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOWebSocket

/// The parsers of untrusted bytes, each as a fuzz target: one function that feeds arbitrary bytes to the parser and
/// returns normally whatever they are. A trap (overflow, out-of-range index, failed conversion) is the finding.
///
/// `chorus-fuzz` runs a target under libFuzzer (`scripts/fuzz`), and the committed corpora under `Fuzz/corpus/<name>/`
/// are replayed through the same functions by the ordinary test run (`FuzzCorpusTests`), so an input that once
/// crashed a parser stays a regression test.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// WAV, MP3 and M4A/AAC containers of uploaded recordings (`POST /audio`, voice samples).
    case audioContainer = "audio-container"
    /// 16-bit PCM WAV of speech answers, spliced into multi-voice playback; WAV recordings measured for the transcript's
    /// confidence (`SpeechActivity`).
    case wavSplice = "wav-splice"
    /// `Range` headers of audio, speech and story-file downloads.
    case byteRange = "byte-range"
    /// `Retry-After` and `retry-after-ms` of provider answers.
    case retryAfter = "retry-after"
    /// `application/x-www-form-urlencoded` bodies (Twilio's webhooks).
    case formURLEncoded = "form-urlencoded"
    /// `multipart/form-data` bodies (what the OpenAI and ElevenLabs emulators receive).
    case multipart
    /// The JSON member scanner under the call bridge's message parsers and the sandbox's Media Streams frames.
    case jsonMemberScanner = "json-member-scanner"
    /// Twilio Media Streams messages.
    case twilioMediaFrame = "twilio-media-frame"
    /// OpenAI Realtime server events (the call bridge's parser, and a speech session's events one a line).
    case realtimeEvent = "realtime-event"
    /// Raw WebSocket bytes into the call sockets' frame decoder and message handler.
    case webSocketFrames = "websocket-frames"
    /// App Store signed data (JWS: notifications, transactions, renewal information).
    case appStoreJWS = "app-store-jws"
    /// Answers of Apple's legacy `verifyReceipt` endpoint.
    case appStoreReceipt = "app-store-receipt"
    /// What text models answer: summaries, urgency verdicts, stories, scenes, visual profiles, event suggestions, and
    /// the price-table overrides an operator configures.
    case modelAnswers = "model-answers"

    /// Runs the target on one input.
    public func run(_ bytes: [UInt8]) {
        switch self {
        case .audioContainer:
            _ = try? AudioContainer.inspect(bytes)
        case .wavSplice:
            _ = try? WAVSplicer.splice([WAVClip(messageID: "m", sender: "s", wav: Data(bytes))])
            _ = SpeechActivity.measure(wav: Data(bytes))
        case .byteRange:
            // The first eight bytes are the blob's size, the rest the header.
            let size = bytes.prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
            let header = String(decoding: bytes.dropFirst(8), as: UTF8.self)
            if case .range(let range) = ByteRange.parse(header, size: size) {
                precondition(range.lowerBound >= 0 && range.upperBound <= max(size, 0) && !range.isEmpty, "range \(range) of \(size)")
            }
        case .retryAfter:
            let text = String(decoding: bytes, as: UTF8.self)
            for name in ["retry-after", "retry-after-ms"] {
                if let delay = ProviderHTTP.retryAfter(HTTPHeaders([(name, text)])) {
                    precondition(delay >= .zero && delay <= ProviderHTTP.longestRetryAfter, "delay \(delay)")
                }
            }
        case .formURLEncoded:
            _ = TwilioFormEncoding.decode(String(decoding: bytes, as: UTF8.self))
        case .multipart:
            // The first line is the content type (its boundary), the rest the body.
            let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
            let contentType = String(decoding: bytes[..<newline], as: UTF8.self)
            let body = Array(bytes[min(newline + 1, bytes.endIndex)...])
            if let boundary = MultipartForm.boundary(contentType: contentType), let form = MultipartForm(bytes: body, boundary: boundary) {
                _ = form.values("file") + form.values("model")
                _ = form.file("file")
            }
        case .jsonMemberScanner:
            bytes.withUnsafeBufferPointer { buffer in
                _ = JSONMemberScanner.scan(buffer, maxDepth: 4) { member in
                    _ = member.string
                    _ = member.unescaped
                    _ = member.containerIs("media")
                    _ = member.integer
                    _ = member.isBase64
                    return true
                }
            }
        case .twilioMediaFrame:
            _ = TwilioMediaStreamFrame.parse(ByteBuffer(bytes: bytes))
        case .realtimeEvent:
            _ = RealtimeServerEvent.parse(ByteBuffer(bytes: bytes))
            // The same bytes as the messages of a speech session, one a line.
            _ = try? OpenAIRealtimeSpeechSynthesizer.reading(of: bytes.split(separator: UInt8(ascii: "\n")).map { ByteBuffer(bytes: $0) })
        case .webSocketFrames:
            Self.feedWebSocket(bytes)
        case .appStoreJWS:
            Self.verifyJWS(String(decoding: bytes, as: UTF8.self))
        case .appStoreReceipt:
            _ = try? AppStoreReceiptVerifier.verification(
                ofAnswer: Data(bytes), productID: "com.chorus.fuzz", bundleID: "com.chorus.fuzz",
                acceptedEnvironments: [.production, .sandbox])
        case .modelAnswers:
            let json = Data(bytes)
            let text = String(decoding: bytes, as: UTF8.self)
            _ = try? ConversationSummary.decode(json: json)
            _ = try? UrgencyVerdict.decode(json: json)
            _ = try? ScenePlan.decode(json: json, story: "Once upon a time a fox found a lantern. The end.", count: 4)
            _ = try? StoryText.parse(text)
            _ = try? HeroVisualProfile.decode(json: json)
            _ = try? EventAssistPrompt.decode(json: json)
            _ = try? PriceTable.Overrides.decode(json: json)
        }
    }

    /// Bytes as a client sends them to a server socket: NIO's frame decoder, then ``MediaWebSocket``'s handler (which
    /// reassembles fragments, answers pings and protocol errors). Whatever it writes back is drained.
    private static func feedWebSocket(_ bytes: [UInt8]) {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        do {
            try channel.pipeline.syncOperations.addHandlers([
                ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 16)), WebSocketFrameEncoder(),
            ])
            let socket = try MediaWebSocket.install(on: channel, role: .server, maxMessageSize: 1 << 16)
            socket.onText { text in _ = TwilioMediaStreamFrame.parse(text) }
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            // Fed in two pieces, so a frame split across reads is exercised too.
            let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
            try channel.writeInbound(ByteBuffer(bytes: bytes[..<split]))
            try channel.writeInbound(ByteBuffer(bytes: bytes[split...]))
        } catch {
            // A refused frame closes the channel: the expected answer to bad bytes.
        }
        channel.embeddedEventLoop.advanceTime(by: MediaWebSocket.closeTimeout + .milliseconds(1))
        while (try? channel.readOutbound(as: ByteBuffer.self)) != nil {}
    }

    /// Runs the target on one input from async code (the tests): the App Store verification is awaited instead of
    /// blocking a thread of the cooperative pool on it.
    public func runAsync(_ bytes: [UInt8]) async {
        if self == .appStoreJWS {
            await Self.verifyJWS(String(decoding: bytes, as: UTF8.self))
        } else {
            run(bytes)
        }
    }

    /// Runs the whole verification of a signed App Store document against the real Apple root (nothing from the
    /// fuzzer can chain to it, so every input ends in an error: the point is that it ends). From libFuzzer's thread,
    /// which is not one of the cooperative pool's, it waits for the verification.
    private static func verifyJWS(_ jws: String) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await verifyJWS(jws)
            done.signal()
        }
        done.wait()
    }

    private static func verifyJWS(_ jws: String) async {
        let verifier = AppStoreSignedDataVerifier(bundleID: "com.chorus.fuzz", appAppleID: 1, acceptedEnvironments: nil)
        _ = try? await verifier.verifyDocument(jws)
    }
}
