import ChorusProviders
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Vapor

/// Records every request the sandbox emulators receive, with credentials redacted.
///
/// Installed as middleware in front of the emulators by ``SandboxServices/register(on:)``; WebSocket emulators add
/// each message they receive with ``recordMessage(path:connection:text:)``. The log is
/// listed at `GET /requests` and cleared with `DELETE /requests`. The `Authorization` header is never
/// stored, and every configured secret (such as the Twilio auth token) is replaced by `[REDACTED]`
/// wherever it appears in the path, query or body.
///
/// The log is bounded: at most ``capacity`` entries and ``maximumBytes`` bytes of recorded text (each entry counts
/// its path, query, headers and body, plus ``entryOverheadBytes``); the oldest entries are dropped first.
public final class SandboxRecorder: AsyncMiddleware, Sendable {
    /// One received request.
    public struct Entry: Sendable, Codable, Equatable {
        /// Position in the log, from 1.
        public let id: Int
        /// The HTTP method.
        public let method: String
        /// The request path, as received (including any mount prefix such as `/sandbox`).
        public let path: String
        /// The query string, if any.
        public let query: String?
        /// When the request arrived.
        public let receivedAt: Date
        /// The request headers; `Authorization` appears as `[REDACTED]`.
        public let headers: [String: String]
        /// The content type of the body, if any.
        public let contentType: String?
        /// The form or JSON body as text, truncated to 64 KiB.
        public let body: String?
        /// The status the emulator answered with.
        public let responseStatus: Int
        /// Milliseconds from the request's arrival to the emulator's answer (`nil` for WebSocket messages).
        public let durationMs: Double?

        enum CodingKeys: String, CodingKey {
            case id
            case method
            case path
            case query
            case receivedAt = "received_at"
            case durationMs = "duration_ms"
            case headers
            case contentType = "content_type"
            case body
            case responseStatus = "response_status"
        }
    }

    /// The default ``capacity``.
    public static let defaultCapacity = 2_000
    /// The default ``maximumBytes`` (4 MiB).
    public static let defaultMaximumBytes = 4 << 20
    /// What an entry counts beyond its text (its fixed fields and bookkeeping).
    public static let entryOverheadBytes = 256

    /// The most requests kept; older ones are dropped first.
    public let capacity: Int
    /// The most bytes of recorded text kept (see ``entryOverheadBytes``); older requests are dropped first.
    public let maximumBytes: Int
    private let secrets: [String]

    private struct Log {
        var nextID = 1
        var entries = CircularBuffer<Entry>()
        var bytes = 0

        mutating func append(_ entry: Entry, capacity: Int, maximumBytes: Int) {
            entries.append(entry)
            bytes += SandboxRecorder.size(of: entry)
            nextID += 1
            while entries.count > capacity || (bytes > maximumBytes && entries.count > 1) {
                bytes -= SandboxRecorder.size(of: entries.removeFirst())
            }
        }
    }

    private let log = NIOLockedValueBox(Log())

    /// Creates a recorder that redacts `secrets` and keeps at most `capacity` requests and `maximumBytes` bytes of them.
    public init(redacting secrets: [String] = [], capacity: Int = defaultCapacity, maximumBytes: Int = defaultMaximumBytes) {
        self.secrets = secrets.filter { !$0.isEmpty }
        self.capacity = max(1, capacity)
        self.maximumBytes = max(1, maximumBytes)
    }

    /// Every recorded request, oldest first.
    public func requests() -> [Entry] {
        log.withLockedValue { Array($0.entries) }
    }

    /// The number of requests kept and the bytes they count.
    public var usage: (entries: Int, bytes: Int) {
        log.withLockedValue { ($0.entries.count, $0.bytes) }
    }

    /// Forgets every recorded request.
    public func reset() {
        log.withLockedValue { log in
            log.entries.removeAll()
            log.bytes = 0
        }
    }

    /// What an entry counts against ``maximumBytes``.
    static func size(of entry: Entry) -> Int {
        var bytes = entryOverheadBytes + entry.method.utf8.count + entry.path.utf8.count + (entry.query?.utf8.count ?? 0)
        bytes += (entry.contentType?.utf8.count ?? 0) + (entry.body?.utf8.count ?? 0)
        for (name, value) in entry.headers { bytes += name.utf8.count + value.utf8.count }
        return bytes
    }

    /// Records the request once the emulator has answered it.
    public func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let receivedAt = Date()
        do {
            let response = try await next.respond(to: request)
            record(request, receivedAt: receivedAt, status: Int(response.status.code))
            return response
        } catch {
            let status = (error as? any AbortError)?.status.code ?? 500
            record(request, receivedAt: receivedAt, status: Int(status))
            throw error
        }
    }

    /// Mounts `GET /requests` and `DELETE /requests` on `routes`.
    public func register(on routes: any RoutesBuilder) {
        routes.get("requests") { _ async -> Response in
            SandboxJSON.response(RequestList(requests: self.requests()))
        }
        routes.delete("requests") { _ async -> Response in
            self.reset()
            return Response(status: .noContent)
        }
    }

    /// Records one WebSocket message an emulator received (`method` is `WS`, `path` the socket's path, `body` the
    /// text frame). `connection` names the socket (a call or session id) so one conversation can be followed.
    public func recordMessage(path: String, connection: String, text: String) {
        let receivedAt = Date()
        let body = redact(String(text.prefix(65_536)))
        log.withLockedValue { log in
            log.append(
                Entry(
                    id: log.nextID, method: "WS", path: path, query: nil, receivedAt: receivedAt,
                    headers: ["x-sandbox-connection": connection], contentType: "application/json", body: body, responseStatus: 101,
                    durationMs: nil
                ),
                capacity: capacity, maximumBytes: maximumBytes
            )
        }
    }

    private func record(_ request: Request, receivedAt: Date, status: Int) {
        var headers: [String: String] = [:]
        for (name, value) in request.headers {
            let key = name.lowercased()
            let clean = key == "authorization" || key == "proxy-authorization" ? "[REDACTED]" : redact(value)
            headers[key] = headers[key].map { $0 + ", " + clean } ?? clean
        }
        let body = request.body.string.map { redact(String($0.prefix(65_536))) }
        let path = redact(request.url.path)
        let query = request.url.query.map(redact)
        let contentType = request.headers.first(name: .contentType)
        log.withLockedValue { log in
            log.append(
                Entry(
                    id: log.nextID, method: request.method.rawValue, path: path, query: query, receivedAt: receivedAt,
                    headers: headers, contentType: contentType, body: body, responseStatus: status,
                    durationMs: (Date().timeIntervalSince(receivedAt) * 1_000_000).rounded() / 1_000
                ),
                capacity: capacity, maximumBytes: maximumBytes
            )
        }
    }

    private func redact(_ text: String) -> String {
        var result = text
        for secret in secrets {
            result = result.replacingOccurrences(of: secret, with: "[REDACTED]")
            // The form-encoded spelling, so the secret is redacted from form bodies too.
            let encoded = String(TwilioFormEncoding.encode([("", secret)]).dropFirst())
            if encoded != secret { result = result.replacingOccurrences(of: encoded, with: "[REDACTED]") }
        }
        return result
    }
}

struct RequestList: Encodable {
    let requests: [SandboxRecorder.Entry]

    enum CodingKeys: String, CodingKey {
        case requests
    }
}
