import Foundation

/// A client error the emulator reports in an `error` event (`RealtimeServerEventError.error`).
struct RealtimeRequestError: Error, Equatable {
    var type = "invalid_request_error"
    let code: String?
    let message: String
    let param: String?

    static func unknownParameter(_ path: String) -> RealtimeRequestError {
        RealtimeRequestError(code: "unknown_parameter", message: "Unknown parameter: '\(path)'.", param: path)
    }

    static func missing(_ path: String) -> RealtimeRequestError {
        RealtimeRequestError(code: "missing_required_parameter", message: "Missing required parameter: '\(path)'.", param: path)
    }

    static func invalidType(_ path: String, expected: String, got value: RealtimeJSON) -> RealtimeRequestError {
        let article = value.typeName == "integer" || value.typeName == "object" || value.typeName == "array" ? "an" : "a"
        return RealtimeRequestError(
            code: "invalid_type",
            message: "Invalid type for '\(path)': expected \(expected), but got \(article) \(value.typeName) instead.", param: path)
    }

    static func invalidValue(_ path: String, _ message: String) -> RealtimeRequestError {
        RealtimeRequestError(code: "invalid_value", message: message, param: path)
    }
}

/// Server-side turn detection as the emulator runs it.
struct RealtimeTurnDetection: Equatable {
    /// `semantic_vad` (emulated with the energy detector and an eagerness-dependent silence).
    var semantic: Bool
    var threshold: Double
    var prefixPaddingMs: Int
    var silenceDurationMs: Int
    var createResponse: Bool
    var interruptResponse: Bool
}

/// The GA session of one connection: the object shown in `session.created` / `session.updated`, and the settings the
/// emulator derives from it. `session.update` is validated like OpenAI validates it (`RealtimeSessionCreateRequestGA`)
/// and then merged: `audio`, `audio.input`, `audio.output` and a `turn_detection` of the same type merge member by
/// member; every other member is replaced.
struct RealtimeSessionConfiguration {
    /// The built-in voices (`VoiceIdsShared`).
    static let voices = ["alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse", "marin", "cedar"]
    static let defaultInstructions =
        "You are a helpful, friendly assistant. Keep your answers short and speak naturally, like on a phone call."

    private static let sessionKeys: Set<String> = [
        "type", "output_modalities", "model", "instructions", "audio", "include", "tracing", "tools", "tool_choice",
        "parallel_tool_calls", "reasoning", "max_output_tokens", "truncation", "prompt",
    ]
    private static let formats: Set<String> = ["audio/pcm", "audio/pcmu", "audio/pcma"]

    private(set) var object: RealtimeObject
    private(set) var inputFormat = RealtimeAudioFormat.pcm
    private(set) var outputFormat = RealtimeAudioFormat.pcm
    private(set) var turnDetection: RealtimeTurnDetection?
    private(set) var transcribes = false
    private(set) var voice = "alloy"
    private(set) var textOnly = false
    private(set) var instructions = RealtimeSessionConfiguration.defaultInstructions
    /// The session's function tools (`tools` of type `function`), unless `tool_choice` is `none`.
    private(set) var functionTools: [RealtimeFunctionToolSpec] = []
    /// A transcription session (opened with `?intent=transcription`): `session.type` is `transcription`, only
    /// `audio.input` and `include` are configurable, and no responses are made.
    private(set) var isTranscription = false
    /// The transcription model (`audio.input.transcription.model`), if any.
    var transcriptionModel: String? { object["audio"]?.object?["input"]?.object?["transcription"]?.object?["model"]?.string }
    /// The transcription language hint (`audio.input.transcription.language`), if any.
    var transcriptionLanguage: String? { object["audio"]?.object?["input"]?.object?["transcription"]?.object?["language"]?.string }

    /// The GA defaults of a new transcription session (`RealtimeTranscriptionSessionCreateResponseGA`): PCM input,
    /// server VAD, no transcription model until `session.update` names one.
    static func transcription(id: String, expiresAt: Int) -> RealtimeSessionConfiguration {
        var session = RealtimeSessionConfiguration(id: id, model: "", expiresAt: expiresAt)
        var object = RealtimeObject()
        object["type"] = "transcription"
        object["object"] = "realtime.transcription_session"
        object["id"] = .string(id)
        object["expires_at"] = .int(expiresAt)
        object["include"] = []
        object["audio"] = [
            "input": [
                "format": RealtimeAudioFormat.pcm.json,
                "turn_detection": Self.defaultTurnDetection("server_vad"),
            ]
        ]
        session.object = object
        session.isTranscription = true
        session.derive()
        return session
    }

