import ChorusAPI
import ChorusCore
import Foundation
import Vapor

/// `/auth/*`: register, login (OAuth2 password form), refresh (rotating, reuse-detecting), logout.
struct AuthController: RouteCollection {
    let services: ChorusServices

    func boot(routes: any RoutesBuilder) throws {
        let limited = routes.grouped(AuthRateLimit(services: services))
        limited.on(API.Auth.register, use: register)
        limited.on(API.Auth.login, use: login)
        limited.on(API.Auth.refresh, use: refresh)
        routes.grouped(UserAuthenticator(services: services)).on(API.Auth.logout, use: logout)
    }

    @Sendable
    func register(_ req: Request) async throws -> TokenResponse {
        let body = try req.body(of: API.Auth.register)
        let email = body.email.trimmingCharacters(in: .whitespaces).lowercased()
        var validator = FieldValidator()
        validator.check(EmailAddress.isValid(email), "email", "Enter a valid email address")
        Self.checkPassword(body.password, into: &validator)
        try validator.throwIfInvalid()

        let now = services.now()
        let admitted = try await admitSignup(req, now: now)
        let hash = try await services.passwords.hash(body.password, on: req.application.threadPool)
        let user = UserRecord(id: UUID().uuidString.lowercased(), email: email, passwordHash: hash, appType: Self.appType(of: req), createdAt: now)
        let trial = QuotaBucket.trial(registeredAt: now, terms: services.configuration.plans.trial)
        guard let created = try await req.store.accounts.createUser(user, trial: trial) else {
            for charge in admitted { try await req.store.usageLimits.refundAdmission(scope: charge.scope, period: charge.period) }
            throw APIError.badRequest("Email already registered")
        }
        req.logger.info("account registered", metadata: ["user_id": .string(created.id), "app_type": .string(created.appType)])
        return try await issueTokens(for: created.id, req: req)
    }

    @Sendable
    func login(_ req: Request) async throws -> TokenResponse {
        struct LoginForm: Content {
            var username: String?
            var password: String?
        }
        let form: LoginForm
        do {
            form = try req.content.decode(LoginForm.self, as: .urlEncodedForm)
        } catch {
            throw APIError.invalid("body", "Send username and password as application/x-www-form-urlencoded")
        }
        var validator = FieldValidator()
        validator.check(!(form.username ?? "").isEmpty, "username", "Field required")
        validator.check(!(form.password ?? "").isEmpty, "password", "Field required")
        try validator.throwIfInvalid()
        let email = form.username!.trimmingCharacters(in: .whitespaces).lowercased()
        let user = try await req.store.accounts.user(email: email)
        let valid = try await services.passwords.verify(form.password!, against: user?.passwordHash, on: req.application.threadPool)
        guard valid, let user else {
            req.logger.notice("login failed")
            throw APIError.detail(.unauthorized, "Incorrect username or password")
        }
        return try await issueTokens(for: user.id, req: req)
    }

    @Sendable
    func refresh(_ req: Request) async throws -> TokenResponse {
        let body = try req.body(of: API.Auth.refresh)
        let now = services.now()
        switch try await req.store.accounts.rotateRefreshToken(hash: TokenIssuer.hash(opaqueToken: body.refreshToken), now: now) {
        case .rotated(let userID, let familyID):
            let (token, hash) = TokenIssuer.newOpaqueToken()
            try await req.store.accounts.insertRefreshToken(
                hash: hash, userID: userID, familyID: familyID, now: now, expiresAt: now.addingTimeInterval(services.tokens.refreshTokenLifetime)
            )
            let access = try await services.tokens.accessToken(userID: userID, familyID: familyID, now: now)
            return Self.tokenResponse(access: access, refresh: token, lifetime: services.tokens.accessTokenLifetime)
        case .reused:
            services.sessions.forgetAll()  // the session's access tokens stop working now, not when they expire
            req.logger.warning("refresh token reuse detected; session revoked")
            throw APIError.detail(.unauthorized, "Refresh token has already been used; please sign in again")
        case .invalid:
            throw APIError.detail(.unauthorized, "Invalid refresh token")
        }
    }

