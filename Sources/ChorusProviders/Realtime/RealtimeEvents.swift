import Foundation
import NIOCore

/// The session a call's realtime model runs with (`session.update`, schema `RealtimeSessionCreateRequestGA`).
///
/// Telephone audio both ways (`audio/pcmu`, no transcoding), the persona's voice, server-side turn detection that
/// lets the callee interrupt, and transcription of the callee. There is no `temperature`: the GA session has none.
public struct RealtimeSessionConfiguration: Sendable, Equatable, Encodable {
    public var model: String
    public var instructions: String
    public var voice: String
    /// The model transcribing the callee (`audio.input.transcription.model`); `nil` turns transcription off.
    public var transcriptionModel: String?
    /// Server VAD: how loud speech must be (0–1), the audio kept before it, and the silence that ends a turn.
    public var vadThreshold: Double
    public var prefixPaddingMilliseconds: Int
    public var silenceDurationMilliseconds: Int
    /// Whether the model answers the end of each callee turn by itself (`create_response`). Off while the call's first
    /// words wait for answering-machine detection, so a machine's greeting gets no answer; the bridge turns it on
    /// (``RealtimeClientEvent/enableTurnResponses(_:)``) once they are released.
    public var respondsToTurns: Bool
    /// The function tools the model may call (`tools`, with `tool_choice` `auto`): a call's `opt_out`.
    public var tools: [RealtimeFunctionTool]

    public init(
        model: String, instructions: String, voice: String, transcriptionModel: String?, vadThreshold: Double = 0.5,
        prefixPaddingMilliseconds: Int = 300, silenceDurationMilliseconds: Int = 500, respondsToTurns: Bool = true,
        tools: [RealtimeFunctionTool] = []
    ) {
        self.tools = tools
        self.respondsToTurns = respondsToTurns
        self.model = model
        self.instructions = instructions
        self.voice = voice
        self.transcriptionModel = transcriptionModel
        self.vadThreshold = vadThreshold
        self.prefixPaddingMilliseconds = prefixPaddingMilliseconds
        self.silenceDurationMilliseconds = silenceDurationMilliseconds
    }

    enum CodingKeys: String, CodingKey {
        case type
        case model
        case outputModalities = "output_modalities"
        case instructions
        case audio
        case tools
        case toolChoice = "tool_choice"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("realtime", forKey: .type)
        try container.encode(model, forKey: .model)
        try container.encode(["audio"], forKey: .outputModalities)
        try container.encode(instructions, forKey: .instructions)
        let format = AudioFormat(type: "audio/pcmu")
        try container.encode(
            Audio(
                input: Input(
                    format: format, transcription: transcriptionModel.map(Transcription.init(model:)),
                    turnDetection: turnDetection(respondsToTurns: respondsToTurns)
                ),
                output: Output(format: format, voice: voice)
            ),
            forKey: .audio)
        if !tools.isEmpty {
            try container.encode(tools, forKey: .tools)
            try container.encode("auto", forKey: .toolChoice)
        }
    }

    /// Server VAD; while the model does not answer turns by itself (first words held, the disclosure playing, a
    /// message on a machine, a goodbye) the callee's speech does not interrupt the response either.
    func turnDetection(respondsToTurns: Bool) -> TurnDetection {
        TurnDetection(
            type: "server_vad", threshold: vadThreshold, prefixPaddingMs: prefixPaddingMilliseconds,
            silenceDurationMs: silenceDurationMilliseconds, createResponse: respondsToTurns, interruptResponse: respondsToTurns)
    }

    struct Audio: Encodable {
        let input: Input
        let output: Output

        enum CodingKeys: String, CodingKey {
            case input
            case output
        }
    }

    struct Input: Encodable {
        let format: AudioFormat
        let transcription: Transcription?
        let turnDetection: TurnDetection

        enum CodingKeys: String, CodingKey {
            case format
            case transcription
            case turnDetection = "turn_detection"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(format, forKey: .format)
            try container.encodeIfPresent(transcription, forKey: .transcription)
            try container.encode(turnDetection, forKey: .turnDetection)
        }
    }

    struct Output: Encodable {
        let format: AudioFormat
        let voice: String

        enum CodingKeys: String, CodingKey {
            case format
            case voice
        }
    }

    struct AudioFormat: Encodable {
        let type: String

