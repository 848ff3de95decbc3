import ChorusCore
import ChorusProviders
import Foundation
import Logging
import SQLKit
import Vapor

/// What calls cost (issue 18), metered like every other provider use in `provider_usage` (feature `calls`, subject
/// `call:<id>`, the call's user) and kept within the Calls budget:
///
/// - at placement, the call's estimate is reserved against the budget's day and month before the telephony provider is
///   asked (``reserve(durationLimit:store:logger:)``; a budget that cannot cover it refuses the call with 503);
/// - every realtime response's `response.done` usage is recorded as it arrives, priced per model and token kind
///   (``recordRealtime(_:model:call:store:logger:)``);
/// - the call's final status records its telephony minutes, every started minute at the price per minute, exactly once
///   (the row's `usage_key` is `telephony:call:<id>`), and gives the reservation back (``settle(_:store:logger:)``):
///   from then on the budget holds the call's metered cost only.
struct CallCosts: Sendable {
    let services: ChorusServices

    /// Reserves the estimate of a call of at most `durationLimit` seconds against the Calls budget.
    /// - Returns: the reservation's id, to attach to the call once it exists, or to release if it is not placed.
    /// - Throws: ``CallPlacementError/budgetSpent(period:retryAfter:)`` with a `critical` log line (`alert=budget`).
    func reserve(durationLimit: Int, store: ChorusStore, logger: Logger) async throws -> String {
        let now = services.now()
        let settings = services.configuration.callCosts
        let estimate = services.configuration.prices.callEstimateMicrodollars(
            model: services.configuration.callBridge.realtimeModel, telephonyProvider: settings.telephonyProvider, durationSeconds: durationLimit)
        let id = UUID().uuidString
        do {
            try await store.metering.reserveCallSpend(
                id: id, amount: estimate,
                day: (period: "day:" + VoiceUsagePolicy.period(now, monthly: false), budget: settings.dailyBudgetMicrodollars),
                month: (period: "month:" + VoiceUsagePolicy.period(now, monthly: true), budget: settings.monthlyBudgetMicrodollars), now: now)
        } catch let reached as SpendLimitReached {
            let period: BudgetPeriod = reached == .month ? .month : .day
            logger.critical(
                "feature budget reached: new work is refused",
                metadata: [
                    "alert": "budget", "feature": .string(MeteredFeature.calls.rawValue), "period": .string(period.rawValue),
                    "estimate_usd_micros": .stringConvertible(estimate),
                ])
            throw CallPlacementError.budgetSpent(period: period, retryAfter: UTCBoundary.secondsUntilNext(period, after: now))
        }
        return id
    }

    /// Gives back a reservation whose call was not placed.
    func release(reservation: String, store: ChorusStore, logger: Logger) async {
        do {
            try await store.metering.settleCallSpend(id: reservation)
        } catch {
            logger.error("could not give a call's budget reservation back", metadata: ["error": .string(String(describing: error))])
        }
    }

    /// Records one realtime response of `call` (its `response.done` usage) with the session's `model`.
    func recordRealtime(_ usage: RealtimeUsage, model: String, call: CallRecord, store: ChorusStore, logger: Logger) async {
        let consumption = Self.consumption(of: usage)
        await record(
            UsageRecord(
                userID: call.userID, feature: .calls, operation: .realtime, provider: services.providerNames["realtime"] ?? "openai", model: model,
                consumption: consumption,
                usdMicros: services.configuration.prices.costMicrodollars(of: .realtime, model: model, consumption: consumption), requestID: nil,
                subject: Self.subject(call.id), createdAt: services.now()),
            store: store, logger: logger)
    }

    /// Settles a call whose status is final: records its telephony minutes (answered calls; Twilio bills no unanswered
    /// call) once, and gives back its budget reservation once, whoever settles it first (the status callback, its
    /// retries, the reconciliation job).
    func settle(_ call: CallRecord, store: ChorusStore, logger: Logger) async {
        guard call.status.isTerminal else { return }
        let seconds = call.durationSeconds ?? 0
        if seconds > 0 {
            let provider = services.configuration.callCosts.telephonyProvider
            let consumption = Consumption(audioSeconds: Double(seconds))
            await record(
                UsageRecord(
                    userID: call.userID, feature: .calls, operation: .telephony, provider: services.providerNames["telephony"] ?? provider,
                    model: provider, consumption: consumption,
                    usdMicros: services.configuration.prices.costMicrodollars(of: .telephony, model: provider, consumption: consumption),
                    requestID: nil, subject: Self.subject(call.id), createdAt: services.now(), key: "telephony:call:\(call.id)"),
                store: store, logger: logger)
        }
        do {
            try await store.metering.settleCallSpend(callID: call.id)
        } catch {
            logger.error(
                "could not settle a call's budget reservation",
                metadata: ["call_id": .stringConvertible(call.id), "error": .string(String(describing: error))])
        }
    }

    /// The usage subject of a call's rows.
    static func subject(_ callID: Int) -> String { "call:\(callID)" }

    /// The billed units of a `response.done` usage: totals, with the audio and cached parts (a missing detail is 0;
    /// a total missing or below its parts is raised to their sum).
    static func consumption(of usage: RealtimeUsage) -> Consumption {
        let audioIn = usage.inputAudioTokens ?? 0
        let textIn = usage.inputTextTokens ?? 0
        let cachedAudio = usage.cachedAudioTokens ?? 0
        let cached = max(usage.cachedTokens ?? 0, cachedAudio.addingClamped(usage.cachedTextTokens ?? 0))
        let audioOut = usage.outputAudioTokens ?? 0
        let textOut = usage.outputTextTokens ?? 0
        return Consumption(
            inputTokens: max(usage.inputTokens ?? 0, audioIn.addingClamped(textIn)), outputTokens: max(usage.outputTokens ?? 0, audioOut.addingClamped(textOut)),
            cachedInputTokens: cached, audioInputTokens: audioIn, cachedAudioInputTokens: cachedAudio, audioOutputTokens: audioOut)
    }

    private func record(_ usage: UsageRecord, store: ChorusStore, logger: Logger) async {
        do {
            try await store.metering.recordUsage(usage)
        } catch {
            logger.error(
                "could not record provider usage",
                metadata: [
                    "error": .string(String(describing: error)), "feature": "calls", "operation": .string(usage.operation.rawValue),
                    "subject": .string(usage.subject ?? ""), "usd_micros": .stringConvertible(usage.usdMicros),
                ])
        }
    }
}

extension ChorusServices {
    /// What calls cost and the Calls budget.
    var callCosts: CallCosts { CallCosts(services: self) }

    /// Every call's metered cost so far in `app`'s database, by kind (chorus-bench's cost per call-minute).
    public func meteredCallCosts(in app: Application) async throws -> MeteredCallCosts {
        try await store(app.db as! any SQLDatabase, on: app.eventLoopGroup.any()).metering.callCostTotals()
    }
}

/// What the calls metered so far cost (``ChorusServices/meteredCallCosts(in:)``), micro-dollars.
public struct MeteredCallCosts: Sendable, Equatable {
    /// Calls with at least one metered row.
    public var calls: Int
    /// Realtime responses (`response.done`) and their cost.
    public var realtimeResponses: Int
    public var realtimeUSDMicros: Int64
    /// Answered calls' minutes, each started minute counted, and their cost.
    public var billedMinutes: Int
    public var telephonyUSDMicros: Int64

    public var totalUSDMicros: Int64 { realtimeUSDMicros.addingReportingOverflow(telephonyUSDMicros).partialValue }
}
