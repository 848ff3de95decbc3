import ChorusCore
import Foundation
import Vapor

/// `POST /chat/completions` of ``SandboxOpenAI``.
extension SandboxOpenAI {
    /// The members of `CreateChatCompletionRequest` (OpenAI spec); anything else is an unrecognized argument.
    static let chatArguments: Set<String> = [
        "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs", "max_completion_tokens", "max_tokens",
        "messages", "metadata", "modalities", "model", "moderation", "n", "parallel_tool_calls", "prediction", "presence_penalty",
        "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention", "reasoning_effort", "response_format",
        "safety_identifier", "seed", "service_tier", "stop", "store", "stream", "stream_options", "temperature", "tool_choice",
        "tools", "top_logprobs", "top_p", "user", "verbosity", "web_search_options",
    ]
    /// Put in a message to get a refusal.
    static let refusalMarker = "[sandbox:refuse]"
    /// Put in a message to get `finish_reason: content_filter`.
    static let contentFilterMarker = "[sandbox:content_filter]"

    func chatCompletion(_ request: Request) -> Response {
        guard let text = request.body.string, case .object(let body)? = RealtimeJSON.parse(text) else { return Self.unparsableJSON() }
        if let unknown = body.keys.first(where: { !Self.chatArguments.contains($0) }) {
            return Self.invalid("Unrecognized request argument supplied: \(unknown)")
        }
        for required in ["model", "messages"] where body[required] == nil {
            return Self.invalid("Missing required parameter: '\(required)'.", param: required, code: "missing_required_parameter")
        }
        guard let model = body["model"]?.string, !model.isEmpty else {
            return Self.invalidType("model", expected: "a string", got: body["model"])
        }
        guard let messages = body["messages"]?.array else { return Self.invalidType("messages", expected: "an array", got: body["messages"]) }
        guard !messages.isEmpty else {
            return Self.invalid(
                "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
                param: "messages", code: "empty_array")
        }
        var conversation: [(role: String, content: String)] = []
        for (index, message) in messages.enumerated() {
            let roles = ["system", "assistant", "user", "function", "tool", "developer"]
            guard let role = message.object?["role"]?.string, roles.contains(role) else {
                return Self.invalid(
                    "Invalid value: '\(message.object?["role"]?.string ?? "")'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
                    param: "messages[\(index)].role", code: "invalid_value")
            }
            let content = message.object?["content"]
            let textContent: String
            switch content {
            case .string(let value)?: textContent = value
            case .array(let parts)?: textContent = parts.compactMap { $0.object?["text"]?.string }.joined(separator: "\n")
            case .none where role == "assistant", .some(.null) where role == "assistant": textContent = ""
            default:
                return Self.invalidType("messages[\(index)].content", expected: "a string or an array of content parts", got: content)
            }
            conversation.append((role, textContent))
        }
        if let temperature = body["temperature"], !temperature.isNull {
            guard let value = temperature.number else { return Self.invalidType("temperature", expected: "a number", got: temperature) }
            if value < 0 || value > 2 {
                return Self.invalid(
                    "Invalid 'temperature': decimal \(value < 0 ? "below minimum" : "above maximum") value. Expected a value \(value < 0 ? ">= 0" : "<= 2"), but got \(value) instead.",
                    param: "temperature", code: value < 0 ? "decimal_below_min_value" : "decimal_above_max_value")
            }
        }
        // Reasoning models: `reasoning_effort` only for them, `max_tokens` refused, a temperature other than the
        // default only with an effort of `none` (which the original gpt-5 family and the o series do not offer).
        let reasoning = Self.isReasoningModel(model)
        var effort = reasoning ? Self.defaultReasoningEffort(model) : nil
        if let value = body["reasoning_effort"], !value.isNull {
            guard reasoning else {
                return Self.invalid(
                    "Unsupported parameter: 'reasoning_effort' is not supported with this model.", param: "reasoning_effort",
                    code: "unsupported_parameter")
            }
            let offered = Self.reasoningEfforts(model)
            guard let text = value.string, offered.contains(text) else {
                return Self.invalid(
                    "Unsupported value: 'reasoning_effort' does not support '\(value.string ?? value.text)' with this model. Supported values are: "
                        + offered.map { "'\($0)'" }.joined(separator: ", ") + ".",
                    param: "reasoning_effort", code: "unsupported_value")
            }
            effort = text
        }
        if reasoning, body["max_tokens"].map({ !$0.isNull }) == true {
            return Self.invalid(
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                param: "max_tokens", code: "unsupported_parameter")
        }
        if reasoning, effort != "none", let temperature = body["temperature"]?.number, temperature != 1 {
            return Self.invalid(
                "Unsupported value: 'temperature' does not support \(temperature) with this model. Only the default (1) value is supported.",
                param: "temperature", code: "unsupported_value")
        }
        let reasoningBudget = Self.reasoningTokens(effort)
        var maxTokens: Int?
        if let limit = body["max_completion_tokens"] ?? body["max_tokens"], !limit.isNull {
            let name = body["max_completion_tokens"] != nil ? "max_completion_tokens" : "max_tokens"
            guard let value = limit.int else { return Self.invalidType(name, expected: "an integer", got: limit) }
            guard value >= 1 else {
                return Self.invalid(
                    "Invalid '\(name)': integer below minimum value. Expected a value >= 1, but got \(value) instead.", param: name,
                    code: "integer_below_min_value")
            }
            maxTokens = value
        }
        if let identifier = body["safety_identifier"], !identifier.isNull {
            guard let value = identifier.string else { return Self.invalidType("safety_identifier", expected: "a string", got: identifier) }
            if value.count > 64 {
                return Self.invalid(
                    "Invalid 'safety_identifier': string too long. Expected a string with maximum length 64, but got a string with length \(value.count) instead.",
                    param: "safety_identifier", code: "string_above_max_length")
            }
        }
        if let store = body["store"], !store.isNull, store.bool == nil {
            return Self.invalidType("store", expected: "a boolean", got: store)
        }
        let streaming = body["stream"]?.bool == true
        if streaming, body["n"]?.int ?? 1 != 1 {
            return Self.invalid("The sandbox emulator streams one choice (n = 1).", param: "n", code: "unsupported_value")
        }
        let choices = body["n"]?.int ?? 1
        guard (1...8).contains(choices) else {
            return Self.invalid("Invalid 'n': expected a value between 1 and 8 in the sandbox.", param: "n", code: "invalid_value")
        }

        let source = conversation.filter { $0.role == "user" }.map(\.content)
        let extractor = SandboxExtractor(source.isEmpty ? conversation.map(\.content) : source)
        var content: String
        var structured = true
        switch Self.outputFormat(body["response_format"], conversation: conversation) {
        case .rejected(let response):
            return response
        case .text:
            content = extractor.summaryText()
            structured = false
        case .jsonObject:
            content = extractor.jsonObject().text
        case .jsonSchema(let schema):
            content = extractor.fill(schema).text
        }
        // Stories prompts (recognised by their wording, read as a model reads them) get the storyteller's answers
        // (see ``SandboxStories``).
        if let story = SandboxStories.answer(conversation: conversation, structured: structured) { content = story }

        let everything = conversation.map(\.content).joined(separator: "\n")
        var finishReason = "stop"
        var refusal: String?
        if everything.contains(Self.refusalMarker) {
            refusal = "I'm sorry, but I can't help with that request."
        } else if everything.contains(Self.contentFilterMarker) {
            finishReason = "content_filter"
            content = ""
        }
        var completionTokens = Self.tokenEstimate(refusal ?? content)
        // Reasoning tokens count against `max_completion_tokens` before the visible answer does.
        var reasoningTokens = reasoningBudget
        if let maxTokens, completionTokens.addingClamped(reasoningTokens) > maxTokens {
            reasoningTokens = min(reasoningTokens, maxTokens)
            completionTokens = maxTokens - reasoningTokens
            content = String(content.prefix(completionTokens * 4))
            finishReason = "length"
        }
        completionTokens = completionTokens.addingClamped(reasoningTokens)
        let promptTokens = conversation.reduce(0) { $0 + Self.tokenEstimate($1.content) + 4 }
        let message: RealtimeJSON = [
            "role": "assistant", "content": refusal == nil ? .string(content) : .null,
            "refusal": refusal.map(RealtimeJSON.string) ?? .null, "annotations": [],
        ]
        let answer: RealtimeJSON = [
            "id": .string("chatcmpl-" + Self.randomHex(24)), "object": "chat.completion",
            "created": .int(Int(Date().timeIntervalSince1970)), "model": .string(model),
            "choices": .array(
                (0..<choices).map { index in
                    ["index": .int(index), "message": message, "logprobs": .null, "finish_reason": .string(finishReason)]
                }),
            "usage": [
                "prompt_tokens": .int(promptTokens), "completion_tokens": .int(completionTokens * choices),
                "total_tokens": .int(promptTokens + completionTokens * choices),
                "prompt_tokens_details": ["cached_tokens": 0, "audio_tokens": 0],
                "completion_tokens_details": [
                    "reasoning_tokens": .int(reasoningTokens), "audio_tokens": 0, "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                ],
            ],
            "service_tier": "default", "system_fingerprint": "fp_sandbox",
        ]
        if streaming {
            return Self.stream(
                id: answer.object?["id"]?.string ?? "", model: model, content: refusal == nil ? content : "", refusal: refusal,
                finishReason: finishReason, usage: body["stream_options"]?.object?["include_usage"]?.bool == true ? answer.object?["usage"] : nil)
        }
        return Self.json(answer)
    }

    /// A streamed completion (`text/event-stream`): `chat.completion.chunk`s with the role, then the content in pieces
    /// of a few words, then the finish reason, then (with `stream_options.include_usage`) a chunk with no choices and
    /// the usage, then `data: [DONE]`.
    static func stream(id: String, model: String, content: String, refusal: String?, finishReason: String, usage: RealtimeJSON?) -> Response {
        let created = Int(Date().timeIntervalSince1970)
        func chunk(_ delta: RealtimeJSON, finish: String?, usage: RealtimeJSON? = nil, choices: Bool = true) -> String {
            var object = RealtimeObject()
            object["id"] = .string(id)
            object["object"] = "chat.completion.chunk"
            object["created"] = .int(created)
            object["model"] = .string(model)
            object["system_fingerprint"] = "fp_sandbox"
            object["choices"] =
                choices
                ? .array([["index": 0, "delta": delta, "logprobs": .null, "finish_reason": finish.map(RealtimeJSON.string) ?? .null]]) : .array([])
            if let usage { object["usage"] = usage }
            return "data: " + RealtimeJSON.object(object).text + "\n\n"
        }
        var text = chunk(["role": "assistant", "content": ""], finish: nil)
        if let refusal {
            text += chunk(["refusal": .string(refusal)], finish: nil)
        } else {
            var piece = ""
            for character in content {
                piece.append(character)
                if character == " " && piece.count >= 24 {
                    text += chunk(["content": .string(piece)], finish: nil)
                    piece = ""
                }
            }
            if !piece.isEmpty { text += chunk(["content": .string(piece)], finish: nil) }
        }
        text += chunk([:], finish: finishReason)
        if let usage { text += chunk([:], finish: nil, usage: usage, choices: false) }
        text += "data: [DONE]\n\n"
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "text/event-stream; charset=utf-8")
        headers.replaceOrAdd(name: .cacheControl, value: "no-cache")
        return Response(status: .ok, headers: headers, body: .init(string: text))
    }