        enum CodingKeys: String, CodingKey {
            case type
        }
    }

    struct Transcription: Encodable {
        let model: String

        enum CodingKeys: String, CodingKey {
            case model
        }
    }

    struct TurnDetection: Encodable {
        let type: String
        let threshold: Double
        let prefixPaddingMs: Int
        let silenceDurationMs: Int
        let createResponse: Bool
        let interruptResponse: Bool

        enum CodingKeys: String, CodingKey {
            case type
            case threshold
            case prefixPaddingMs = "prefix_padding_ms"
            case silenceDurationMs = "silence_duration_ms"
            case createResponse = "create_response"
            case interruptResponse = "interrupt_response"
        }
    }
}

/// A function the model may call (the spec's `RealtimeFunctionTool`), without parameters.
public struct RealtimeFunctionTool: Sendable, Equatable, Encodable {
    public var name: String
    public var description: String

    public init(name: String, description: String) {
        self.name = name
        self.description = description
    }

    enum CodingKeys: String, CodingKey {
        case type
        case name
        case description
        case parameters
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode("function", forKey: .type)
        try container.encode(name, forKey: .name)
        try container.encode(description, forKey: .description)
        try container.encode(NoParameters(), forKey: .parameters)
    }

    /// `{"type": "object", "properties": {}, "additionalProperties": false}`.
    struct NoParameters: Encodable {
        enum CodingKeys: String, CodingKey {
            case type
            case properties
            case additionalProperties
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode("object", forKey: .type)
            try container.encode([String: String](), forKey: .properties)
            try container.encode(false, forKey: .additionalProperties)
        }
    }
}

/// The client events the bridge sends (members of the spec's `RealtimeClientEvent`).
public enum RealtimeClientEvent {
    /// `session.update` with the call's session.
    public static func sessionUpdate(_ session: RealtimeSessionConfiguration) -> String {
        encode(SessionUpdate(type: "session.update", session: session))
    }

