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
    /// What an answering machine gets: built-in scenarios hang up; a custom scenario may leave a message.
    var voicemail: VoicemailPolicy = .hangUp
}

/// Why a call was not placed (or may not be): the domain's answer, free of HTTP. The error middleware answers each
/// with the contract's status and body (`APIError.init(_:)`); the scheduled-call job records it as the schedule's end.
enum CallPlacementError: Error, Equatable {
    /// No built-in scenario and none of the user's custom scenarios has this id (answered 400).
    case unknownScenario(id: String)
    /// The signed-in user no longer exists (answered 401, like a token for no account).
    case accountDeleted
    /// The user's allowance does not cover a call, or a custom scenario needs a plan (answered 402).
    case paymentRequired(PaymentRequiredResponse)
    /// A rule refused the call before anything was charged: destination, quiet hours, number limits, opt-out, persona
    /// (answered 422 with the refusal's code).
    case refused(RefusalDetail)
    /// The free trial calls of the UTC day (all accounts together) are used up until `retryAfter` seconds from now.
    case trialCallsPaused(retryAfter: Int)
    /// Concurrent requests kept emptying the allowance between decision and charge.
    case contended
    /// More calls wait for the dial rate than a request may wait for; a slot is `retryAfter` seconds away.
    case dialQueueFull(retryAfter: Int)
    /// The Calls budget (daily or monthly, all users together) cannot cover the call's estimate until `retryAfter`
    /// seconds from now, the next UTC day or month (issue 18).
    case budgetSpent(period: BudgetPeriod, retryAfter: Int)
    /// The telephony provider refused the call (with its error code, if any), or could not be reached.
    case telephonyRejected(code: Int?)
    case telephonyUnavailable

    /// Whether the scenario named is unknown (a schedule naming one can never be placed).
    var isUnknownScenario: Bool {
        if case .unknownScenario = self { true } else { false }
    }

    /// A refusal of the destination policy (issue 17: destination, quiet hours, per-number limits).
    static func call(_ refusal: CallRefusal) -> CallPlacementError {
        .refused(RefusalDetail(error: refusal.code, message: refusal.message, retryAt: refusal.retryAt))
    }

    /// What went wrong, in words a user can read (the `detail` of the answer, the reason of a refused schedule).
    var message: String {
        switch self {
        case .unknownScenario(let id): "Unknown scenario '\(id.prefix(64))'. See GET /mobile/scenarios for the available ids."
        case .accountDeleted: "The account no longer exists"
        case .paymentRequired(let payload): payload.detail.message
        case .refused(let refusal): refusal.message
        case .trialCallsPaused: "Free trial calls are paused for today. Please try again tomorrow, or choose a plan to call now."
        case .contended: "Too many simultaneous call requests; please retry"
        case .dialQueueFull: "Too many calls are being placed right now; please retry later"
        case .budgetSpent(let period, _):
            "Calls have reached their \(period == .day ? "daily" : "monthly") spending limit. Please try again \(period == .day ? "tomorrow" : "next month")."
        case .telephonyRejected(let code): "Unable to initiate call: the phone service refused it\(code.map { " (code \($0))" } ?? "")"
        case .telephonyUnavailable: "Unable to initiate call: the phone service is unavailable, please retry"
        }
    }
}

/// Places calls: permission, atomic charge, the telephony request, and the release of the charge if that fails.
/// Shared by make-call, scheduled calls and the development test call. Its refusals are ``CallPlacementError``s.
struct CallPlacement: Sendable {
    /// How long the callee's phone rings before the call counts as unanswered (Twilio's `Timeout`).
    static let ringTimeoutSeconds = CallTiming.ringTimeoutSeconds
    /// The longest a request waits for its dial slot; beyond it the call is released and the request answered 503
    /// (so no request runs longer than ``IdempotentResponder/pendingLapse``).
    static let maximumDialWait: TimeInterval = 120

    let services: ChorusServices
    let store: ChorusStore
    let logger: Logger

    /// The built-in scenario `id`, or the user's custom scenario `custom_<n>`.
    /// - Throws: ``CallPlacementError/unknownScenario(id:)``, before anything is charged.
    func resolveScenario(_ id: String, userID: String) async throws -> ResolvedScenario {
        if let builtIn = services.scenarios.scenario(id: id) {
            return ResolvedScenario(
                id: builtIn.id, name: builtIn.name, voice: builtIn.voice, persona: builtIn.persona, isCustom: false,
                temperature: builtIn.temperature)
        }
        if let rowID = CustomScenarioRecord.rowID(fromPublicID: id), let custom = try await store.scenarios.customScenario(id: rowID, userID: userID) {
            return ResolvedScenario(
                id: custom.publicID, name: custom.name, voice: custom.voice, persona: custom.persona, isCustom: true, voicemail: custom.voicemail)
        }
        throw CallPlacementError.unknownScenario(id: id)
    }

