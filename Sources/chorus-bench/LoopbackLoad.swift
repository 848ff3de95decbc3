import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A light closed-loop HTTP/1.1 load generator: one keep-alive connection per simulated client, each sending its
/// next request as soon as the previous answer ends, entirely on its event loop (no per-request task hops), so the
/// generator takes as little CPU as possible from the server it measures.
enum LoopbackLoad {
    struct Outcome: Sendable {
        /// Seconds from sending a request to the end of its answer.
        var latencies: [Double]
        /// Seconds from sending a request to the first byte of its answer (the response head).
        var firstBytes: [Double] = []
        var errors: Int
    }

    /// Runs `clients` connections against `host:port` until `deadline`; `request(client, sequence)` builds each request.
    static func run(
        host: String, port: Int, clients: Int, group: any EventLoopGroup, until deadline: NIODeadline,
        request: @escaping @Sendable (Int, Int) -> (HTTPRequestHead, ByteBuffer?)
    ) async throws -> Outcome {
        try await withThrowingTaskGroup(of: Outcome.self) { tasks in
            for client in 0..<clients {
                tasks.addTask {
                    let promise = group.next().makePromise(of: Outcome.self)
                    let driver = ClientDriver(client: client, deadline: deadline, request: request, done: promise)
                    let channel = try await ClientBootstrap(group: group)
                        .channelOption(.socketOption(.tcp_nodelay), value: 1)
                        .channelInitializer { channel in
                            channel.pipeline.addHTTPClientHandlers().flatMap { channel.pipeline.addHandler(driver) }
                        }
                        .connect(host: host, port: port).get()
                    let outcome = try await promise.futureResult.get()
                    try? await channel.close()
                    return outcome
                }
            }
            var all = Outcome(latencies: [], errors: 0)
            for try await outcome in tasks {
                all.latencies += outcome.latencies
                all.firstBytes += outcome.firstBytes
                all.errors += outcome.errors
            }
            return all
        }
    }

    /// Sends, waits for the whole answer, records the latency, sends again.
    private final class ClientDriver: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart

        let client: Int
        let deadline: NIODeadline
        let request: @Sendable (Int, Int) -> (HTTPRequestHead, ByteBuffer?)
        let done: EventLoopPromise<Outcome>
        var sequence = 0
        var started = NIODeadline.now()
        var status: HTTPResponseStatus = .ok
        var outcome = Outcome(latencies: [], errors: 0)
        var finished = false

        init(
            client: Int, deadline: NIODeadline, request: @escaping @Sendable (Int, Int) -> (HTTPRequestHead, ByteBuffer?),
            done: EventLoopPromise<Outcome>
        ) {
            self.client = client
            self.deadline = deadline
            self.request = request
            self.done = done
            outcome.latencies.reserveCapacity(50_000)
            outcome.firstBytes.reserveCapacity(50_000)
        }

        func channelActive(context: ChannelHandlerContext) {
            send(context: context)
        }

        private func finish(_ result: Result<Outcome, any Error>) {
            guard !finished else { return }
            finished = true
            done.completeWith(result)
        }

        private func send(context: ChannelHandlerContext) {
            guard NIODeadline.now() < deadline else {
                finish(.success(outcome))
                return
            }
            sequence += 1
            var (head, body) = request(client, sequence)
            head.headers.replaceOrAdd(name: "Content-Length", value: String(body?.readableBytes ?? 0))
            started = .now()
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            if let body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                status = head.status
                outcome.firstBytes.append(Double((NIODeadline.now() - started).nanoseconds) / 1e9)
            case .body:
                break
            case .end:
                outcome.latencies.append(Double((NIODeadline.now() - started).nanoseconds) / 1e9)
                if status != .ok { outcome.errors += 1 }
                send(context: context)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            finish(.failure(error))
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            finish(.success(outcome))
        }
    }
}