    /// `response.create`: the model speaks (the first greeting; later turns start by themselves through server VAD).
    public static func responseCreate() -> String { #"{"type":"response.create"}"# }

    /// `response.create` with instructions for this response only (the session's stay in force otherwise).
    public static func responseCreate(instructions: String) -> String {
        encode(ResponseCreate(type: "response.create", response: .init(instructions: instructions)))
    }

    /// `session.update` of a speech session (``OpenAIRealtimeSpeechSynthesizer``): audio out only as 16-bit PCM at
    /// `sampleRate`, nothing listened to (`turn_detection: null`), the voice (a built-in name, or a custom `voice_…` id
    /// sent as `{id}`), and `reasoning.effort` for the reasoning models.
    public static func speechSessionUpdate(instructions: String, voice: String, sampleRate: Int, reasoningEffort: String?) -> String {
        encode(
            SpeechSessionUpdate(
                type: "session.update",
                session: .init(
                    instructions: instructions, voice: voice.hasPrefix("voice_") ? .custom(id: voice) : .builtIn(voice), sampleRate: sampleRate,
                    reasoning: reasoningEffort.map(SpeechSessionUpdate.Reasoning.init(effort:)))))
    }

    /// `conversation.item.create` with a user message of `text` (`input_text`).
    public static func userText(_ text: String) -> String {
        encode(UserMessage(type: "conversation.item.create", item: .init(type: "message", role: "user", content: [.init(type: "input_text", text: text)])))
    }

    /// `response.cancel`: stops the response in progress.
    public static func responseCancel() -> String { #"{"type":"response.cancel"}"# }

    /// `session.update` that turns on the model's own answers to the callee's turns (turn detection's
    /// `create_response`), everything else of `session` unchanged.
    public static func enableTurnResponses(_ session: RealtimeSessionConfiguration) -> String {
        encode(
            TurnDetectionUpdate(
                type: "session.update",
                session: .init(type: "realtime", audio: .init(input: .init(turnDetection: session.turnDetection(respondsToTurns: true))))))
    }

    struct ResponseCreate: Encodable {
        let type: String
        let response: Parameters

        struct Parameters: Encodable {
            let instructions: String

            enum CodingKeys: String, CodingKey {
                case instructions
            }
        }

        enum CodingKeys: String, CodingKey {
            case type
            case response
        }
    }

    struct TurnDetectionUpdate: Encodable {
        let type: String
        let session: Session

        struct Session: Encodable {
            let type: String
            let audio: Audio

            enum CodingKeys: String, CodingKey {
                case type
                case audio
            }
        }

        struct Audio: Encodable {
            let input: Input

            enum CodingKeys: String, CodingKey {
                case input
            }
        }

        struct Input: Encodable {
            let turnDetection: RealtimeSessionConfiguration.TurnDetection

            enum CodingKeys: String, CodingKey {
                case turnDetection = "turn_detection"
            }
        }

        enum CodingKeys: String, CodingKey {
            case type
            case session
        }
    }

    /// `session.update` that turns the model's own answers to the callee's turns off again (after an opt-out).
    public static func disableTurnResponses(_ session: RealtimeSessionConfiguration) -> String {
        encode(
            TurnDetectionUpdate(
                type: "session.update",
                session: .init(type: "realtime", audio: .init(input: .init(turnDetection: session.turnDetection(respondsToTurns: false))))))
    }

    /// `conversation.item.create` of a `function_call_output` item: what the function `callID` returned.
    public static func functionCallOutput(callID: String, output: String) -> String {
        encode(ItemCreate(type: "conversation.item.create", item: .init(type: "function_call_output", callID: callID, output: output)))
    }

    struct ItemCreate: Encodable {
        let type: String
        let item: Item

        struct Item: Encodable {
            let type: String
            let callID: String
            let output: String

            enum CodingKeys: String, CodingKey {
                case type
                case callID = "call_id"
                case output
            }
        }

        enum CodingKeys: String, CodingKey {
            case type
            case item
        }
    }

    /// `conversation.item.truncate`: the callee heard `audioEndMs` of the item's audio.
    public static func truncate(itemID: String, audioEndMs: Int) -> String {
        encode(Truncate(type: "conversation.item.truncate", itemID: itemID, contentIndex: 0, audioEndMs: audioEndMs))
    }

    /// `input_audio_buffer.append` with base64 audio, written straight into a buffer (the payload is relayed as is).
    public static func append(audio: ByteBuffer, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = MediaWebSocket.messageBuffer(capacity: 48 + audio.readableBytes, allocator: allocator)
        buffer.writeStaticString("{\"type\":\"input_audio_buffer.append\",\"audio\":\"")
        buffer.writeImmutableBuffer(audio)
        buffer.writeStaticString("\"}")
        return buffer
    }

    private static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // These values always encode (strings, numbers and fixed structures).
        return (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "{}"
    }

    struct SessionUpdate: Encodable {
        let type: String
        let session: RealtimeSessionConfiguration

        enum CodingKeys: String, CodingKey {
            case type
            case session
        }
    }

    struct SpeechSessionUpdate: Encodable {
        let type: String
        let session: Session

        enum CodingKeys: String, CodingKey {
            case type, session
        }

        enum Voice: Encodable {
            case builtIn(String)
            case custom(id: String)

            enum CustomKeys: String, CodingKey {
                case id
            }

            func encode(to encoder: any Encoder) throws {
                switch self {
                case .builtIn(let name):
                    var container = encoder.singleValueContainer()
                    try container.encode(name)
                case .custom(let id):
                    var container = encoder.container(keyedBy: CustomKeys.self)
                    try container.encode(id, forKey: .id)
                }
            }
        }

        struct Reasoning: Encodable {
            let effort: String

            enum CodingKeys: String, CodingKey {
                case effort
            }
        }

        /// The `session` (`RealtimeSessionCreateRequestGA`).
        struct Session: Encodable {
            let instructions: String
            let voice: Voice
            let sampleRate: Int
            let reasoning: Reasoning?

            enum CodingKeys: String, CodingKey {
                case type, instructions, audio, reasoning
                case outputModalities = "output_modalities"
            }

            enum AudioKeys: String, CodingKey {
                case input, output
            }

            enum InputKeys: String, CodingKey {
                case turnDetection = "turn_detection"
            }

            enum OutputKeys: String, CodingKey {
                case format, voice
            }

            enum FormatKeys: String, CodingKey {
                case type, rate
            }

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode("realtime", forKey: .type)
                try container.encode(["audio"], forKey: .outputModalities)
                try container.encode(instructions, forKey: .instructions)
                var audio = container.nestedContainer(keyedBy: AudioKeys.self, forKey: .audio)
                var input = audio.nestedContainer(keyedBy: InputKeys.self, forKey: .input)
                try input.encodeNil(forKey: .turnDetection)
                var output = audio.nestedContainer(keyedBy: OutputKeys.self, forKey: .output)
                var format = output.nestedContainer(keyedBy: FormatKeys.self, forKey: .format)
                try format.encode("audio/pcm", forKey: .type)
                try format.encode(sampleRate, forKey: .rate)
                try output.encode(voice, forKey: .voice)
                try container.encodeIfPresent(reasoning, forKey: .reasoning)
            }
        }
    }

    struct UserMessage: Encodable {
        let type: String
        let item: Item

        enum CodingKeys: String, CodingKey {
            case type, item
        }

        struct Item: Encodable {
            let type: String
            let role: String
            let content: [Content]

            enum CodingKeys: String, CodingKey {
                case type, role, content
            }
        }

        struct Content: Encodable {
            let type: String
            let text: String

            enum CodingKeys: String, CodingKey {
                case type, text
            }
        }
    }

    struct Truncate: Encodable {
        let type: String
        let itemID: String
        let contentIndex: Int
        let audioEndMs: Int

        enum CodingKeys: String, CodingKey {
            case type
            case itemID = "item_id"
            case contentIndex = "content_index"
            case audioEndMs = "audio_end_ms"
        }
    }
}

/// The server events the bridge acts on (members of the spec's `RealtimeServerEvent`); the rest are `other`.
public enum RealtimeServerEvent: Sendable, Equatable {
    case sessionCreated
    case sessionUpdated
    /// `response.output_audio.delta`: base64 audio (a slice of the received bytes) of an assistant item.
    case audioDelta(itemID: String?, delta: ByteBuffer)
    /// An event of a known type that cannot be used as it is (an audio delta that is not base64), with the reason.
    case malformed(type: String, reason: String)
    /// `input_audio_buffer.speech_started`.
    case speechStarted
    /// `input_audio_buffer.speech_stopped`.
    case speechStopped
    /// `conversation.item.input_audio_transcription.completed`: what the callee said.
    case calleeTranscript(itemID: String?, text: String)
    /// `response.output_audio_transcript.done`: what the assistant said (`nil` when the event has no transcript).
    case assistantTranscript(itemID: String?, text: String?)
    /// `response.output_audio_transcript.delta`: a piece of what the assistant is saying.
    case assistantTranscriptDelta(itemID: String?, text: String)
    /// `response.done`: the response's outcome and usage.
    case responseDone(RealtimeResponseOutcome)
    /// `response.created`: a response started.
    case responseCreated
    /// `response.function_call_arguments.done`: the model called the function `name` (arguments as JSON text).
    case functionCall(callID: String, name: String, arguments: String)
    /// `error`.
    case error(RealtimeErrorDetail)
    case other(type: String)