    /// The account of a signed-in user; a token for a deleted user is no longer valid.
    func account(userID: String) async throws -> UsageAccount {
        guard let account = try await store.usage.usageAccount(userID: userID, entitlements: services.entitlements, now: services.now()) else {
            throw CallPlacementError.accountDeleted
        }
        return account
    }

    /// Throws ``CallPlacementError/paymentRequired(_:)`` when the user may not place a call now.
    func requirePermission(userID: String, scenario: ResolvedScenario) async throws -> CallPermission {
        let account = try await account(userID: userID)
        let decision = services.policy.evaluate(account, at: services.now())
        if scenario.isCustom && decision.position.plan == nil {
            throw CallPlacementError.paymentRequired(CustomScenarioRules.subscriptionRequired(services.policy, now: services.now()))
        }
        guard decision.allowed else { throw CallPlacementError.paymentRequired(UsageReport.paymentRequired(decision)) }
        return decision
    }

    /// Where `phoneNumber` rings, if it may be called at `date`: the numbering-plan refusals, the allowed countries and
    /// the callee's calling hours (issue 17). Reads nothing and writes nothing.
    /// - Throws: ``CallPlacementError/refused(_:)`` naming the reason.
    func checkDestination(_ phoneNumber: String, at date: Date) throws -> PhoneDestination {
        let policy = services.configuration.destinationPolicy
        let destination: PhoneDestination
        switch policy.destination(of: phoneNumber) {
        case .success(let found): destination = found
        case .failure(let refusal): throw CallPlacementError.call(refusal)
        }
        if let refusal = policy.quietHours(destination, at: date) { throw CallPlacementError.call(refusal) }
        return destination
    }

    /// Refuses a number on the do-not-call list (its callee opted out, issue 17), from any account, before anything is
    /// counted or charged. The refusal says only that: not when, how, or on whose call.
    /// - Throws: ``CallPlacementError/refused(_:)`` `number_opted_out`.
    func checkNotOptedOut(_ phoneNumber: String) async throws {
        guard try await store.destinations.isOptedOut(hash: services.numberHasher.hash(phoneNumber)) else { return }
        throw CallPlacementError.refused(
            RefusalDetail(error: "number_opted_out", message: "This number has asked not to receive calls from this service."))
    }

    /// Counts one call to `phoneNumber` against its limits (all accounts together).
    /// - Returns: the UTC day the call was counted in (to give it back if the call is not placed); `nil` when the limits
    ///   are off.
    /// - Throws: ``CallPlacementError/refused(_:)`` `number_daily_limit` or `number_account_limit` with the moment calling
    ///   becomes possible.
    private func admitNumberCall(_ phoneNumber: String, userID: String, now: Date) async throws -> String? {
        let settings = services.configuration.callDestinations
        guard settings.callsPerNumberPerDay != nil || settings.accountsPerNumberPerWeek != nil else { return nil }
        let day = NumberLimitPeriods.day(of: now)
        let week = NumberLimitPeriods.week(of: now)
        let outcome = try await store.destinations.admitNumberCall(
            hash: services.numberHasher.hash(phoneNumber), userID: userID, day: day.key, week: week.key,
            callsPerDay: settings.callsPerNumberPerDay, accountsPerWeek: settings.accountsPerNumberPerWeek)
        switch outcome {
        case .admitted:
            return day.key
        case .dailyLimit:
            throw CallPlacementError.call(.numberDailyLimit(settings.callsPerNumberPerDay ?? 0, until: day.ends))
        case .accountLimit:
            throw CallPlacementError.call(.numberAccountLimit(settings.accountsPerNumberPerWeek ?? 0, until: week.ends))
        }
    }

    /// Checks the destination, reserves the call's estimated cost against the Calls budget, counts the call against the
    /// number's limits, charges the user's allowance, asks the telephony provider to place the call, and records its
    /// sid. Every refusal comes before the charge; a call that is not placed gives back its charge, its count and its
    /// reservation (a placed call's reservation is settled by its final status, ``CallCosts/settle(_:store:logger:)``).
    ///
    /// - Parameters:
    ///   - free: a development test call: placed without charging (duration limit as the user's plan allows).
    /// - Returns: the recorded call (with its sid).
    func place(
        userID: String, phoneNumber: String, scenario: ResolvedScenario, scheduleID: Int? = nil, free: Bool = false
    ) async throws -> CallRecord {
        let now = services.now()
        _ = try checkDestination(phoneNumber, at: now)
        try await checkNotOptedOut(phoneNumber)
        try await screen(scenario, userID: userID)  // a custom persona is checked again before every call (issue 17)
        // The allowance is read first, so an account that cannot pay does not use up a number's calls.
        let decision =
            free
            ? services.policy.evaluate(try await account(userID: userID), at: now) : try await requirePermission(userID: userID, scenario: scenario)
        // Then the Calls budget, before anything is counted: the estimate of a call as long as the user's plan allows.
        let costs = services.callCosts
        let reservation = try await costs.reserve(
            durationLimit: decision.charge?.durationLimitSeconds ?? services.configuration.plans.trial.durationLimitSeconds, store: store, logger: logger)
        do {
            let countedDay = try await admitNumberCall(phoneNumber, userID: userID, now: now)
            do {
                return try await chargeAndDial(
                    userID: userID, phoneNumber: phoneNumber, scenario: scenario, scheduleID: scheduleID, free: free, reservation: reservation)
            } catch {
                if let countedDay {
                    try? await store.destinations.releaseNumberCall(hash: services.numberHasher.hash(phoneNumber), day: countedDay)
                }
                throw error
            }
        } catch {
            await costs.release(reservation: reservation, store: store, logger: logger)
            throw error
        }
    }

