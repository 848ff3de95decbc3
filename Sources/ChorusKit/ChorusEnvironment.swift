import Foundation

/// Which Chorus server a ``ChorusClient`` talks to.
public enum ChorusEnvironment: Sendable, Hashable {
    /// A server started locally with `chorus serve`: `http://localhost:5050`.
    case development
    /// The production server at `url`.
    case production(URL)
    /// Any other server (staging, a test server on a loopback port, a path prefix behind a proxy).
    case custom(URL)

    /// The URL every API path is appended to.
    public var baseURL: URL {
        switch self {
        case .development: URL(string: "http://localhost:5050")!
        case .production(let url), .custom(let url): url
        }
    }
}
