import Foundation

/// Which Chorus server a ``ChorusClient`` talks to.
///
/// The seed's integration guide has two environments: development (`http://localhost:5050`, a server started with
/// `chorus serve`) and production (the deployment's own HTTPS domain — the guide only has the placeholder
/// `https://your-domain.com`). Chorus is deployed by each team on its own domain, so the SDK compiles in no
/// production host: guessing one would send a misconfigured app's traffic to a stranger. Instead the app declares
/// its production URL once, next to its other configuration, and every call site names an environment, never a
/// string:
///
/// ```swift
/// extension ChorusEnvironment {
///     /// Our deployment.
///     static let live = ChorusEnvironment.production(URL(string: "https://api.example.com")!)
/// }
///
/// #if DEBUG
/// let chorus = ChorusClient(environment: .development)
/// #else
/// let chorus = ChorusClient(environment: .live)
/// #endif
/// ```
///
/// ``custom(_:)`` is for everything else: a staging server, a test server on a loopback port, a device reaching the
/// development server on the Mac's LAN address, or a path prefix behind a proxy.
public enum ChorusEnvironment: Sendable, Hashable {
    /// A server started locally with `chorus serve`: `http://localhost:5050` (reachable from the iOS Simulator; a
    /// device needs the Mac's address through ``custom(_:)``).
    case development
    /// The production deployment at `url`, an `https` URL (with a path prefix if the API is served under one).
    case production(URL)
    /// Any other server (staging, a test server on a loopback port, a path prefix behind a proxy).
    case custom(URL)

    /// The development server's URL, `http://localhost:5050`.
    public static let developmentURL = URL(string: "http://localhost:5050")!

    /// The URL every API path is appended to.
    public var baseURL: URL {
        switch self {
        case .development: Self.developmentURL
        case .production(let url), .custom(let url): url
        }
    }

    /// Whether this is the production deployment.
    public var isProduction: Bool {
        if case .production = self { return true }
        return false
    }
}
