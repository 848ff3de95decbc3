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

/// Requires `Authorization: Bearer <access token>` of a session that still holds (``SessionCheck``) and applies the
/// per-user rate limit.
struct UserAuthenticator: AsyncMiddleware {
    let services: ChorusServices

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let user = try await authenticate(request)
        // Provider calls made for this request are metered to this user and request id.
        do {
            return try await MeteringContext.$current.withValue(MeteringContext(userID: user.id, requestID: request.requestID)) {
                try await next.respond(to: request)
            }
        } catch let error where !(error is APIError) {
            // The account was deleted while the request ran (or since its session was last checked): its writes fail
            // on the missing user row. That is a token that no longer holds, not a server error.
            if let exists = try? await request.store.accounts.userExists(id: user.id), !exists { throw APIError.invalidCredentials }
            throw error
        }
    }

    /// Authenticates the request's bearer token (or, where `allowsQueryToken`, an `access_token` query parameter for
    /// clients that cannot set headers, such as browser WebSockets), stores the user on the request and applies the
    /// per-user rate limit.
    @discardableResult
    func authenticate(_ request: Request, allowsQueryToken: Bool = false) async throws -> AuthenticatedUser {
        let token: String
        if let authorization = request.headers.first(name: .authorization) {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw APIError.notAuthenticated }
            token = String(parts[1])
        } else if allowsQueryToken, let query = request.query[String.self, at: "access_token"] {
            token = query
        } else {
            throw APIError.notAuthenticated
        }
        let claims: AccessTokenClaims
        switch await services.tokens.checkAccessToken(token) {
        case .valid(let valid): claims = valid
        case .expired: throw APIError.tokenExpired
        case .invalid: throw APIError.invalidCredentials
        }
        let user = AuthenticatedUser(id: claims.sub.value, sessionID: claims.sid)
        guard try await services.sessions.isActive(sessionID: user.sessionID, userID: user.id, store: request.store) else {
            throw APIError.invalidCredentials
        }
        request.storage[AuthenticatedUserKey.self] = user
        request.logger[metadataKey: "user_id"] = .string(user.id)
        if let limit = services.configuration.rateLimits.user {
            try services.checkRateLimit("user:\(user.id)", limit)
        }
        return user
    }
}
