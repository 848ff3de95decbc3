import Vapor

/// The signed-in user of a request.
struct AuthenticatedUser: Sendable {
    var id: String
    /// The sign-in session (refresh-token family).
    var sessionID: String
}

struct AuthenticatedUserKey: StorageKey {
    typealias Value = AuthenticatedUser
}

extension Request {
    /// The authenticated user; only routes behind ``UserAuthenticator`` call this.
    var user: AuthenticatedUser {
        get throws {
            guard let user = storage[AuthenticatedUserKey.self] else { throw APIError.notAuthenticated }
            return user
        }
    }
}

/// Requires `Authorization: Bearer <access token>` and applies the per-user rate limit.
struct UserAuthenticator: AsyncMiddleware {
    let services: ChorusServices

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard let authorization = request.headers.first(name: .authorization) else { throw APIError.notAuthenticated }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw APIError.notAuthenticated }
        guard let claims = await services.tokens.verifyAccessToken(String(parts[1])) else { throw APIError.invalidCredentials }
        let user = AuthenticatedUser(id: claims.sub.value, sessionID: claims.sid)
        request.storage[AuthenticatedUserKey.self] = user
        request.logger[metadataKey: "user_id"] = .string(user.id)
        if let limit = services.configuration.rateLimits.user {
            try services.checkRateLimit("user:\(user.id)", limit)
        }
        return try await next.respond(to: request)
    }
}
