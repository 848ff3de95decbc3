import Vapor

/// For the public catalog (`GET /mobile/scenarios`, `GET /mobile/voices`), which the integration guide's app reads
/// signed out (issue 21). A request with an `Authorization` header is authenticated exactly as ``UserAuthenticator``
/// does it: a bad or expired token is still 401, so an app notices its session ended. A request without one is served
/// anonymously, limited per client IP with the `user` rate limit (per instance, like the per-user one).
struct OptionalUserAuthenticator: AsyncMiddleware {
    let services: ChorusServices

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        if request.headers.first(name: .authorization) != nil {
            return try await UserAuthenticator(services: services).respond(to: request, chainingTo: next)
        }
        if let limit = services.configuration.rateLimits.user {
            try services.checkRateLimit("catalog:\(request.clientIP)", limit)
        }
        return try await next.respond(to: request)
    }
}

extension Request {
    /// The authenticated user of a route behind ``OptionalUserAuthenticator``, or `nil` when the request came without
    /// a token.
    var optionalUser: AuthenticatedUser? { storage[AuthenticatedUserKey.self] }
}
