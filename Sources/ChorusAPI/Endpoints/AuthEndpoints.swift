extension API.Auth {
    /// Every endpoint of this area, for the table API/all.
    public static let endpoints: [AnyEndpoint] = []
}
