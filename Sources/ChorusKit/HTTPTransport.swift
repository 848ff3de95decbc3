import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one HTTP request and returns the raw answer, whatever its status.
///
/// ``ChorusClient`` builds the requests (URL, headers, body, authentication) and interprets the answers; a transport
/// only moves bytes. Implement it to route traffic through your own stack or to fake the server in tests.
/// Throw only when no HTTP answer arrived (no connection, timeout, cancellation): a 4xx or 5xx is a normal answer.
/// Do not retry inside a transport: the client retries per ``RetryPolicy``, and knows which requests are safe to send
/// twice.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the body and response, for every status code.
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)
}

/// The default transport: a `URLSession` (`URLSession.shared` unless another is given).
public struct URLSessionTransport: HTTPTransport {
    /// The session requests are sent with.
    public let session: URLSession

    /// - Parameter session: the session to use; configure your own for custom timeouts, caching or proxies.
    public init(session: URLSession = .shared) {
        self.session = session
    }

    /// Sends `request` with ``session``; throws `URLError` when no HTTP answer arrives.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return (data, http)
    }
}