    /// Parses one text message, or `nil` when it is not a realtime event.
    public static func parse(_ text: ByteBuffer) -> RealtimeServerEvent? {
        let scanned = text.withUnsafeReadableBytes { raw -> (type: String, itemID: String?, delta: Range<Int>?, decoded: RealtimeServerEvent?)? in
            let bytes = raw.bindMemory(to: UInt8.self)
            var type: String?
            var itemID: String?
            var delta: Range<Int>?
            let base = bytes.baseAddress
            let valid = JSONMemberScanner.scan(bytes, maxDepth: 1) { member in
                if member.keyIs("type") {
                    type = member.string
                } else if member.keyIs("item_id") {
                    itemID = member.string
                } else if member.keyIs("delta"), member.isBase64, let base {
                    let start = member.value.baseAddress.map { $0 - base } ?? 0
                    delta = start..<(start + member.value.count)
                }
                return true
            }
            guard valid, let type else { return nil }
            // The rare events with free text or nested objects are decoded in full.
            let decoded: RealtimeServerEvent?
            switch type {
            case "conversation.item.input_audio_transcription.completed":
                let event = try? JSONDecoder().decode(Transcript.self, from: Data(bytes))
                decoded = .calleeTranscript(itemID: itemID, text: event?.transcript ?? "")
            case "response.output_audio_transcript.done":
                let event = try? JSONDecoder().decode(Transcript.self, from: Data(bytes))
                decoded = .assistantTranscript(itemID: itemID, text: event?.transcript)
            case "response.output_audio_transcript.delta":
                let event = try? JSONDecoder().decode(TranscriptDelta.self, from: Data(bytes))
                decoded = .assistantTranscriptDelta(itemID: itemID, text: event?.delta ?? "")
            case "response.done":
                let event = try? JSONDecoder().decode(ResponseDone.self, from: Data(bytes))
                decoded = .responseDone(event?.response ?? RealtimeResponseOutcome(status: nil))
            case "response.function_call_arguments.done":
                // A call without its id or name cannot be answered: it is ignored like an unknown event.
                guard let event = try? JSONDecoder().decode(FunctionCallDone.self, from: Data(bytes)) else { return (type, itemID, delta, .other(type: type)) }
                decoded = .functionCall(callID: event.callID, name: event.name, arguments: event.arguments ?? "")
            case "error":
                let event = try? JSONDecoder().decode(ErrorEvent.self, from: Data(bytes))
                decoded = .error(event?.error ?? RealtimeErrorDetail(type: "unknown", code: nil, message: "Unreadable error event"))
            default:
                decoded = nil
            }
            return (type, itemID, delta, decoded)
        }
        guard let scanned else { return nil }
        if let decoded = scanned.decoded { return decoded }
        switch scanned.type {
        case "response.output_audio.delta":
            guard let delta = scanned.delta, let slice = text.getSlice(at: text.readerIndex + delta.lowerBound, length: delta.count) else {
                return .malformed(type: scanned.type, reason: "an audio delta that is not base64")
            }
            return .audioDelta(itemID: scanned.itemID, delta: slice)
        case "input_audio_buffer.speech_started": return .speechStarted
        case "input_audio_buffer.speech_stopped": return .speechStopped
        case "session.created": return .sessionCreated
        case "session.updated": return .sessionUpdated
        case "response.created": return .responseCreated
        default: return .other(type: scanned.type)
        }
    }

