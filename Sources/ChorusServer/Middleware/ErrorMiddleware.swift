import ChorusAPI
import Foundation
import Vapor

/// Turns every error into the contract's JSON bodies and logs unexpected ones with the request id.
///
/// It also keeps the contract's path matching, where a literal segment wins over a parameter: Vapor routes each
/// method on its own, so `PATCH /messages/search` would reach `PATCH /messages/{message_id}` with the id `search`;
/// the contract has no PATCH on `/messages/search`, so the answer is 405 with the `Allow` of that path.
struct ChorusErrorMiddleware: AsyncMiddleware {
    struct ShadowedRoute: Error {}

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        do {
            if let route = request.route, isShadowed(route, for: request) { throw ShadowedRoute() }
            return try await next.respond(to: request)
        } catch {
            return Self.response(for: error, request: request)
        }
    }

    /// Whether a route with a parameter matched a path that a route with a literal segment there claims.
    private func isShadowed(_ route: Route, for request: Request) -> Bool {
        let parameters = route.path.filter { if case .parameter = $0 { true } else { false } }.count
        guard parameters > 0, route.path.allSatisfy({ if case .constant = $0 { true } else if case .parameter = $0 { true } else { false } })
        else { return false }
        let specific = mostSpecificRoutes(for: request)
        return !specific.isEmpty && !specific.contains { $0.path.map(\.description) == route.path.map(\.description) }
    }

    /// Vapor's answer when no route matched, or a route the contract does not match there.
    private static func isUnrouted(_ error: any Error) -> Bool {
        if error is ShadowedRoute { return true }
        guard let abort = error as? any AbortError else { return false }
        return abort.status == .notFound && abort.reason == "Not Found"
    }

    static func response(for error: any Error, request: Request) -> Response {
        let error = (error as? CallPlacementError).map { APIError($0) as any Error } ?? error
        var headers = HTTPHeaders()
        let status: HTTPResponseStatus
        let body: any Encodable
        switch error {
        case let error as APIError:
            switch error {
            case .detail(let code, let message):
                status = code
                body = ErrorResponse(detail: message)
            case .validation(let summary, let errors):
                status = .unprocessableEntity
                body = ValidationErrorResponse(detail: summary, errors: errors)
            case .paymentRequired(let payload):
                status = .paymentRequired
                body = payload
            case .notAuthenticated:
                status = .unauthorized
                headers.replaceOrAdd(name: .wwwAuthenticate, value: "Bearer")
                body = ErrorResponse(detail: "Not authenticated")
            case .invalidCredentials:
                // RFC 6750 §3: a token was presented and refused.
                status = .unauthorized
                headers.replaceOrAdd(name: .wwwAuthenticate, value: #"Bearer error="invalid_token""#)
                body = ErrorResponse(detail: "Could not validate credentials")
            case .tokenExpired:
                status = .unauthorized
                headers.replaceOrAdd(
                    name: .wwwAuthenticate, value: #"Bearer error="invalid_token", error_description="The access token expired""#)
                body = ErrorResponse(detail: "The access token expired: refresh it (POST /auth/refresh) or sign in again")
            case .rateLimited(let retryAfter, let limit, let window):
                status = .tooManyRequests
                headers.replaceOrAdd(name: .retryAfter, value: String(retryAfter))
                body = ErrorResponse(detail: "Rate limit exceeded: \(limit) per \(window) seconds. Retry in \(retryAfter) seconds.")
            case .unavailable(let retryAfter, let detail):
                status = .serviceUnavailable
                headers.replaceOrAdd(name: .retryAfter, value: String(retryAfter))
                body = ErrorResponse(detail: detail)
            case .limitReached(let retryAfter, let detail):
                status = .tooManyRequests
                headers.replaceOrAdd(name: .retryAfter, value: String(retryAfter))
                body = ErrorResponse(detail: detail)
            case .refused(let detail):
                status = .unprocessableEntity
                body = RefusalResponse(detail: detail)
            }
        case let error as DecodingError:
            status = .unprocessableEntity
            body = ValidationErrorResponse(detail: "Validation error", errors: [FieldError(decoding: error)])
        case _ where isUnrouted(error):
            // No route matched (or only one the contract does not match there): 405 with `Allow` when the path exists
            // for other methods, 404 otherwise.
            let allowed = Set(mostSpecificRoutes(for: request).map(\.method.rawValue)).sorted()
            if allowed.isEmpty {
                status = .notFound
                body = ErrorResponse(detail: "Not Found")
            } else {
                status = .methodNotAllowed
                headers.replaceOrAdd(name: .allow, value: allowed.joined(separator: ", "))
                body = ErrorResponse(detail: "Method Not Allowed")
            }
        case let abort as any AbortError:
            status = abort.status
            headers = abort.headers
            body = ErrorResponse(detail: abort.reason)
        default:
            status = .internalServerError
            request.logger.error("unexpected error", metadata: ["error": "\(String(reflecting: error))"])
            body = ErrorResponse(detail: "An unexpected error occurred. Please try again later.", requestID: request.requestID)
        }
        if status == .internalServerError, error is any AbortError {
            request.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
        }
        let data = (try? ChorusJSON.makeEncoder().encode(AnyEncodable(body))) ?? Data(#"{"detail":"Internal Server Error"}"#.utf8)
        headers.replaceOrAdd(name: .contentType, value: "application/json; charset=utf-8")
        return Response(status: status, headers: headers, body: .init(data: data))
    }
}

/// The routes registered for the request's path (parameters match any segment), as the contract matches paths: a
/// literal segment wins over a parameter, so `/stories/voices` has the routes of `/stories/voices`, not those of
/// `/stories/{story_id}`.
private func mostSpecificRoutes(for request: Request) -> [Route] {
    let segments = request.url.path.split(separator: "/", omittingEmptySubsequences: true)
    var candidates = request.application.routes.all.filter { route in
        route.path.count == segments.count
            && zip(route.path, segments).allSatisfy { component, segment in
                if case .constant(let text) = component { return text == segment }
                return true
            }
    }
    for index in segments.indices {
        let literal = candidates.filter { route in
            if case .constant = route.path[index] { return true }
            return false
        }
        if !literal.isEmpty { candidates = literal }
    }
    return candidates
}

private struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

extension FieldError {
    /// A field error from a JSON decoding failure: the field path joined with `.`, and a readable message.
    init(decoding error: DecodingError) {
        func path(_ keys: [any CodingKey]) -> String {
            let joined = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return joined.replacingOccurrences(of: ".[", with: "[")
        }
        switch error {
        case .keyNotFound(let key, let context):
            self.init(field: path(context.codingPath + [key]), message: "Field required")
        case .typeMismatch(let type, let context):
            self.init(field: path(context.codingPath).nonEmpty ?? "body", message: "Expected \(Self.describe(type))")
        case .valueNotFound(let type, let context):
            self.init(field: path(context.codingPath).nonEmpty ?? "body", message: "Expected \(Self.describe(type)), got null")
        case .dataCorrupted(let context):
            let field = path(context.codingPath)
            self.init(
                field: field.isEmpty ? "body" : field,
                message: field.isEmpty ? "The body is not valid JSON" : context.debugDescription
            )
        @unknown default:
            self.init(field: "body", message: "Invalid body")
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Bool.Type: "a boolean"
        case is Double.Type: "a number"
        default:
            // The decoder names containers `Array<Any>` and `Dictionary<String, Any>`.
            if String(describing: type).hasPrefix("Array<") {
                "an array"
            } else if String(describing: type).hasPrefix("Dictionary<") {
                "an object"
            } else {
                "a value of type \(type)"
            }
        }
    }
}

extension String {
    /// The string, or `nil` when it is empty.
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
