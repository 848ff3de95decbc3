import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
import SwiftASN1
import Testing
import X509

@testable import ChorusProviders

/// ``MediaWebSocket`` and ``OpenAIRealtimeConnector`` against a WebSocket server over loopback TCP: the client end
/// is made by the connector, the server end by NIO's upgrader with either a ``MediaWebSocket`` or a silent peer.
@Suite("Media WebSocket (the call sockets)")
struct MediaWebSocketTests {
    /// What one end saw (the test server, or a client with a recorder).
    final class PeerLog: Sendable {
        private struct State {
            var requests: [HTTPRequestHead] = []
            var frames: [WebSocketFrame] = []
            var sockets: [MediaWebSocket] = []
            var channels: [any Channel] = []
        }
        private let state = NIOLockedValueBox(State())

        var requests: [HTTPRequestHead] { state.withLockedValue { $0.requests } }
        var frames: [WebSocketFrame] { state.withLockedValue { $0.frames } }
        var socket: MediaWebSocket? { state.withLockedValue { $0.sockets.last } }
        var channel: (any Channel)? { state.withLockedValue { $0.channels.last } }

        func request(_ head: HTTPRequestHead) { state.withLockedValue { $0.requests.append(head) } }
        func frame(_ frame: WebSocketFrame) { state.withLockedValue { $0.frames.append(frame) } }
        func upgraded(_ channel: any Channel, _ socket: MediaWebSocket?) {
            state.withLockedValue {
                $0.channels.append(channel)
                if let socket { $0.sockets.append(socket) }
            }
        }
    }