    struct Transcript: Decodable {
        let transcript: String

        enum CodingKeys: String, CodingKey {
            case transcript
        }
    }

    struct FunctionCallDone: Decodable {
        let callID: String
        let name: String
        let arguments: String?

        enum CodingKeys: String, CodingKey {
            case callID = "call_id"
            case name
            case arguments
        }
    }

    struct TranscriptDelta: Decodable {
        let delta: String

        enum CodingKeys: String, CodingKey {
            case delta
        }
    }

    struct ResponseDone: Decodable {
        let response: RealtimeResponseOutcome

        enum CodingKeys: String, CodingKey {
            case response
        }
    }

    struct ErrorEvent: Decodable {
        let error: RealtimeErrorDetail

        enum CodingKeys: String, CodingKey {
            case error
        }
    }
}

/// The `error` object of a realtime `error` event.
public struct RealtimeErrorDetail: Sendable, Equatable, Decodable {
    public let type: String
    public let code: String?
    public let message: String

    /// Client-side mistakes the session survives (a cancel with nothing to cancel, a response already running…);
    /// anything else (`server_error`, authentication, rate limits, unknown codes) ends the call.
    public static let recoverableCodes: Set<String> = [
        "response_cancel_not_active", "conversation_already_has_active_response", "input_audio_buffer_commit_empty",
    ]

    /// Whether the call can go on after this error.
    public var isRecoverable: Bool { code.map { Self.recoverableCodes.contains($0) } ?? false }

    public init(type: String, code: String?, message: String) {
        self.type = type
        self.code = code
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case type
        case code
        case message
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decodeIfPresent(String.self, forKey: .type) ?? "unknown"
        code = try container.decodeIfPresent(String.self, forKey: .code)
        message = try container.decodeIfPresent(String.self, forKey: .message) ?? ""
    }
}

/// The `response` of a `response.done` event: how the response ended and what it used.
public struct RealtimeResponseOutcome: Sendable, Equatable, Decodable {
    /// `completed`, `cancelled`, `failed` or `incomplete`.
    public var status: String?
    /// Why an `incomplete` or `cancelled` response stopped (`status_details.reason`, e.g. `max_output_tokens`).
    public var reason: String?
    /// What failed a `failed` response (`status_details.error`).
    public var error: RealtimeErrorDetail?
    /// The tokens used, when reported.
    public var usage: RealtimeUsage?

