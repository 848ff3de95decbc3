import ChorusCore
import ChorusProviders
import Foundation
import Logging

/// Who a provider call works for, carried by the task: the signed-in user and the request id (set by
/// ``UserAuthenticator`` for requests, by ``JobRunner`` for jobs), and optionally what it works on (`story:<id>`).
struct MeteringContext: Sendable, Equatable {
    var userID: String?
    var requestID: String?
    var subject: String?
    /// The calls belong to work admitted earlier against the limits (a story's stages, admitted by `POST /stories`):
    /// they are counted and reserved but not refused, so admitted work finishes.
    var admitted = false

    @TaskLocal static var current = MeteringContext()

    /// Runs `body` with this context's user (and subject) replaced, keeping the request id.
    static func with<R: Sendable>(
        userID: String?, subject: String? = nil, admitted: Bool = false, _ body: () async throws -> R
    ) async rethrows -> R {
        var context = current
        context.userID = userID
        if let subject { context.subject = subject }
        context.admitted = admitted
        return try await $current.withValue(context, operation: body)
    }
}

/// Records what provider calls consumed, priced from the price table, for one feature, and keeps the feature within
/// its limits (``ProductLimits``): ``metered(_:provider:estimate:_:consumption:)`` reserves a call's estimated cost
/// against the feature's daily and monthly budgets and counts it against the user's daily operations before the
/// provider is called, and settles the reservation to the metered cost afterwards. Recording never fails the call it
/// measures: a database error is logged and the call's result still returned.
struct UsageMeter: Sendable {
    let feature: MeteredFeature
    let prices: PriceTable
    let limits: ProductLimits
    let store: @Sendable () throws -> ChorusStore
    let clock: @Sendable () -> Date
    let logger: Logger

    /// Makes one provider call within the feature's limits: reserves `estimate` (micro-dollars) and one operation of
    /// the context's user, runs `call`, records what it consumed (`consumption` gives the model and the consumption)
    /// settling the reservation, or gives the reservation back when `call` throws.
    ///
    /// - Throws: 503 with `Retry-After` at the next UTC day or month when the feature's budget is spent, 429 with
    ///   `Retry-After` at the next UTC day when the user's operations are used up (both before any provider call), or
    ///   what `call` throws.
    func metered<T: Sendable>(
        _ operation: MeteredOperation, provider: String, estimate: Int64, _ call: () async throws -> T,
        consumption: (T) -> (model: String, consumption: Consumption)
    ) async throws -> T {
        let reservation = try await reserve(estimate: estimate, operation: operation)
        let result: T
        do {
            result = try await call()
        } catch {
            do {
                try await store().metering.releaseFeatureSpend(reservation)
            } catch let releaseError {
                logger.error("could not give a spend reservation back", metadata: ["error": .string("\(releaseError)")])
            }
            throw error
        }
        let (model, consumed) = consumption(result)
        await record(operation, provider: provider, model: model, consumption: consumed, settling: reservation)
        return result
    }

    /// Reserves `estimate` and one operation of the context's user, or refuses with the documented answer and, for a
    /// spent budget, a `critical` log line (`alert=budget`).
    func reserve(estimate: Int64, operation: MeteredOperation) async throws -> SpendReservation {
        let now = clock()
        let userID = MeteringContext.current.userID
        if MeteringContext.current.admitted {
            return try await store().metering.reserveFeatureSpend(
                feature, amount: estimate, day: (period: "day:" + VoiceUsagePolicy.period(now, monthly: false), budget: nil),
                month: (period: "month:" + VoiceUsagePolicy.period(now, monthly: true), budget: nil), user: nil)
        }
        do {
            return try await store().metering.reserveFeatureSpend(
                feature, amount: estimate, day: (period: "day:" + VoiceUsagePolicy.period(now, monthly: false), budget: limits.budget.dailyMicrodollars),
                month: (period: "month:" + VoiceUsagePolicy.period(now, monthly: true), budget: limits.budget.monthlyMicrodollars),
                user: userID.map { (id: $0, key: ProductLimits.userOperationsKey(feature, at: now), limit: limits.userDailyOperations) })
        } catch let reached as SpendLimitReached {
            switch reached {
            case .user:
                logger.notice(
                    "user's daily operations reached: the call is refused",
                    metadata: ["feature": .string(feature.rawValue), "operation": .string(operation.rawValue), "user_id": .string(userID ?? "")])
                throw APIError.limitReached(
                    retryAfter: UTCBoundary.secondsUntilNext(.day, after: now),
                    detail: "You've reached today's limit of \(limits.userDailyOperations ?? 0) \(Self.productName(feature)) operations. Try again tomorrow.")
            case .day, .month:
                let period: BudgetPeriod = reached == .day ? .day : .month
                logger.critical(
                    "feature budget reached: new work is refused",
                    metadata: [
                        "alert": "budget", "feature": .string(feature.rawValue), "period": .string(period.rawValue),
                        "operation": .string(operation.rawValue),
                    ])
                throw APIError.unavailable(
                    retryAfter: UTCBoundary.secondsUntilNext(period, after: now),
                    detail: "This feature has reached its \(period == .day ? "daily" : "monthly") spending limit. Please try again later.")
            }
        }
    }

