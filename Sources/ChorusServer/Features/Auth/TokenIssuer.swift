import ChorusAPI
import Crypto
import Foundation
import JWTKit
import NIOConcurrencyHelpers

/// The claims of an access token. `typ` keeps refresh or other tokens from ever acting as access tokens.
struct AccessTokenClaims: JWTPayload {
    static let accessType = "access"

    var sub: SubjectClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    var typ: String
    /// The refresh-token family (sign-in session) the token belongs to.
    var sid: String

    enum CodingKeys: String, CodingKey {
        case sub
        case exp
        case iat
        case typ
        case sid
    }

    /// The type first: only a genuine access token (signature checked before this) can read as expired.
    func verify(using algorithm: some JWTAlgorithm) async throws {
        guard typ == Self.accessType else { throw JWTError.claimVerificationFailure(failedClaim: nil, reason: "not an access token") }
        try exp.verifyNotExpired()
    }
}

/// The verdict on a presented access token.
enum AccessTokenCheck: Sendable {
    case valid(AccessTokenClaims)
    /// Genuine, but past its `exp`: the client should refresh it.
    case expired
    /// Malformed, badly signed, not an access token.
    case invalid
}

/// Issues and verifies tokens: short-lived HS256 access JWTs with one configured key, and opaque refresh tokens
/// (256 random bits, stored as SHA-256 only).
struct TokenIssuer: Sendable {
    static let keyID: JWKIdentifier = "chorus-hs256"

    let keys: JWTKeyCollection
    let accessTokenLifetime: TimeInterval
    let refreshTokenLifetime: TimeInterval
    /// Tokens already verified, with their claims: a token is immutable, so only its expiry is checked again.
    private let verified = VerifiedTokenCache()

    static func make(secret: String, accessTokenLifetime: TimeInterval, refreshTokenLifetime: TimeInterval) async -> TokenIssuer {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256, kid: keyID)
        return TokenIssuer(keys: keys, accessTokenLifetime: accessTokenLifetime, refreshTokenLifetime: refreshTokenLifetime)
    }

    func accessToken(userID: String, familyID: String, now: Date) async throws -> String {
        let now = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))  // NumericDate in whole seconds
        let claims = AccessTokenClaims(
            sub: SubjectClaim(value: userID), exp: ExpirationClaim(value: now.addingTimeInterval(accessTokenLifetime)),
            iat: IssuedAtClaim(value: now), typ: AccessTokenClaims.accessType, sid: familyID
        )
        return try await keys.sign(claims, kid: Self.keyID)
    }

    /// What an access token is worth: its verified claims, or why it is refused. `expired` is said only of a token this
    /// server signed as an access token (signature and type checked) whose `exp` has passed; everything else is
    /// `invalid`. Expiry is wall-clock time, as JWTKit checks it.
    func checkAccessToken(_ token: String) async -> AccessTokenCheck {
        if let claims = verified.claims(for: token) {
            return claims.exp.value > Date() ? .valid(claims) : .expired
        }
        do {
            let claims = try await keys.verify(token, as: AccessTokenClaims.self)
            verified.insert(claims, for: token)
            return .valid(claims)
        } catch let error as JWTError where error.errorType == .claimVerificationFailure && error.failedClaim is ExpirationClaim {
            return .expired
        } catch {
            return .invalid
        }
    }

    /// A new opaque token (256 random bits, base64url) and the hash that is stored: refresh tokens, console sessions.
    static func newOpaqueToken() -> (token: String, hash: String) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let token = Data(bytes).base64URLEncoded()
        return (token, hash(opaqueToken: token))
    }

    static func hash(opaqueToken: String) -> String {
        SHA256.hash(data: Data(opaqueToken.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

/// A bounded map from verified access tokens to their claims (emptied when full; entries expire with the token).
private final class VerifiedTokenCache: Sendable {
    private static let capacity = 50_000
    private let entries = NIOLockedValueBox([String: AccessTokenClaims]())

    func claims(for token: String) -> AccessTokenClaims? {
        entries.withLockedValue { $0[token] }
    }

    func insert(_ claims: AccessTokenClaims, for token: String) {
        entries.withLockedValue { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[token] = claims
        }
    }
}

extension Data {
    func base64URLEncoded() -> String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
