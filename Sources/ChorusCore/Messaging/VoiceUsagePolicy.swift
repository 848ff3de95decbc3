import Foundation

/// A voice-messaging account's plan.
public enum VoiceTier: String, Sendable, Equatable, Hashable, CaseIterable, Codable {
    /// Monthly voice messages are capped.
    case free
    /// Unlimited voice messages.
    case paid
}

/// Whether one more voice action may go ahead for a user.
public enum VoiceUsageDecision: Sendable, Equatable {
    case allowed
    /// The user's speech generations for today are used up (cached audio still plays).
    case dailyGenerationsExhausted
    /// The free tier's monthly voice messages are used up.
    case monthlyVoiceMessagesExhausted(limit: Int)

    /// The text for the user, or `nil` when allowed.
    public var message: String? {
        switch self {
        case .allowed: nil
        case .dailyGenerationsExhausted: "You've reached today's voice playback limit. Try again tomorrow."
        case .monthlyVoiceMessagesExhausted(let limit): VoiceUsagePolicy.overQuotaMessage(limit: limit)
        }
    }
}

/// Per-user voice limits (issue 6: 50 speech generations a day; 100 voice messages a month on the free tier).
///
/// A pure decision on counts the caller has read (and will increment atomically when it goes ahead).
public struct VoiceUsagePolicy: Sendable, Equatable {
    public var dailyGenerationsPerUser: Int
    public var freeMonthlyVoiceMessages: Int

    public init(dailyGenerationsPerUser: Int = 50, freeMonthlyVoiceMessages: Int = 100) {
        self.dailyGenerationsPerUser = dailyGenerationsPerUser
        self.freeMonthlyVoiceMessages = freeMonthlyVoiceMessages
    }

    /// The PRD's over-quota text (Appendix B), with the limit filled in.
    public static func overQuotaMessage(limit: Int) -> String {
        "You've reached your monthly voice limit (\(limit) messages). Upgrade for unlimited."
    }

    /// May the user generate one more piece of speech (a cache miss)? The monthly limit is reported first: upgrading
    /// lifts it, while the daily limit only passes with time.
    public func speechGeneration(tier: VoiceTier, generationsToday: Int, voiceMessagesThisMonth: Int) -> VoiceUsageDecision {
        let monthly = voiceMessage(tier: tier, voiceMessagesThisMonth: voiceMessagesThisMonth)
        guard monthly == .allowed else { return monthly }
        return generationsToday < dailyGenerationsPerUser ? .allowed : .dailyGenerationsExhausted
    }

    /// May the user send (or hear generated) one more voice message this month?
    public func voiceMessage(tier: VoiceTier, voiceMessagesThisMonth: Int) -> VoiceUsageDecision {
        guard tier == .free, voiceMessagesThisMonth >= freeMonthlyVoiceMessages else { return .allowed }
        return .monthlyVoiceMessagesExhausted(limit: freeMonthlyVoiceMessages)
    }
}

/// Which budget period ran out.
public enum SpendPeriod: String, Sendable, Equatable, Hashable, Codable {
    case daily, monthly
}

/// Whether a paid provider call fits the budget.
public enum SpendDecision: Sendable, Equatable {
    case allowed
    case exceeded(SpendPeriod)
}

/// The spend budget across all users (issue 6): generation stops when a call would take the day's or the month's
/// spend past its limit. Amounts are micro-dollars (1 USD = 1,000,000), fine enough for a 50-character message.
public struct SpendBudget: Sendable, Equatable {
    public var dailyLimitMicrodollars: Int64
    public var monthlyLimitMicrodollars: Int64

    public init(dailyLimitMicrodollars: Int64, monthlyLimitMicrodollars: Int64) {
        self.dailyLimitMicrodollars = dailyLimitMicrodollars
        self.monthlyLimitMicrodollars = monthlyLimitMicrodollars
    }

    /// Allowed when spent + estimate stays within both limits; the monthly period is reported when both are exceeded
    /// (it lasts longer).
    public func decide(
        spentTodayMicrodollars: Int64, spentThisMonthMicrodollars: Int64, estimatedCostMicrodollars: Int64
    )
        -> SpendDecision
    {
        let cost = max(0, estimatedCostMicrodollars)
        if spentThisMonthMicrodollars + cost > monthlyLimitMicrodollars { return .exceeded(.monthly) }
        if spentTodayMicrodollars + cost > dailyLimitMicrodollars { return .exceeded(.daily) }
        return .allowed
    }
}

/// Provider prices used to estimate spend (research notes §1.9; verify on the pricing pages and override in
/// configuration). Keys are provider model ids; a model missing from a table is priced at that table's highest
/// price, so an unknown model never looks free.
public struct VoicePriceTable: Sendable, Equatable {
    /// Input and output prices of a chat model.
    public struct TokenPrice: Sendable, Equatable {
        public var inputUSDPerMillion: Double
        public var outputUSDPerMillion: Double

