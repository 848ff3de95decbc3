import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket

#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// One of the two WebSockets of a live call (Twilio's Media Stream, the OpenAI Realtime session), on a NIO channel
/// handler of our own instead of WebSocketKit.
///
/// The bridge moves about 140 small text messages per call-second through these sockets, so the per-message cost
/// is what matters: messages arrive as the received bytes (no `String` is made of them) after one handler past NIO's
/// frame decoder, go out as buffers prepared with room for the frame header (one I/O vector each), several messages
/// sent together go out in one system call, and a client's masking keys come from a pool filled 64 keys at a time
/// rather than one random-number system call per frame.
///
/// Fragmented messages are reassembled (up to the maximum message size), pings are answered, protocol violations
/// are answered with the close code RFC 6455 asks for (1002, or 1009 for a frame above the maximum), and the close
/// handshake follows RFC 6455: the side that closes sends a close frame and the connection is dropped when the peer
/// answers or after ``closeTimeout``.
public final class MediaWebSocket: @unchecked Sendable {
    /// Which end of the connection this is: a client masks what it sends.
    public enum Role: Sendable {
        case server
        case client
    }

    /// How long a close handshake may wait for the peer's answer before the connection is dropped.
    public static let closeTimeout: TimeAmount = .seconds(1)
    /// Headroom left in front of prepared messages for the frame header (2 + 8 length bytes + 4 mask bytes).
    public static let headerRoom = 14

    private struct State {
        var onText: (@Sendable (ByteBuffer) -> Void)?
        var closing = false
        /// The connection has closed: no handler is kept any more.
        var released = false
    }

    let channel: any Channel
    let role: Role
    private let state = NIOLockedValueBox(State())
    /// Used on the channel's event loop only (every frame is made there).
    private var maskingKeys = MaskingKeyPool()

    init(channel: any Channel, role: Role) {
        self.channel = channel
        self.role = role
    }

    /// Adds the message handling to a channel whose WebSocket upgrade is done (NIO's frame encoder and decoder in
    /// place, without its automatic error handling: this handler answers protocol errors) and returns the socket;
    /// call it on the channel's event loop.
    ///
    /// The message handler is released when the connection closes: its owner (a bridge, a session) usually holds the
    /// socket too, and the two would otherwise keep each other — and the channel — alive after every call.
    public static func install(on channel: any Channel, role: Role, maxMessageSize: Int) throws -> MediaWebSocket {
        let socket = MediaWebSocket(channel: channel, role: role)
        try channel.pipeline.syncOperations.addHandler(MediaWebSocketHandler(socket: socket, maxMessageSize: maxMessageSize))
        channel.closeFuture.whenComplete { _ in
            socket.state.withLockedValue { state in
                state.onText = nil
                state.released = true
            }
        }
        return socket
    }

    public var eventLoop: any EventLoop { channel.eventLoop }

    /// Completes when the connection is closed.
    public var onClose: EventLoopFuture<Void> { channel.closeFuture }

    public var isClosed: Bool { !channel.isActive }

    /// Delivers each text message (its bytes, unmasked) on the channel's event loop; the handler is released when the
    /// connection closes (a handler set after that is not kept).
    public func onText(_ handler: @escaping @Sendable (ByteBuffer) -> Void) {
        state.withLockedValue { state in
            if !state.released { state.onText = handler }
        }
    }