    /// What `response_format` asks for, or the 400 it deserves.
    enum OutputFormat {
        case text
        case jsonObject
        case jsonSchema(SandboxSchema)
        case rejected(Response)
    }

    /// Reads and checks `response_format` (the API's rules and wording).
    static func outputFormat(_ value: RealtimeJSON?, conversation: [(role: String, content: String)]) -> OutputFormat {
        guard let value, !value.isNull else { return .text }
        guard let format = value.object else { return .rejected(invalidType("response_format", expected: "an object", got: value)) }
        switch format["type"]?.string {
        case "text":
            return .text
        case "json_object":
            guard conversation.contains(where: { $0.content.lowercased().contains("json") }) else {
                return .rejected(
                    (invalid(
                        "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
                        param: "messages")))
            }
            return .jsonObject
        case "json_schema":
            guard let jsonSchema = format["json_schema"]?.object else {
                return .rejected(
                    (invalid(
                        "Missing required parameter: 'response_format.json_schema'.", param: "response_format.json_schema",
                        code: "missing_required_parameter")))
            }
            guard let name = jsonSchema["name"]?.string else {
                return .rejected(
                    (invalid(
                        "Missing required parameter: 'response_format.json_schema.name'.", param: "response_format.json_schema.name",
                        code: "missing_required_parameter")))
            }
            guard (1...64).contains(name.count), name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) else {
                return .rejected(
                    (invalid(
                        "Invalid 'response_format.json_schema.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                        param: "response_format.json_schema.name", code: "invalid_value")))
            }
            let schema = SandboxSchema(root: jsonSchema["schema"] ?? ["type": "object", "properties": [:]])
            if jsonSchema["strict"]?.bool == true, let problem = schema.strictProblem() {
                return .rejected(
                    (invalid("Invalid schema for response_format '\(name)': \(problem)", param: "response_format")))
            }
            return .jsonSchema(schema)
        default:
            return .rejected(
                (invalid(
                    "Invalid value: '\(format["type"]?.string ?? "")'. Supported values are: 'json_object', 'json_schema', and 'text'.",
                    param: "response_format.type", code: "invalid_value")))
        }
    }

    /// About four characters a token.
    static func tokenEstimate(_ text: String) -> Int { (text.count + 3) / 4 }
}

/// A JSON Schema given as `response_format.json_schema.schema`.
struct SandboxSchema {
    /// One step of a path in the schema, as the API prints it in `context=(…)`.
    enum Step {
        case key(String)
        case index(Int)
    }

    let root: RealtimeJSON

    /// The deepest nesting strict mode allows.
    static let maxDepth = 10
    /// Keywords strict mode rejects.
    static let forbiddenKeywords = [
        "allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas", "patternProperties", "unevaluatedProperties",
        "propertyNames",
    ]

    /// Why the schema breaks strict mode (the API's wording after `Invalid schema for response_format '<name>': `), or
    /// `nil`.
    func strictProblem() -> String? {
        guard let object = root.object else { return "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"\(root.typeName)\"'." }
        if let type = object["type"]?.string, type != "object" {
            return "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"\(type)\"'."
        }
        if object["anyOf"] != nil { return "schema must be a JSON Schema of 'type: \"object\"', got 'anyOf'." }
        for definitions in ["$defs", "definitions"] {
            for (name, definition) in root.object?[definitions]?.object?.members ?? [] {
                if let problem = check(definition, path: [.key(definitions), .key(name)], depth: 1) { return problem }
            }
        }
        return check(root, path: [], depth: 0)
    }

    private func check(_ schema: RealtimeJSON, path: [Step], depth: Int) -> String? {
        let context = "In context=\(Self.context(path)), "
        guard let object = schema.object else {
            if case .bool = schema { return context + "schema must be a JSON Schema object, got a boolean." }
            return context + "schema must be a JSON Schema object."
        }
        if depth > Self.maxDepth { return context + "schema exceeds the maximum nesting depth of \(Self.maxDepth)." }
        for keyword in Self.forbiddenKeywords where object.contains(keyword) { return context + "'\(keyword)' is not permitted." }
        if let reference = object["$ref"] {
            guard let path = reference.string, resolve(path) != nil else {
                return context + "reference '\(reference.string ?? reference.text)' can't be resolved."
            }
            return nil
        }
        let types = Self.types(of: object)
        if types.contains("object") || object.contains("properties") {
            guard object["additionalProperties"] == .bool(false) else {
                return context + "'additionalProperties' is required to be supplied and to be false."
            }
            let properties = object["properties"]?.object ?? RealtimeObject()
            let required = object["required"]?.array?.compactMap(\.string) ?? []
            if let missing = properties.keys.first(where: { !required.contains($0) }) {
                return context + "'required' is required to be supplied and to be an array including every key in properties. Missing '\(missing)'."
            }
            if let extra = required.first(where: { !properties.contains($0) }) {
                return context + "'required' contains '\(extra)', which is not in 'properties'."
            }
            for (name, property) in properties.members {
                if let problem = check(property, path: path + [.key("properties"), .key(name)], depth: depth + 1) { return problem }
            }
        }
        if let items = object["items"], let problem = check(items, path: path + [.key("items")], depth: depth + 1) { return problem }
        if let options = object["anyOf"]?.array {
            for (index, option) in options.enumerated() {
                if let problem = check(option, path: path + [.key("anyOf"), .index(index)], depth: depth + 1) { return problem }
            }
        }
        return nil
    }

    /// The schema a local `$ref` (`#`, `#/$defs/x`, `#/definitions/x`, any JSON pointer into the root) points at.
    func resolve(_ reference: String) -> RealtimeJSON? {
        guard reference.hasPrefix("#") else { return nil }
        var node = root
        for token in reference.dropFirst().split(separator: "/") {
            let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            if let next = node.object?[key] {
                node = next
            } else if let index = Int(key), let array = node.array, array.indices.contains(index) {
                node = array[index]
            } else {
                return nil
            }
        }
        return node
    }

    /// The `type` names of a schema object (a name or a list).
    static func types(of object: RealtimeObject) -> [String] {
        switch object["type"] {
        case .string(let type)?: [type]
        case .array(let types)?: types.compactMap(\.string)
        default: []
        }
    }

    /// Python's tuple spelling: `()`, `('items',)`, `('properties', 'a', 'anyOf', 0)`.
    private static func context(_ path: [Step]) -> String {
        let items = path.map { step -> String in
            switch step {
            case .key(let key): "'\(key)'"
            case .index(let index): String(index)
            }
        }
        return items.count == 1 ? "(\(items[0]),)" : "(\(items.joined(separator: ", ")))"
    }
}

/// Builds deterministic answers from a conversation: an extractive summary, or JSON following a schema.
///
/// Property names choose what goes in (matched by whole words, in this order; members of array items inherit the
/// array's topic unless their own name has one): urgent/priority/emergency/important →
/// urgent sentences; decision → decisions ("decided", "agreed", "we'll", "let's"); action/task/todo/follow-up →
/// action items ("will", "can you", "please", "need to"; owner = the line's sender, or a sender addressed by name);
/// owner/assignee/who/sender/person → the owner; date/deadline/when/time/schedule/due/day → date words (weekdays,
/// "tomorrow", "tonight", 12/3, 5pm); overview/summary/gist/recap/narration → the overview; language/locale → the
/// conversation's language (`en`, `es`, `fr`, `de`, `it`, by its frequent words);
/// count/number/total → a count. Unknown names fall back by type: strings get the overview (or, inside an item, the
/// item's sentence), arrays the first sentence of each line, booleans `false`, numbers 0.
/// Nullable values are `null` when nothing matches; `enum` takes the first value (an urgent-sounding one for urgent
/// items), `const` its value; `minItems`, `maxItems`, `maxLength`, `minimum` and `maximum` are honoured.
struct SandboxExtractor {
    enum Topic {
        case overview, decisions, actions, dates, urgent, owner, language, count, other
    }

    let thread: SandboxThread
    /// The conversation's language and the words the summary is framed with.
    let words: SandboxSummaryWords

    init(_ texts: [String]) {
        thread = SandboxThread(texts.joined(separator: "\n"))
        words = SandboxSummaryWords(texts: thread.lines.map(\.text))
    }

    /// Urgent sentences, those of messages flagged urgent first.
    var urgentMatches: [SandboxThread.Match] {
        let matches = thread.matches(.urgent)
        let flagged = Set(thread.lines.filter(\.flagged).compactMap(\.sentences.first))
        return matches.filter { flagged.contains($0.sentence) } + matches.filter { !flagged.contains($0.sentence) }
    }

    /// The overview, in the conversation's language (≤ 60 words): how many messages from whom, then what they are
    /// about — urgent sentences first, then each message's key sentence (its first one with a date, a decision or a
    /// task, else its first), cut to 20 words, with the sender.
    var overview: String {
        var parts: [String] = []
        if !thread.senders.isEmpty { parts.append(words.count(thread.lines.count, from: thread.senders)) }
        var used: Set<String> = []
        for match in urgentMatches.prefix(2) where used.insert(match.sentence).inserted {
            parts.append(words.urgent(from: match.sender) + " " + Self.ended(SandboxText.prefix(match.sentence, words: 20)))
        }
        var keys = 0
        for line in thread.lines where keys < 3 {
            let cued = line.sentences.first { sentence in [SandboxCue.date, .decision, .action].contains { $0.matches(sentence) } }
            guard let sentence = cued ?? line.sentences.first, used.insert(sentence).inserted else { continue }
            let text = Self.ended(SandboxText.prefix(sentence, words: 20))
            parts.append(line.sender.map { words.said($0) + " " + text } ?? text)
            keys += 1
        }
        return SandboxText.prefix(parts.joined(separator: " "), words: 60)
    }

    /// `text` ending in sentence punctuation.
    private static func ended(_ text: String) -> String {
        text.hasSuffix(".") || text.hasSuffix("!") || text.hasSuffix("?") || text.hasSuffix("…") ? text : text + "."
    }

    /// The text-mode answer: overview, then decisions, action items, dates and urgent items, written for listening
    /// (≤ 300 words), in the conversation's language.
    func summaryText() -> String {
        var text = words.opening + " " + overview
        let titles = words.sections
        let sections: [(String, [SandboxThread.Match])] = [
            (titles.urgent, urgentMatches), (titles.decisions, thread.matches(.decision)), (titles.actions, thread.matches(.action)),
            (titles.dates, thread.matches(.date)),
        ]
        for (title, matches) in sections where !matches.isEmpty {
            let items = matches.prefix(5).map { match in match.sender.map { "\(words.said($0)) \(match.sentence)" } ?? match.sentence }
            text += " \(title)\(words.language == .fr ? " :" : ":") " + items.map(Self.ended).joined(separator: " ")
        }
        return SandboxText.prefix(text, words: 300)
    }

    /// The `json_object`-mode answer: `{summary, decisions, action_items, dates, urgent}`.
    func jsonObject() -> RealtimeJSON {
        [
            "summary": .string(overview), "decisions": .array(thread.matches(.decision).map { .string($0.sentence) }),
            "action_items": .array(
                thread.matches(.action).map { ["owner": $0.owner.map(RealtimeJSON.string) ?? .null, "task": .string($0.sentence)] }),
            "dates": .array(thread.matches(.date).map { ["when": .string($0.date ?? ""), "what": .string($0.sentence)] }),
            "urgent": .array(urgentMatches.map { .string($0.sentence) }),
        ]
    }

    /// JSON following `schema`.
    func fill(_ schema: SandboxSchema) -> RealtimeJSON {
        value(for: schema.root, in: schema, name: nil, topic: .overview, item: nil, depth: 0) ?? .object(RealtimeObject())
    }

    /// The value for one (sub)schema; `nil` when nothing was found for a scalar (the caller picks `null` or a default).
    private func value(
        for node: RealtimeJSON, in schema: SandboxSchema, name: String?, topic inherited: Topic, item: SandboxThread.Match?, depth: Int
    ) -> RealtimeJSON? {
        guard depth <= 12, var object = node.object else { return nil }
        if let reference = object["$ref"]?.string {
            guard let target = schema.resolve(reference)?.object else { return nil }
            object = target
        }
        let named = name.map(Self.topic(forName:)) ?? .other
        let topic = named == .other ? inherited : named
        if let constant = object["const"] { return constant }
        if let options = object["enum"]?.array, !options.isEmpty { return pickEnum(options, topic: topic, item: item) }
        if let options = object["anyOf"]?.array, !options.isEmpty {
            let nullable = options.contains { $0.object.map { Self.types(of: $0, in: schema) } == ["null"] }
            let main = options.first { $0.object.map { Self.types(of: $0, in: schema) } != ["null"] }
            let found = main.flatMap { value(for: $0, in: schema, name: name, topic: topic, item: item, depth: depth + 1) }
            if let found, !Self.isEmpty(found) { return found }
            return nullable ? .null : found
        }
        let types = Self.types(of: object, in: schema)
        let nullable = types.contains("null")
        let type = types.first { $0 != "null" } ?? (object.contains("properties") ? "object" : object.contains("items") ? "array" : "string")
        switch type {
        case "object":
            var result = RealtimeObject()
            let properties = object["properties"]?.object ?? RealtimeObject()
            let required = object["required"]?.array?.compactMap(\.string) ?? []
            let order = required.filter { properties.contains($0) } + properties.keys.filter { !required.contains($0) }.sorted()
            for key in order {
                guard let property = properties[key] else { continue }
                result[key] =
                    value(for: property, in: schema, name: key, topic: topic == .overview ? .other : topic, item: item, depth: depth + 1)
                    ?? Self.fallback(for: property, in: schema)
            }
            return .object(result)
        case "array":
            let itemSchema = object["items"] ?? ["type": "string"]
            var matches = self.matches(for: topic)
            if let maximum = object["maxItems"]?.int { matches = Array(matches.prefix(max(0, maximum))) } else { matches = Array(matches.prefix(8)) }
            let minimum = object["minItems"]?.int ?? 0
            let filler = thread.leadingSentences().isEmpty ? [Self.placeholder] : thread.leadingSentences()
            var index = 0
            while matches.count < minimum {
                matches.append(filler[index % filler.count])
                index += 1
            }
            let singular = name.map { $0.hasSuffix("s") ? String($0.dropLast()) : $0 }
            let values = matches.map { match in
                value(for: itemSchema, in: schema, name: singular, topic: topic, item: match, depth: depth + 1)
                    ?? Self.fallback(for: itemSchema, in: schema)
            }
            return .array(values)
        case "boolean":
            return .bool(named == .urgent ? item?.urgent ?? thread.hasUrgent : false)
        case "integer", "number":
            var count = topic == .count || named == .count ? (item == nil ? thread.lines.count : 1) : 0
            // The schema is the caller's: `minimum: 1e300` is clamped, not converted with a trapping `Int(_:)`.
            if let minimum = object["minimum"]?.number { count = max(count, Int(clampingRounded: minimum, .up)) }
            if let maximum = object["maximum"]?.number { count = min(count, Int(clampingRounded: maximum, .down)) }
            return type == "integer" ? .int(count) : .double(Double(count))
        case "null":
            return .null
        default:
            guard var text = string(for: item == nil ? topic : named, item: item) else { return nullable ? .null : nil }
            if let maximum = object["maxLength"]?.int, text.count > maximum { text = String(text.prefix(max(0, maximum))) }
            return .string(text)
        }
    }

    private static let placeholder = SandboxThread.Match(sentence: "No messages.", sender: nil, owner: nil, date: nil, urgent: false)

    /// The sentences an array of `topic` lists.
    private func matches(for topic: Topic) -> [SandboxThread.Match] {
        switch topic {
        case .decisions: thread.matches(.decision)
        case .actions: thread.matches(.action)
        case .dates: thread.matches(.date)
        case .urgent: urgentMatches
        case .overview, .owner, .language, .count, .other: thread.leadingSentences()
        }
    }

    /// The text for a string: inside an item, what the property's own name asks for (the item's sentence unless it
    /// names an owner, a date or a language); elsewhere what the topic collects.
    private func string(for topic: Topic, item: SandboxThread.Match?) -> String? {
        if let item {
            switch topic {
            case .owner: return item.owner
            case .dates: return item.date
            case .language: return words.language.rawValue
            case .overview, .decisions, .actions, .urgent, .count, .other: return item.sentence
            }
        }
        switch topic {
        case .overview, .other: return overview
        case .owner: return thread.senders.isEmpty ? nil : SandboxText.list(thread.senders)
        case .language: return words.language.rawValue
        case .decisions, .actions, .dates, .urgent, .count:
            let sentences = matches(for: topic).map(\.sentence)
            return sentences.isEmpty ? nil : sentences.joined(separator: " ")
        }
    }

    private func pickEnum(_ options: [RealtimeJSON], topic: Topic, item: SandboxThread.Match?) -> RealtimeJSON {
        guard topic == .urgent else { return options[0] }
        let urgentWords = ["urgent", "high", "critical", "yes"]
        let isUrgent = item?.urgent ?? thread.hasUrgent
        let preferred = options.first { option in
            let word = option.string?.lowercased() ?? ""
            return isUrgent == urgentWords.contains(word)
        }
        return preferred ?? options[0]
    }

    /// A value of the schema's type when nothing was found and `null` is not allowed.
    private static func fallback(for node: RealtimeJSON, in schema: SandboxSchema) -> RealtimeJSON {
        guard var object = node.object else { return .null }
        if let reference = object["$ref"]?.string, let target = schema.resolve(reference)?.object { object = target }
        if let options = object["anyOf"]?.array, let first = options.first { return fallback(for: first, in: schema) }
        switch types(of: object, in: schema).first(where: { $0 != "null" }) {
        case "object"?: return .object(RealtimeObject())
        case "array"?: return .array([])
        case "boolean"?: return .bool(false)
        case "integer"?: return .int(0)
        case "number"?: return .double(0)
        case "null"?: return .null
        default: return .string("")
        }
    }

    private static func types(of object: RealtimeObject, in schema: SandboxSchema) -> [String] {
        if let reference = object["$ref"]?.string, let target = schema.resolve(reference)?.object {
            return SandboxSchema.types(of: target)
        }
        return SandboxSchema.types(of: object)
    }

    private static func isEmpty(_ value: RealtimeJSON) -> Bool {
        switch value {
        case .null: true
        case .string(let text): text.isEmpty
        default: false
        }
    }

    /// The topic a property name asks for (whole words of the snake_case or camelCase name).
    static func topic(forName name: String) -> Topic {
        var words: [String] = []
        var current = ""
        for character in name {
            if character == "_" || character == "-" || character == " " || character.isUppercase {
                if !current.isEmpty { words.append(current) }
                current = character.isUppercase ? character.lowercased() : ""
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { words.append(current) }
        func has(_ stems: [String]) -> Bool {
            words.contains { word in stems.contains { word == $0 || word == $0 + "s" || word == $0 + "es" } }
        }
        if has(["urgent", "urgency", "priority", "priorities", "emergency", "emergencies", "important", "alert", "critical"]) { return .urgent }
        if has(["decision", "decided", "agreement", "conclusion"]) { return .decisions }
        if has(["action", "task", "todo", "followup", "assignment", "step"]) || (words.contains("follow") && words.contains("up")) {
            return .actions
        }
        if has(["owner", "assignee", "who", "sender", "person", "speaker", "author", "responsible", "assigned"]) { return .owner }
        if has(["date", "deadline", "when", "time", "schedule", "event", "due", "day", "appointment", "calendar"]) { return .dates }
        if has(["overview", "summary", "gist", "recap", "narration", "abstract", "tldr", "synopsis", "headline"]) { return .overview }
        if has(["language", "locale", "lang"]) { return .language }
        if has(["count", "number", "total", "num"]) { return .count }
        return .other
    }
}

extension SandboxOpenAI {
    /// OpenAI's reasoning models: the `gpt-5` family and its successors, and the `o` series.
    static func isReasoningModel(_ model: String) -> Bool {
        ["gpt-5", "o1", "o3", "o4"].contains { model == $0 || model.hasPrefix($0 + "-") || model.hasPrefix($0 + ".") }
    }

    /// The efforts a reasoning model accepts: `none` from gpt-5.1 on, `minimal` in the original gpt-5 family.
    static func reasoningEfforts(_ model: String) -> [String] {
        if model.hasPrefix("gpt-5.") { return ["none", "low", "medium", "high", "xhigh"] }
        if model == "gpt-5" || model.hasPrefix("gpt-5-") { return ["minimal", "low", "medium", "high"] }
        return ["low", "medium", "high"]
    }

    /// The effort used when a request names none: `none` from gpt-5.1 on, `medium` before.
    static func defaultReasoningEffort(_ model: String) -> String {
        model.hasPrefix("gpt-5.") ? "none" : "medium"
    }

    /// The hidden reasoning tokens the emulator bills for an effort.
    static func reasoningTokens(_ effort: String?) -> Int {
        switch effort {
        case "minimal": 16
        case "low": 128
        case "medium": 512
        case "high", "xhigh": 1_536
        default: 0
        }
    }
}
