import Foundation

/// A voice-messaging account's plan.
public enum VoiceTier: String, Sendable, Equatable, Hashable, CaseIterable, Codable {
    /// Monthly voice messages are capped.
    case free
    /// Unlimited voice messages.
    case paid
}

/// Per-user voice limits (issue 6: 50 speech generations a day; 100 voice messages a month on the free tier).
///
/// The limits and their texts; the server charges them with one conditional statement each (never a read followed by
/// a write), keyed by the periods below.
public struct VoiceUsagePolicy: Sendable, Equatable {
    public var dailyGenerationsPerUser: Int
    public var freeMonthlyVoiceMessages: Int

    public init(dailyGenerationsPerUser: Int = 50, freeMonthlyVoiceMessages: Int = 100) {
        self.dailyGenerationsPerUser = dailyGenerationsPerUser
        self.freeMonthlyVoiceMessages = freeMonthlyVoiceMessages
    }

    /// The monthly voice-message limit of a tier; `nil` is unlimited.
    public func monthlyVoiceMessageLimit(tier: VoiceTier) -> Int? {
        tier == .free ? freeMonthlyVoiceMessages : nil
    }

    /// The PRD's over-quota text (Appendix B), with the limit filled in.
    public static func overQuotaMessage(limit: Int) -> String {
        "You've reached your monthly voice limit (\(limit) messages). Upgrade for unlimited."
    }

    /// The text when a user's speech generations for the day are used up.
    public static func dailyLimitMessage(limit: Int) -> String {
        "You've reached today's limit of \(limit) voice generations. Cached audio still plays; try again tomorrow."
    }

    /// The counter key of a day's speech generations (`speech:2026-11-23`) and a month's voice messages
    /// (`voice_messages:2026-11`), in UTC.
    public static func dailyGenerationsKey(at date: Date) -> String { "speech:" + period(date, monthly: false) }
    public static func monthlyVoiceMessagesKey(at date: Date) -> String { "voice_messages:" + period(date, monthly: true) }

    /// `2026-11-23` or `2026-11` (UTC): the periods of counters and spend budgets.
    public static func period(_ date: Date, monthly: Bool) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        let month = String(format: "%04d-%02d", parts.year ?? 0, parts.month ?? 0)
        return monthly ? month : month + String(format: "-%02d", parts.day ?? 0)
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
