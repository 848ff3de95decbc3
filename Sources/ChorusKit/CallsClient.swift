import ChorusAPI
import Foundation

/// The Calls product: `/mobile/*`. Reached through ``ChorusClient/calls``.
///
/// Every method but the public catalog (``scenarios()``, ``voices()``) needs a signed-in user
/// (``ChorusError/signedOut`` otherwise) and returns the SDK's own types,
/// converted from the wire format: camelCase, `Date`s, `TimeInterval`s, and enums with an `unknown(String)` case
/// so a value added by a newer server never breaks an older app.
public struct CallsClient: Sendable {
    let session: APISession

    // MARK: Usage and catalog

    /// The user's plan, trial and usage counters.
    public func usageStats() async throws -> Usage {
        Usage(try await session.send(API.Calls.usageStats.request()))
    }

    /// Whether the user may place a call now and, if not, why and what they could buy
    /// (``CallPermission/upgradeOptions``). Nothing is charged.
    public func callPermission() async throws -> CallPermission {
        CallPermission(try await session.send(API.Calls.checkCallPermission.request()))
    }

    /// The subscription plans and the add-on pack, with their App Store product ids.
    public func pricing() async throws -> Pricing {
        Pricing(try await session.send(API.Calls.pricing.request()))
    }

    /// The scenarios a call can use, in display order: the built-in ones and, signed in, the user's custom scenarios
    /// after them (category `custom`). The catalog is public: signed out, this still answers the built-in ones.
    public func scenarios() async throws -> [Scenario] {
        try await session.send(API.Calls.scenarios.request(authenticated: try await isSignedIn)).scenarios.map(Scenario.init)
    }

    /// The AI voices. Public, like ``scenarios()``: this works signed out too.
    public func voices() async throws -> [Voice] {
        try await session.send(API.Calls.voices.request(authenticated: try await isSignedIn)).voices.map(Voice.init)
    }

    /// Whether a session is stored: the public catalog is then asked for with its token (so a session that ended is
    /// still reported as ``ChorusError/signedOut``).
    private var isSignedIn: Bool {
        get async throws { try await session.tokenStore.load() != nil }
    }

    // MARK: Calls

    /// Places a call now and charges it to the user's allowance.
    ///
    /// The request carries `Idempotency-Key: idempotencyKey`, also when it is replayed after a session refresh or
    /// retried, so the call is placed and charged at most once. To retry a call yourself after a network error,
    /// pass the same key again: the server answers with the original result instead of placing a second call.
    ///
    /// - Parameters:
    ///   - phoneNumber: E.164, e.g. `+14155550123`.
    ///   - scenario: a ``Scenario/id`` or a ``CustomScenario/id``.
    ///   - idempotencyKey: identifies this logical call; a new one by default.
    /// - Returns: the call and the allowance left after it.
    /// - Throws: ``ChorusError/paymentRequired(_:)`` when the allowance is used up (trial exhausted, weekly or
    ///   monthly limit reached), with what the user could buy; ``ChorusError/validation(_:)`` for a malformed number;
    ///   ``ChorusError/api(status:detail:)`` for an unknown scenario (400) or a key still in progress (409).
    public func makeCall(to phoneNumber: String, scenario: String = "default", idempotencyKey: UUID = UUID()) async throws -> PlacedCall {
        var request = try API.Calls.makeCall.request(json: MakeCallRequest(phoneNumber: phoneNumber, scenario: scenario))
        request.request.headers["Idempotency-Key"] = idempotencyKey.uuidString.lowercased()
        return PlacedCall(try await session.send(request))
    }

    /// The user's most recent calls, newest first, and how many calls they made in all.
    ///
    /// - Parameter limit: how many calls to return, 1–100.
    /// - Throws: ``ChorusError/validation(_:)`` (field `limit`) for a limit outside 1–100.
    public func callHistory(limit: Int = 10) async throws -> CallHistory {
        let request = API.Calls.callHistory.request(query: [URLQueryItem(name: "limit", value: String(limit))])
        return CallHistory(try await session.send(request))
    }

    /// One call with its timeline, transcript and latency figures.
    ///
    /// - Parameter sid: a ``Call/sid`` or ``PlacedCall/sid``.
    /// - Throws: ``ChorusError/notFound`` when the user has no call with this id.
    public func call(sid: String) async throws -> CallDetail {
        CallDetail(try await session.send(API.Calls.call.request(sid)))
    }

    /// Deletes a call's transcript for good; the call stays in the history, and ``CallDetail/transcript`` is then `nil`.
    ///
    /// - Throws: ``ChorusError/notFound`` when the user has no call with this id.
    public func deleteTranscript(sid: String) async throws {
        try await session.send(API.Calls.deleteTranscript.request(sid))
    }

    // MARK: Scheduled calls

