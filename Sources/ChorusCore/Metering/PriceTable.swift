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

    /// The six token prices of a realtime (speech-to-speech) model, USD per million tokens: text and audio in,
    /// their cached input (earlier turns re-sent as context), text and audio out.
    public struct RealtimeTokenPrice: Sendable, Equatable, Codable {
        public var textInput: Double
        public var cachedTextInput: Double
        public var textOutput: Double
        public var audioInput: Double
        public var cachedAudioInput: Double
        public var audioOutput: Double

        public init(textInput: Double, cachedTextInput: Double, textOutput: Double, audioInput: Double, cachedAudioInput: Double, audioOutput: Double) {
            self.textInput = textInput
            self.cachedTextInput = cachedTextInput
            self.textOutput = textOutput
            self.audioInput = audioInput
            self.cachedAudioInput = cachedAudioInput
            self.audioOutput = audioOutput
        }

        enum CodingKeys: String, CodingKey {
            case textInput = "text_input"
            case cachedTextInput = "cached_text_input"
            case textOutput = "text_output"
            case audioInput = "audio_input"
            case cachedAudioInput = "cached_audio_input"
            case audioOutput = "audio_output"
        }

        var all: [(String, Double)] {
            [
                ("text_input", textInput), ("cached_text_input", cachedTextInput), ("text_output", textOutput), ("audio_input", audioInput),
                ("cached_audio_input", cachedAudioInput), ("audio_output", audioOutput),
            ]
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
    /// Realtime phone-call models (`response.done` usage), USD per million tokens, by model id.
    public var realtimeUSDPerMillionTokens: [String: RealtimeTokenPrice]
    /// Phone-call minutes, USD per started minute (the provider rounds each call up), by telephony provider.
    public var telephonyUSDPerMinute: [String: Double]

    public init(
        speechUSDPerMillionCharacters: [String: Double], transcriptionUSDPerMinute: [String: Double],
        chatUSDPerMillionTokens: [String: TokenPrice], imageUSDPerMillionTokens: [String: TokenPrice] = [:],
        imageUSDPerImage: [String: Double] = [:], realtimeUSDPerMillionTokens: [String: RealtimeTokenPrice] = [:],
        telephonyUSDPerMinute: [String: Double] = [:]
    ) {
        self.realtimeUSDPerMillionTokens = realtimeUSDPerMillionTokens
        self.telephonyUSDPerMinute = telephonyUSDPerMinute
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
    ///   `gpt-transcribe` $0.0045; `gpt-live-transcribe` (live audio, issue 21) $0.006, an **estimate**: the notes give
    ///   no price, so it is priced like `gpt-4o-transcribe`, the live model it replaces, rather than metered at $0;
    /// - chat (not in the notes; OpenAI list prices to verify): `gpt-4o-mini` $0.15 / $0.60, `gpt-4.1-mini`
    ///   $0.40 / $1.60, `gpt-4o` $2.50 / $10, `gpt-5-mini` $0.25 / $2, `gpt-5.4-mini` (the default text model since
    ///   issue 22) $0.75 / $4.50 per 1M input / output tokens, reasoning tokens billed as output;
    /// - images (not in the notes beyond "token-billed, high quality several times low"; list prices to verify): GPT
    ///   image models $5 per 1M text input tokens and $40 per 1M image output tokens; per picture, when no usage is
    ///   reported, $0.04 (seed 004's DALL-E 3 standard price) to $0.17;
    /// - realtime phone calls (issue 18; research notes voice-call-anchors §6, "gpt-realtime-1.5 prices", OpenAI's
    ///   realtime-costs page; list prices to verify): `gpt-realtime`, `gpt-realtime-1.5` and `gpt-realtime-2.1` (the
    ///   default call model) audio $32 in, $0.40 cached in, $64 out and text $4 in, $0.40 cached in, $16 out per 1M
    ///   tokens; `gpt-realtime-mini` and `gpt-realtime-2.1-mini` audio $10 / $0.30 / $20 and text $0.60 / $0.06 / $2.40;
    /// - telephony: Twilio Programmable Voice, US outbound to local and mobile numbers, $0.014 per minute, billed per
    ///   started minute (twilio.com/en-us/voice/pricing/us, to verify; other countries cost more: override it).
    public static let standard = PriceTable(
        speechUSDPerMillionCharacters: [
            "tts-1": 15, "tts-1-hd": 30, "gpt-4o-mini-tts": 17, "gpt-realtime-2.1-mini": 28, "eleven_multilingual_v2": 120, "eleven_v3": 120,
            "eleven_flash_v2_5": 60, "eleven_flash_v2": 60,
        ],
        transcriptionUSDPerMinute: [
            "whisper-1": 0.006, "gpt-4o-transcribe": 0.006, "gpt-4o-mini-transcribe": 0.003, "gpt-transcribe": 0.0045,
            "gpt-live-transcribe": 0.006,
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
        imageUSDPerImage: ["dall-e-3": 0.04, "gpt-image-1": 0.17, "gpt-image-1.5": 0.17, "gpt-image-2": 0.17],
        realtimeUSDPerMillionTokens: [
            "gpt-realtime": .standardRealtime, "gpt-realtime-1.5": .standardRealtime, "gpt-realtime-2.1": .standardRealtime,
            "gpt-realtime-mini": .miniRealtime, "gpt-realtime-2.1-mini": .miniRealtime,
        ],
        telephonyUSDPerMinute: ["twilio": 0.014])

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

    /// The cost of one realtime response: each of the six token kinds at its price (text = total − audio, uncached =
    /// all − cached; inconsistent counts are clamped, never negative), micro-dollars rounded up.
    public func realtimeCostMicrodollars(model: String, consumption: Consumption) -> Int64 {
        let price = realtimeUSDPerMillionTokens[model] ?? realtimeUSDPerMillionTokens.values.max { $0.audioOutput < $1.audioOutput }
        guard let price else { return 0 }
        let input = max(0, consumption.inputTokens)
        let audioIn = min(input, max(0, consumption.audioInputTokens))
        let cached = min(input, max(0, consumption.cachedInputTokens))
        let cachedAudio = min(cached, audioIn, max(0, consumption.cachedAudioInputTokens))
        let cachedText = min(cached - cachedAudio, input - audioIn)
        let textIn = input - audioIn - cachedText
        let output = max(0, consumption.outputTokens)
        let audioOut = min(output, max(0, consumption.audioOutputTokens))
        let usd =
            (Double(textIn) * price.textInput + Double(cachedText) * price.cachedTextInput + Double(audioIn - cachedAudio) * price.audioInput
                + Double(cachedAudio) * price.cachedAudioInput + Double(output - audioOut) * price.textOutput + Double(audioOut) * price.audioOutput)
            / 1_000_000
        return Self.microdollars(usd)
    }

    /// Minutes a phone call is billed for: every started minute (61 s is 2 minutes; 0 s, an unanswered call, is none).
    public static func billedMinutes(seconds: Double) -> Int {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        // A provider's absurd figure is clamped to a year before the conversion, which therefore cannot trap.
        return Int((min(seconds, 86_400 * 366) / 60).rounded(.up))
    }

    /// The cost of a phone call of `seconds` on `provider`: its started minutes at the provider's price per minute.
    public func telephonyCostMicrodollars(provider: String, seconds: Double) -> Int64 {
        let price = Self.price(telephonyUSDPerMinute, provider) ?? 0
        return Self.microdollars(price * Double(Self.billedMinutes(seconds: seconds)))
    }

    /// What a call of at most `durationSeconds` is reserved against the Calls budget before it is placed: its
    /// telephony minutes for the whole duration, and the realtime model hearing the callee for the whole duration
    /// (1 audio token per 100 ms) and speaking half of it (1 audio token per 50 ms), uncached. An estimate, not a bound:
    /// a long call re-sends its conversation as (mostly cached) input on every turn.
    public func callEstimateMicrodollars(model: String, telephonyProvider: String, durationSeconds: Int) -> Int64 {
        let seconds = min(max(0, durationSeconds), 86_400)
        let consumption = Consumption(
            inputTokens: seconds * 10, outputTokens: seconds * 10, audioInputTokens: seconds * 10, audioOutputTokens: seconds * 10)
        let (total, overflow) = realtimeCostMicrodollars(model: model, consumption: consumption)
            .addingReportingOverflow(telephonyCostMicrodollars(provider: telephonyProvider, seconds: Double(seconds)))
        return overflow ? Int64.max : total
    }

    /// This table with `overrides` applied: listed models get the given prices, the others keep theirs.
    public func applying(_ overrides: Overrides) -> PriceTable {
        var table = self
        table.speechUSDPerMillionCharacters.merge(overrides.speechUSDPerMillionCharacters ?? [:]) { $1 }
        table.transcriptionUSDPerMinute.merge(overrides.transcriptionUSDPerMinute ?? [:]) { $1 }
        table.chatUSDPerMillionTokens.merge(overrides.chatUSDPerMillionTokens ?? [:]) { $1 }
        table.imageUSDPerMillionTokens.merge(overrides.imageUSDPerMillionTokens ?? [:]) { $1 }
        table.imageUSDPerImage.merge(overrides.imageUSDPerImage ?? [:]) { $1 }
        table.realtimeUSDPerMillionTokens.merge(overrides.realtimeUSDPerMillionTokens ?? [:]) { $1 }
        table.telephonyUSDPerMinute.merge(overrides.telephonyUSDPerMinute ?? [:]) { $1 }
        return table
    }

    /// Operator price overrides, as JSON:
    /// `{"chat_usd_per_million_tokens": {"gpt-5-mini": {"input": 0.25, "output": 2}},
    ///   "speech_usd_per_million_characters": {…}, "transcription_usd_per_minute": {…},
    ///   "image_usd_per_million_tokens": {…}, "image_usd_per_image": {…},
    ///   "realtime_usd_per_million_tokens": {"gpt-realtime-2.1": {"text_input": 4, "cached_text_input": 0.4, "text_output": 16,
    ///   "audio_input": 32, "cached_audio_input": 0.4, "audio_output": 64}}, "telephony_usd_per_minute": {"twilio": 0.014}}`
    ///   (every member optional; prices ≥ 0).
    public struct Overrides: Sendable, Equatable, Codable {
        public var speechUSDPerMillionCharacters: [String: Double]?
        public var transcriptionUSDPerMinute: [String: Double]?
        public var chatUSDPerMillionTokens: [String: TokenPrice]?
        public var imageUSDPerMillionTokens: [String: TokenPrice]?
        public var imageUSDPerImage: [String: Double]?
        public var realtimeUSDPerMillionTokens: [String: RealtimeTokenPrice]?
        public var telephonyUSDPerMinute: [String: Double]?

        enum CodingKeys: String, CodingKey {
            case speechUSDPerMillionCharacters = "speech_usd_per_million_characters"
            case transcriptionUSDPerMinute = "transcription_usd_per_minute"
            case chatUSDPerMillionTokens = "chat_usd_per_million_tokens"
            case imageUSDPerMillionTokens = "image_usd_per_million_tokens"
            case imageUSDPerImage = "image_usd_per_image"
            case realtimeUSDPerMillionTokens = "realtime_usd_per_million_tokens"
            case telephonyUSDPerMinute = "telephony_usd_per_minute"
        }

        /// Decodes overrides; a negative or non-finite price is an error naming it.
        public static func decode(json: Data) throws -> Overrides {
            let overrides = try JSONDecoder().decode(Overrides.self, from: json)
            var prices: [(String, Double)] = []
            for (name, table) in [
                ("speech_usd_per_million_characters", overrides.speechUSDPerMillionCharacters),
                ("transcription_usd_per_minute", overrides.transcriptionUSDPerMinute), ("image_usd_per_image", overrides.imageUSDPerImage),
                ("telephony_usd_per_minute", overrides.telephonyUSDPerMinute),
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
            for (model, price) in overrides.realtimeUSDPerMillionTokens ?? [:] {
                prices += price.all.map { ("realtime_usd_per_million_tokens.\(model).\($0.0)", $0.1) }
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

extension PriceTable.RealtimeTokenPrice {
    /// `gpt-realtime` (and its 1.5 and 2.1 releases).
    public static let standardRealtime = PriceTable.RealtimeTokenPrice(
        textInput: 4, cachedTextInput: 0.40, textOutput: 16, audioInput: 32, cachedAudioInput: 0.40, audioOutput: 64)
    /// `gpt-realtime-mini` (and its 2.1 release).
    public static let miniRealtime = PriceTable.RealtimeTokenPrice(
        textInput: 0.60, cachedTextInput: 0.06, textOutput: 2.40, audioInput: 10, cachedAudioInput: 0.30, audioOutput: 20)
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
