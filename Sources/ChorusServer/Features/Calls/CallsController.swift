import ChorusAPI
import ChorusCore
import Foundation
import Vapor

/// The Calls product under `/mobile`: usage, permission, catalog, calls, schedules, history, custom scenarios.
struct CallsController: RouteCollection {
    let services: ChorusServices

    func boot(routes: any RoutesBuilder) throws {
        let user = routes.grouped(UserAuthenticator(services: services))
        user.on(API.Calls.usageStats, use: usageStats)
        user.on(API.Calls.checkCallPermission, use: checkCallPermission)
        user.on(API.Calls.pricing, use: pricing)
        // The built-in catalog is public (issue 21); a valid token adds the caller's custom scenarios.
        let catalog = routes.grouped(OptionalUserAuthenticator(services: services))
        catalog.on(API.Calls.scenarios, use: scenarios)
        catalog.on(API.Calls.voices, use: voices)
        // make-call and schedule-call replay a repeated Idempotency-Key's stored answer with its own status and an
        // `Idempotent-Replayed` header, so they build their responses.
        user.onResponse(API.Calls.makeCall, use: makeCall)
        user.onResponse(API.Calls.scheduleCall, use: scheduleCall)
        user.on(API.Calls.scheduledCalls, use: scheduledCalls)
        user.on(API.Calls.cancelScheduledCall, use: cancelScheduledCall)
        user.on(API.Calls.callHistory, use: callHistory)
        user.on(API.Calls.call, use: call)
        user.on(API.Calls.callEvents, use: events)
        user.on(API.Calls.deleteTranscript, use: deleteTranscript)
        user.on(API.Calls.createCustomScenario, use: createCustomScenario)
        user.on(API.Calls.customScenarios, use: customScenarios)
        user.on(API.Calls.deleteCustomScenario, use: deleteCustomScenario)
    }

    private func placement(_ req: Request) throws -> CallPlacement {
        CallPlacement(services: services, store: try req.store, logger: req.logger)
    }

    // MARK: Usage

    @Sendable
    func usageStats(_ req: Request) async throws -> UsageStatsResponse {
        let user = try req.user
        let account = try await placement(req).account(userID: user.id)
        let position = services.policy.position(of: account, at: services.now())
        let windows = UsageWindows.of(position, registeredAt: account.registeredAt)
        let tally = try await req.store.usage.callTally(userID: user.id, windows: windows)
        return UsageReport.usageStats(position, account: account, windows: windows, tally: tally)
    }

    @Sendable
    func checkCallPermission(_ req: Request) async throws -> CallPermissionResponse {
        let user = try req.user
        let account = try await placement(req).account(userID: user.id)
        let decision = services.policy.evaluate(account, at: services.now())
        return UsageReport.permission(decision, appType: account.appType)
    }

    @Sendable
    func pricing(_ req: Request) async throws -> PricingResponse {
        UsageReport.pricing(services.configuration.plans)
    }

    /// The built-in scenarios; signed in, followed by the caller's custom scenarios that are not disabled.
    @Sendable
    func scenarios(_ req: Request) async throws -> ScenariosResponse {
        var items = services.scenarios.scenarios.map {
            ScenarioDTO(
                id: $0.id, name: $0.name, description: $0.description, icon: $0.icon, category: .init(rawValue: $0.category.rawValue),
                isFamilyFriendly: $0.isFamilyFriendly, voice: $0.voice, contentWarning: $0.contentWarning
            )
        }
        if let user = req.optionalUser {
            items += try await req.store.scenarios.customScenarios(userID: user.id).filter { $0.disabledAt == nil }.map(\.catalogEntry)
        }
        return ScenariosResponse(scenarios: items)
    }

    @Sendable
    func voices(_ req: Request) async throws -> VoicesResponse {
        let items = services.voices.voices.map {
            VoiceDTO(
                id: $0.id, displayName: $0.displayName, gender: .init(rawValue: $0.gender.rawValue),
                accent: .init(rawValue: $0.accent.rawValue), personality: .init(rawValue: $0.personality.rawValue),
                description: $0.description
            )
        }
        return VoicesResponse(voices: items)
    }

    // MARK: Calls

    @Sendable
    func makeCall(_ req: Request) async throws -> Response {
        let user = try req.user
        let body = try req.body(of: API.Calls.makeCall)
        try Self.validate(phoneNumber: body.phoneNumber, scenario: body.scenario)
        if let limit = services.configuration.rateLimits.calls {
            try await services.checkSharedRateLimit("calls:\(user.id)", limit, store: req.store, logger: req.logger)
        }
        let fingerprint = "make-call\n\(body.phoneNumber)\n\(body.scenario)"
        return try await IdempotentResponder(services: services, store: req.store).respond(req, userID: user.id, fingerprint: fingerprint) {
            try req.json(try await placeCall(req, userID: user.id, body: body, free: false))
        }
    }

