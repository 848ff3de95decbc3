import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// Reads a server-sent event stream in the background and keeps every event (comments are skipped), so a test can
/// look at what arrived while something else happens.
final class EventStreamReader: Sendable {
    struct Event: Sendable {
        var name: String
        var data: String
    }

    private let events = NIOLockedValueBox<[Event]>([])
    private let ended = NIOLockedValueBox(false)
    private let task = NIOLockedValueBox<Task<Void, Never>?>(nil)

    /// Starts reading `url` with `client`, sending `headers`.
    init(client: HTTPClient, url: String, headers: [(String, String)]) {
        let events = events
        let ended = ended
        task.withLockedValue {
            $0 = Task {
                defer { ended.withLockedValue { $0 = true } }
                var request = HTTPClientRequest(url: url)
                for (name, value) in headers { request.headers.add(name: name, value: value) }
                guard let response = try? await client.execute(request, timeout: .seconds(120)) else { return }
                var pending = ""
                do {
                    for try await chunk in response.body {
                        pending += String(buffer: chunk)
                        while let end = pending.range(of: "\n\n") {
                            let block = pending[..<end.lowerBound]
                            pending = String(pending[end.upperBound...])
                            guard !block.hasPrefix(":") else { continue }
                            var event = Event(name: "message", data: "")
                            for line in block.split(separator: "\n") {
                                if line.hasPrefix("event: ") { event.name = String(line.dropFirst(7)) }
                                if line.hasPrefix("data: ") { event.data = String(line.dropFirst(6)) }
                            }
                            events.withLockedValue { $0.append(event) }
                        }
                    }
                } catch {}
            }
        }
    }

    /// The events received so far, in order.
    var received: [Event] { events.withLockedValue { $0 } }

    /// Whether the server ended the stream.
    var hasEnded: Bool { ended.withLockedValue { $0 } }

    /// Stops reading (closes the connection).
    func cancel() { task.withLockedValue { $0?.cancel() } }
}
