import AsyncHTTPClient
import NIOHTTP1
import Tracing

/// Spans of outbound provider exchanges (issue 18): each HTTP exchange with a provider is a client span named
/// `<provider> <operation>` (`openai responses`, `twilio calls.create`), a child of the task's span (the request, job
/// or call it works for), and the request carries its W3C `traceparent` so the provider's side joins the trace.
/// The tracer comes from the clients' ``ProviderCallObserver``; without one nothing is traced.
public enum ProviderTracing {
    /// Sends `request` through `send` inside the exchange's span, with the span's trace context in its headers.
    /// `status` reads the HTTP status from the result; 4xx and 5xx mark the span failed, as does a thrown error.
    public static func exchange<T>(
        tracer: (any Tracer)?, provider: String, operation: String, request: HTTPClientRequest, status: (T) -> Int,
        _ send: (HTTPClientRequest) async throws -> T
    ) async throws -> T {
        guard let tracer else { return try await send(request) }
        return try await tracer.withSpan("\(provider) \(operation)", ofKind: .client) { span in
            var request = request
            tracer.inject(span.context, into: &request.headers, using: HTTPHeadersInjector())
            span.attributes["chorus.provider"] = provider
            span.attributes["chorus.provider.operation"] = operation
            span.attributes["http.request.method"] = request.method.rawValue
            let result = try await send(request)
            let code = status(result)
            span.attributes["http.response.status_code"] = code
            if code >= 400 { span.setStatus(SpanStatus(code: .error)) }
            return result
        }
    }
}

/// Writes W3C trace context (`traceparent`, `tracestate`) into request headers.
struct HTTPHeadersInjector: Injector {
    func inject(_ value: String, forKey name: String, into headers: inout HTTPHeaders) {
        headers.replaceOrAdd(name: name, value: value)
    }
}
