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

    @TaskLocal static var current = MeteringContext()

    /// Runs `body` with this context's user (and subject) replaced, keeping the request id.
    static func with<R: Sendable>(
        userID: String?, subject: String? = nil, _ body: () async throws -> R
    ) async rethrows -> R {
        var context = current
        context.userID = userID
        if let subject { context.subject = subject }
        return try await $current.withValue(context, operation: body)
    }
}

/// Records what provider calls consumed, priced from the price table, for one feature. Recording never fails the
/// call it measures: a database error is logged and the call's result still returned.
struct UsageMeter: Sendable {
    let feature: MeteredFeature
    let prices: PriceTable
    let store: @Sendable () -> ChorusStore
    let clock: @Sendable () -> Date
    let logger: Logger

    func record(_ operation: MeteredOperation, provider: String, model: String, consumption: Consumption) async {
        let context = MeteringContext.current
        let usage = UsageRecord(
            userID: context.userID, feature: feature, operation: operation, provider: provider, model: model, consumption: consumption,
            usdMicros: prices.costMicrodollars(of: operation, model: model, consumption: consumption), requestID: context.requestID,
            subject: context.subject, createdAt: clock())
        do {
            try await store().recordUsage(usage)
        } catch {
            logger.error(
                "could not record provider usage",
                metadata: [
                    "error": .string("\(error)"), "feature": .string(feature.rawValue), "operation": .string(operation.rawValue),
                    "model": .string(model), "usd_micros": .stringConvertible(usage.usdMicros),
                ])
        }
    }

    /// Refuses new work when the feature's budget is spent (503 with a clear message and a `critical` log line).
    func requireBudget(_ budget: FeatureBudget, estimate: Int64 = 0) async throws {
        guard budget != .unlimited else { return }
        let spent = try await store().featureSpend(feature, at: clock())
        if let period = budget.exceeded(spentToday: spent.day, spentThisMonth: spent.month, estimate: estimate) {
            logger.critical(
                "feature budget reached: new work is refused",
                metadata: ["alert": "budget", "feature": .string(feature.rawValue), "period": .string(period.rawValue)])
            throw APIError.unavailable(
                retryAfter: period == .day ? 3_600 : 86_400,
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
        let generated = try await base.generate(request)
        await meter.record(
            .chat, provider: provider, model: generated.model.isEmpty ? request.model : generated.model,
            consumption: Consumption(inputTokens: generated.promptTokens, outputTokens: generated.completionTokens))
        return generated
    }

    func stream(_ request: TextGenerationRequest, onDelta: @escaping @Sendable (String) async -> Void) async throws -> GeneratedText {
        let generated = try await base.stream(request, onDelta: onDelta)
        await meter.record(
            .chat, provider: provider, model: generated.model.isEmpty ? request.model : generated.model,
            consumption: Consumption(inputTokens: generated.promptTokens, outputTokens: generated.completionTokens))
        return generated
    }
}

/// A ``SpeechSynthesizer`` that meters every synthesis (billed characters).
struct MeteredSpeechSynthesizer: SpeechSynthesizer {
    let base: any SpeechSynthesizer
    let provider: String
    let meter: UsageMeter

    var maxInputCharacters: Int { base.maxInputCharacters }

    func synthesize(_ request: SpeechRequest) async throws -> SynthesizedSpeech {
        let speech = try await base.synthesize(request)
        await meter.record(.speech, provider: provider, model: request.model, consumption: Consumption(characters: speech.billedCharacters))
        return speech
    }
}

/// A ``VoiceCloner`` that meters every clone (a count; covered by the provider subscription).
struct MeteredVoiceCloner: VoiceCloner {
    let base: any VoiceCloner
    let provider: String
    let meter: UsageMeter

    func cloneVoice(_ request: VoiceCloneRequest) async throws -> ClonedVoice {
        let voice = try await base.cloneVoice(request)
        await meter.record(.voiceClone, provider: provider, model: "instant_voice_cloning", consumption: Consumption())
        return voice
    }

    func deleteVoice(id: String) async throws {
        try await base.deleteVoice(id: id)
    }
}