    private func chargeAndDial(
        userID: String, phoneNumber: String, scenario: ResolvedScenario, scheduleID: Int?, free: Bool, reservation: String
    ) async throws -> CallRecord {
        var reserved: CallRecord?
        if free {
            let decision = services.policy.evaluate(try await account(userID: userID), at: services.now())
            let duration = decision.charge?.durationLimitSeconds ?? services.configuration.plans.trial.durationLimitSeconds
            let call = NewCall(userID: userID, phoneNumber: phoneNumber, scenario: scenario.id, durationLimit: duration, scheduleID: scheduleID)
            reserved = try await store.calls.reserveCall(call, bucket: nil, now: services.now())
        }
        for _ in 0..<16 where reserved == nil {
            let decision = try await requirePermission(userID: userID, scenario: scenario)
            guard let charge = decision.charge else { continue }
            let call = NewCall(
                userID: userID, phoneNumber: phoneNumber, scenario: scenario.id, durationLimit: charge.durationLimitSeconds, scheduleID: scheduleID
            )
            // Another request may empty the bucket between the decision and the compare-and-set: decide again.
            do {
                reserved = try await store.calls.reserveCall(
                    call, bucket: charge.bucket, now: services.now(), trialCallsPerDay: services.configuration.admission.trialCallsPerDay)
            } catch is TrialCallsExhausted {
                let now = services.now()
                logger.critical(
                    "trial calls of the day used up: trial calls are refused",
                    metadata: ["alert": "budget", "limit": .stringConvertible(services.configuration.admission.trialCallsPerDay ?? 0)])
                throw CallPlacementError.trialCallsPaused(retryAfter: UTCBoundary.secondsUntilNext(.day, after: now))
            }
        }
        guard var call = reserved else {
            throw CallPlacementError.contended
        }
        do {
            try await store.metering.attachCallSpend(id: reservation, callID: call.id)
        } catch {
            try await store.calls.releaseCall(id: call.id, now: services.now())
            throw error
        }
        let request = OutboundCallRequest(
            to: phoneNumber, from: services.fromNumber,
            twimlURL: services.publicURL(API.Calls.voice.path(), query: [URLQueryItem(name: "call_id", value: String(call.id))]),
            statusCallbackURL: services.publicURL(API.Calls.statusCallback.path(), query: [URLQueryItem(name: "call_id", value: String(call.id))]),
            statusCallbackEvents: ["initiated", "ringing", "answered", "completed"],
            timeLimitSeconds: call.durationLimit, ringTimeoutSeconds: Self.ringTimeoutSeconds,
            machineDetectionCallbackURL: services.configuration.callBridge.machineDetection
                ? services.publicURL(API.Calls.machineDetection.path(), query: [URLQueryItem(name: "call_id", value: String(call.id))])
                : nil
        )
        let placed: PlacedCall
        do {
            try await waitForDialSlot()
            placed = try await services.telephony.placeCall(request)
        } catch {
            if try await store.calls.releaseCall(id: call.id, now: services.now()) { services.instruments.callsReleased(1) }
            if let error = error as? CallPlacementError { throw error }  // the dial queue is too long
            logger.error(
                "telephony refused the call; charge released",
                metadata: [
                    "call_id": .stringConvertible(call.id), "to": .string(PhoneNumberMask.mask(phoneNumber)),
                    "error": .string(Self.describe(error)),
                ])
            switch error as? TelephonyError {
            case .rejected(_, let code, _): throw CallPlacementError.telephonyRejected(code: code)
            default: throw CallPlacementError.telephonyUnavailable
            }
        }
        try await store.calls.attachSid(placed.sid, toCall: call.id, now: services.now())
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
        let slot = try await store.callBridge.reserveDialSlot(interval: 1 / services.configuration.callBridge.callsPerSecond, now: Date())
        let wait = slot.timeIntervalSinceNow
        if wait > Self.maximumDialWait {
            throw CallPlacementError.dialQueueFull(retryAfter: Int(min(wait, 3_600).rounded(.up)))
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
