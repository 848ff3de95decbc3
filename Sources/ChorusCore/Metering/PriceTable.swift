import Foundation

/// Provider prices, used to price what every provider call consumed and to estimate work before it starts (research
/// notes §1.9; verify on the pricing pages). Keys are provider model ids; a model missing from a table is priced at
/// that table's highest price, so an unknown model never looks free. Operators override or add entries with a JSON
/// file (`CHORUS_PRICE_TABLE_FILE`, see ``Overrides``).
public struct PriceTable: Sendable, Equatable {
    /// Input and output prices of a token-billed model.
    public struct TokenPrice: Sendable, Equatable, Codable {
        public var inputUSDPerMillion: Double
        public var outputUSDPerMillion: Double

        public init(inputUSDPerMillion: Double, outputUSDPerMillion: Double) {
            self.inputUSDPerMillion = inputUSDPerMillion
            self.outputUSDPerMillion = outputUSDPerMillion
        }

        enum CodingKeys: String, CodingKey {
            case inputUSDPerMillion = "input"
            case outputUSDPerMillion = "output"
        }
    }

    /// Text to speech, USD per million characters, by model id.
    public var speechUSDPerMillionCharacters: [String: Double]
    /// Speech to text, USD per minute of audio, by model id.
    public var transcriptionUSDPerMinute: [String: Double]
    /// Chat completions, USD per million tokens, by model id.
    public var chatUSDPerMillionTokens: [String: TokenPrice]
    /// Image generation billed by tokens (GPT image models: text in, image out), by model id.
    public var imageUSDPerMillionTokens: [String: TokenPrice]
    /// Image generation billed per picture (models that report no token usage), by model id.
    public var imageUSDPerImage: [String: Double]

    public init(
        speechUSDPerMillionCharacters: [String: Double], transcriptionUSDPerMinute: [String: Double],
        chatUSDPerMillionTokens: [String: TokenPrice], imageUSDPerMillionTokens: [String: TokenPrice] = [:],
        imageUSDPerImage: [String: Double] = [:]
    ) {
        self.speechUSDPerMillionCharacters = speechUSDPerMillionCharacters
        self.transcriptionUSDPerMinute = transcriptionUSDPerMinute
        self.chatUSDPerMillionTokens = chatUSDPerMillionTokens
        self.imageUSDPerMillionTokens = imageUSDPerMillionTokens
        self.imageUSDPerImage = imageUSDPerImage
    }