    /// make-call without the rate limit or idempotency (shared with the development endpoints).
    func placeCall(_ req: Request, userID: String, body: MakeCallRequest, free: Bool) async throws -> MakeCallResponse {
        let placement = try placement(req)
        let scenario = try await placement.resolveScenario(body.scenario, userID: userID)
        let call = try await placement.place(userID: userID, phoneNumber: body.phoneNumber, scenario: scenario, free: free)
        let position = try await placement.position(userID: userID)
        return MakeCallResponse(
            callSid: call.callSid ?? "", status: .initiated, durationLimit: call.durationLimit, usageStats: UsageReport.callSnapshot(position))
    }

    static func validate(phoneNumber: String, scenario: String) throws {
        var validator = FieldValidator()
        validator.check(PhoneNumber.isE164(phoneNumber), "phone_number", "Must be an E.164 phone number, e.g. +14155550123")
        validator.check(!scenario.isEmpty && scenario.count <= 64, "scenario", "Must be a scenario id")
        try validator.throwIfInvalid()
    }

    @Sendable
    func scheduleCall(_ req: Request) async throws -> Response {
        let user = try req.user
        let body = try req.body(of: API.Calls.scheduleCall)
        try Self.validate(phoneNumber: body.phoneNumber, scenario: body.scenario)
        let now = services.now()
        let time = body.scheduledTime ?? now.addingTimeInterval(60)
        var validator = FieldValidator()
        validator.check(time >= now.addingTimeInterval(-5), "scheduled_time", "Must be in the future")
        validator.check(time <= now.addingTimeInterval(30 * 86_400), "scheduled_time", "Must be at most 30 days ahead")
        try validator.throwIfInvalid()
        // Where the number is and whether its calling hours include the scheduled time (the per-number limits are
        // counted when the call is placed).
        _ = try placement(req).checkDestination(body.phoneNumber, at: time)
        try await placement(req).checkNotOptedOut(body.phoneNumber)  // and again when the call is placed (issue 17)
        if let limit = services.configuration.rateLimits.calls {
            try await services.checkSharedRateLimit("calls:\(user.id)", limit, store: req.store, logger: req.logger)
        }
        // Like make-call, a repeated Idempotency-Key replays the first answer: a retry never schedules a second call.
        let fingerprint = "schedule-call\n\(body.phoneNumber)\n\(body.scenario)\n\(body.scheduledTime.map(ChorusJSON.formatDate) ?? "-")"
        return try await IdempotentResponder(services: services, store: req.store).respond(req, userID: user.id, fingerprint: fingerprint) {
            let placement = try placement(req)
            let scenario = try await placement.resolveScenario(body.scenario, userID: user.id)
            try await placement.screen(scenario, userID: user.id)  // and again when the call is placed (issue 17)
            _ = try await placement.requirePermission(userID: user.id, scenario: scenario)
            let schedule = try await req.store.schedules.createSchedule(
                userID: user.id, phoneNumber: body.phoneNumber, scenario: scenario.id, at: time, now: now
            )
            req.logger.info(
                "call scheduled", metadata: ["schedule_id": .stringConvertible(schedule.id), "at": .string(ChorusJSON.formatDate(time))])
            return try req.json(schedule.dto(callSid: nil))
        }
    }

    @Sendable
    func scheduledCalls(_ req: Request) async throws -> ScheduledCallsResponse {
        let user = try req.user
        let items = try await req.store.schedules.schedules(userID: user.id).map { $0.0.dto(callSid: $0.1) }
        return ScheduledCallsResponse(scheduledCalls: items)
    }

    @Sendable
    func cancelScheduledCall(_ req: Request) async throws -> ScheduledCallDTO {
        let user = try req.user
        guard let id = req.parameters.get("schedule_id", as: Int.self) else { throw APIError.notFound("Scheduled call not found") }
        guard let result = try await req.store.schedules.cancelSchedule(id: id, userID: user.id, now: services.now()) else {
            throw APIError.notFound("Scheduled call not found")
        }
        guard result.cancelled || result.record.state == .cancelled else {
            throw APIError.detail(.conflict, "The call is already \(result.record.state.rawValue) and can no longer be cancelled")
        }
        return result.record.dto(callSid: nil)
    }

    @Sendable
    func callHistory(_ req: Request) async throws -> CallHistoryResponse {
        let user = try req.user
        let limit = try req.query.get(Int?.self, at: "limit") ?? 10
        guard (1...100).contains(limit) else { throw APIError.invalid("limit", "Must be between 1 and 100") }
        let (calls, total) = try await req.store.calls.callHistory(userID: user.id, limit: limit)
        return CallHistoryResponse(callHistory: calls.compactMap(\.historyItem), totalCalls: total)
    }

