import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Vapor

/// A scenario a call can use: built-in or the user's own.
struct ResolvedScenario: Sendable, Equatable {
    var id: String
    var name: String
    var voice: String
    var persona: String
    var isCustom: Bool
    /// The catalog temperature (built-in scenarios), expressed in the instructions.
    var temperature: Double? = nil
}

/// Places calls: permission, atomic charge, the telephony request, and the release of the charge if that fails.
/// Shared by make-call, scheduled calls and the development test call.
struct CallPlacement: Sendable {
    /// How long the callee's phone rings before the call counts as unanswered (Twilio's `Timeout`).
    static let ringTimeoutSeconds = 30
    /// The longest a request waits for its dial slot; beyond it the call is released and the request answered 503
    /// (so no request runs longer than ``IdempotentResponder/pendingLapse``).
    static let maximumDialWait: TimeInterval = 120

    let services: ChorusServices
    let store: ChorusStore
    let logger: Logger

    /// The built-in scenario `id`, or the user's custom scenario `custom_<n>`.
    /// - Throws: 400 for an unknown scenario, before anything is charged.
    func resolveScenario(_ id: String, userID: String) async throws -> ResolvedScenario {
        if let builtIn = services.scenarios.scenario(id: id) {
            return ResolvedScenario(
                id: builtIn.id, name: builtIn.name, voice: builtIn.voice, persona: builtIn.persona, isCustom: false,
                temperature: builtIn.temperature)
        }
        if let rowID = CustomScenarioRecord.rowID(fromPublicID: id), let custom = try await store.customScenario(id: rowID, userID: userID) {
            return ResolvedScenario(id: custom.publicID, name: custom.name, voice: custom.voice, persona: custom.persona, isCustom: true)
        }
        throw APIError.badRequest("Unknown scenario '\(id.prefix(64))'. See GET /mobile/scenarios for the available ids.")
    }

    /// The account of a signed-in user; a token for a deleted user is no longer valid.
    func account(userID: String) async throws -> UsageAccount {
        guard let account = try await store.usageAccount(userID: userID, entitlements: services.entitlements, now: services.now()) else {
            throw APIError.invalidCredentials
        }
        return account
    }

    /// Throws 402 when the user may not place a call now.
    func requirePermission(userID: String, scenario: ResolvedScenario) async throws -> CallPermission {
        let account = try await account(userID: userID)
        let decision = services.policy.evaluate(account, at: services.now())
        if scenario.isCustom && decision.position.plan == nil {
            throw APIError.paymentRequired(CustomScenarioRules.subscriptionRequired(services.policy, now: services.now()))
        }
        guard decision.allowed else { throw APIError.paymentRequired(UsageReport.paymentRequired(decision)) }
        return decision
    }