        public init(inputUSDPerMillion: Double, outputUSDPerMillion: Double) {
            self.inputUSDPerMillion = inputUSDPerMillion
            self.outputUSDPerMillion = outputUSDPerMillion
        }
    }

    /// Text to speech, USD per million characters, by model id.
    public var speechUSDPerMillionCharacters: [String: Double]
    /// Speech to text, USD per minute of audio, by model id.
    public var transcriptionUSDPerMinute: [String: Double]
    /// Chat completions, USD per million tokens, by model id.
    public var chatUSDPerMillionTokens: [String: TokenPrice]

    public init(
        speechUSDPerMillionCharacters: [String: Double], transcriptionUSDPerMinute: [String: Double],
        chatUSDPerMillionTokens: [String: TokenPrice]
    ) {
        self.speechUSDPerMillionCharacters = speechUSDPerMillionCharacters
        self.transcriptionUSDPerMinute = transcriptionUSDPerMinute
        self.chatUSDPerMillionTokens = chatUSDPerMillionTokens
    }

    /// Defaults from research notes §1.9 (dated 2026-11-22):
    /// - speech: `tts-1` $15 and `tts-1-hd` $30 per 1M characters; `gpt-4o-mini-tts` ≈ $0.015 per minute, about $17
    ///   per 1M characters at ~900 characters a minute; ElevenLabs API ≈ $0.08–0.12 per 1,000 characters for
    ///   multilingual (the upper end, $120 per 1M, is used), flash half of that;
    /// - transcription per minute: `whisper-1` $0.006, `gpt-4o-transcribe` $0.006, `gpt-4o-mini-transcribe` $0.003,
    ///   `gpt-transcribe` $0.0045;
    /// - chat (not in the notes; OpenAI list prices to verify): `gpt-4o-mini` $0.15 / $0.60, `gpt-4o` $2.50 / $10 per 1M
    ///   input / output tokens.
    public static let standard = VoicePriceTable(
        speechUSDPerMillionCharacters: [
            "tts-1": 15, "tts-1-hd": 30, "gpt-4o-mini-tts": 17, "eleven_multilingual_v2": 120, "eleven_v3": 120,
            "eleven_flash_v2_5": 60, "eleven_flash_v2": 60,
        ],
        transcriptionUSDPerMinute: [
            "whisper-1": 0.006, "gpt-4o-transcribe": 0.006, "gpt-4o-mini-transcribe": 0.003, "gpt-transcribe": 0.0045,
        ],
        chatUSDPerMillionTokens: [
            "gpt-4o-mini": TokenPrice(inputUSDPerMillion: 0.15, outputUSDPerMillion: 0.60),
            "gpt-4o": TokenPrice(inputUSDPerMillion: 2.50, outputUSDPerMillion: 10.00),
        ])

    /// The estimated cost of speaking `characters` characters with `model`, micro-dollars rounded up.
    public func speechCostMicrodollars(model: String, characters: Int) -> Int64 {
        let price = speechUSDPerMillionCharacters[model] ?? speechUSDPerMillionCharacters.values.max() ?? 0
        return Self.microdollars(price * Double(max(0, characters)) / 1_000_000)
    }

    /// The estimated cost of transcribing `seconds` of audio with `model`, micro-dollars rounded up.
    public func transcriptionCostMicrodollars(model: String, seconds: Double) -> Int64 {
        let price = transcriptionUSDPerMinute[model] ?? transcriptionUSDPerMinute.values.max() ?? 0
        return Self.microdollars(price * max(0, seconds) / 60)
    }

    /// The cost of a chat completion with `model`, micro-dollars rounded up.
    public func chatCostMicrodollars(model: String, promptTokens: Int, completionTokens: Int) -> Int64 {
        let price =
            chatUSDPerMillionTokens[model]
            ?? chatUSDPerMillionTokens.values.max { $0.inputUSDPerMillion + $0.outputUSDPerMillion < $1.inputUSDPerMillion + $1.outputUSDPerMillion }
            ?? TokenPrice(inputUSDPerMillion: 0, outputUSDPerMillion: 0)
        let usd =
            (price.inputUSDPerMillion * Double(max(0, promptTokens)) + price.outputUSDPerMillion * Double(max(0, completionTokens)))
            / 1_000_000
        return Self.microdollars(usd)
    }

    /// USD to micro-dollars, rounded up (a tiny epsilon absorbs binary floating-point noise such as 15.000000000000002).
    static func microdollars(_ usd: Double) -> Int64 {
        max(0, Int64((usd * 1_000_000 - 1e-6).rounded(.up)))
    }
}