    /// Defaults from research notes §1.9 (dated 2026-11-22):
    /// - speech: `tts-1` $15 and `tts-1-hd` $30 per 1M characters; `gpt-4o-mini-tts` ≈ $0.015 per minute, about $17
    ///   per 1M characters at ~900 characters a minute; ElevenLabs API ≈ $0.08–0.12 per 1,000 characters for
    ///   multilingual (the upper end, $120 per 1M, is used), flash half of that; `gpt-realtime-2.1-mini` (speech on the
    ///   Realtime API since issue 22) $28 per 1M characters, an **estimate** derived from audio-token prices, not a list
    ///   price: the model bills tokens, not characters — assistant audio is 1 token per 50 ms (1,200 a minute), priced
    ///   like `gpt-realtime-mini` at $20 per 1M output audio tokens ($0.024 a minute, about $26.7 per 1M characters at
    ///   ~900 characters a minute) plus the instructions and text in ($0.60 per 1M) and the transcript out ($2.40 per
    ///   1M), about $1 more; verbatim retries are not included;
    /// - transcription per minute: `whisper-1` $0.006, `gpt-4o-transcribe` $0.006, `gpt-4o-mini-transcribe` $0.003,
    ///   `gpt-transcribe` $0.0045;
    /// - chat (not in the notes; OpenAI list prices to verify): `gpt-4o-mini` $0.15 / $0.60, `gpt-4.1-mini`
    ///   $0.40 / $1.60, `gpt-4o` $2.50 / $10, `gpt-5-mini` $0.25 / $2, `gpt-5.4-mini` (the default text model since
    ///   issue 22) $0.75 / $4.50 per 1M input / output tokens, reasoning tokens billed as output;
    /// - images (not in the notes beyond "token-billed, high quality several times low"; list prices to verify): GPT
    ///   image models $5 per 1M text input tokens and $40 per 1M image output tokens; per picture, when no usage is
    ///   reported, $0.04 (seed 004's DALL-E 3 standard price) to $0.17.
    public static let standard = PriceTable(
        speechUSDPerMillionCharacters: [
            "tts-1": 15, "tts-1-hd": 30, "gpt-4o-mini-tts": 17, "gpt-realtime-2.1-mini": 28, "eleven_multilingual_v2": 120, "eleven_v3": 120,
            "eleven_flash_v2_5": 60, "eleven_flash_v2": 60,
        ],
        transcriptionUSDPerMinute: [
            "whisper-1": 0.006, "gpt-4o-transcribe": 0.006, "gpt-4o-mini-transcribe": 0.003, "gpt-transcribe": 0.0045,
        ],
        chatUSDPerMillionTokens: [
            "gpt-4o-mini": TokenPrice(inputUSDPerMillion: 0.15, outputUSDPerMillion: 0.60),
            "gpt-4.1-mini": TokenPrice(inputUSDPerMillion: 0.40, outputUSDPerMillion: 1.60),
            "gpt-4o": TokenPrice(inputUSDPerMillion: 2.50, outputUSDPerMillion: 10.00),
            "gpt-5-mini": TokenPrice(inputUSDPerMillion: 0.25, outputUSDPerMillion: 2.00),
            "gpt-5.4-mini": TokenPrice(inputUSDPerMillion: 0.75, outputUSDPerMillion: 4.50),
        ],
        imageUSDPerMillionTokens: [
            "gpt-image-1": TokenPrice(inputUSDPerMillion: 5, outputUSDPerMillion: 40),
            "gpt-image-1.5": TokenPrice(inputUSDPerMillion: 5, outputUSDPerMillion: 40),
            "gpt-image-2": TokenPrice(inputUSDPerMillion: 5, outputUSDPerMillion: 40),
        ],
        imageUSDPerImage: ["dall-e-3": 0.04, "gpt-image-1": 0.17, "gpt-image-1.5": 0.17, "gpt-image-2": 0.17])

    /// The estimated cost of speaking `characters` characters with `model`, micro-dollars rounded up.
    public func speechCostMicrodollars(model: String, characters: Int) -> Int64 {
        let price = Self.price(speechUSDPerMillionCharacters, model) ?? 0
        return Self.microdollars(price * Double(max(0, characters)) / 1_000_000)
    }

    /// The estimated cost of transcribing `seconds` of audio with `model`, micro-dollars rounded up.
    public func transcriptionCostMicrodollars(model: String, seconds: Double) -> Int64 {
        let price = Self.price(transcriptionUSDPerMinute, model) ?? 0
        return Self.microdollars(price * max(0, seconds) / 60)
    }

    /// The cost of a chat completion with `model`, micro-dollars rounded up.
    public func chatCostMicrodollars(model: String, promptTokens: Int, completionTokens: Int) -> Int64 {
        Self.tokenCost(Self.tokenPrice(chatUSDPerMillionTokens, model), input: promptTokens, output: completionTokens)
    }

    /// The cost of generated images: by tokens when the provider reported them, else per picture.
    public func imageCostMicrodollars(model: String, images: Int, inputTokens: Int?, outputTokens: Int?) -> Int64 {
        if let inputTokens, let outputTokens, imageUSDPerMillionTokens[model] != nil || imageUSDPerImage[model] == nil {
            return Self.tokenCost(Self.tokenPrice(imageUSDPerMillionTokens, model), input: inputTokens, output: outputTokens)
        }
        return Self.microdollars((Self.price(imageUSDPerImage, model) ?? 0) * Double(max(0, images)))
    }

    /// This table with `overrides` applied: listed models get the given prices, the others keep theirs.
    public func applying(_ overrides: Overrides) -> PriceTable {
        var table = self
        table.speechUSDPerMillionCharacters.merge(overrides.speechUSDPerMillionCharacters ?? [:]) { $1 }
        table.transcriptionUSDPerMinute.merge(overrides.transcriptionUSDPerMinute ?? [:]) { $1 }
        table.chatUSDPerMillionTokens.merge(overrides.chatUSDPerMillionTokens ?? [:]) { $1 }
        table.imageUSDPerMillionTokens.merge(overrides.imageUSDPerMillionTokens ?? [:]) { $1 }
        table.imageUSDPerImage.merge(overrides.imageUSDPerImage ?? [:]) { $1 }
        return table
    }