    /// Schedules a call for later. The allowance is checked now (nothing is charged until the call is placed); if
    /// it is used up by then, the schedule ends `refused` (``ScheduledCall/status``).
    ///
    /// The request carries `Idempotency-Key: idempotencyKey`, also on every retry, like
    /// ``makeCall(to:scenario:idempotencyKey:)``: a request repeated after a lost answer gets the original schedule
    /// back instead of creating a second one. To retry yourself after ``ChorusError/network(_:)``, pass the same key.
    ///
    /// - Parameters:
    ///   - phoneNumber: E.164, e.g. `+14155550123`.
    ///   - scenario: a ``Scenario/id`` or a ``CustomScenario/id``.
    ///   - time: when to call, at most 30 days ahead; `nil` for one minute from now.
    ///   - idempotencyKey: identifies this logical request; a new one by default.
    /// - Throws: ``ChorusError/paymentRequired(_:)`` when a call could not be placed now;
    ///   ``ChorusError/validation(_:)`` for a malformed number or a time in the past or too far ahead;
    ///   ``ChorusError/api(status:detail:)`` for an unknown scenario (400).
    public func scheduleCall(
        to phoneNumber: String, scenario: String = "default", at time: Date? = nil, idempotencyKey: UUID = UUID()
    ) async throws -> ScheduledCall {
        let body = ScheduleCallRequest(phoneNumber: phoneNumber, scenario: scenario, scheduledTime: time)
        var request = try API.Calls.scheduleCall.request(json: body)
        request.request.headers["Idempotency-Key"] = idempotencyKey.uuidString.lowercased()
        return ScheduledCall(try await session.send(request))
    }

    /// The user's scheduled calls, whatever their status.
    public func scheduledCalls() async throws -> [ScheduledCall] {
        try await session.send(API.Calls.scheduledCalls.request()).scheduledCalls.map(ScheduledCall.init)
    }

    /// Cancels a scheduled call that is still `scheduled` (``ScheduledCall/status``). Cancelling it again
    /// succeeds again.
    ///
    /// - Parameter id: a ``ScheduledCall/id``.
    /// - Returns: the schedule, now `cancelled`.
    /// - Throws: ``ChorusError/notFound`` when the user has no such schedule; ``ChorusError/api(status:detail:)``
    ///   (409) when the call is already being placed or over.
    @discardableResult
    public func cancelScheduledCall(id: Int) async throws -> ScheduledCall {
        ScheduledCall(try await session.send(API.Calls.cancelScheduledCall.request(String(id))))
    }

    // MARK: Custom scenarios

    /// The user's custom scenarios.
    public func customScenarios() async throws -> [CustomScenario] {
        try await session.send(API.Calls.customScenarios.request()).customScenarios.map(CustomScenario.init)
    }

    /// Creates a custom scenario; its ``CustomScenario/id`` can then be used as a call's scenario. Needs an active
    /// Basic or Premium plan; at most 20 per user.
    ///
    /// The server has no endpoint to edit a custom scenario: to change one, create the new version and delete the old.
    ///
    /// - Parameters:
    ///   - name: 1–60 characters.
    ///   - persona: who the AI plays and what the call is about, 20–2,000 characters.
    ///   - voiceID: a ``Voice/id``.
    ///   - leavesVoicemailMessage: when an answering machine answers, leave a short message in the persona after its
    ///     greeting (the call is charged) instead of hanging up without a word (not charged, the default).
    /// - Throws: ``ChorusError/paymentRequired(_:)`` without a plan; ``ChorusError/validation(_:)`` for an invalid
    ///   name, persona or voice; ``ChorusError/refused(_:)`` (`persona_refused`, with the categories) when the persona
    ///   policy or the moderation model refuses the persona (it is checked again before each call, and a call with a
    ///   scenario that no longer passes, or that an operator disabled, is refused the same way);
    ///   ``ChorusError/api(status:detail:)`` (409) when the user already has 20.
    public func createCustomScenario(
        name: String, persona: String, voiceID: String, leavesVoicemailMessage: Bool = false
    ) async throws -> CustomScenario {
        let request = try API.Calls.createCustomScenario.request(
            json: CreateCustomScenarioRequest(
                name: name, persona: persona, voice: voiceID, voicemail: leavesVoicemailMessage ? "leave_message" : "hang_up"))
        return CustomScenario(try await session.send(request))
    }

    /// Deletes a custom scenario.
    ///
    /// - Parameter id: a ``CustomScenario/id``.
    /// - Throws: ``ChorusError/notFound`` when the user has no such scenario — which is also what a retry after a
    ///   lost answer meets when the first attempt did delete it: either way the scenario is gone.
    public func deleteCustomScenario(id: String) async throws {
        try await session.send(API.Calls.deleteCustomScenario.request(id))
    }
}
