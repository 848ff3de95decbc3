import ChorusAPI
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Testing
import WebSocketKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@testable import ChorusServer

/// Issue 16 §4 over loopback: caps on WebSockets and event streams per user and per instance, the bounded send queue
/// of a socket whose client stops reading, and the rate limit on what clients send over `/ws`.
@Suite("Realtime connection caps")
struct RealtimeCapsTests {
    /// A `/ws` client that keeps the texts it receives and the close code it got.
    final class Socket: Sendable {
        let socket: WebSocket
        let texts = NIOLockedValueBox<[String]>([])

        private init(socket: WebSocket) { self.socket = socket }

        static func connect(_ server: TestServer, token: String) async throws -> Socket {
            let url = server.baseURL.replacingOccurrences(of: "http://", with: "ws://") + "/ws"
            var headers = HTTPHeaders()
            headers.add(name: "Authorization", value: "Bearer \(token)")
            let upgraded = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Socket.self)
            do {
                try await WebSocket.connect(to: url, headers: headers, on: MultiThreadedEventLoopGroup.singleton) { socket in
                    let client = Socket(socket: socket)
                    socket.onText { _, text in client.texts.withLockedValue { $0.append(text) } }
                    upgraded.succeed(client)
                }.get()
            } catch {
                upgraded.fail(error)
                throw error
            }
            return try await upgraded.futureResult.get()
        }