    /// Operator price overrides, as JSON:
    /// `{"chat_usd_per_million_tokens": {"gpt-5-mini": {"input": 0.25, "output": 2}},
    ///   "speech_usd_per_million_characters": {…}, "transcription_usd_per_minute": {…},
    ///   "image_usd_per_million_tokens": {…}, "image_usd_per_image": {…}}` (every member optional; prices ≥ 0).
    public struct Overrides: Sendable, Equatable, Codable {
        public var speechUSDPerMillionCharacters: [String: Double]?
        public var transcriptionUSDPerMinute: [String: Double]?
        public var chatUSDPerMillionTokens: [String: TokenPrice]?
        public var imageUSDPerMillionTokens: [String: TokenPrice]?
        public var imageUSDPerImage: [String: Double]?

        enum CodingKeys: String, CodingKey {
            case speechUSDPerMillionCharacters = "speech_usd_per_million_characters"
            case transcriptionUSDPerMinute = "transcription_usd_per_minute"
            case chatUSDPerMillionTokens = "chat_usd_per_million_tokens"
            case imageUSDPerMillionTokens = "image_usd_per_million_tokens"
            case imageUSDPerImage = "image_usd_per_image"
        }

        /// Decodes overrides; a negative or non-finite price is an error naming it.
        public static func decode(json: Data) throws -> Overrides {
            let overrides = try JSONDecoder().decode(Overrides.self, from: json)
            var prices: [(String, Double)] = []
            for (name, table) in [
                ("speech_usd_per_million_characters", overrides.speechUSDPerMillionCharacters),
                ("transcription_usd_per_minute", overrides.transcriptionUSDPerMinute), ("image_usd_per_image", overrides.imageUSDPerImage),
            ] {
                prices += (table ?? [:]).map { ("\(name).\($0.key)", $0.value) }
            }
            for (name, table) in [
                ("chat_usd_per_million_tokens", overrides.chatUSDPerMillionTokens),
                ("image_usd_per_million_tokens", overrides.imageUSDPerMillionTokens),
            ] {
                for (model, price) in table ?? [:] {
                    prices += [("\(name).\(model).input", price.inputUSDPerMillion), ("\(name).\(model).output", price.outputUSDPerMillion)]
                }
            }
            if let bad = prices.first(where: { !$0.1.isFinite || $0.1 < 0 }) {
                throw PriceTableError.invalidPrice(bad.0)
            }
            return overrides
        }
    }

    private static func price(_ table: [String: Double], _ model: String) -> Double? {
        table[model] ?? table.values.max()
    }

    private static func tokenPrice(_ table: [String: TokenPrice], _ model: String) -> TokenPrice {
        table[model]
            ?? table.values.max { $0.inputUSDPerMillion + $0.outputUSDPerMillion < $1.inputUSDPerMillion + $1.outputUSDPerMillion }
            ?? TokenPrice(inputUSDPerMillion: 0, outputUSDPerMillion: 0)
    }

    private static func tokenCost(_ price: TokenPrice, input: Int, output: Int) -> Int64 {
        microdollars((price.inputUSDPerMillion * Double(max(0, input)) + price.outputUSDPerMillion * Double(max(0, output))) / 1_000_000)
    }

    /// USD to micro-dollars, rounded up (a tiny epsilon absorbs binary floating-point noise such as 15.000000000000002).
    /// Token counts, characters and seconds come from provider answers: an absurd count gives a clamped cost, not a trap.
    static func microdollars(_ usd: Double) -> Int64 {
        max(0, Int64(clampingRounded: usd * 1_000_000 - 1e-6, .up))
    }
}

/// A price override file that cannot be used.
public enum PriceTableError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidPrice(String)

    public var description: String {
        switch self {
        case .invalidPrice(let name): "price \(name) must be a finite number ≥ 0"
        }
    }
}
