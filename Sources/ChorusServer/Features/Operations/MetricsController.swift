import ChorusAPI
import ChorusCore
import Foundation
import Prometheus
import Vapor

/// `GET /metrics`: the app instance's ``PrometheusCollectorRegistry`` in the Prometheus text format (0.0.4), for a
/// scraper that sends `Authorization: Bearer <CHORUS_METRICS_TOKEN>`. Any other request is 401; with no token
/// configured the route answers 404, as if it did not exist.
///
/// The registry belongs to the app (tests run many apps in one process), not to the global `MetricsSystem`.
struct MetricsController: RouteCollection {
    let registry: PrometheusCollectorRegistry
    let token: String?

    func boot(routes: any RoutesBuilder) throws {
        routes.on(API.Operations.metrics, use: metrics)
    }

    @Sendable
    func metrics(_ req: Request) async throws -> Response {
        guard let token else { throw APIError.notFound("Not Found") }
        guard let presented = req.headers.bearerAuthorization?.token, ConstantTime.equals(presented, token) else {
            throw Abort(.unauthorized, headers: ["WWW-Authenticate": "Bearer"])
        }
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "text/plain; version=0.0.4; charset=utf-8")
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return Response(status: .ok, headers: headers, body: .init(data: Data(registry.emitToBuffer())))
    }
}