    /// The GA defaults for a new session.
    init(id: String, model: String, expiresAt: Int) {
        var object = RealtimeObject()
        object["type"] = "realtime"
        object["object"] = "realtime.session"
        object["id"] = .string(id)
        object["model"] = .string(model)
        object["output_modalities"] = ["audio"]
        object["instructions"] = .string(Self.defaultInstructions)
        object["tools"] = []
        object["tool_choice"] = "auto"
        object["max_output_tokens"] = "inf"
        object["tracing"] = .null
        object["truncation"] = "auto"
        object["prompt"] = .null
        object["expires_at"] = .int(expiresAt)
        object["audio"] = [
            "input": [
                "format": RealtimeAudioFormat.pcm.json,
                "turn_detection": Self.defaultTurnDetection("server_vad"),
            ],
            "output": [
                "format": RealtimeAudioFormat.pcm.json,
                "voice": "alloy",
                "speed": 1,
            ],
        ]
        self.object = object
        derive()
    }

    static func defaultTurnDetection(_ type: String) -> RealtimeJSON {
        if type == "semantic_vad" {
            return ["type": "semantic_vad", "eagerness": "auto", "create_response": true, "interrupt_response": true]
        }
        return [
            "type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300, "silence_duration_ms": 500, "idle_timeout_ms": nil,
            "create_response": true, "interrupt_response": true,
        ]
    }

    /// Validates `update` (the `session` of a `session.update`) and merges it; nothing changes when it is invalid.
    /// `voiceLocked`: the session already produced audio, so the voice can no longer change.
    mutating func apply(_ update: RealtimeObject, voiceLocked: Bool) throws {
        try validate(update)
        if voiceLocked, let voice = update["audio"]?.object?["output"]?.object?["voice"], voice != currentVoice {
            throw RealtimeRequestError(
                code: "cannot_update_voice", message: "Cannot update a conversation's voice if assistant audio is present.",
                param: "session.audio.output.voice")
        }
        for (key, value) in update.members {
            switch key {
            case "type":
                continue
            case "audio":
                object["audio"] = .object(mergeAudio(object["audio"]?.object ?? RealtimeObject(), value.object ?? RealtimeObject()))
            default:
                object[key] = value
            }
        }
        derive()
    }

    private var currentVoice: RealtimeJSON? { object["audio"]?.object?["output"]?.object?["voice"] }

    private func mergeAudio(_ current: RealtimeObject, _ update: RealtimeObject) -> RealtimeObject {
        var audio = current
        if let input = update["input"]?.object {
            var merged = audio["input"]?.object ?? RealtimeObject()
            for (key, value) in input.members {
                switch key {
                case "format":
                    merged["format"] = Self.normalizedFormat(value)
                case "turn_detection":
                    merged["turn_detection"] = Self.mergedTurnDetection(merged["turn_detection"], value)
                case "transcription", "noise_reduction":
                    // Both are omitted rather than `null` when off: their schemas do not allow null.
                    merged[key] = value.isNull ? nil : value
                default:
                    merged[key] = value
                }
            }
            audio["input"] = .object(merged)
        }
        if let output = update["output"]?.object {
            var merged = audio["output"]?.object ?? RealtimeObject()
            for (key, value) in output.members {
                merged[key] = key == "format" ? Self.normalizedFormat(value) : value
            }
            audio["output"] = .object(merged)
        }
        return audio
    }

    private static func normalizedFormat(_ value: RealtimeJSON) -> RealtimeJSON {
        RealtimeAudioFormat(rawValue: value.object?["type"]?.string ?? "").map(\.json) ?? value
    }

    private static func mergedTurnDetection(_ current: RealtimeJSON?, _ update: RealtimeJSON) -> RealtimeJSON {
        guard let changes = update.object, let type = changes["type"]?.string else { return .null }
        var merged =
            current?.object.flatMap { $0["type"]?.string == type ? $0 : nil } ?? defaultTurnDetection(type).object ?? RealtimeObject()
        for (key, value) in changes.members { merged[key] = value }
        return .object(merged)
    }

