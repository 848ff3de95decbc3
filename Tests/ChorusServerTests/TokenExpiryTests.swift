import ChorusAPI
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusServer

/// Issue 20: an expired access token is told apart from garbage (RFC 6750 §3), so that clients know to refresh it.
@Suite("Token expiry")
struct TokenExpiryTests {
    static let expiredChallenge = #"Bearer error="invalid_token", error_description="The access token expired""#

    @Test("an expired access token: 401 invalid_token with 'The access token expired'; garbage and forged ones keep their answers", arguments: TestDatabase.all)
    func expiredToken(_ database: TestDatabase) async throws {
        // Access tokens live one second: the test waits for a real expiry.
        try await TestServer.run(on: database, environment: ["CHORUS_ACCESS_TOKEN_TTL": "1"]) { server in
            let tokens = try await server.register()
            let expiry = try #require(try CompactJWS.payload(tokens.accessToken)["exp"] as? Double)
            try await Task.sleep(for: .seconds(max(0, expiry - Date().timeIntervalSince1970) + 1.1))

            let expired = try await server.request(.GET, "/mobile/usage-stats", token: tokens.accessToken)
            #expect(expired.status == 401)
            #expect(expired.headers.first(name: "WWW-Authenticate") == Self.expiredChallenge)
            #expect(expired.detail == "The access token expired: refresh it (POST /auth/refresh) or sign in again")

            // The same expired token with its signature altered is not genuine: no claim about expiry.
            let parts = tokens.accessToken.split(separator: ".")
            let forged = "\(parts[0]).\(parts[1]).\(String(parts[2].reversed()))"
            let refused = try await server.request(.GET, "/mobile/usage-stats", token: forged)
            #expect(refused.status == 401)
            #expect(refused.detail == "Could not validate credentials")
            #expect(refused.headers.first(name: "WWW-Authenticate") == #"Bearer error="invalid_token""#)

            let garbage = try await server.request(.GET, "/mobile/usage-stats", token: "not.a.jwt")
            #expect(garbage.detail == "Could not validate credentials")
            #expect(garbage.headers.first(name: "WWW-Authenticate") == #"Bearer error="invalid_token""#)
            let missing = try await server.request(.GET, "/mobile/usage-stats")
            #expect(missing.detail == "Not authenticated")
            #expect(missing.headers.first(name: "WWW-Authenticate") == "Bearer")

            // What the answer says to do works: the refresh token gives a token that is accepted.
            let renewed = try await server.request(.POST, "/auth/refresh", json: RefreshRequest(refreshToken: tokens.refreshToken))
            #expect(renewed.status == 200, "\(renewed.text)")
            let fresh = try renewed.decode(TokenResponse.self)
            #expect(try await server.request(.GET, "/mobile/usage-stats", token: fresh.accessToken).status == 200)
        }
    }

    @Test("a token verified while valid and cached is answered as expired once its time passes")
    func cachedTokenExpires() async throws {
        let issuer = await TokenIssuer.make(secret: String(repeating: "k", count: 32), accessTokenLifetime: 1, refreshTokenLifetime: 60)
        let token = try await issuer.accessToken(userID: "user", familyID: "family", now: Date())
        guard case .valid(let claims) = await issuer.checkAccessToken(token) else {
            Issue.record("a fresh token was refused")
            return
        }
        #expect(claims.sub.value == "user" && claims.sid == "family")
        try await Task.sleep(for: .seconds(max(0, claims.exp.value.timeIntervalSinceNow) + 0.2))
        let cached: Bool = if case .expired = await issuer.checkAccessToken(token) { true } else { false }
        #expect(cached)
        // Another issuer (another key) never calls this token expired: its signature does not hold there.
        let other = await TokenIssuer.make(secret: String(repeating: "o", count: 32), accessTokenLifetime: 1, refreshTokenLifetime: 60)
        let foreign: Bool = if case .invalid = await other.checkAccessToken(token) { true } else { false }
        #expect(foreign)
        // Nor does a fresh issuer with the same key mistake it for anything but expired (no cache there).
        let same = await TokenIssuer.make(secret: String(repeating: "k", count: 32), accessTokenLifetime: 1, refreshTokenLifetime: 60)
        let uncached: Bool = if case .expired = await same.checkAccessToken(token) { true } else { false }
        #expect(uncached)
    }
}