    /// A buffer for a message, with room for the frame header in front of it.
    public static func messageBuffer(capacity: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: headerRoom + capacity)
        buffer.moveWriterIndex(forwardBy: headerRoom)
        buffer.moveReaderIndex(forwardBy: headerRoom)
        return buffer
    }

    /// Sends a text message; `promise` learns whether it was written.
    public func send(_ text: ByteBuffer, promise: EventLoopPromise<Void>? = nil) {
        if channel.eventLoop.inEventLoop {
            channel.writeAndFlush(frame(.text, text), promise: promise)
        } else {
            channel.eventLoop.execute { self.send(text, promise: promise) }
        }
    }

    /// Sends two text messages in one write (the media chunk and its mark); `promise` learns whether the first was
    /// written.
    public func send(_ first: ByteBuffer, _ second: ByteBuffer, promise: EventLoopPromise<Void>? = nil) {
        if channel.eventLoop.inEventLoop {
            channel.write(frame(.text, first), promise: promise)
            channel.writeAndFlush(frame(.text, second), promise: nil)
        } else {
            channel.eventLoop.execute { self.send(first, second, promise: promise) }
        }
    }

    /// Starts the close handshake with `code`; the connection is dropped when the peer answers or after
    /// ``closeTimeout``.
    public func close(code: WebSocketErrorCode = .normalClosure) {
        guard channel.eventLoop.inEventLoop else {
            channel.eventLoop.execute { self.close(code: code) }
            return
        }
        guard channel.isActive,
            state.withLockedValue({ state in
                defer { state.closing = true }; return !state.closing
            })
        else {
            return
        }
        channel.writeAndFlush(closeFrame(code), promise: nil)
        let channel = channel
        let timeout = channel.eventLoop.scheduleTask(in: Self.closeTimeout) { channel.close(promise: nil) }
        channel.closeFuture.whenComplete { _ in timeout.cancel() }
    }

    // MARK: - Handler callbacks (on the event loop)

    fileprivate func receivedText(_ text: ByteBuffer) {
        state.withLockedValue { $0.onText }?(text)
    }

    fileprivate func receivedControl(_ frame: WebSocketFrame) {
        switch frame.opcode {
        case .ping:
            channel.writeAndFlush(self.frame(.pong, frame.unmaskedData), promise: nil)
        case .connectionClose:
            let answered = state.withLockedValue { state in
                defer { state.closing = true }; return state.closing
            }
            if answered {
                // The peer answered our close frame.
                channel.close(promise: nil)
            } else {
                // The peer closes: answer with its code, then drop the connection. 1005 ("no code"), 1006 (abnormal
                // closure) and 1015 (TLS failure) are never sent (RFC 6455 §7.4.1): they are answered with 1000.
                var data = frame.unmaskedData
                let code = data.readWebSocketErrorCode() ?? .normalClosure
                let reserved = [UInt16(1005), 1006, 1015].contains(UInt16(webSocketErrorCode: code))
                dropAfter(closeFrame(reserved ? .normalClosure : code))
            }
        default:
            break
        }
    }

    /// A protocol violation: the close frame with `code`, then the connection is dropped.
    fileprivate func violated(_ code: WebSocketErrorCode) {
        state.withLockedValue { $0.closing = true }
        dropAfter(closeFrame(code))
    }

    // MARK: - Private

    private func dropAfter(_ frame: WebSocketFrame) {
        let channel = channel
        channel.writeAndFlush(frame).whenComplete { _ in channel.close(promise: nil) }
    }

    private func closeFrame(_ code: WebSocketErrorCode) -> WebSocketFrame {
        var payload = channel.allocator.buffer(capacity: 2)
        payload.write(webSocketErrorCode: code)
        return frame(.connectionClose, payload)
    }

    private func frame(_ opcode: WebSocketOpcode, _ data: ByteBuffer) -> WebSocketFrame {
        WebSocketFrame(fin: true, opcode: opcode, maskKey: role == .client ? maskingKeys.next() : nil, data: data)
    }
}

/// Masking keys for a client's frames, drawn 64 at a time from the operating system's cryptographically secure
/// generator (RFC 6455 §5.3 asks for unpredictable keys). `SystemRandomNumberGenerator`, which WebSocketKit and
/// swift-crypto use, makes one `getrandom` system call per 8 bytes; this makes one per 256.
struct MaskingKeyPool {
    static let size = 256
    private var bytes: [UInt8] = []
    private var position = 0