    /// Recomputes the typed settings from ``object``.
    private mutating func derive() {
        let audio = object["audio"]?.object
        let input = audio?["input"]?.object
        let output = audio?["output"]?.object
        inputFormat = RealtimeAudioFormat(rawValue: input?["format"]?.object?["type"]?.string ?? "") ?? .pcm
        outputFormat = RealtimeAudioFormat(rawValue: output?["format"]?.object?["type"]?.string ?? "") ?? .pcm
        transcribes = input?["transcription"]?.object != nil
        voice = output?["voice"]?.string ?? output?["voice"]?.object?["id"]?.string ?? "alloy"
        textOnly = object["output_modalities"]?.array == ["text"]
        instructions = object["instructions"]?.string ?? ""
        functionTools =
            object["tool_choice"]?.string == "none"
            ? []
            : (object["tools"]?.array ?? []).compactMap { tool in
                guard let tool = tool.object, tool["type"]?.string == "function", let name = tool["name"]?.string else { return nil }
                return RealtimeFunctionToolSpec(name: name, description: tool["description"]?.string ?? "")
            }
        if let detection = input?["turn_detection"]?.object {
            let semantic = detection["type"]?.string == "semantic_vad"
            let silence: Int
            if semantic {
                switch detection["eagerness"]?.string {
                case "low": silence = 1_500
                case "high": silence = 400
                default: silence = 800
                }
            } else {
                silence = detection["silence_duration_ms"]?.int ?? 500
            }
            turnDetection = RealtimeTurnDetection(
                semantic: semantic,
                threshold: semantic ? 0.5 : detection["threshold"]?.number ?? 0.5,
                prefixPaddingMs: semantic ? 300 : detection["prefix_padding_ms"]?.int ?? 300,
                silenceDurationMs: silence,
                createResponse: detection["create_response"]?.bool ?? true,
                interruptResponse: detection["interrupt_response"]?.bool ?? true
            )
        } else {
            turnDetection = nil
        }
    }

    // MARK: Validation

