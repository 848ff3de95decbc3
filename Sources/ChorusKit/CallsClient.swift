import ChorusAPI
import Foundation

/// The Calls product: `/mobile/*`. Reached through ``ChorusClient/calls``; every method needs a signed-in user
/// (``ChorusError/signedOut`` otherwise).
public struct CallsClient: Sendable {
    let session: APISession

    /// The user's plan, trial and usage counters.
    public func usageStats() async throws -> UsageStatsResponse {
        try await session.send(.get("/mobile/usage-stats"))
    }

    /// Whether the user may place a call now and, if not, why and what would help.
    public func callPermission() async throws -> CallPermissionResponse {
        try await session.send(.post("/mobile/check-call-permission"))
    }

    /// The subscription plans and the add-on pack, with their App Store product ids.
    public func pricing() async throws -> PricingResponse {
        try await session.send(.get("/mobile/pricing"))
    }

    /// The built-in scenarios a call can use, in display order.
    public func scenarios() async throws -> [ScenarioDTO] {
        try await session.send(.get("/mobile/scenarios"), as: ScenariosResponse.self).scenarios
    }

    /// The AI voices.
    public func voices() async throws -> [VoiceDTO] {
        try await session.send(.get("/mobile/voices"), as: VoicesResponse.self).voices
    }

    /// Places a call now and charges it to the user's allowance.
    ///
    /// The request carries `Idempotency-Key: idempotencyKey`, also when it is replayed after a session refresh, so
    /// the call is placed and charged at most once. To retry a call after a network error, pass the same key again:
    /// the server answers with the original result instead of placing a second call.
    ///
    /// - Parameters:
    ///   - phoneNumber: E.164, e.g. `+14155550123`.
    ///   - scenario: a scenario id from ``scenarios()`` (or a custom scenario id).
    ///   - idempotencyKey: identifies this logical call; a new one by default.
    /// - Throws: ``ChorusError/paymentRequired(_:)`` when the allowance is used up (`trial_exhausted`,
    ///   `weekly_limit_reached`, …); ``ChorusError/validation(_:)`` for a malformed number;
    ///   ``ChorusError/api(status:detail:)`` for an unknown scenario (400) or a key still in progress (409).
    public func makeCall(
        to phoneNumber: String, scenario: String = "default", idempotencyKey: UUID = UUID()
    ) async throws
        -> MakeCallResponse
    {
        var request = try APIRequest.post("/mobile/make-call", json: MakeCallRequest(phoneNumber: phoneNumber, scenario: scenario))
        request.headers["Idempotency-Key"] = idempotencyKey.uuidString.lowercased()
        return try await session.send(request)
    }

    /// The user's most recent calls, newest first, and the total number of calls.
    ///
    /// - Parameter limit: how many calls to return, 1–100.
    public func callHistory(limit: Int = 10) async throws -> CallHistoryResponse {
        try await session.send(.get("/mobile/call-history", query: [URLQueryItem(name: "limit", value: String(limit))]))
    }
}
