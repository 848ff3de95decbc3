import ChorusAPI
import ChorusCore
import Foundation
import Prometheus
import Vapor

/// `GET /metrics`: the app instance's ``PrometheusCollectorRegistry`` in the Prometheus text format (0.0.4), for a
/// scraper that sends `Authorization: Bearer <CHORUS_METRICS_TOKEN>`. Any other request is 401; with no token
/// configured the route answers 404, as if it did not exist.
///
/// The registry belongs to the app (tests run many apps in one process), not to the global `MetricsSystem`. Before
/// answering, the gauges of states (``ChorusMetrics/refresh(_:)``) are read from their sources: a few bounded
/// aggregate queries and this instance's counts.
struct MetricsController: RouteCollection {
    let services: ChorusServices

    /// Calls created longer ago than this and still not over are stale (their final callback was lost; the
    /// reconciliation job settles them), not in progress.
    static let inProgressWindow: TimeInterval = 6 * 3_600

    func boot(routes: any RoutesBuilder) throws {
        routes.on(API.Operations.metrics, use: metrics)
    }

    @Sendable
    func metrics(_ req: Request) async throws -> Response {
        guard let token = services.configuration.metricsToken else { throw APIError.notFound("Not Found") }
        guard let presented = req.headers.bearerAuthorization?.token else { throw Abort(.unauthorized, headers: ["WWW-Authenticate": "Bearer"]) }
        guard ConstantTime.equals(presented, token) else {
            // RFC 6750 §3: a token was presented and refused.
            throw Abort(.unauthorized, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
        }
        let store = try req.store
        let now = services.now()
        var spend: [MeteredFeature: (day: Int64, month: Int64)] = [:]
        for feature in MeteredFeature.allCases { spend[feature] = try await store.metering.featureSpend(feature, at: now) }
        let open = services.messaging.hub.openCounts
        let bridges = services.bridges.metrics.snapshot()
        services.instruments.refresh(
            ChorusMetrics.States(
                jobs: try await store.jobs.queueFigures(now: now),
                callsInProgress: try await store.calls.inProgressCounts(since: now.addingTimeInterval(-Self.inProgressWindow)),
                spend: spend, webSockets: open.webSockets, eventStreams: open.eventStreams, bridges: bridges, now: now))
        var body = services.metrics.emitToBuffer()
        body.append(contentsOf: ChorusMetrics.bridgeHistograms(bridges).utf8)
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "text/plain; version=0.0.4; charset=utf-8")
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return Response(status: .ok, headers: headers, body: .init(data: Data(body)))
    }
}