    @Sendable
    func logout(_ req: Request) async throws -> LogoutResponse {
        let user = try req.user
        let now = services.now()
        let body = try req.decodeOptionalJSON(LogoutRequest.self)
        if let token = body?.refreshToken {
            _ = try await req.store.accounts.revokeFamily(ofToken: TokenIssuer.hash(opaqueToken: token), userID: user.id, now: now)
        } else {
            try await req.store.accounts.revokeFamily(user.sessionID, now: now)
        }
        services.sessions.forgetAll()  // the session's access tokens stop working now, not when they expire
        return LogoutResponse(detail: "Logged out successfully")
    }

    private func issueTokens(for userID: String, req: Request) async throws -> TokenResponse {
        let now = services.now()
        let familyID = UUID().uuidString.lowercased()
        let (token, hash) = TokenIssuer.newOpaqueToken()
        try await req.store.accounts.startRefreshFamily(
            familyID: familyID, userID: userID, tokenHash: hash, now: now, expiresAt: now.addingTimeInterval(services.tokens.refreshTokenLifetime)
        )
        let access = try await services.tokens.accessToken(userID: userID, familyID: familyID, now: now)
        return Self.tokenResponse(access: access, refresh: token, lifetime: services.tokens.accessTokenLifetime)
    }

    private static func tokenResponse(access: String, refresh: String, lifetime: TimeInterval) -> TokenResponse {
        TokenResponse(accessToken: access, refreshToken: refresh, expiresIn: Int(lifetime))
    }

    static func checkPassword(_ password: String, into validator: inout FieldValidator) {
        validator.check(password.count >= 8, "password", "Password must be at least 8 characters")
        validator.check(password.count <= 128, "password", "Password must be at most 128 characters")
    }

    /// `mobile_consumer` for the iOS app (`X-App-Type: mobile` or its User-Agent), `web_business` otherwise.
    /// Counts a signup against the client address's and its network's daily limits (``ChorusConfiguration/AdmissionLimits``),
    /// both or neither: 429 with `Retry-After` at the next UTC day when either is reached. Returns what was charged.
    private func admitSignup(_ req: Request, now: Date) async throws -> [AdmissionCharge] {
        let limits = services.configuration.admission
        let address = req.clientIP
        let day = UsageLimitStore.admissionDay(now)
        var charges: [AdmissionCharge] = []
        if let limit = limits.signupsPerAddress { charges.append(AdmissionCharge(scope: "signup-ip:" + address, period: day, limit: limit)) }
        if let limit = limits.signupsPerNetwork {
            charges.append(AdmissionCharge(scope: "signup-net:" + limits.network.network(of: address), period: day, limit: limit))
        }
        guard !charges.isEmpty else { return [] }
        if let refused = try await req.store.usageLimits.chargeAdmission(charges) {
            let network = refused.scope.hasPrefix("signup-net:")
            req.logger.notice(
                "signup refused: the daily signups of the client's \(network ? "network" : "address") are used up",
                metadata: ["scope": .string(refused.scope), "limit": .stringConvertible(refused.limit)])
            throw APIError.limitReached(
                retryAfter: UTCBoundary.secondsUntilNext(.day, after: now),
                detail: "Too many accounts were created from your \(network ? "network" : "address") today. Please try again tomorrow.")
        }
        return charges
    }

    static func appType(of req: Request) -> String {
        let header = req.headers.first(name: "X-App-Type")?.lowercased()
        let agent = req.headers.first(name: .userAgent)?.lowercased() ?? ""
        return header == "mobile" || agent.contains("speech-assistant-mobile") ? "mobile_consumer" : "web_business"
    }
}

/// Per-IP limit on the credential endpoints, counted across instances (``SharedRateLimiter``).
struct AuthRateLimit: AsyncMiddleware {
    let services: ChorusServices

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        if let limit = services.configuration.rateLimits.auth {
            try await services.checkSharedRateLimit("auth:\(request.clientIP)", limit, store: request.store, logger: request.logger)
        }
        return try await next.respond(to: request)
    }
}