    @Sendable
    func call(_ req: Request) async throws -> CallDetailResponse {
        let user = try req.user
        guard let sid = req.parameters.get("call_sid"), let call = try await req.store.calls.call(sid: sid, userID: user.id),
            let detail = try await Self.detail(call, store: req.store)
        else { throw APIError.notFound("Call not found") }
        return detail
    }

    /// A call with its timeline, transcript (unless deleted) and latency figures; `nil` for a call not placed yet.
    static func detail(_ call: CallRecord, store: ChorusStore) async throws -> CallDetailResponse? {
        guard let item = call.historyItem else { return nil }
        let transcript =
            call.transcriptDeletedAt == nil
            ? try await store.callBridge.transcript(callID: call.id).map {
                CallTranscriptLine(speaker: .init(rawValue: $0.speaker), text: $0.text, atMs: $0.atMilliseconds, interrupted: $0.interrupted)
            } : nil
        let latency = call.bridgeReason.map { _ in
            CallLatency(
                firstAudioMs: call.firstAudioMilliseconds, turnP50Ms: call.turnLatencyP50Milliseconds,
                turnP90Ms: call.turnLatencyP90Milliseconds, turns: call.turns ?? 0)
        }
        return CallDetailResponse(
            call: item, answeredAt: call.answeredAt, endedAt: call.endedAt, transcript: transcript,
            transcriptDeletedAt: call.transcriptDeletedAt, latency: latency, bargeIns: call.bargeIns)
    }

    /// Deletes the call's transcript (its owner only); the call itself stays in the history.
    @Sendable
    func deleteTranscript(_ req: Request) async throws {
        let user = try req.user
        guard let sid = req.parameters.get("call_sid"), let call = try await req.store.calls.call(sid: sid, userID: user.id) else {
            throw APIError.notFound("Call not found")
        }
        try await req.store.callBridge.deleteTranscript(callID: call.id, now: services.now())
    }

    // MARK: Custom scenarios

    @Sendable
    func createCustomScenario(_ req: Request) async throws -> CustomScenarioDTO {
        let user = try req.user
        let body = try req.body(of: API.Calls.createCustomScenario)
        let normalizedName = UserText.name(body.name, characters: CustomScenarioRules.nameLength, bytes: CustomScenarioRules.nameBytes)
        let name = normalizedName ?? ""
        let persona = body.persona.trimmingCharacters(in: .whitespacesAndNewlines)
        var validator = FieldValidator()
        validator.check(
            normalizedName != nil, "name", "Must be 1 to 60 characters (at most 240 bytes), without control or bidirectional-override characters")
        validator.check(
            UserText.fits(persona, characters: CustomScenarioRules.personaLength, bytes: CustomScenarioRules.personaBytes), "persona",
            "Must be 20 to 2000 characters (at most 8000 bytes)")
        validator.check(services.voices.voice(id: body.voice) != nil, "voice", "Unknown voice; see GET /mobile/voices")
        let voicemail = body.voicemail.map(VoicemailPolicy.init(rawValue:)) ?? .hangUp
        validator.check(voicemail != nil, "voicemail", "Must be hang_up or leave_message")
        try validator.throwIfInvalid()
        let account = try await placement(req).account(userID: user.id)
        guard services.policy.position(of: account, at: services.now()).plan != nil else {
            throw APIError.paymentRequired(CustomScenarioRules.subscriptionRequired(services.policy, now: services.now()))
        }
        // The persona policy and the moderation model (issue 17); checked again before each call.
        let verdict = try await services.personas.verdict(on: CustomScenarioRecord.screenedText(name: name, persona: persona), at: services.now(), logger: req.logger)
        guard verdict.allowed else {
            req.logger.notice("custom persona refused", metadata: ["categories": .string(verdict.categories.joined(separator: ","))])
            throw PersonaScreening.refusal(verdict)
        }
        guard
            let record = try await req.store.scenarios.createCustomScenario(
                userID: user.id, name: name, persona: persona, voice: body.voice, verdict: verdict, voicemail: voicemail ?? .hangUp,
                limit: CustomScenarioRules.maximumPerUser,
                now: services.now()
            )
        else {
            throw APIError.detail(.conflict, "You can have at most \(CustomScenarioRules.maximumPerUser) custom scenarios; delete one first")
        }
        return record.dto
    }

    @Sendable
    func customScenarios(_ req: Request) async throws -> CustomScenariosResponse {
        let user = try req.user
        return CustomScenariosResponse(customScenarios: try await req.store.scenarios.customScenarios(userID: user.id).map(\.dto))
    }

    @Sendable
    func deleteCustomScenario(_ req: Request) async throws {
        let user = try req.user
        guard let text = req.parameters.get("scenario_id"), let id = CustomScenarioRecord.rowID(fromPublicID: text),
            try await req.store.scenarios.deleteCustomScenario(id: id, userID: user.id)
        else { throw APIError.notFound("Custom scenario not found") }
    }
}
