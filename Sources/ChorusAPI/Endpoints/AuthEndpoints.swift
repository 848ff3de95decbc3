extension API.Auth {
    /// `POST /auth/register`: creates an account and signs in to it.
    public static let register = Endpoint<RegisterRequest, TokenResponse>(.post, "/auth/register")
    /// `POST /auth/login`: signs in with the OAuth2 password form (`username`, `password`).
    public static let login = Endpoint<RawContent, TokenResponse>(.post, "/auth/login")
    /// `POST /auth/refresh`: rotates the refresh token and issues a new access token.
    public static let refresh = Endpoint<RefreshRequest, TokenResponse>(.post, "/auth/refresh")
    /// `POST /auth/logout`: revokes the session of the given refresh token (or of the access token). The body is
    /// optional.
    public static let logout = Endpoint<LogoutRequest, LogoutResponse>(.post, "/auth/logout")
    /// `GET /me/usage?period=day|month`: the account's provider consumption and cost in the current UTC day or month.
    public static let providerUsage = Endpoint<NoContent, ProviderUsageReport>(.get, "/me/usage")

    /// Every endpoint of this area, for the table API/all.
    public static let endpoints: [AnyEndpoint] = [
        register.erased, login.erased, refresh.erased, logout.erased, providerUsage.erased,
    ]
}