    public init(status: String?, reason: String? = nil, error: RealtimeErrorDetail? = nil, usage: RealtimeUsage? = nil) {
        self.status = status
        self.reason = reason
        self.error = error
        self.usage = usage
    }

    enum CodingKeys: String, CodingKey {
        case status, usage
        case statusDetails = "status_details"
    }

    enum StatusDetailsKeys: String, CodingKey {
        case reason, error
    }

    /// Every member is optional and read leniently: a member that does not fit is dropped, never trusted or trapped on.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try? container.decodeIfPresent(String.self, forKey: .status)
        let details = try? container.nestedContainer(keyedBy: StatusDetailsKeys.self, forKey: .statusDetails)
        reason = (try? details?.decodeIfPresent(String.self, forKey: .reason)) ?? nil
        error = (try? details?.decodeIfPresent(RealtimeErrorDetail.self, forKey: .error)) ?? nil
        usage = try? container.decodeIfPresent(RealtimeUsage.self, forKey: .usage)
    }
}

/// The `usage` of a realtime response (`response.done`, the spec's `RealtimeResponse.usage`): tokens in and out, by
/// modality, with the cached part of the input (a subset of the input tokens: earlier turns re-sent as context).
public struct RealtimeUsage: Sendable, Equatable, Decodable {
    public var inputTokens: Int?
    public var outputTokens: Int?
    /// `input_token_details.text_tokens` / `audio_tokens`: the input by modality (cached tokens included).
    public var inputTextTokens: Int?
    public var inputAudioTokens: Int?
    /// `input_token_details.cached_tokens`, and its split `cached_tokens_details.text_tokens` / `audio_tokens`.
    public var cachedTokens: Int?
    public var cachedTextTokens: Int?
    public var cachedAudioTokens: Int?
    /// `output_token_details.text_tokens`: the text (transcript) the model produced.
    public var outputTextTokens: Int?
    /// `output_token_details.audio_tokens`: the audio the model produced.
    public var outputAudioTokens: Int?

    public init(
        inputTokens: Int? = nil, outputTokens: Int? = nil, inputTextTokens: Int? = nil, inputAudioTokens: Int? = nil, cachedTokens: Int? = nil,
        cachedTextTokens: Int? = nil, cachedAudioTokens: Int? = nil, outputTextTokens: Int? = nil, outputAudioTokens: Int? = nil
    ) {
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.inputTextTokens = inputTextTokens
        self.inputAudioTokens = inputAudioTokens
        self.cachedTokens = cachedTokens
        self.cachedTextTokens = cachedTextTokens
        self.cachedAudioTokens = cachedAudioTokens
        self.outputTextTokens = outputTextTokens
        self.outputAudioTokens = outputAudioTokens
    }

    enum CodingKeys: String, CodingKey {
        case inputTokens = "input_tokens"
        case outputTokens = "output_tokens"
        case inputTokenDetails = "input_token_details"
        case outputTokenDetails = "output_token_details"
    }

    enum DetailsKeys: String, CodingKey {
        case textTokens = "text_tokens"
        case audioTokens = "audio_tokens"
        case cachedTokens = "cached_tokens"
        case cachedTokensDetails = "cached_tokens_details"
    }

    /// Numbers that do not fit an `Int`, or are negative, are dropped.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func count<K: CodingKey>(_ box: KeyedDecodingContainer<K>?, _ key: K) -> Int? {
            guard let value = (try? box?.decodeIfPresent(Int.self, forKey: key)) ?? nil, value >= 0 else { return nil }
            return value
        }
        inputTokens = count(container, .inputTokens)
        outputTokens = count(container, .outputTokens)
        let input = try? container.nestedContainer(keyedBy: DetailsKeys.self, forKey: .inputTokenDetails)
        inputTextTokens = count(input, .textTokens)
        inputAudioTokens = count(input, .audioTokens)
        cachedTokens = count(input, .cachedTokens)
        let cached = try? input?.nestedContainer(keyedBy: DetailsKeys.self, forKey: .cachedTokensDetails)
        cachedTextTokens = count(cached, .textTokens)
        cachedAudioTokens = count(cached, .audioTokens)
        let output = try? container.nestedContainer(keyedBy: DetailsKeys.self, forKey: .outputTokenDetails)
        outputTextTokens = count(output, .textTokens)
        outputAudioTokens = count(output, .audioTokens)
    }
}