        /// The code the server closed the socket with.
        func closed() async throws -> WebSocketErrorCode? {
            try await socket.onClose.get()
            return socket.closeCode
        }
    }

    static let capped = [
        "CHORUS_WS_PER_USER": "2", "CHORUS_SSE_PER_USER": "1", "CHORUS_MAX_REALTIME_CONNECTIONS": "4",
    ]

    @Test("per-user caps on WebSockets (429) and event streams (429), a per-instance cap (503), places given back", arguments: TestDatabase.all)
    func caps(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: Self.capped) { server in
            let hub = server.app.chorus.messaging.hub
            let alice = try await server.register().accessToken
            let bob = try await server.register().accessToken
            let first = try await RealtimeClient.connect(baseURL: server.baseURL, token: alice)
            let second = try await RealtimeClient.connect(baseURL: server.baseURL, token: alice)
            await #expect(throws: (any Error).self) { _ = try await Socket.connect(server, token: alice) }
            let refused = try await server.request(.GET, "/ws", token: alice)
            #expect(refused.status == 429 && refused.detail?.contains("at most 2 WebSockets per user") == true, "\(refused.text)")

            // One event stream (a call's progress) is Alice's cap.
            try await server.setCallee("+14155550931", behavior: "busy", callbacks: false)
            let placed = try await server.makeCall(alice, to: "+14155550931").decode(MakeCallResponse.self)
            let stream = EventStreamReader(
                client: server.client, url: server.baseURL + "/mobile/calls/\(placed.callSid)/events", headers: [("Authorization", "Bearer \(alice)")])
            try await server.eventually("the stream's snapshot") { stream.received.contains { $0.name == "snapshot" } }
            let secondStream = try await server.request(.GET, "/mobile/calls/\(placed.callSid)/events", token: alice)
            #expect(secondStream.status == 429 && secondStream.detail?.contains("event streams") == true, "\(secondStream.text)")
            #expect(hub.admittedCount == 3)

            // Bob takes the instance's last place; then the instance is full for everyone.
            let bobs = try await RealtimeClient.connect(baseURL: server.baseURL, token: bob)
            let full = try await server.request(.GET, "/ws", token: bob)
            #expect(full.status == 503 && full.headers.first(name: "Retry-After") != nil, "\(full.text)")

            // Closing gives the places back.
            await first.close()
            try await server.eventually("Alice's socket is released") { hub.admittedCount == 3 }
            let again = try await RealtimeClient.connect(baseURL: server.baseURL, token: alice)
            // The call settles, its stream ends with `done`, and the stream's place is free again.
            let callID = try await server.request(.GET, "/mobile/calls/\(placed.callSid)", token: alice).decode(CallHistoryItem.self).id
            #expect(try await MoneyRaceTests.callback(server, callID: callID, sid: placed.callSid, status: "busy") == 204)
            try await server.eventually("the stream ends") { stream.hasEnded }
            try await server.eventually("the stream is released") { hub.admittedCount == 3 }
            let settled = try await server.request(.GET, "/mobile/calls/\(placed.callSid)/events", token: alice)
            #expect(settled.status == 200 && settled.text.contains("event: done"), "\(settled.text)")
            for socket in [second, bobs, again] { await socket.close() }
            try await server.eventually("everything is released") { hub.admittedCount == 0 }
        }
    }

    @Test("a client that stops reading is closed with 1013 instead of being buffered without end", arguments: TestDatabase.all)
    func slowConsumer(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_WS_SEND_QUEUE_BYTES": "16384"]) { server in
            let hub = server.app.chorus.messaging.hub
            let tokens = try await server.register()
            let userID = try #require(try CompactJWS.payload(tokens.accessToken)["sub"] as? String)
            let port = try #require(URL(string: server.baseURL)?.port)
            let client = try RawWebSocket(port: port, token: tokens.accessToken)
            defer { client.close() }
            try await server.eventually("the socket is registered") { hub.connectionCount == 1 }

            // 16 MB of events for a client that reads nothing: far more than the kernel's buffers hold.
            let event = RealtimeHub.encode(RealtimeEventDTO(type: "typing", detail: String(repeating: "x", count: 4_000)))
            for _ in 0..<4_000 { hub.deliver(event, to: [userID]) }

            // When it reads at last, it finds what the kernel held, then the close frame: 1013.
            let frames = try client.readFrames(untilClose: true)
            let close = try #require(frames.last { $0.opcode == 0x8 })
            #expect(close.payload.count >= 2 && (UInt16(close.payload[0]) << 8 | UInt16(close.payload[1])) == 1013)
            let delivered = frames.filter { $0.opcode == 0x1 }.reduce(0) { $0 + $1.payload.count }
            #expect(delivered < 8 << 20, "\(delivered) bytes were delivered: the queue was not bounded")
            client.close()
            try await server.eventually("the socket is released") { hub.connectionCount == 0 && hub.admittedCount == 0 }
        }
    }

    @Test("a client sending over the message rate is closed with 1008", arguments: TestDatabase.all)
    func inboundRate(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_WS_MESSAGE_RATE": "5/60"]) { server in
            let token = try await server.register().accessToken
            let socket = try await Socket.connect(server, token: token)
            for _ in 0..<12 { socket.socket.send(#"{"type":"ping"}"#, promise: nil) }
            let code = try await socket.closed()
            #expect(code == .policyViolation)
            let pongs = socket.texts.withLockedValue { $0 }.filter { $0.contains(#""pong""#) }.count
            #expect(pongs <= 5)
            // A well-behaved client is not affected.
            let calm = try await RealtimeClient.connect(baseURL: server.baseURL, token: token)
            calm.send(#"{"type":"ping"}"#)
            _ = try await calm.next { $0.type == "pong" }
            await calm.close()
        }
    }

    @Test("connection caps are read from the environment and refuse nonsense")
    func configuration() throws {
        let base = ["CHORUS_DATA_DIR": FileManager.default.temporaryDirectory.path]
        let read = try ChorusConfiguration.load(from: base.merging(Self.capped.merging(["CHORUS_WS_MESSAGE_RATE": "30/5"]) { $1 }) { $1 })
        #expect(read.connections.webSocketsPerUser == 2 && read.connections.eventStreamsPerUser == 1 && read.connections.perInstance == 4)
        #expect(read.connections.inboundMessages == ChorusConfiguration.RateLimit(limit: 30, window: 5))
        #expect(try ChorusConfiguration.load(from: base).connections == .standard)
        for (key, value) in [("CHORUS_WS_PER_USER", "0"), ("CHORUS_WS_SEND_QUEUE_BYTES", "12"), ("CHORUS_WS_MESSAGE_RATE", "fast")] {
            #expect(throws: ConfigurationError.self) { try ChorusConfiguration.load(from: base.merging([key: value]) { $1 }) }
        }
    }
}

/// A WebSocket client on a plain socket with a small receive buffer, which reads only when told: the slow consumer.
final class RawWebSocket {
    struct Frame {
        var opcode: UInt8
        var payload: [UInt8]
    }

    private let descriptor: Int32
    private var buffered: [UInt8] = []
    private var closed = false

    init(port: Int, token: String) throws {
        #if canImport(Glibc)
            descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw TestSetupError(message: "socket() failed") }
        var size: Int32 = 4_096
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TestSetupError(message: "connect() failed") }
        let request =
            "GET /ws HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(token)\r\n\r\n"
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, 0) }) == bytes.count else {
            throw TestSetupError(message: "send() failed")
        }
        // The answer's head; what follows it is the first frames.
        while true {
            try fill()
            if let end = Self.headEnd(buffered) {
                let head = String(decoding: buffered[..<end], as: UTF8.self)
                guard head.hasPrefix("HTTP/1.1 101") else { throw TestSetupError(message: "no upgrade: \(head)") }
                buffered.removeFirst(end + 4)
                return
            }
        }
    }

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw TestSetupError(message: "the connection ended or timed out (\(count))") }
        buffered.append(contentsOf: chunk[..<count])
    }

    /// Reads frames (unmasked, as a server sends them) until a close frame, or until the connection ends.
    func readFrames(untilClose: Bool) throws -> [Frame] {
        var frames: [Frame] = []
        while true {
            if let frame = nextFrame() {
                frames.append(frame)
                if frame.opcode == 0x8 { return frames }
                continue
            }
            do {
                try fill()
            } catch {
                if frames.isEmpty { throw error }
                return frames
            }
        }
    }

    private func nextFrame() -> Frame? {
        guard buffered.count >= 2 else { return nil }
        let opcode = buffered[0] & 0x0F
        var length = Int(buffered[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard buffered.count >= 4 else { return nil }
            length = Int(buffered[2]) << 8 | Int(buffered[3])
            offset = 4
        } else if length == 127 {
            guard buffered.count >= 10 else { return nil }
            length = (2..<10).reduce(0) { $0 << 8 | Int(buffered[$1]) }
            offset = 10
        }
        guard buffered.count >= offset + length else { return nil }
        let frame = Frame(opcode: opcode, payload: Array(buffered[offset..<offset + length]))
        buffered.removeFirst(offset + length)
        return frame
    }

    func close() {
        guard !closed else { return }
        closed = true
        _ = shutdown(descriptor, Int32(SHUT_RDWR))
        #if canImport(Glibc)
            _ = Glibc.close(descriptor)
        #else
            _ = Darwin.close(descriptor)
        #endif
    }
}
