import Tracing
import Vapor

/// One server span per request (issue 18), a child of the caller's span when the request carries W3C trace context
/// (`traceparent`, `tracestate`). Named by method and route template (`POST /v1/calls/:id/cancel`), never by the raw
/// path, so no identifier or personal data lands in span names; requests no route matches are `GET unmatched`. The
/// route, the answer's status and its request id are attributes; a 5xx marks the span as failed.
///
/// The span's context is the task's `ServiceContext` for the rest of the request (and `request.serviceContext`), so
/// the transactions and provider exchanges the request makes are its children.
struct RequestTracingMiddleware: AsyncMiddleware {
    let tracer: any Tracer

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        var context = ServiceContext.current ?? .topLevel
        tracer.extract(request.headers, into: &context, using: HTTPHeadersExtractor())
        let route = request.route.map { "/" + $0.path.map(\.description).joined(separator: "/") }
        return try await tracer.withSpan("\(request.method.rawValue) \(route ?? "unmatched")", context: context, ofKind: .server) { span in
            request.serviceContext = span.context
            span.attributes["http.request.method"] = request.method.rawValue
            if let route { span.attributes["http.route"] = route }
            let response = try await next.respond(to: request)
            span.attributes["http.response.status_code"] = Int(response.status.code)
            if let requestID = response.headers.first(name: "X-Request-ID") { span.attributes["chorus.request_id"] = requestID }
            if response.status.code >= 500 { span.setStatus(SpanStatus(code: .error)) }
            return response
        }
    }
}

/// Reads W3C trace context (`traceparent`, `tracestate`) from request headers.
struct HTTPHeadersExtractor: Extractor {
    func extract(key name: String, from headers: HTTPHeaders) -> String? {
        let values = headers[name]
        return values.isEmpty ? nil : values.joined(separator: ",")
    }
}
