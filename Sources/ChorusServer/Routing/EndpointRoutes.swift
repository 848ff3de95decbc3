import ChorusAPI
import Vapor

/// Registers the routes of the endpoint table (``API``): the path and method come from the ``Endpoint``, written once
/// in `ChorusAPI`, and the handler returns the endpoint's typed answer.
///
/// Register on a builder grouped by middleware only (`routes.grouped(UserAuthenticator(...))`), never by path: the
/// endpoint's template is the whole path.
extension RoutesBuilder {
    /// Registers `endpoint`; the handler's answer is encoded as the contract's JSON with the endpoint's success status.
    @discardableResult
    func on<Body, Answer: Encodable>(
        _ endpoint: Endpoint<Body, Answer>, body strategy: HTTPBodyStreamStrategy = .collect,
        use handler: @escaping @Sendable (Request) async throws -> Answer
    ) -> Route {
        let status = HTTPResponseStatus(statusCode: endpoint.successStatus)
        return on(endpoint.vaporMethod, endpoint.pathComponents, body: strategy) { req in
            try Response.json(try await handler(req), status: status)
        }
    }

    /// Registers `endpoint`, which answers no content: the endpoint's success status (204) once the handler returns.
    @discardableResult
    func on<Body>(
        _ endpoint: Endpoint<Body, NoContent>, body strategy: HTTPBodyStreamStrategy = .collect,
        use handler: @escaping @Sendable (Request) async throws -> Void
    ) -> Route {
        let status = HTTPResponseStatus(statusCode: endpoint.successStatus)
        return on(endpoint.vaporMethod, endpoint.pathComponents, body: strategy) { req in
            try await handler(req)
            return Response(status: status)
        }
    }

    /// Registers `endpoint`, whose answer is not JSON (audio, HTML, an event stream): the handler builds the response.
    @discardableResult
    func on<Body>(
        _ endpoint: Endpoint<Body, RawContent>, body strategy: HTTPBodyStreamStrategy = .collect,
        use handler: @escaping @Sendable (Request) async throws -> Response
    ) -> Route {
        on(endpoint.vaporMethod, endpoint.pathComponents, body: strategy, use: handler)
    }

    /// Registers `endpoint` with a handler that builds the whole response itself, for the few JSON endpoints whose
    /// status or headers depend on the outcome (an idempotent replay, 200 or 201). Prefer the typed forms.
    @discardableResult
    func onResponse<Body, Answer>(
        _ endpoint: Endpoint<Body, Answer>, body strategy: HTTPBodyStreamStrategy = .collect,
        use handler: @escaping @Sendable (Request) async throws -> Response
    ) -> Route {
        on(endpoint.vaporMethod, endpoint.pathComponents, body: strategy, use: handler)
    }
}

extension Endpoint {
    /// The Vapor method.
    var vaporMethod: HTTPMethod { HTTPMethod(rawValue: method.rawValue) }

    /// The template as Vapor path components (`{name}` becomes the parameter `name`, read with
    /// `req.parameters.get("name")`).
    var pathComponents: [PathComponent] {
        segments.map { segment in
            switch segment {
            case .constant(let text): .constant(text)
            case .parameter(let name): .parameter(name)
            }
        }
    }
}

extension Request {
    /// Decodes the JSON body of `endpoint` (see ``decodeJSON(_:)``: 422 with field errors when it does not fit).
    func body<Body: Decodable, Answer>(of endpoint: Endpoint<Body, Answer>) throws -> Body {
        try decodeJSON(Body.self)
    }
}
