import Foundation

/// `GET /me/usage`: what the signed-in user's requests and jobs consumed at the AI providers in a period, per
/// feature, operation and model, with its cost (micro-dollars: 1,000,000 = $1).
public struct ProviderUsageReport: Codable, Sendable, Equatable {
    /// `day` or `month` (UTC).
    public var period: String
    /// The start of the period.
    public var since: Date
    public var totalUSDMicros: Int64
    public var features: [FeatureUsage]

    public init(period: String, since: Date, totalUSDMicros: Int64, features: [FeatureUsage]) {
        self.period = period
        self.since = since
        self.totalUSDMicros = totalUSDMicros
        self.features = features
    }

    enum CodingKeys: String, CodingKey {
        case period, since, features
        case totalUSDMicros = "total_usd_micros"
    }
}

/// One feature's consumption (`calls`, `voice_messages`, `stories`).
public struct FeatureUsage: Codable, Sendable, Equatable {
    public var feature: String
    public var usdMicros: Int64
    public var items: [UsageItem]

    public init(feature: String, usdMicros: Int64, items: [UsageItem]) {
        self.feature = feature
        self.usdMicros = usdMicros
        self.items = items
    }

    enum CodingKeys: String, CodingKey {
        case feature, items
        case usdMicros = "usd_micros"
    }
}

/// What a story or a call cost at the providers so far: the total and its metered usage per operation and model, in
/// micro-dollars.
public struct UsageCostDTO: Codable, Sendable, Equatable {
    public var usdMicros: Int64
    public var items: [UsageItem]

    public init(usdMicros: Int64, items: [UsageItem]) {
        self.usdMicros = usdMicros
        self.items = items
    }

    enum CodingKeys: String, CodingKey {
        case items
        case usdMicros = "usd_micros"
    }
}

/// The calls of one operation (`chat`, `speech`, `transcription`, `image`, `moderation`, `voice_clone`) with one model.
public struct UsageItem: Codable, Sendable, Equatable {
    public var operation: String
    public var model: String
    public var calls: Int
    public var inputTokens: Int
    public var outputTokens: Int
    public var characters: Int
    public var images: Int
    public var audioSeconds: Double
    public var usdMicros: Int64

    public init(
        operation: String, model: String, calls: Int, inputTokens: Int, outputTokens: Int, characters: Int, images: Int,
        audioSeconds: Double, usdMicros: Int64
    ) {
        self.operation = operation
        self.model = model
        self.calls = calls
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.characters = characters
        self.images = images
        self.audioSeconds = audioSeconds
        self.usdMicros = usdMicros
    }

    enum CodingKeys: String, CodingKey {
        case operation, model, calls, characters, images
        case inputTokens = "input_tokens"
        case outputTokens = "output_tokens"
        case audioSeconds = "audio_seconds"
        case usdMicros = "usd_micros"
    }
}
