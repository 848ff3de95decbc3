import Foundation

/// The product a provider call worked for: spend is reported and budgeted per feature.
public enum MeteredFeature: String, Sendable, Equatable, Hashable, CaseIterable, Codable {
    case calls
    case voiceMessages = "voice_messages"
    case stories
}

/// What kind of provider call it was.
public enum MeteredOperation: String, Sendable, Equatable, Hashable, CaseIterable, Codable {
    case chat
    case speech
    case transcription
    case image
    case moderation
    case voiceClone = "voice_clone"
    /// One realtime model response of a phone call (`response.done`'s usage).
    case realtime
    /// A phone call's minutes on the telephony provider.
    case telephony
}

/// What one provider call consumed, in the units providers bill.
public struct Consumption: Sendable, Equatable {
    /// All input and output tokens, every modality, cached input included.
    public var inputTokens: Int
    public var outputTokens: Int
    public var characters: Int
    public var images: Int
    /// Audio transcribed, or a phone call's duration.
    public var audioSeconds: Double
    /// Realtime: the cached part of `inputTokens` (earlier turns re-sent), the audio part of `inputTokens`, the audio
    /// part of the cached tokens, and the audio part of `outputTokens`; the rest is text.
    public var cachedInputTokens: Int
    public var audioInputTokens: Int
    public var cachedAudioInputTokens: Int
    public var audioOutputTokens: Int

    public init(
        inputTokens: Int = 0, outputTokens: Int = 0, characters: Int = 0, images: Int = 0, audioSeconds: Double = 0, cachedInputTokens: Int = 0,
        audioInputTokens: Int = 0, cachedAudioInputTokens: Int = 0, audioOutputTokens: Int = 0
    ) {
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.characters = characters
        self.images = images
        self.audioSeconds = audioSeconds
        self.cachedInputTokens = cachedInputTokens
        self.audioInputTokens = audioInputTokens
        self.cachedAudioInputTokens = cachedAudioInputTokens
        self.audioOutputTokens = audioOutputTokens
    }
}

extension PriceTable {
    /// The price of `consumption` by `operation` with `model`, micro-dollars. Moderation is free; a voice clone is
    /// covered by the provider subscription (no per-call price).
    public func costMicrodollars(of operation: MeteredOperation, model: String, consumption: Consumption) -> Int64 {
        switch operation {
        case .chat:
            return chatCostMicrodollars(model: model, promptTokens: consumption.inputTokens, completionTokens: consumption.outputTokens)
        case .speech:
            return speechCostMicrodollars(model: model, characters: consumption.characters)
        case .transcription:
            return transcriptionCostMicrodollars(model: model, seconds: consumption.audioSeconds)
        case .image:
            // The token counts are the provider's: summed with saturation (two counts near Int.max trapped here).
            let reported = consumption.inputTokens.addingClamped(consumption.outputTokens) > 0
            return imageCostMicrodollars(
                model: model, images: consumption.images,
                inputTokens: reported ? consumption.inputTokens : nil, outputTokens: reported ? consumption.outputTokens : nil)
        case .realtime:
            return realtimeCostMicrodollars(model: model, consumption: consumption)
        case .telephony:
            return telephonyCostMicrodollars(provider: model, seconds: consumption.audioSeconds)
        case .moderation, .voiceClone:
            return 0
        }
    }
}

/// A daily and a monthly spend limit for one feature, micro-dollars (`nil`: no limit).
public struct FeatureBudget: Sendable, Equatable {
    public var dailyMicrodollars: Int64?
    public var monthlyMicrodollars: Int64?

    public init(dailyMicrodollars: Int64?, monthlyMicrodollars: Int64?) {
        self.dailyMicrodollars = dailyMicrodollars
        self.monthlyMicrodollars = monthlyMicrodollars
    }

    /// No limits.
    public static let unlimited = FeatureBudget(dailyMicrodollars: nil, monthlyMicrodollars: nil)

    /// Which limit, if any, `spent` (so far today and this month) plus the `estimate` of new work would pass. New work
    /// is refused once a limit is reached, so a budget is never overrun by more than the work already under way.
    public func exceeded(spentToday: Int64, spentThisMonth: Int64, estimate: Int64 = 0) -> BudgetPeriod? {
        if let daily = dailyMicrodollars, spentToday + max(0, estimate) > daily || spentToday >= daily { return .day }
        if let monthly = monthlyMicrodollars, spentThisMonth + max(0, estimate) > monthly || spentThisMonth >= monthly { return .month }
        return nil
    }
}

/// A budget's period.
public enum BudgetPeriod: String, Sendable, Equatable {
    case day
    case month
}