    /// Charges the user's allowance, asks the telephony provider to place the call, and records its sid.
    ///
    /// - Parameters:
    ///   - free: a development test call: placed without charging (duration limit as the user's plan allows).
    /// - Returns: the recorded call (with its sid).
    func place(
        userID: String, phoneNumber: String, scenario: ResolvedScenario, scheduleID: Int? = nil, free: Bool = false
    ) async throws -> CallRecord {
        var reserved: CallRecord?
        if free {
            let decision = services.policy.evaluate(try await account(userID: userID), at: services.now())
            let duration = decision.charge?.durationLimitSeconds ?? services.configuration.plans.trial.durationLimitSeconds
            let call = NewCall(userID: userID, phoneNumber: phoneNumber, scenario: scenario.id, durationLimit: duration, scheduleID: scheduleID)
            reserved = try await store.reserveCall(call, bucket: nil, now: services.now())
        }
        for _ in 0..<16 where reserved == nil {
            let decision = try await requirePermission(userID: userID, scenario: scenario)
            guard let charge = decision.charge else { continue }
            let call = NewCall(
                userID: userID, phoneNumber: phoneNumber, scenario: scenario.id, durationLimit: charge.durationLimitSeconds, scheduleID: scheduleID
            )
            // Another request may empty the bucket between the decision and the compare-and-set: decide again.
            do {
                reserved = try await store.reserveCall(
                    call, bucket: charge.bucket, now: services.now(), trialCallsPerDay: services.configuration.admission.trialCallsPerDay)
            } catch is TrialCallsExhausted {
                let now = services.now()
                logger.critical(
                    "trial calls of the day used up: trial calls are refused",
                    metadata: ["alert": "budget", "limit": .stringConvertible(services.configuration.admission.trialCallsPerDay ?? 0)])
                throw APIError.unavailable(
                    retryAfter: UTCBoundary.secondsUntilNext(.day, after: now),
                    detail: "Free trial calls are paused for today. Please try again tomorrow, or choose a plan to call now.")
            }
        }
        guard var call = reserved else {
            throw APIError.detail(.serviceUnavailable, "Too many simultaneous call requests; please retry")
        }
        let request = OutboundCallRequest(
            to: phoneNumber, from: services.fromNumber,
            twimlURL: services.publicURL("/twilio/voice", query: [URLQueryItem(name: "call_id", value: String(call.id))]),
            statusCallbackURL: services.publicURL("/call-end-webhook", query: [URLQueryItem(name: "call_id", value: String(call.id))]),
            statusCallbackEvents: ["initiated", "ringing", "answered", "completed"],
            timeLimitSeconds: call.durationLimit, ringTimeoutSeconds: Self.ringTimeoutSeconds
        )
        let placed: PlacedCall
        do {
            try await waitForDialSlot()
            placed = try await services.telephony.placeCall(request)
        } catch {
            try await store.releaseCall(id: call.id, now: services.now())
            if let error = error as? APIError { throw error }  // the dial queue is too long
            logger.error(
                "telephony refused the call; charge released",
                metadata: [
                    "call_id": .stringConvertible(call.id), "to": .string(PhoneNumberMask.mask(phoneNumber)),
                    "error": .string(Self.describe(error)),
                ])
            switch error as? TelephonyError {
            case .rejected(_, let code, _):
                throw APIError.detail(.badGateway, "Unable to initiate call: the phone service refused it\(code.map { " (code \($0))" } ?? "")")
            default:
                throw APIError.detail(.badGateway, "Unable to initiate call: the phone service is unavailable, please retry")
            }
        }
        try await store.attachSid(placed.sid, toCall: call.id, now: services.now())
        call.callSid = placed.sid
        // Open the AI's session while the phone rings, so it can speak as soon as the callee answers.
        services.bridges.prepare(callID: call.id, session: services.realtimeSession(for: scenario))
        logger.info(
            "call placed",
            metadata: [
                "call_id": .stringConvertible(call.id), "call_sid": .string(placed.sid), "to": .string(PhoneNumberMask.mask(phoneNumber)),
                "scenario": .string(scenario.id), "duration_limit": .stringConvertible(call.durationLimit), "charged": .stringConvertible(!free),
            ])
        return call
    }

    /// Waits for this instance's turn to dial: calls are placed at most `CHORUS_TWILIO_CALLS_PER_SECOND` per second
    /// across every instance (Twilio's account limit), so a burst queues here instead of being refused. Pacing is
    /// physical time, not the service clock.
    private func waitForDialSlot() async throws {
        let slot = try await store.reserveDialSlot(interval: 1 / services.configuration.callBridge.callsPerSecond, now: Date())
        let wait = slot.timeIntervalSinceNow
        if wait > Self.maximumDialWait {
            throw APIError.unavailable(
                retryAfter: Int(min(wait, 3_600).rounded(.up)), detail: "Too many calls are being placed right now; please retry later")
        }
        if wait > 0.001 {
            logger.debug("call queued for the dial rate", metadata: ["wait_ms": .stringConvertible(Int(wait * 1000))])
            try await Task.sleep(for: .milliseconds(Int(wait * 1000)))
        }
    }

    /// A telephony error for the logs: provider messages can quote the phone number, so only codes are kept.
    private static func describe(_ error: any Error) -> String {
        switch error as? TelephonyError {
        case .rejected(let status, let code, _): "rejected (HTTP \(status), code \(code.map(String.init) ?? "none"))"
        case .unavailable: "unavailable"
        case nil: String(describing: type(of: error))
        }
    }

    /// The usage position now, for answers that report what is left.
    func position(userID: String) async throws -> UsagePosition {
        services.policy.position(of: try await account(userID: userID), at: services.now())
    }
}

/// Rules of custom scenarios.
enum CustomScenarioRules {
    static let maximumPerUser = 20
    static let nameLength = 1...60
    static let nameBytes = 240
    static let personaLength = 20...2_000
    static let personaBytes = 8_000

    /// The 402 answered to users without a plan.
    static func subscriptionRequired(_ policy: CallPermissionPolicy, now: Date) -> PaymentRequiredResponse {
        PaymentRequiredResponse(
            detail: PaymentRequiredDetail(
                error: "subscription_required", message: "Custom scenarios require a Basic or Premium subscription.",
                upgradeOptions: policy.upgradeOptions(for: .upgradeRequired), timestamp: now
            )
        )
    }
}