    private func validate(_ update: RealtimeObject) throws {
        guard let type = update["type"] else { throw RealtimeRequestError.missing("session.type") }
        switch type.string {
        case "realtime" where isTranscription:
            throw RealtimeRequestError.invalidValue(
                "session.type", "Passing a realtime session update event to a transcription session is not allowed.")
        case "transcription" where isTranscription:
            for key in update.keys where !["type", "audio", "include"].contains(key) {
                throw RealtimeRequestError.unknownParameter("session.\(key)")
            }
            if update["audio"]?.object?["output"] != nil { throw RealtimeRequestError.unknownParameter("session.audio.output") }
        case "realtime":
            break
        case "transcription":
            throw RealtimeRequestError.invalidValue(
                "session.type", "Passing a transcription session update event to a realtime session is not allowed.")
        default:
            throw RealtimeRequestError.invalidValue(
                "session.type", "Invalid value: \(Self.quoted(type)). Supported values are: 'realtime' and 'transcription'.")
        }
        for key in update.keys where !Self.sessionKeys.contains(key) {
            throw RealtimeRequestError.unknownParameter("session.\(key)")
        }
        if let value = update["model"], value.string == nil {
            throw RealtimeRequestError.invalidType("session.model", expected: "a string", got: value)
        }
        if let value = update["instructions"], value.string == nil {
            throw RealtimeRequestError.invalidType("session.instructions", expected: "a string", got: value)
        }
        if let value = update["output_modalities"] {
            guard let modalities = value.array else {
                throw RealtimeRequestError.invalidType("session.output_modalities", expected: "an array", got: value)
            }
            guard modalities == ["audio"] || modalities == ["text"] else {
                throw RealtimeRequestError.invalidValue(
                    "session.output_modalities",
                    "Invalid modalities: \(value.text). Supported combinations are: [\"text\"] and [\"audio\"].")
            }
        }
        if let value = update["reasoning"], !value.isNull {
            try validateReasoning(value, model: update["model"]?.string ?? object["model"]?.string ?? "")
        }
        if let value = update["max_output_tokens"] {
            if let limit = value.int {
                guard (1...4_096).contains(limit) else {
                    throw RealtimeRequestError.invalidValue(
                        "session.max_output_tokens",
                        "Invalid 'session.max_output_tokens': integer \(limit) is out of range; expected 1 to 4096 or 'inf'.")
                }
            } else if value.string != "inf" {
                throw RealtimeRequestError.invalidValue(
                    "session.max_output_tokens", "Invalid value: \(Self.quoted(value)). Expected an integer or 'inf'.")
            }
        }
        if let value = update["tools"] {
            guard let tools = value.array else { throw RealtimeRequestError.invalidType("session.tools", expected: "an array", got: value) }
            for (index, tool) in tools.enumerated() {
                guard let object = tool.object else {
                    throw RealtimeRequestError.invalidType("session.tools[\(index)]", expected: "an object", got: tool)
                }
                guard let type = object["type"]?.string, type == "function" || type == "mcp" else {
                    throw RealtimeRequestError.invalidValue(
                        "session.tools[\(index)].type", "Invalid value: \(Self.quoted(object["type"] ?? .null)). Supported values are: 'function' and 'mcp'.")
                }
                if type == "function" {
                    guard let name = object["name"]?.string, !name.isEmpty else { throw RealtimeRequestError.missing("session.tools[\(index)].name") }
                    if let parameters = object["parameters"], parameters.object == nil {
                        throw RealtimeRequestError.invalidType("session.tools[\(index)].parameters", expected: "an object", got: parameters)
                    }
                }
            }
        }
        if let value = update["parallel_tool_calls"], value.bool == nil {
            throw RealtimeRequestError.invalidType("session.parallel_tool_calls", expected: "a boolean", got: value)
        }
        if let value = update["include"] {
            guard let include = value.array else {
                throw RealtimeRequestError.invalidType("session.include", expected: "an array", got: value)
            }
            for entry in include where entry.string != "item.input_audio_transcription.logprobs" {
                throw RealtimeRequestError.invalidValue(
                    "session.include",
                    "Invalid value: \(Self.quoted(entry)). Supported values are: 'item.input_audio_transcription.logprobs'.")
            }
        }
        if let value = update["audio"] {
            guard let audio = value.object else {
                throw RealtimeRequestError.invalidType("session.audio", expected: "an object", got: value)
            }
            try validateAudio(audio)
        }
    }

    /// The reasoning models (`gpt-realtime-2`, `gpt-realtime-2.1`, `gpt-realtime-2.1-mini`, …) take `reasoning.effort`
    /// (`RealtimeReasoning`); the others refuse the parameter.
    static func isReasoningModel(_ model: String) -> Bool { model.hasPrefix("gpt-realtime-2") }

    private func validateReasoning(_ value: RealtimeJSON, model: String) throws {
        let path = "session.reasoning"
        guard let reasoning = value.object else { throw RealtimeRequestError.invalidType(path, expected: "an object", got: value) }
        guard Self.isReasoningModel(model) else {
            throw RealtimeRequestError(
                code: "unsupported_parameter", message: "Unsupported parameter: '\(path)' is not supported with the model '\(model)'.",
                param: path)
        }
        for key in reasoning.keys where key != "effort" { throw RealtimeRequestError.unknownParameter("\(path).\(key)") }
        if let effort = reasoning["effort"], !["minimal", "low", "medium", "high", "xhigh"].contains(effort.string ?? "") {
            throw RealtimeRequestError.invalidValue(
                "\(path).effort",
                "Invalid value: \(Self.quoted(effort)). Supported values are: 'minimal', 'low', 'medium', 'high', and 'xhigh'.")
        }
    }

