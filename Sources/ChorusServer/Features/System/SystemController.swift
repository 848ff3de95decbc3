import ChorusAPI
import Foundation
import Vapor

/// `GET /health` and `GET /openapi.json`.
struct SystemController: RouteCollection {
    static let version = "0.1.0"

    let services: ChorusServices
    let openAPIDocument: Data

    func boot(routes: any RoutesBuilder) throws {
        // 200 or 503 (same body) with the database's state: the handler sets the status.
        routes.onResponse(API.Operations.health, use: health)
        routes.on(API.Operations.openAPI, use: openAPI)
    }

    /// 200 once migrations ran and the database answers; 503 otherwise, and while the instance drains (`draining`).
    @Sendable
    func health(_ req: Request) async throws -> Response {
        var databaseState = "ok"
        do {
            try await req.store.ping()
        } catch {
            req.logger.error("health check: database unavailable", metadata: ["error": .string("\(error)")])
            databaseState = "unavailable"
        }
        let draining = services.drain.isDraining
        let status = draining ? "draining" : databaseState == "ok" ? "ok" : "unavailable"
        let body = HealthResponse(
            status: status, version: Self.version, environment: services.configuration.environment.rawValue,
            database: "\(services.configuration.database.kind):\(databaseState)", providers: services.providerNames, draining: draining
        )
        return try req.json(body, status: status == "ok" ? .ok : .serviceUnavailable)
    }

    @Sendable
    func openAPI(_ req: Request) async throws -> Response {
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "application/json; charset=utf-8")
        headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=300")
        return Response(status: .ok, headers: headers, body: .init(data: openAPIDocument))
    }

    /// The contract bundled with the server.
    static func loadDocument() throws -> Data {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json") else {
            throw Abort(.internalServerError, reason: "openapi.json is missing from the bundle")
        }
        return try Data(contentsOf: url)
    }
}
