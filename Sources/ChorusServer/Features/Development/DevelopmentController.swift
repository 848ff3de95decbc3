import ChorusAPI
import Vapor

/// Development-only endpoints of the seed: authenticated, and not registered at all in production (404).
struct DevelopmentController: RouteCollection {
    let services: ChorusServices

    func boot(routes: any RoutesBuilder) throws {
        let user = routes.grouped(UserAuthenticator(services: services))
        user.on(API.Calls.bypassRateLimit, use: bypassRateLimit)
        user.on(API.Calls.testCall, use: testCall)
    }

    /// Performs `/mobile/make-call` without the rate limit. Quota still applies: the call is charged.
    @Sendable
    func bypassRateLimit(_ req: Request) async throws -> MakeCallResponse {
        let user = try req.user
        let body = try req.body(of: API.Calls.bypassRateLimit)
        guard body.endpoint == API.Calls.makeCall.template else {
            throw APIError.invalid("endpoint", "Only /mobile/make-call can be called through this endpoint")
        }
        try CallsController.validate(phoneNumber: body.data.phoneNumber, scenario: body.data.scenario)
        return try await CallsController(services: services).placeCall(req, userID: user.id, body: body.data, free: false)
    }

    /// Places a call immediately without charging the user's allowance (it appears in the history, not in usage).
    @Sendable
    func testCall(_ req: Request) async throws -> MakeCallResponse {
        let user = try req.user
        let body = try req.body(of: API.Calls.testCall)
        try CallsController.validate(phoneNumber: body.phoneNumber, scenario: body.scenario)
        return try await CallsController(services: services).placeCall(req, userID: user.id, body: body, free: true)
    }
}
