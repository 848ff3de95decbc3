import Vapor

/// The usual security headers on every response. HSTS only when the public URL is https.
struct SecurityHeadersMiddleware: AsyncMiddleware {
    let strictTransportSecurity: Bool

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let response = try await next.respond(to: request)
        let headers = [
            ("X-Content-Type-Options", "nosniff"),
            ("X-Frame-Options", "DENY"),
            ("Referrer-Policy", "no-referrer"),
            ("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"),
            ("Cross-Origin-Resource-Policy", "same-origin"),
        ]
        for (name, value) in headers where !response.headers.contains(name: name) {
            response.headers.replaceOrAdd(name: name, value: value)
        }
        if !response.headers.contains(name: .cacheControl) {
            response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        }
        if strictTransportSecurity {
            response.headers.replaceOrAdd(name: .strictTransportSecurity, value: "max-age=31536000; includeSubDomains")
        }
        return response
    }
}