    private func validateAudio(_ audio: RealtimeObject) throws {
        for key in audio.keys where key != "input" && key != "output" {
            throw RealtimeRequestError.unknownParameter("session.audio.\(key)")
        }
        if let value = audio["input"] {
            guard let input = value.object else {
                throw RealtimeRequestError.invalidType("session.audio.input", expected: "an object", got: value)
            }
            for key in input.keys where !["format", "transcription", "noise_reduction", "turn_detection"].contains(key) {
                throw RealtimeRequestError.unknownParameter("session.audio.input.\(key)")
            }
            if let format = input["format"] { try Self.validateFormat(format, path: "session.audio.input.format") }
            if let transcription = input["transcription"], !transcription.isNull {
                try Self.validateTranscription(transcription)
            }
            if let noise = input["noise_reduction"], !noise.isNull {
                guard let object = noise.object else {
                    throw RealtimeRequestError.invalidType("session.audio.input.noise_reduction", expected: "an object", got: noise)
                }
                for key in object.keys where key != "type" {
                    throw RealtimeRequestError.unknownParameter("session.audio.input.noise_reduction.\(key)")
                }
                if let type = object["type"], type.string != "near_field" && type.string != "far_field" {
                    throw RealtimeRequestError.invalidValue(
                        "session.audio.input.noise_reduction.type",
                        "Invalid value: \(Self.quoted(type)). Supported values are: 'near_field' and 'far_field'.")
                }
            }
            if let detection = input["turn_detection"], !detection.isNull { try Self.validateTurnDetection(detection) }
        }
        if let value = audio["output"] {
            guard let output = value.object else {
                throw RealtimeRequestError.invalidType("session.audio.output", expected: "an object", got: value)
            }
            for key in output.keys where !["format", "voice", "speed"].contains(key) {
                throw RealtimeRequestError.unknownParameter("session.audio.output.\(key)")
            }
            if let format = output["format"] { try Self.validateFormat(format, path: "session.audio.output.format") }
            if let voice = output["voice"] {
                if let name = voice.string {
                    guard Self.voices.contains(name) else {
                        throw RealtimeRequestError.invalidValue(
                            "session.audio.output.voice",
                            "Invalid value: '\(name)'. Supported values are: "
                                + Self.voices.map { "'\($0)'" }.joined(separator: ", ") + ".")
                    }
                } else if let custom = voice.object {
                    guard custom.keys == ["id"], custom["id"]?.string != nil else {
                        throw RealtimeRequestError.invalidValue(
                            "session.audio.output.voice", "A custom voice must be an object with a string 'id' and nothing else.")
                    }
                } else {
                    throw RealtimeRequestError.invalidType("session.audio.output.voice", expected: "a string", got: voice)
                }
            }
            if let speed = output["speed"] {
                guard let number = speed.number else {
                    throw RealtimeRequestError.invalidType("session.audio.output.speed", expected: "a number", got: speed)
                }
                guard number >= 0.25 && number <= 1.5 else {
                    throw RealtimeRequestError.invalidValue(
                        "session.audio.output.speed",
                        "Invalid 'session.audio.output.speed': \(speed.text) is out of range; expected a value from 0.25 to 1.5.")
                }
            }
        }
    }

    private static func validateFormat(_ format: RealtimeJSON, path: String) throws {
        guard let object = format.object else {
            throw RealtimeRequestError.invalidType(path, expected: "an object", got: format)
        }
        for key in object.keys where key != "type" && key != "rate" {
            throw RealtimeRequestError.unknownParameter("\(path).\(key)")
        }
        guard let type = object["type"] else { throw RealtimeRequestError.missing("\(path).type") }
        guard let name = type.string, formats.contains(name) else {
            throw RealtimeRequestError.invalidValue(
                "\(path).type", "Invalid value: \(quoted(type)). Supported values are: 'audio/pcm', 'audio/pcmu', and 'audio/pcma'.")
        }
        if let rate = object["rate"] {
            guard name == "audio/pcm" else { throw RealtimeRequestError.unknownParameter("\(path).rate") }
            guard rate.int == 24_000 else {
                throw RealtimeRequestError.invalidValue(
                    "\(path).rate", "Invalid value: \(rate.text). Only a 24000 Hz sample rate is supported for 'audio/pcm'.")
            }
        }
    }

    private static func validateTranscription(_ transcription: RealtimeJSON) throws {
        let path = "session.audio.input.transcription"
        guard let object = transcription.object else {
            throw RealtimeRequestError.invalidType(path, expected: "an object", got: transcription)
        }
        for key in object.keys where !["model", "language", "languages", "keywords", "prompt", "delay"].contains(key) {
            throw RealtimeRequestError.unknownParameter("\(path).\(key)")
        }
        for key in ["model", "language", "prompt", "delay"] {
            if let value = object[key], value.string == nil {
                throw RealtimeRequestError.invalidType("\(path).\(key)", expected: "a string", got: value)
            }
        }
    }