    mutating func next() -> WebSocketMaskingKey {
        if position + 4 > bytes.count {
            bytes = Self.systemRandomBytes()
            position = 0
        }
        defer { position += 4 }
        return WebSocketMaskingKey(bytes[position..<(position + 4)])!
    }

    /// `/dev/urandom`, opened once (`nil` where there is none: the standard generator is used instead).
    private static let urandom: Int32? = {
        let descriptor = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
        return descriptor >= 0 ? descriptor : nil
    }()

    /// 256 bytes from the kernel's generator in one read (Darwin: `arc4random_buf`).
    static func systemRandomBytes() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            #if canImport(Darwin)
            arc4random_buf(buffer.baseAddress, size)
            #else
            var filled = 0
            if let descriptor = urandom {
                while filled < size {
                    let read = read(descriptor, buffer.baseAddress! + filled, size - filled)
                    if read > 0 {
                        filled += read
                    } else if read == 0 || errno != EINTR {
                        break
                    }
                }
            }
            var generator = SystemRandomNumberGenerator()
            while filled < size {
                withUnsafeBytes(of: generator.next()) { word in
                    for byte in word where filled < size {
                        buffer[filled] = byte
                        filled += 1
                    }
                }
            }
            #endif
            count = size
        }
    }
}

/// Hands a ``MediaWebSocket`` its messages: reassembles fragmented ones, passes control frames, and answers NIO's
/// frame decoder's protocol errors.
final class MediaWebSocketHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame

    /// At most this many fragments make one message.
    static let maximumFragments = 1_024

    private let socket: MediaWebSocket
    private let maxMessageSize: Int
    /// The message being reassembled from fragments, if any.
    private var fragments: ByteBuffer?
    private var fragmentsAreText = false
    private var fragmentCount = 0
    /// After a protocol violation nothing more is read (the close frame is on its way and the connection goes).
    private var failed = false

    init(socket: MediaWebSocket, maxMessageSize: Int) {
        self.socket = socket
        self.maxMessageSize = maxMessageSize
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        let frame = unwrapInboundIn(data)
        // RFC 6455 §5.1–5.2: a client masks every frame and a server none; no extension is negotiated, so the reserved
        // bits stay clear.
        guard (frame.maskKey != nil) == (socket.role == .server), !frame.rsv1, !frame.rsv2, !frame.rsv3 else {
            return violated(.protocolError)
        }
        switch frame.opcode {
        case .text, .binary:
            guard fragments == nil else { return violated(.protocolError) }  // a new message inside another
            if frame.fin {
                if frame.opcode == .text { socket.receivedText(frame.unmaskedData) }
            } else {
                var first = context.channel.allocator.buffer(capacity: frame.length * 2)
                var data = frame.unmaskedData
                first.writeBuffer(&data)
                fragments = first
                fragmentsAreText = frame.opcode == .text
                fragmentCount = 1
            }
        case .continuation:
            guard var message = fragments else { return violated(.protocolError) }
            fragments = nil
            fragmentCount += 1
            var data = frame.unmaskedData
            guard message.readableBytes + data.readableBytes <= maxMessageSize, fragmentCount <= Self.maximumFragments else {
                return violated(.messageTooLarge)
            }
            message.writeBuffer(&data)
            if frame.fin {
                // Binary messages are not used by either peer: reassembled (and checked), then dropped.
                if fragmentsAreText { socket.receivedText(message) }
            } else {
                fragments = message
            }
        case .ping, .pong, .connectionClose:
            socket.receivedControl(frame)
        default:
            // Opcodes RFC 6455 reserves.
            violated(.protocolError)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIO's frame decoder: a frame above the maximum size (1009) or a malformed control frame (1002).
        if let error = error as? NIOWebSocketError {
            violated(error == .invalidFrameLength ? .messageTooLarge : .protocolError)
        } else {
            context.close(promise: nil)
        }
    }

    private func violated(_ code: WebSocketErrorCode) {
        guard !failed else { return }
        failed = true
        fragments = nil
        socket.violated(code)
    }
}
