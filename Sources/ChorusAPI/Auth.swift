import Foundation

/// `POST /auth/register` body.
public struct RegisterRequest: Codable, Sendable, Equatable {
    public var email: String
    public var password: String

    public init(email: String, password: String) {
        self.email = email
        self.password = password
    }

    enum CodingKeys: String, CodingKey {
        case email
        case password
    }
}

/// The token pair returned by register, login and refresh.
public struct TokenResponse: Codable, Sendable, Equatable {
    public var accessToken: String
    public var refreshToken: String
    public var tokenType: String
    /// Lifetime of the access token in seconds.
    public var expiresIn: Int

    public init(accessToken: String, refreshToken: String, tokenType: String = "bearer", expiresIn: Int) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case refreshToken = "refresh_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
    }
}

/// `POST /auth/refresh` body.
public struct RefreshRequest: Codable, Sendable, Equatable {
    public var refreshToken: String

    public init(refreshToken: String) {
        self.refreshToken = refreshToken
    }

    enum CodingKeys: String, CodingKey {
        case refreshToken = "refresh_token"
    }
}

/// `POST /auth/logout` body. Without a refresh token, the session the access token belongs to is revoked.
public struct LogoutRequest: Codable, Sendable, Equatable {
    public var refreshToken: String?

    public init(refreshToken: String? = nil) {
        self.refreshToken = refreshToken
    }

    enum CodingKeys: String, CodingKey {
        case refreshToken = "refresh_token"
    }
}

/// `POST /auth/logout` answer: `{"detail": "Logged out successfully"}`.
public struct LogoutResponse: Codable, Sendable, Equatable {
    public var detail: String

    public init(detail: String) {
        self.detail = detail
    }

    enum CodingKeys: String, CodingKey {
        case detail
    }
}