    /// Records every frame the server receives (before anything handles it).
    final class FrameRecorder: ChannelInboundHandler, Sendable {
        typealias InboundIn = WebSocketFrame
        typealias InboundOut = WebSocketFrame
        let log: PeerLog
        init(log: PeerLog) { self.log = log }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            log.frame(unwrapInboundIn(data))
            context.fireChannelRead(data)
        }
    }

    /// Answers any request that is not upgraded with 401.
    final class Refuser: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .end = unwrapInboundIn(data) else { return }
            let head = HTTPResponseHead(version: .http1_1, status: .unauthorized, headers: ["Content-Length": "0"])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    enum Peer {
        /// A ``MediaWebSocket`` server end.
        case media
        /// A server that upgrades and then never answers anything.
        case silent
        /// A server that refuses the upgrade (401).
        case refusing
    }

    /// Starts a WebSocket server on a free loopback port (behind TLS with `tls`).
    static func server(_ peer: Peer, log: PeerLog, tls: NIOSSLContext? = nil) async throws -> any Channel {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                if let tls {
                    do {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    } catch {
                        return channel.eventLoop.makeFailedFuture(error)
                    }
                }
                let upgrader = NIOWebSocketServerUpgrader(
                    maxFrameSize: 1 << 16, automaticErrorHandling: false,
                    shouldUpgrade: { channel, head in
                        log.request(head)
                        return channel.eventLoop.makeSucceededFuture(peer == .refusing ? nil : HTTPHeaders())
                    },
                    upgradePipelineHandler: { channel, _ in
                        do {
                            try channel.pipeline.syncOperations.addHandler(FrameRecorder(log: log))
                            let socket = peer == .media ? try MediaWebSocket.install(on: channel, role: .server, maxMessageSize: 1 << 16) : nil
                            log.upgraded(channel, socket)
                            return channel.eventLoop.makeSucceededVoidFuture()
                        } catch {
                            return channel.eventLoop.makeFailedFuture(error)
                        }
                    })
                let configured = channel.pipeline.configureHTTPServerPipeline(withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                // Only a refusing server keeps handling HTTP (after an upgrade, HTTP handlers would see WebSocket bytes).
                return peer == .refusing ? configured.flatMap { channel.pipeline.addHandler(Refuser()) } : configured
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    static func connector(
        port: Int, timeout: TimeAmount = .seconds(5), secure: Bool = false, tls: TLSConfiguration = .makeClientConfiguration()
    ) throws -> OpenAIRealtimeConnector {
        try OpenAIRealtimeConnector(
            baseURL: URL(string: secure ? "https://localhost:\(port)/v1" : "http://127.0.0.1:\(port)/v1")!, apiKey: "sk-test-key",
            connectTimeout: timeout, tls: tls, logger: Logger(label: "test"))
    }

    /// A self-signed certificate for `localhost` and its key.
    static func selfSigned() throws -> (NIOSSLCertificate, NIOSSLPrivateKey) {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("localhost") }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: Date().addingTimeInterval(-3_600), notValidAfter: Date().addingTimeInterval(3_600), issuer: name,
            subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                SubjectAlternativeNames([.dnsName("localhost")])
            }, issuerPrivateKey: Certificate.PrivateKey(key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return (
            try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der),
            try NIOSSLPrivateKey(bytes: Array(key.derRepresentation), format: .der)
        )
    }

    /// Messages a socket received, in order.
    final class Inbox: Sendable {
        private let messages = NIOLockedValueBox<[String]>([])
        var all: [String] { messages.withLockedValue { $0 } }
        func add(_ buffer: ByteBuffer) { messages.withLockedValue { $0.append(String(buffer: buffer)) } }
    }

    /// Connects a client; its messages go to the returned inbox.
    static func connect(_ connector: OpenAIRealtimeConnector) async throws -> (MediaWebSocket, Inbox) {
        let inbox = Inbox()
        let box = NIOLockedValueBox<MediaWebSocket?>(nil)
        try await connector.connect(model: "gpt-realtime", on: MultiThreadedEventLoopGroup.singleton.next()) { socket in
            socket.onText { inbox.add($0) }
            box.withLockedValue { $0 = socket }
        }
        return (try #require(box.withLockedValue { $0 }), inbox)
    }

    /// The server's end, once its upgrade is done (it finishes after the client has seen the 101).
    static func serverSocket(_ log: PeerLog) async throws -> MediaWebSocket {
        try await eventually { log.socket != nil }
        return try #require(log.socket)
    }

    static func serverChannel(_ log: PeerLog) async throws -> any Channel {
        try await eventually { log.channel != nil }
        return try #require(log.channel)
    }

    static func eventually(_ condition: () -> Bool) async throws {
        for _ in 0..<200 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }

    static func closed(_ future: EventLoopFuture<Void>, within seconds: Double) async throws -> Bool {
        let done = NIOLockedValueBox(false)
        future.whenComplete { _ in done.withLockedValue { $0 = true } }
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !done.withLockedValue({ $0 }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        return done.withLockedValue { $0 }
    }

    @Test("the connector upgrades with the key and model; messages go both ways, the client's masked with fresh keys")
    func exchange() async throws {
        let log = PeerLog()
        let server = try await Self.server(.media, log: log)
        defer { server.close(promise: nil) }
        let (client, inbox) = try await Self.connect(Self.connector(port: server.localAddress!.port!))
        let head = try #require(log.requests.first)
        #expect(head.uri == "/v1/realtime?model=gpt-realtime")
        #expect(head.headers["Authorization"] == ["Bearer sk-test-key"])
        #expect(head.headers["Host"].first?.hasPrefix("127.0.0.1:") == true)

        let serverInbox = Inbox()
        let serverSocket = try await Self.serverSocket(log)
        serverSocket.onText { serverInbox.add($0) }
        for index in 0..<70 { client.send(ByteBuffer(string: #"{"n":\#(index)}"#)) }
        client.send(ByteBuffer(string: "first"), ByteBuffer(string: "second"))
        serverSocket.send(TwilioMediaStreamOutbound.clear(streamSid: "MZ1", allocator: ByteBufferAllocator()))
        serverSocket.send(ByteBuffer(string: "a"), ByteBuffer(string: "b"))
        try await Self.eventually { serverInbox.all.count == 72 && inbox.all.count == 3 }
        #expect(serverInbox.all == (0..<70).map { #"{"n":\#($0)}"# } + ["first", "second"])
        #expect(inbox.all == [#"{"event":"clear","streamSid":"MZ1"}"#, "a", "b"])

        // RFC 6455 §5.3: every client frame is masked; the keys come from the pool (more than 64 frames: it refilled).
        let keys = log.frames.compactMap { $0.maskKey.map { Array($0) } }
        #expect(keys.count == 72)
        #expect(Set(keys).count >= 70)
        client.close()
        #expect(try await Self.closed(client.onClose, within: 2))
    }

    @Test("fragmented messages are reassembled, pings answered, and either side's close is answered")
    func protocolRules() async throws {
        let log = PeerLog()
        let server = try await Self.server(.media, log: log)
        defer { server.close(promise: nil) }
        let (client, inbox) = try await Self.connect(Self.connector(port: server.localAddress!.port!))
        let channel = try await Self.serverChannel(log)
        func write(_ frame: WebSocketFrame) async throws {
            try await channel.eventLoop.submit { channel.writeAndFlush(frame, promise: nil) }.get()
        }
        try await write(WebSocketFrame(fin: false, opcode: .text, data: ByteBuffer(string: "{\"type\":")))
        try await write(WebSocketFrame(fin: false, opcode: .continuation, data: ByteBuffer(string: "\"session.")))
        try await write(WebSocketFrame(fin: true, opcode: .continuation, data: ByteBuffer(string: "created\"}")))
        try await write(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer(string: "are you there")))
        try await Self.eventually { inbox.all.count == 1 && log.frames.contains { $0.opcode == .pong } }
        #expect(inbox.all == [#"{"type":"session.created"}"#])
        let pong = try #require(log.frames.first { $0.opcode == .pong })
        #expect(String(buffer: pong.unmaskedData) == "are you there")

        // The server closes: the client answers with the same code and the connection goes.
        let serverSocket = try await Self.serverSocket(log)
        serverSocket.close(code: .goingAway)
        #expect(try await Self.closed(client.onClose, within: 2))
        let answer = try #require(log.frames.first { $0.opcode == .connectionClose })
        var payload = answer.unmaskedData
        #expect(payload.readWebSocketErrorCode() == .goingAway)
        #expect(client.isClosed)
    }

    enum Violation: String, CaseIterable, Sendable {
        case strayContinuation = "a continuation without a first fragment"
        case messageInsideMessage = "a new message inside a fragmented one"
        case oversizedFrame = "a frame above the maximum size"
        case oversizedMessage = "fragments adding up to more than the maximum size"
        case unmasked = "an unmasked frame from the client"
        case reservedOpcode = "a reserved opcode"

        var frames: [(fin: Bool, opcode: WebSocketOpcode, size: Int)] {
            switch self {
            case .strayContinuation: [(true, .continuation, 10)]
            case .messageInsideMessage: [(false, .text, 10), (true, .text, 10)]
            case .oversizedFrame: [(true, .text, 70_000)]
            case .oversizedMessage: [(false, .text, 30_000), (false, .continuation, 30_000), (true, .continuation, 30_000)]
            case .unmasked: [(true, .text, 10)]
            case .reservedOpcode: [(true, WebSocketOpcode(encodedWebSocketOpcode: 0x3)!, 10)]
            }
        }

        var code: WebSocketErrorCode {
            switch self {
            case .strayContinuation, .messageInsideMessage, .unmasked, .reservedOpcode: .protocolError
            case .oversizedFrame, .oversizedMessage: .messageTooLarge
            }
        }
    }

    @Test("protocol violations are answered with close code 1002 or 1009 and the connection is dropped", arguments: Violation.allCases)
    func violations(_ violation: Violation) async throws {
        let log = PeerLog()
        let server = try await Self.server(.media, log: log)
        defer { server.close(promise: nil) }
        let (client, inbox) = try await Self.connect(Self.connector(port: server.localAddress!.port!))
        let channel = client.channel
        // What the server sends back is recorded on the client, right after NIO's frame decoder.
        let received = PeerLog()
        try await channel.eventLoop.submit {
            let decoder = try channel.pipeline.syncOperations.context(handlerType: ByteToMessageHandler<WebSocketFrameDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(FrameRecorder(log: received), position: .after(decoder.handler))
            for frame in violation.frames {
                let data = ByteBuffer(repeating: UInt8(ascii: "x"), count: frame.size)
                let mask: WebSocketMaskingKey? = violation == .unmasked ? nil : .random()
                channel.writeAndFlush(WebSocketFrame(fin: frame.fin, opcode: frame.opcode, maskKey: mask, data: data), promise: nil)
            }
        }.get()
        #expect(try await Self.closed(client.onClose, within: 3))
        let answer = try #require(received.frames.first { $0.opcode == .connectionClose })
        var payload = answer.unmaskedData
        #expect(payload.readWebSocketErrorCode() == violation.code)
        #expect(inbox.all.isEmpty)
    }

    @Test("a close the peer never answers drops the connection after the close timeout")
    func unansweredClose() async throws {
        let log = PeerLog()
        let server = try await Self.server(.silent, log: log)
        defer { server.close(promise: nil) }
        let (client, _) = try await Self.connect(Self.connector(port: server.localAddress!.port!))
        let started = ContinuousClock.now
        client.close(code: .normalClosure)
        #expect(try await Self.closed(client.onClose, within: 3))
        #expect(ContinuousClock.now - started >= .milliseconds(900))
        #expect(log.frames.contains { $0.opcode == .connectionClose })
    }

    /// Holds its socket while the socket's message handler holds it: the shape of a call's bridge and session.
    final class SocketOwner: Sendable {
        let socket = NIOLockedValueBox<MediaWebSocket?>(nil)
        let inbox = Inbox()
    }

    @Test("a closed socket releases its message handler, so an owner and its socket do not keep each other alive")
    func releasedAfterClose() async throws {
        let log = PeerLog()
        let server = try await Self.server(.media, log: log)
        defer { server.close(promise: nil) }
        weak var weakOwner: SocketOwner?
        weak var weakSocket: MediaWebSocket?
        let closing: EventLoopFuture<Void>
        do {
            let owner = SocketOwner()
            try await Self.connector(port: server.localAddress!.port!).connect(
                model: "gpt-realtime", on: MultiThreadedEventLoopGroup.singleton.next()
            ) { socket in
                owner.socket.withLockedValue { $0 = socket }
                socket.onText { owner.inbox.add($0) }
            }
            let socket = try #require(owner.socket.withLockedValue { $0 })
            weakOwner = owner
            weakSocket = socket
            closing = socket.onClose
            let serverSocket = try await Self.serverSocket(log)
            serverSocket.send(ByteBuffer(string: "hello"))
            try await Self.eventually { owner.inbox.all == ["hello"] }
            #expect(owner.inbox.all == ["hello"])
            serverSocket.close(code: .normalClosure)
        }
        #expect(try await Self.closed(closing, within: 2))
        try await Self.eventually { weakOwner == nil && weakSocket == nil }
        #expect(weakOwner == nil)
        #expect(weakSocket == nil)
    }

    @Test("a wss session: the server's certificate is verified, so a trusted one connects and an unknown one is refused")
    func tls() async throws {
        let (certificate, key) = try Self.selfSigned()
        let serverTLS = try NIOSSLContext(
            configuration: .makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key)))
        let log = PeerLog()
        let server = try await Self.server(.media, log: log, tls: serverTLS)
        defer { server.close(promise: nil) }
        let port = server.localAddress!.port!

        var trusting = TLSConfiguration.makeClientConfiguration()
        trusting.trustRoots = .certificates([certificate])
        let (client, inbox) = try await Self.connect(Self.connector(port: port, secure: true, tls: trusting))
        #expect(log.requests.first?.uri == "/v1/realtime?model=gpt-realtime")
        let serverSocket = try await Self.serverSocket(log)
        serverSocket.send(ByteBuffer(string: #"{"type":"session.created"}"#))
        client.send(ByteBuffer(string: #"{"type":"session.update"}"#))
        try await Self.eventually { inbox.all.count == 1 && log.frames.count == 1 }
        #expect(inbox.all == [#"{"type":"session.created"}"#])
        #expect(String(buffer: try #require(log.frames.first).unmaskedData) == #"{"type":"session.update"}"#)
        client.close()
        #expect(try await Self.closed(client.onClose, within: 2))

        // The default configuration trusts the system's roots only.
        await #expect {
            _ = try await Self.connect(Self.connector(port: port, secure: true))
        } throws: { error in
            guard case RealtimeConnectionError.unavailable = error else { return false }
            return true
        }
    }

    @Test("the connector reports a refused upgrade, a closed port and a server that never answers")
    func failures() async throws {
        let log = PeerLog()
        let refusing = try await Self.server(.refusing, log: log)
        defer { refusing.close(promise: nil) }
        await #expect(throws: RealtimeConnectionError.unavailable("the server answered 401 instead of switching protocols")) {
            _ = try await Self.connect(Self.connector(port: refusing.localAddress!.port!))
        }

        // Nothing listens on port 9 (discard): privileged and outside the ephemeral range, so no other test's server can
        // be given it, as a port just bound and released could be.
        await #expect {
            _ = try await Self.connect(Self.connector(port: 9))
        } throws: { error in
            guard case RealtimeConnectionError.unavailable = error else { return false }
            return true
        }

        // A server that accepts the connection and says nothing.
        let mute = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        defer { mute.close(promise: nil) }
        await #expect(throws: RealtimeConnectionError.timedOut) {
            _ = try await Self.connect(Self.connector(port: mute.localAddress!.port!, timeout: .milliseconds(300)))
        }
    }
}
