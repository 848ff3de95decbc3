import Vapor

/// Counts every answered request in ``ChorusMetrics`` by the matched route's template (`/mobile/calls/:id`, never the
/// raw path; `unmatched` when no route matched), method and status, with the time from its arrival to its answer's
/// head (a streamed body, an event stream or a WebSocket's life is not included).
///
/// Placed outside ``ChorusErrorMiddleware``, so errors are counted with the status they are answered with.
struct HTTPMetricsMiddleware: AsyncMiddleware {
    let metrics: ChorusMetrics

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let started = ContinuousClock.now
        do {
            let response = try await next.respond(to: request)
            record(request, status: response.status.code, since: started)
            return response
        } catch {
            // What the error middlewares further out (or Vapor's) answer: an abort's status, otherwise 500.
            record(request, status: (error as? any AbortError)?.status.code ?? 500, since: started)
            throw error
        }
    }

    private func record(_ request: Request, status: UInt, since started: ContinuousClock.Instant) {
        metrics.httpRequest(
            route: Self.template(request.route), method: request.method.rawValue, status: Int(status), duration: ContinuousClock.now - started)
    }

    /// The route's path template: `/` and its components (`:id` for a parameter, `*` and `**` for wildcards).
    static func template(_ route: Route?) -> String {
        guard let route else { return "unmatched" }
        return "/" + route.path.map(\.description).joined(separator: "/")
    }
}