    static func productName(_ feature: MeteredFeature) -> String {
        switch feature {
        case .calls: "call"
        case .voiceMessages: "voice"
        case .stories: "story"
        }
    }

    func record(_ operation: MeteredOperation, provider: String, model: String, consumption: Consumption, settling: SpendReservation? = nil) async {
        let context = MeteringContext.current
        let usage = UsageRecord(
            userID: context.userID, feature: feature, operation: operation, provider: provider, model: model, consumption: consumption,
            usdMicros: prices.costMicrodollars(of: operation, model: model, consumption: consumption), requestID: context.requestID,
            subject: context.subject, createdAt: clock())
        do {
            try await store().metering.recordUsage(usage, settling: settling)
        } catch {
            logger.error(
                "could not record provider usage",
                metadata: [
                    "error": .string("\(error)"), "feature": .string(feature.rawValue), "operation": .string(operation.rawValue),
                    "model": .string(model), "usd_micros": .stringConvertible(usage.usdMicros),
                ])
        }
    }

    /// Refuses new work at once when the feature's budget is already spent (503 with `Retry-After` at the next UTC day
    /// or month and a `critical` log line), before work whose provider calls are each reserved by ``metered``.
    func requireBudget(estimate: Int64 = 0) async throws {
        let budget = limits.budget
        guard budget != .unlimited else { return }
        let now = clock()
        let spent = try await store().metering.featureSpend(feature, at: now)
        if let period = budget.exceeded(spentToday: spent.day, spentThisMonth: spent.month, estimate: estimate) {
            logger.critical(
                "feature budget reached: new work is refused",
                metadata: ["alert": "budget", "feature": .string(feature.rawValue), "period": .string(period.rawValue)])
            throw APIError.unavailable(
                retryAfter: UTCBoundary.secondsUntilNext(period, after: now),
                detail: "This feature has reached its \(period == .day ? "daily" : "monthly") spending limit. Please try again later.")
        }
    }
}

/// A ``TextGenerator`` that meters every generation.
struct MeteredTextGenerator: TextGenerator {
    let base: any TextGenerator
    let provider: String
    let meter: UsageMeter

    func generate(_ request: TextGenerationRequest) async throws -> GeneratedText {
        try await meter.metered(.chat, provider: provider, estimate: estimate(request)) {
            try await base.generate(request)
        } consumption: { consumption(of: $0, request) }
    }

    func stream(_ request: TextGenerationRequest, onDelta: @escaping @Sendable (String) async -> Void) async throws -> GeneratedText {
        try await meter.metered(.chat, provider: provider, estimate: estimate(request)) {
            try await base.stream(request, onDelta: onDelta)
        } consumption: { consumption(of: $0, request) }
    }

    private func estimate(_ request: TextGenerationRequest) -> Int64 {
        let promptBytes = request.messages.reduce(0) { $0.addingReportingOverflow($1.content.utf8.count).partialValue }
        return meter.prices.chatEstimateMicrodollars(
            model: request.model, promptBytes: promptBytes, messages: request.messages.count, maxOutputTokens: request.maxOutputTokens)
    }

    private func consumption(of generated: GeneratedText, _ request: TextGenerationRequest) -> (model: String, consumption: Consumption) {
        (generated.model.isEmpty ? request.model : generated.model, Consumption(inputTokens: generated.promptTokens, outputTokens: generated.completionTokens))
    }
}

/// A ``SpeechSynthesizer`` that meters every synthesis (billed characters).
struct MeteredSpeechSynthesizer: SpeechSynthesizer {
    let base: any SpeechSynthesizer
    let provider: String
    let meter: UsageMeter

    var maxInputCharacters: Int { base.maxInputCharacters }

    func synthesize(_ request: SpeechRequest) async throws -> SynthesizedSpeech {
        let estimate = meter.prices.speechCostMicrodollars(model: request.model, characters: TextChunker.length(request.text))
        return try await meter.metered(.speech, provider: provider, estimate: estimate) {
            try await base.synthesize(request)
        } consumption: { (request.model, Consumption(characters: $0.billedCharacters)) }
    }
}

/// A ``VoiceCloner`` that meters every clone (a count; covered by the provider subscription).
struct MeteredVoiceCloner: VoiceCloner {
    let base: any VoiceCloner
    let provider: String
    let meter: UsageMeter

    func cloneVoice(_ request: VoiceCloneRequest) async throws -> ClonedVoice {
        try await meter.metered(.voiceClone, provider: provider, estimate: 0) {
            try await base.cloneVoice(request)
        } consumption: { _ in ("instant_voice_cloning", Consumption()) }
    }

    func deleteVoice(id: String) async throws {
        try await base.deleteVoice(id: id)
    }
}
