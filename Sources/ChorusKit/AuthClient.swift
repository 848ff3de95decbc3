import ChorusAPI
import Foundation

/// Accounts and sessions: `/auth/*`. Reached through ``ChorusClient/auth``.
///
/// Successful register and login store the session in the client's ``TokenStore``; the other clients then use it.
public struct AuthClient: Sendable {
    let session: APISession

    /// Whether a session is stored. It may still turn out to be ended by the server on the next request.
    public var isSignedIn: Bool {
        get async { (try? await session.tokenStore.load()) != nil }
    }

    /// The signed-in account's id, read from the stored session; `nil` when signed out.
    ///
    /// Pass it to StoreKit as the purchase's `appAccountToken` (`product.purchase(options: [.appAccountToken(id)])`):
    /// the server then accepts the transaction only for this account, and binds subscription notifications that
    /// arrive before the app reports the purchase to it.
    public var accountID: UUID? {
        get async {
            guard let token = try? await session.tokenStore.load()?.accessToken else { return nil }
            let segments = token.split(separator: ".")
            guard segments.count == 3 else { return nil }
            var base64 = String(segments[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            guard let data = Data(base64Encoded: base64),
                let claims = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let subject = claims["sub"] as? String
            else { return nil }
            return UUID(uuidString: subject)
        }
    }

    /// Creates an account and signs in to it.
    ///
    /// - Throws: ``ChorusError/validation(_:)`` for an invalid email or a password outside 8–128 characters;
    ///   ``ChorusError/api(status:detail:)`` (400) when the email is already registered.
    public func register(email: String, password: String) async throws {
        try await signIn(with: try API.Auth.register.request(json: RegisterRequest(email: email, password: password), authenticated: false))
    }

    /// Signs in with email and password (sent as the OAuth2 password form `username=…&password=…`).
    ///
    /// - Throws: ``ChorusError/unauthorized`` when the email or password is wrong.
    public func login(email: String, password: String) async throws {
        var request = API.Auth.login.request(authenticated: false)
        request.request.body = .form(Self.formEncoded([("username", email), ("password", password)]))
        try await signIn(with: request)
    }

    /// Renews the session now. Rarely needed: requests refresh by themselves when the access token is refused.
    ///
    /// - Throws: ``ChorusError/signedOut`` when there is no session or the server refuses the refresh token
    ///   (the store is then cleared).
    public func refresh() async throws {
        try await session.refreshNow()
    }

    /// Signs out: the server revokes this session's refresh token, and the stored session is forgotten.
    ///
    /// The local session is forgotten even when the server cannot be told; the error is then rethrown, and may be
    /// ignored (the refresh token will expire on its own). Signing out while signed out does nothing.
    public func logout() async throws {
        guard let tokens = try await session.tokenStore.load() else { return }
        var failure: (any Error)?
        do {
            var request = try API.Auth.logout.request(json: LogoutRequest(refreshToken: tokens.refreshToken))
            request.request.idempotent = true  // revoking a session twice is harmless: retried after a network failure
            _ = try await session.send(request)
        } catch ChorusError.signedOut {
            // The server had already ended the session.
        } catch {
            failure = error
        }
        try await session.tokenStore.clear()
        if let failure { throw failure }
    }

    private func signIn(with request: EndpointRequest<TokenResponse>) async throws {
        let pair = try await session.send(request)
        try await session.tokenStore.save(StoredTokens(accessToken: pair.accessToken, refreshToken: pair.refreshToken))
    }

    /// `application/x-www-form-urlencoded`: every byte outside the unreserved set percent-encoded (so `+`, `&`, `=`,
    /// `%` and spaces in an email or password reach the server intact).
    static func formEncoded(_ fields: [(String, String)]) -> Data {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        func encode(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
        }
        return Data(fields.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&").utf8)
    }
}