    private static func validateTurnDetection(_ detection: RealtimeJSON) throws {
        let path = "session.audio.input.turn_detection"
        guard let object = detection.object else {
            throw RealtimeRequestError.invalidType(path, expected: "an object", got: detection)
        }
        guard let type = object["type"] else { throw RealtimeRequestError.missing("\(path).type") }
        let allowed: Set<String>
        switch type.string {
        case "server_vad":
            allowed = [
                "type", "threshold", "prefix_padding_ms", "silence_duration_ms", "idle_timeout_ms", "create_response",
                "interrupt_response",
            ]
        case "semantic_vad":
            allowed = ["type", "eagerness", "create_response", "interrupt_response"]
        default:
            throw RealtimeRequestError.invalidValue(
                "\(path).type", "Invalid value: \(quoted(type)). Supported values are: 'server_vad' and 'semantic_vad'.")
        }
        for key in object.keys where !allowed.contains(key) {
            throw RealtimeRequestError.unknownParameter("\(path).\(key)")
        }
        if let threshold = object["threshold"] {
            guard let number = threshold.number else {
                throw RealtimeRequestError.invalidType("\(path).threshold", expected: "a number", got: threshold)
            }
            guard (0...1).contains(number) else {
                throw RealtimeRequestError.invalidValue(
                    "\(path).threshold", "Invalid 'threshold': \(threshold.text) is out of range; expected a value from 0.0 to 1.0.")
            }
        }
        for key in ["prefix_padding_ms", "silence_duration_ms"] {
            if let value = object[key] {
                guard let number = value.int else {
                    throw RealtimeRequestError.invalidType("\(path).\(key)", expected: "an integer", got: value)
                }
                guard number >= 0 else {
                    throw RealtimeRequestError.invalidValue("\(path).\(key)", "Invalid '\(key)': \(number) must not be negative.")
                }
            }
        }
        if let idle = object["idle_timeout_ms"], !idle.isNull {
            guard let number = idle.int else {
                throw RealtimeRequestError.invalidType("\(path).idle_timeout_ms", expected: "an integer", got: idle)
            }
            guard (5_000...30_000).contains(number) else {
                throw RealtimeRequestError.invalidValue(
                    "\(path).idle_timeout_ms", "Invalid 'idle_timeout_ms': \(number) is out of range; expected 5000 to 30000.")
            }
        }
        for key in ["create_response", "interrupt_response"] {
            if let value = object[key], value.bool == nil {
                throw RealtimeRequestError.invalidType("\(path).\(key)", expected: "a boolean", got: value)
            }
        }
        if let eagerness = object["eagerness"], !["low", "medium", "high", "auto"].contains(eagerness.string ?? "") {
            throw RealtimeRequestError.invalidValue(
                "\(path).eagerness",
                "Invalid value: \(quoted(eagerness)). Supported values are: 'low', 'medium', 'high', and 'auto'.")
        }
    }

    private static func quoted(_ value: RealtimeJSON) -> String {
        value.string.map { "'\($0)'" } ?? value.text
    }
}

/// A function the session declared: its name and its description, which says when to call it.
struct RealtimeFunctionToolSpec: Sendable, Equatable {
    let name: String
    let description: String

    /// Whether `utterance` is what the description says calls for the function. The emulated model understands the
    /// example phrases a description quotes ("…"): the function is called when the utterance contains one of them,
    /// compared without case, accents or punctuation, on word boundaries. (A real model generalises from the same text.)
    func matches(_ utterance: String) -> Bool {
        let said = " " + Self.normalized(utterance) + " "
        return examples.contains { said.contains(" " + $0 + " ") }
    }

    /// The quoted example phrases of the description, normalised.
    var examples: [String] {
        description.split(separator: "\"", omittingEmptySubsequences: false).enumerated().compactMap { index, part in
            guard index % 2 == 1 else { return nil }
            let phrase = Self.normalized(String(part))
            return phrase.isEmpty ? nil : phrase
        }
    }

    static func normalized(_ text: String) -> String {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: Locale(identifier: "en_US_POSIX"))
            .replacingOccurrences(of: "'", with: "").replacingOccurrences(of: "\u{2019}", with: "")
        return folded.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).joined(separator: " ")
    }
}
