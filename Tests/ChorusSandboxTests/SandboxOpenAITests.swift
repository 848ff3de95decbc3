import AsyncHTTPClient
import ChorusCore
import ChorusProviders
import ChorusSandbox
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import Testing

/// The OpenAI HTTP emulator mounted through ``SandboxServices`` on a ``SandboxServer`` (loopback, ephemeral port),
/// driven by the real OpenAI clients.
final class OpenAIHarness: Sendable {
    static let apiKey = "sk-sandbox-openai-0123456789abcdef"

    let services: SandboxServices
    let server: SandboxServer
    let baseURL: URL

    private init(services: SandboxServices, server: SandboxServer, baseURL: URL) {
        self.services = services
        self.server = server
        self.baseURL = baseURL
    }

    var openAI: SandboxOpenAI { services.openAI }

    static func start() async throws -> OpenAIHarness {
        let services = SandboxServices(
            twilio: SandboxTwilio(accountSID: "AC1", authToken: "sandbox-token-for-openai-tests", httpClient: .shared),
            appStore: try SandboxAppStore.ephemeral(bundleID: "app.chorus"),
            openAI: SandboxOpenAI(apiKey: apiKey)
        )
        let server = SandboxServer(services: services)
        try await server.start()
        return OpenAIHarness(services: services, server: server, baseURL: try #require(server.baseURL))
    }

    func shutdown() async throws {
        try await server.shutdown()
    }

    /// The API root the clients use.
    var apiURL: URL { baseURL.appendingPathComponent("openai/v1") }

    /// Quick retries, so retry tests take milliseconds.
    static let fastRetry = ProviderHTTP.RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10), maxDelay: .seconds(5))

    func connection(key: String = OpenAIHarness.apiKey, retry: ProviderHTTP.RetryPolicy = OpenAIHarness.fastRetry) -> OpenAIConnection {
        OpenAIConnection(
            apiKey: key, baseURL: apiURL, organization: "org-sandbox", project: "proj_sandbox", httpClient: .shared,
            timeout: .seconds(30), retry: retry, logger: Logger(label: "test.openai"))
    }

    func transcriber(_ model: String, retry: ProviderHTTP.RetryPolicy = OpenAIHarness.fastRetry) -> OpenAITranscriber {
        OpenAITranscriber(connection: connection(retry: retry), model: model)
    }

    var synthesizer: OpenAISpeechSynthesizer { OpenAISpeechSynthesizer(connection: connection()) }

    func generator(retry: ProviderHTTP.RetryPolicy = OpenAIHarness.fastRetry) -> OpenAITextGenerator {
        OpenAITextGenerator(connection: connection(retry: retry))
    }

    /// `PUT /openai/behavior` with a JSON body; returns the status.
    @discardableResult
    func putBehavior(_ json: String) async throws -> Int {
        var request = HTTPClientRequest(url: baseURL.absoluteString + "/openai/behavior")
        request.method = .PUT
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: json))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 16)
        return Int(response.status.code)
    }

    /// `GET <path>` on the sandbox with optional bearer key: status and JSON object body.
    func get(_ path: String, key: String? = nil) async throws -> (status: Int, json: [String: Any]) {
        var request = HTTPClientRequest(url: baseURL.absoluteString + path)
        if let key { request.headers.add(name: "Authorization", value: "Bearer \(key)") }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] ?? [:]
        return (Int(response.status.code), json)
    }

    /// Requests received per endpoint.
    func counts() async throws -> [String: Int] {
        try await get("/openai/request-counts").json.compactMapValues { $0 as? Int }
    }
}

func withOpenAI(_ body: (OpenAIHarness) async throws -> Void) async throws {
    let harness = try await OpenAIHarness.start()
    do {
        try await body(harness)
    } catch {
        try? await harness.shutdown()
        throw error
    }
    try await harness.shutdown()
}

/// A family thread as the server would send it for a summary.
let familyThread = """
    Summarize this conversation for the family:
    Mom: Soccer practice moved to Friday at 5pm.
    Dad: We decided to take the early train on Saturday.
    Mom: Sam, can you pick up milk tomorrow?
    Sam: Sure, I will get it after school.
    Grandma: Grandpa is in the hospital, please call me asap.
    Dad: Let's visit him tonight.
    """

/// A strict schema like the summary's: overview, decisions, action items, dates, urgent items.
let summarySchema = """
    {"type":"object","additionalProperties":false,"required":["overview","decisions","action_items","dates","urgent_items","has_urgent","message_count"],
     "properties":{
      "overview":{"type":"string"},
      "decisions":{"type":"array","items":{"type":"string"}},
      "action_items":{"type":"array","items":{"$ref":"#/$defs/action"}},
      "dates":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["when","what"],
        "properties":{"when":{"type":"string"},"what":{"type":"string"}}}},
      "urgent_items":{"type":"array","items":{"type":"object","additionalProperties":false,"required":["text","level"],
        "properties":{"text":{"type":"string"},"level":{"type":"string","enum":["normal","high"]}}}},
      "has_urgent":{"type":"boolean"},
      "message_count":{"type":"integer"}},
     "$defs":{"action":{"type":"object","additionalProperties":false,"required":["owner","task","due"],
       "properties":{"owner":{"type":["string","null"]},"task":{"type":"string"},"due":{"anyOf":[{"type":"string"},{"type":"null"}]}}}}}
    """

/// A parsed JSON value that keeps booleans, integers and numbers apart (JSONSerialization on Linux does not).
indirect enum TestJSON: Decodable, Equatable {
    case null, bool(Bool), integer(Int), number(Double), string(String), array([TestJSON]), object([String: TestJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([TestJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: TestJSON].self))
        }
    }

    static func parse(_ text: String) throws -> TestJSON { try JSONDecoder().decode(TestJSON.self, from: Data(text.utf8)) }

    subscript(key: String) -> TestJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var strings: [String] {
        if case .array(let items) = self { return items.compactMap { if case .string(let text) = $0 { text } else { nil } } }
        return []
    }
}

/// Checks `value` against the part of JSON Schema strict structured outputs use; returns the problems.
func schemaProblems(_ value: TestJSON, _ schema: TestJSON, root: TestJSON, path: String = "$") -> [String] {
    var schema = schema
    if case .string(let reference)? = schema["$ref"] {
        var node = root
        for key in reference.dropFirst(2).split(separator: "/") { node = node[String(key)] ?? .null }
        schema = node
    }
    if case .array(let options)? = schema["anyOf"] {
        return options.contains { schemaProblems(value, $0, root: root, path: path).isEmpty } ? [] : ["\(path): matches no anyOf option"]
    }
    if case .array(let options)? = schema["enum"], !options.contains(value) { return ["\(path): not in enum"] }
    let types: [String]
    switch schema["type"] {
    case .string(let type)?: types = [type]
    case .array?: types = schema["type"]?.strings ?? []
    default: types = []
    }
    let matches: (String) -> Bool = { type in
        switch (type, value) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool), ("integer", .integer),
            ("number", .number), ("number", .integer), ("null", .null):
            true
        default: false
        }
    }
    guard types.isEmpty || types.contains(where: matches) else { return ["\(path): not \(types)"] }
    var problems: [String] = []
    if case .object(let object) = value, case .object(let properties)? = schema["properties"] {
        for key in schema["required"]?.strings ?? [] where object[key] == nil { problems.append("\(path).\(key): missing") }
        for key in object.keys where properties[key] == nil { problems.append("\(path).\(key): not allowed") }
        for (key, property) in properties {
            if let member = object[key] { problems += schemaProblems(member, property, root: root, path: "\(path).\(key)") }
        }
    }
    if case .array(let array) = value, let items = schema["items"] {
        for (index, item) in array.enumerated() { problems += schemaProblems(item, items, root: root, path: "\(path)[\(index)]") }
    }
    return problems
}

@Suite("Sandbox OpenAI HTTP", .serialized)
struct SandboxOpenAITests {
    // MARK: - Speech and transcription

    @Test func speechAsWAVRoundTripsThroughWhisperWithSegments() async throws {
        try await withOpenAI { harness in
            let text = "Hello family. Dinner is at six tonight! Who is bringing dessert?"
            let speech = try await harness.synthesizer.synthesize(
                SpeechRequest(text: text, voiceID: "coral", model: "gpt-4o-mini-tts", instructions: "Warm and calm.", format: .wav))
            #expect(speech.format == .wav)
            #expect(speech.billedCharacters == text.count)
            let pcm = try #require(SandboxAudioFiles.pcm16(wav: speech.audio))
            #expect(pcm.sampleRate == 24_000)
            let rms = (pcm.samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(pcm.samples.count)).squareRoot()
            #expect(rms > 500, "the WAV is audible")
            #expect(SandboxAudioFiles.embeddedText(in: speech.audio) == text)
            let wavSeconds = Double(pcm.samples.count) / 24_000

            let transcription = try await harness.transcriber("whisper-1").transcribe(
                TranscriptionRequest(audio: speech.audio, filename: "message.wav", contentType: "audio/wav"))
            #expect(transcription.text == text)
            #expect(transcription.model == "whisper-1")
            #expect(transcription.language == "en")
            #expect(abs((transcription.durationSeconds ?? 0) - wavSeconds) < 0.02)
            let segments = transcription.evidence.segments
            #expect(segments.map(\.text) == ["Hello family.", "Dinner is at six tonight!", "Who is bringing dessert?"])
            #expect(segments.first?.start == 0)
            #expect(abs((segments.last?.end ?? 0) - wavSeconds) < 0.02)
            #expect(zip(segments, segments.dropFirst()).allSatisfy { $0.end == $1.start && $0.start < $0.end })
            #expect(segments.allSatisfy { (-0.3 ... -0.1).contains($0.averageLogprob) })
            #expect(segments.allSatisfy { (1.2...1.4).contains($0.compressionRatio) && $0.noSpeechProbability < 0.05 })
            #expect(transcription.evidence.tokenLogprobs.isEmpty)
        }
    }

    @Test func speechAsMP3RoundTripsThroughTheGPT4oModelsWithTheirEvidence() async throws {
        try await withOpenAI { harness in
            let text = "Remember the dentist appointment on Tuesday."
            let speech = try await harness.synthesizer.synthesize(SpeechRequest(text: text, voiceID: "alloy", model: "tts-1"))
            #expect(speech.format == .mp3)
            #expect(speech.audio.prefix(3) == Data("ID3".utf8))
            #expect(SandboxAudioFiles.embeddedText(in: speech.audio) == text)
            let expected = Double(SandboxSpeech.speak(text, voice: 0).count) / 8_000
            let seconds = try #require(SandboxAudioFiles.durationSeconds(of: speech.audio))
            #expect(seconds >= expected && seconds < expected + 0.025, "whole 24 ms frames covering the speech")

            let request = TranscriptionRequest(audio: speech.audio, filename: "note.mp3", contentType: "audio/mpeg", language: "en")
            let mini = try await harness.transcriber("gpt-4o-mini-transcribe").transcribe(request)
            #expect(mini.text == text)
            #expect(mini.evidence.segments.isEmpty)
            #expect(mini.evidence.tokenLogprobs.count == text.split(separator: " ").count)
            #expect(mini.evidence.tokenLogprobs.allSatisfy { $0 < 0 && $0 > -0.2 })
            #expect(mini.language == "en")
            #expect(mini.durationSeconds == nil, "token-billed models report no duration")

            let plain = try await harness.transcriber("gpt-transcribe").transcribe(request)
            #expect(plain.text == text)
            #expect(plain.evidence == TranscriptEvidence(detectedLanguages: ["en"]), "gpt-transcribe reports only the languages")
            #expect(plain.language == "en")
            #expect(plain.durationSeconds == seconds.rounded(.up))
        }
    }

    @Test func silenceComesBackAsWhispersHallucinationWithNoSpeechEvidence() async throws {
        try await withOpenAI { harness in
            let silence = SandboxAudioFiles.wav(pcm16: [Int16](repeating: 3, count: 16_000 * 2), sampleRate: 16_000, text: "")
            // A plain WAV without the sandbox's text chunk: what a phone records in a quiet room.
            var quiet = Data()
            quiet.append(contentsOf: Array("RIFF".utf8))
            let samples = [Int16](repeating: 2, count: 16_000 * 2)
            let dataBytes = samples.count * 2
            for value in [UInt32(36 + dataBytes)] { withUnsafeBytes(of: value.littleEndian) { quiet.append(contentsOf: $0) } }
            quiet.append(contentsOf: Array("WAVEfmt ".utf8))
            for value: UInt32 in [16] { withUnsafeBytes(of: value.littleEndian) { quiet.append(contentsOf: $0) } }
            for value: UInt16 in [1, 1] { withUnsafeBytes(of: value.littleEndian) { quiet.append(contentsOf: $0) } }
            for value: UInt32 in [16_000, 32_000] { withUnsafeBytes(of: value.littleEndian) { quiet.append(contentsOf: $0) } }
            for value: UInt16 in [2, 16] { withUnsafeBytes(of: value.littleEndian) { quiet.append(contentsOf: $0) } }
            quiet.append(contentsOf: Array("data".utf8))
            withUnsafeBytes(of: UInt32(dataBytes).littleEndian) { quiet.append(contentsOf: $0) }
            for sample in samples { withUnsafeBytes(of: sample.littleEndian) { quiet.append(contentsOf: $0) } }
            #expect(SandboxAudioFiles.embeddedText(in: quiet) == nil)

            for audio in [quiet, silence] {
                let whisper = try await harness.transcriber("whisper-1").transcribe(
                    TranscriptionRequest(audio: audio, filename: "quiet.wav", contentType: "audio/wav"))
                #expect(whisper.text == "Thank you.")
                let segment = try #require(whisper.evidence.segments.first)
                #expect(whisper.evidence.segments.count == 1)
                #expect(segment.noSpeechProbability == 0.9)
                #expect(segment.averageLogprob == -1.3)
                #expect(whisper.durationSeconds == 2)
            }

            let logprobs = try await harness.transcriber("gpt-4o-transcribe").transcribe(
                TranscriptionRequest(audio: quiet, filename: "quiet.wav", contentType: "audio/wav"))
            #expect(logprobs.text == "Thank you.")
            #expect(logprobs.evidence.tokenLogprobs == [-1.3, -1.3])
        }
    }

    @Test func unknownAudioGetsASentenceNamingItsDuration() async throws {
        try await withOpenAI { harness in
            // 1.5 s of a loud tone in a WAV without the sandbox's text.
            let tone = (0..<12_000).map { Int16(8_000 * sin(Double($0) * 0.3)) }
            var wav = SandboxAudioFiles.wav(pcm16: tone, sampleRate: 8_000, text: "x")
            // Rename the INFO chunk so the emulator cannot read the text.
            let range = try #require(wav.range(of: Data("LIST".utf8)))
            wav.replaceSubrange(range, with: Data("JUNK".utf8))
            #expect(SandboxAudioFiles.embeddedText(in: wav) == nil)
            // (gpt-transcribe hears a steady tone as no speech: see SandboxGPTTranscribeTests.)
            let result = try await harness.transcriber("gpt-4o-mini-transcribe").transcribe(
                TranscriptionRequest(audio: wav, filename: "Voice \"memo\" 1.WAV", contentType: "audio/wav", language: "fr"))
            #expect(result.text == "This is a sandbox transcription of 1.5 seconds of audio.")
            #expect(result.language == "fr")
        }
    }

    @Test func transcriptionRequestsAreCheckedLikeTheAPI() async throws {
        try await withOpenAI { harness in
            let audio = SandboxAudioFiles.speechWAV(text: "Hi.", voice: "echo")
            let request = TranscriptionRequest(audio: audio, filename: "hi.wav", contentType: "audio/wav")
            let notFound = ProviderError.rejected(
                httpStatus: 404, code: "model_not_found", message: "The model `whisper-2` does not exist or you do not have access to it.")
            await #expect(throws: notFound) {
                _ = try await harness.transcriber("whisper-2", retry: .none).transcribe(request)
            }
            await #expect(throws: ProviderError.self) {
                _ = try await harness.transcriber("whisper-1", retry: .none).transcribe(
                    TranscriptionRequest(audio: audio, filename: "hi.aiff", contentType: "audio/aiff"))
            }
            do {
                _ = try await harness.transcriber("whisper-1", retry: .none).transcribe(
                    TranscriptionRequest(audio: audio, filename: "hi.wav", contentType: "audio/wav", language: "english"))
                Issue.record("a language name instead of an ISO-639-1 code is refused")
            } catch let ProviderError.rejected(status, code, message) {
                #expect(status == 400)
                #expect(code == "invalid_language_format")
                #expect(message.contains("ISO-639-1"))
            }
        }
    }

    @Test func everyTranscriptionFormatHasTheAPIsShape() async throws {
        try await withOpenAI { harness in
            let text = "Pick up Sam at noon. Then we go home."
            let audio = SandboxAudioFiles.speechWAV(text: text, voice: "verse")
            func post(_ fields: [(String, String)]) async throws -> (status: Int, contentType: String, body: String) {
                var form = MultipartFormData()
                form.append(name: "file", filename: "clip.wav", contentType: "audio/wav", data: audio)
                for (name, value) in fields { form.append(name: name, value: value) }
                var request = HTTPClientRequest(url: harness.apiURL.absoluteString + "/audio/transcriptions")
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Bearer \(OpenAIHarness.apiKey)")
                request.headers.add(name: "Content-Type", value: form.contentType)
                request.body = .bytes(ByteBuffer(data: form.encoded()))
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 1 << 20)
                return (Int(response.status.code), response.headers.first(name: "Content-Type") ?? "", String(buffer: body))
            }

            let verbose = try await post([("model", "whisper-1"), ("response_format", "verbose_json"), ("timestamp_granularities[]", "word")])
            #expect(verbose.status == 200)
            let json = try TestJSON.parse(verbose.body)
            #expect(json["task"] == .string("transcribe") && json["language"] == .string("english") && json["text"] == .string(text))
            #expect(json["segments"] == nil, "only the granularities asked for")
            guard case .array(let words)? = json["words"] else { throw TestFailure("no words") }
            #expect(words.count == 9 && words.first?["word"] == .string("Pick"))
            let segmented = try TestJSON.parse(
                try await post([("model", "whisper-1"), ("response_format", "verbose_json"), ("language", "de")]).body)
            #expect(segmented["language"] == .string("german"))
            guard case .array(let segments)? = segmented["segments"], let first = segments.first else { throw TestFailure("no segments") }
            #expect(segments.count == 2)
            for key in ["id", "seek", "start", "end", "text", "tokens", "temperature", "avg_logprob", "compression_ratio", "no_speech_prob"] {
                #expect(first[key] != nil, "segment member \(key)")
            }
            #expect(first["text"] == .string(" Pick up Sam at noon."))
            #expect(segmented["usage"]?["type"] == .string("duration"))

            let plain = try await post([("model", "whisper-1"), ("response_format", "text")])
            #expect(plain.body == text + "\n" && plain.contentType.hasPrefix("text/plain"))
            let srt = try await post([("model", "whisper-1"), ("response_format", "srt")]).body
            #expect(srt.hasPrefix("1\n00:00:00,000 --> 00:00:0"))
            #expect(srt.contains("\nPick up Sam at noon.\n\n2\n"))
            let vtt = try await post([("model", "whisper-1"), ("response_format", "vtt")])
            #expect(vtt.body.hasPrefix("WEBVTT\n\n00:00:00.000 --> ") && vtt.contentType.hasPrefix("text/vtt"))
            let diarized = try TestJSON.parse(
                try await post([("model", "gpt-4o-transcribe-diarize"), ("response_format", "diarized_json")]).body)
            guard case .array(let speakers)? = diarized["segments"] else { throw TestFailure("no diarized segments") }
            #expect(speakers.first?["type"] == .string("transcript.text.segment") && speakers.first?["speaker"] == .string("A"))
            #expect(speakers.first?["id"] == .string("seg_001"))

            let refusals: [([(String, String)], String)] = [
                ([("model", "gpt-4o-transcribe"), ("response_format", "verbose_json")], "is not compatible with model 'gpt-4o-transcribe'"),
                ([("model", "whisper-1"), ("include[]", "logprobs")], "logprobs are only supported"),
                (
                    [("model", "whisper-1"), ("response_format", "json"), ("timestamp_granularities[]", "segment")],
                    "requires response_format 'verbose_json'"
                ),
                ([("response_format", "json")], "you must provide a model parameter"),
            ]
            for (fields, message) in refusals {
                let refused = try await post(fields)
                #expect(refused.status == 400)
                let error = try TestJSON.parse(refused.body)["error"]
                #expect(error?["type"] == .string("invalid_request_error"))
                if case .string(let text)? = error?["message"] { #expect(text.contains(message), "\(text)") } else { Issue.record("no message") }
            }
        }
    }

    @Test func uploadsOverTheAPILimitGetThe413() async throws {
        try await withOpenAI { harness in
            let audio = Data(count: SandboxOpenAI.maxUploadBytes)
            do {
                _ = try await harness.transcriber("whisper-1").transcribe(
                    TranscriptionRequest(audio: audio, filename: "long.wav", contentType: "audio/wav"))
                Issue.record("a body over 25 MiB is refused")
            } catch let ProviderError.rejected(status, code, message) {
                #expect(status == 413)
                #expect(code == nil)
                #expect(message.hasPrefix("Maximum content size limit (26214400) exceeded ("))
                #expect(message.hasSuffix(" bytes read)"))
            }
            #expect(try await harness.counts()["audio/transcriptions"] == 1, "413 is not retried")
        }
    }

    @Test func speechRequestsAreCheckedLikeTheAPI() async throws {
        try await withOpenAI { harness in
            let synthesizer = harness.synthesizer
            #expect(synthesizer.maxInputCharacters == 4_096)
            let long = String(repeating: "a", count: 4_097)
            do {
                _ = try await synthesizer.synthesize(SpeechRequest(text: long, voiceID: "coral", model: "gpt-4o-mini-tts"))
                Issue.record("4,097 characters are refused")
            } catch let ProviderError.rejected(status, _, message) {
                #expect(status == 400)
                #expect(message.contains("String should have at most 4096 characters"))
            }
            let longest = try await synthesizer.synthesize(
                SpeechRequest(text: String(repeating: "a", count: 4_096), voiceID: "coral", model: "gpt-4o-mini-tts"))
            #expect(longest.billedCharacters == 4_096)
            do {
                _ = try await synthesizer.synthesize(SpeechRequest(text: "Hi.", voiceID: "robot", model: "tts-1"))
                Issue.record("an unknown voice is refused")
            } catch let ProviderError.rejected(status, code, _) {
                #expect(status == 400)
                #expect(code == "invalid_value")
            }
            let custom = try await synthesizer.synthesize(SpeechRequest(text: "Hi there.", voiceID: "voice_1234", model: "gpt-4o-mini-tts"))
            #expect(SandboxAudioFiles.embeddedText(in: custom.audio) == "Hi there.")
        }
    }

    // MARK: - Chat completions

    @Test func structuredSummaryFollowsTheSchemaAndExtractsTheThread() async throws {
        try await withOpenAI { harness in
            let request = TextGenerationRequest(
                model: "gpt-4.1-mini",
                messages: [
                    ChatMessage(role: .system, content: "You summarize family conversations for listening."),
                    ChatMessage(role: .user, content: familyThread),
                ],
                format: StructuredOutputFormat(name: "conversation_summary", schemaJSON: summarySchema), maxOutputTokens: 2_000,
                temperature: 0.2, safetyIdentifier: "user-5f2b")
            let generated = try await harness.generator().generate(request)
            #expect(generated.model == "gpt-4.1-mini")
            #expect(generated.promptTokens > 0 && generated.completionTokens > 0)

            let schema = try TestJSON.parse(summarySchema)
            #expect(schemaProblems(try TestJSON.parse(generated.content), schema, root: schema) == [])
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(generated.content.utf8)) as? [String: Any])

            let overview = try #require(answer["overview"] as? String)
            #expect(overview.hasPrefix("6 messages from Mom, Dad, Sam and Grandma."))
            #expect(answer["decisions"] as? [String] == ["We decided to take the early train on Saturday.", "Let's visit him tonight."])
            let actions = try #require(answer["action_items"] as? [[String: Any]])
            let milk = try #require(actions.first { ($0["task"] as? String)?.contains("milk") == true })
            #expect(milk["owner"] as? String == "Sam", "addressed by name")
            #expect(milk["due"] as? String == "tomorrow")
            let afterSchool = try #require(actions.first { ($0["task"] as? String)?.contains("after school") == true })
            #expect(afterSchool["owner"] as? String == "Sam")
            #expect(afterSchool["due"] is NSNull, "no date in the sentence → null")
            let dates = try #require(answer["dates"] as? [[String: Any]])
            #expect(dates.first?["when"] as? String == "Friday 5pm")
            #expect(dates.contains { $0["when"] as? String == "Saturday" })
            let urgent = try #require(answer["urgent_items"] as? [[String: Any]])
            #expect(urgent.count == 1)
            #expect((urgent.first?["text"] as? String)?.contains("hospital") == true)
            #expect(urgent.first?["level"] as? String == "high")
            #expect(answer["has_urgent"] as? Bool == true)
            #expect(answer["message_count"] as? Int == 6)
        }
    }

    @Test func strictSchemaViolationsAreRejected() async throws {
        try await withOpenAI { harness in
            let cases = [
                (#"{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}"#, "'additionalProperties' is required"),
                (
                    #"{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"]}"#,
                    "Missing 'b'"
                ),
                (
                    #"{"type":"object","additionalProperties":false,"required":["items"],"properties":{"items":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}}}}"#,
                    "In context=('properties', 'items', 'items'), 'additionalProperties'"
                ),
            ]
            for (schema, expected) in cases {
                let request = TextGenerationRequest(
                    model: "gpt-4o-mini", messages: [ChatMessage(role: .user, content: familyThread)],
                    format: StructuredOutputFormat(name: "summary", schemaJSON: schema))
                do {
                    _ = try await harness.generator().generate(request)
                    Issue.record("\(schema) is not a strict schema")
                } catch let ProviderError.rejected(status, _, message) {
                    #expect(status == 400)
                    #expect(message.hasPrefix("Invalid schema for response_format 'summary': "))
                    #expect(message.contains(expected), "\(message)")
                }
            }
            #expect(try await harness.counts()["chat/completions"] == cases.count, "400 is not retried")
        }
    }

    @Test func textSummaryRefusalsAndCutOffAnswers() async throws {
        try await withOpenAI { harness in
            let generator = harness.generator()
            let summary = try await generator.generate(
                TextGenerationRequest(model: "gpt-4o-mini", messages: [ChatMessage(role: .user, content: familyThread)]))
            #expect(summary.content.hasPrefix("Here is a summary. 6 messages from Mom, Dad, Sam and Grandma."))
            #expect(summary.content.contains("Decisions: Dad: We decided to take the early train on Saturday."))
            #expect(summary.content.contains("Urgent: Grandma: Grandpa is in the hospital"))

            await #expect(throws: TextGenerationError.incomplete(finishReason: "length")) {
                _ = try await generator.generate(
                    TextGenerationRequest(
                        model: "gpt-4o-mini", messages: [ChatMessage(role: .user, content: familyThread)], maxOutputTokens: 5))
            }
            await #expect(throws: TextGenerationError.refused("I'm sorry, but I can't help with that request.")) {
                _ = try await generator.generate(
                    TextGenerationRequest(model: "gpt-4o-mini", messages: [ChatMessage(role: .user, content: "[sandbox:refuse] hi")]))
            }
            await #expect(throws: TextGenerationError.incomplete(finishReason: "content_filter")) {
                _ = try await generator.generate(
                    TextGenerationRequest(
                        model: "gpt-4o-mini", messages: [ChatMessage(role: .user, content: "[sandbox:content_filter] hi")]))
            }
        }
    }

    // MARK: - Failures, keys and the request log

    @Test func rateLimitsAreRetriedAndHonourRetryAfter() async throws {
        try await withOpenAI { harness in
            #expect(try await harness.putBehavior(#"{"fail_next":1,"status":429,"code":"rate_limit_exceeded"}"#) == 200)
            let audio = SandboxAudioFiles.speechWAV(text: "Retry me.", voice: "sage")
            let request = TranscriptionRequest(audio: audio, filename: "retry.wav", contentType: "audio/wav")
            let first = try await harness.transcriber("whisper-1").transcribe(request)
            #expect(first.text == "Retry me.")
            #expect(try await harness.counts()["audio/transcriptions"] == 2)
            #expect(harness.openAI.behavior.failNext == 0)

            // Retry-After is waited for (a lower bound: the retry cannot come sooner).
            #expect(try await harness.putBehavior(#"{"fail_next":1,"retry_after_seconds":1,"endpoint":"audio/transcriptions"}"#) == 200)
            let start = ContinuousClock.now
            _ = try await harness.transcriber("whisper-1").transcribe(request)
            #expect(ContinuousClock.now - start >= .milliseconds(950))
            #expect(try await harness.counts()["audio/transcriptions"] == 4)

            // Rate limits that outlast the retries surface as rateLimited with the server's wait.
            #expect(try await harness.putBehavior(#"{"fail_next":5,"retry_after_seconds":0.02}"#) == 200)
            do {
                _ = try await harness.transcriber("whisper-1").transcribe(request)
                Issue.record("three rate limits in a row exhaust the retries")
            } catch let ProviderError.rateLimited(retryAfter, message) {
                #expect(retryAfter == .milliseconds(20))
                #expect(message.hasPrefix("Rate limit reached for requests"))
            }
            #expect(try await harness.counts()["audio/transcriptions"] == 7)
        }
    }

    @Test func insufficientQuotaIsNotRetried() async throws {
        try await withOpenAI { harness in
            #expect(try await harness.putBehavior(#"{"fail_next":3,"status":429,"code":"insufficient_quota"}"#) == 200)
            do {
                _ = try await harness.generator().generate(
                    TextGenerationRequest(model: "gpt-4o-mini", messages: [ChatMessage(role: .user, content: "Mom: hi")]))
                Issue.record("quota errors surface")
            } catch let ProviderError.quotaExceeded(message) {
                #expect(message.hasPrefix("You exceeded your current quota"))
            }
            #expect(try await harness.counts()["chat/completions"] == 1)
            #expect(harness.openAI.behavior.failNext == 2)
        }
    }

    @Test func serverErrorsAreRetriedThenUnavailable() async throws {
        try await withOpenAI { harness in
            #expect(try await harness.putBehavior(#"{"fail_next":2,"status":503,"endpoint":"audio/speech"}"#) == 200)
            let retryTwice = ProviderHTTP.RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(5), maxDelay: .seconds(1))
            let synthesizer = OpenAISpeechSynthesizer(connection: harness.connection(retry: retryTwice))
            let request = SpeechRequest(text: "Hello.", voiceID: "nova", model: "tts-1", format: .wav)
            do {
                _ = try await synthesizer.synthesize(request)
                Issue.record("two 503s exhaust two attempts")
            } catch let ProviderError.unavailable(message) {
                #expect(message.contains("503"))
            }
            // The injected failures only hit speech; the next speech request succeeds.
            #expect(
                try await harness.generator().generate(
                    TextGenerationRequest(model: "gpt-4o-mini", messages: [ChatMessage(role: .user, content: "Dad: ok")])
                ).content.isEmpty == false)
            #expect(try await synthesizer.synthesize(request).audio.isEmpty == false)
            #expect(try await harness.counts()["audio/speech"] == 3)
            #expect(try await harness.putBehavior(#"{"status":418}"#) == 400)
        }
    }

    @Test func missingOrWrongKeysGet401() async throws {
        try await withOpenAI { harness in
            let wrong = OpenAITextGenerator(connection: harness.connection(key: "sk-wrong-key-000000000000"))
            do {
                _ = try await wrong.generate(TextGenerationRequest(model: "gpt-4o-mini", messages: [ChatMessage(role: .user, content: "hi")]))
                Issue.record("a wrong key is refused")
            } catch let ProviderError.rejected(status, code, message) {
                #expect(status == 401)
                #expect(code == "invalid_api_key")
                #expect(message.hasPrefix("Incorrect API key provided: sk-*****0000."))
            }
            let missing = try await harness.get("/openai/v1/models")
            #expect(missing.status == 401)
            let error = try #require(missing.json["error"] as? [String: Any])
            #expect((error["message"] as? String)?.hasPrefix("You didn't provide an API key.") == true)
            #expect(error["type"] as? String == "invalid_request_error")
            #expect(error["param"] is NSNull && error["code"] is NSNull)
        }
    }

    @Test func requestsAreRecordedWithTheKeyRedacted() async throws {
        try await withOpenAI { harness in
            _ = try await harness.generator().generate(
                TextGenerationRequest(
                    model: "gpt-4o-mini", messages: [ChatMessage(role: .user, content: "Mom: my key is \(OpenAIHarness.apiKey)")]))
            let entry = try #require(harness.services.recorder.requests().last)
            #expect(entry.path == "/openai/v1/chat/completions")
            #expect(entry.headers["authorization"] == "[REDACTED]")
            #expect(entry.headers["openai-organization"] == "org-sandbox")
            #expect(entry.headers["openai-project"] == "proj_sandbox")
            let body = try #require(entry.body)
            #expect(!body.contains(OpenAIHarness.apiKey))
            #expect(body.contains("my key is [REDACTED]"))
            #expect(entry.responseStatus == 200)
        }
    }

    @Test func modelsListAnnouncesShutdownDates() async throws {
        try await withOpenAI { harness in
            var list = try await harness.get("/openai/v1/models", key: OpenAIHarness.apiKey)
            #expect(list.status == 200)
            #expect(list.json["object"] as? String == "list")
            var models = try #require(list.json["data"] as? [[String: Any]])
            #expect(models.count == SandboxOpenAI.defaultModels.count)
            #expect(models.allSatisfy { $0["object"] as? String == "model" })
            func date(_ id: String) -> Any? { models.first { $0["id"] as? String == id }?["shutdown_date"] }
            // The announced dates by default; the current models have none.
            #expect(date("whisper-1") as? String == "2027-02-26" && date("tts-1") as? String == "2027-01-06")
            #expect(date("gpt-4.1-mini") as? String == "2027-01-14" && date("gpt-realtime") as? String == "2027-01-20")
            #expect(date("gpt-5") as? String == "2026-12-11" && date("gpt-image-1.5") as? String == "2026-12-01")
            for current in ["gpt-realtime-2.1", "gpt-realtime-2.1-mini", "gpt-transcribe", "gpt-live-transcribe", "gpt-5.4-mini", "gpt-5.5",
                "gpt-image-2", "omni-moderation-latest"] {
                #expect(date(current) is NSNull, "\(current)")
            }
            // The behavior moves one date and leaves the others.
            #expect(try await harness.putBehavior(#"{"shutdown_dates":{"whisper-1":"2027-03-01","gpt-5.5":"2028-01-01"}}"#) == 200)
            list = try await harness.get("/openai/v1/models", key: OpenAIHarness.apiKey)
            models = try #require(list.json["data"] as? [[String: Any]])
            #expect(date("whisper-1") as? String == "2027-03-01" && date("gpt-5.5") as? String == "2028-01-01")
            #expect(date("tts-1") as? String == "2027-01-06")
            let one = try await harness.get("/openai/v1/models/tts-1", key: OpenAIHarness.apiKey)
            #expect(one.json["id"] as? String == "tts-1" && one.json["shutdown_date"] as? String == "2027-01-06")
            #expect(try await harness.get("/openai/v1/models/gpt-3", key: OpenAIHarness.apiKey).status == 404)
            #expect(try await harness.counts()["models"] == 4)
        }
    }

    // MARK: - Request bodies against the OpenAI spec

    /// `CreateSpeechRequest` (additionalProperties false; required model, input, voice; response_format enum).
    @Test func speechBodyConformsToCreateSpeechRequest() throws {
        let properties: Set<String> = ["model", "input", "instructions", "voice", "response_format", "speed", "stream_format"]
        let synthesizer = OpenAISpeechSynthesizer(connection: Self.offlineConnection, speed: 1.25)
        for request in [
            SpeechRequest(text: "Hi.", voiceID: "marin", model: "gpt-4o-mini-tts", instructions: "Cheerful.", format: .wav),
            SpeechRequest(text: "Hi.", voiceID: "voice_abc", model: "tts-1", format: .mp3),
        ] {
            let body = try #require(try JSONSerialization.jsonObject(with: synthesizer.body(for: request)) as? [String: Any])
            #expect(Set(body.keys).isSubset(of: properties))
            #expect(["model", "input", "voice"].allSatisfy { body[$0] != nil })
            #expect(["mp3", "opus", "aac", "flac", "wav", "pcm"].contains(body["response_format"] as? String ?? ""))
            #expect(body["speed"] as? Double == 1.25)
            #expect((body["instructions"] != nil) == (request.instructions != nil))
            if request.voiceID.hasPrefix("voice_") {
                #expect((body["voice"] as? [String: String]) == ["id": "voice_abc"])
            } else {
                #expect(body["voice"] as? String == "marin")
            }
        }
    }

    /// `CreateChatCompletionRequest` (required model and messages; known members only; ResponseFormatJsonSchema).
    @Test func chatBodyConformsToCreateChatCompletionRequest() throws {
        let generator = OpenAITextGenerator(connection: Self.offlineConnection)
        let request = TextGenerationRequest(
            model: "gpt-4.1-mini", messages: [ChatMessage(role: .system, content: "Be brief."), ChatMessage(role: .user, content: "Hi")],
            format: StructuredOutputFormat(name: "conversation_summary", schemaJSON: summarySchema), maxOutputTokens: 800,
            temperature: 0.3, safetyIdentifier: "user-5f2b")
        let data = try generator.body(for: request)
        let body = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(body.keys) == ["model", "messages", "response_format", "max_completion_tokens", "temperature", "safety_identifier", "store"])
        #expect(body["store"] as? Bool == false)
        #expect(body["max_completion_tokens"] as? Int == 800)
        let messages = try #require(body["messages"] as? [[String: String]])
        #expect(messages == [["role": "system", "content": "Be brief."], ["role": "user", "content": "Hi"]])
        let format = try #require(body["response_format"] as? [String: Any])
        #expect(format["type"] as? String == "json_schema")
        let jsonSchema = try #require(format["json_schema"] as? [String: Any])
        #expect(jsonSchema["name"] as? String == "conversation_summary")
        #expect(jsonSchema["strict"] as? Bool == true)
        #expect(
            (jsonSchema["schema"] as? [String: Any])?["required"] as? [String] == [
                "overview", "decisions", "action_items", "dates", "urgent_items", "has_urgent", "message_count",
            ])
        // The schema text is sent as given, so the model writes the members in the schema's order.
        #expect(String(decoding: data, as: UTF8.self).contains(summarySchema))

        let minimal = try #require(
            try JSONSerialization.jsonObject(
                with: generator.body(
                    for: TextGenerationRequest(
                        model: "gpt-4o",
                        messages: [
                            ChatMessage(role: .user, content: "Hi")
                        ]))) as? [String: Any])
        #expect(Set(minimal.keys) == ["model", "messages", "store"])
        #expect(throws: ProviderError.self) {
            _ = try generator.body(
                for: TextGenerationRequest(
                    model: "gpt-4o", messages: [], format: StructuredOutputFormat(name: "x", schemaJSON: "[1]")))
        }
    }

    /// `CreateTranscriptionRequest` (multipart; field names, response_format enum, include and granularities per model).
    @Test func transcriptionFormConformsToCreateTranscriptionRequest() {
        let request = TranscriptionRequest(audio: Data([1, 2, 3]), filename: "m.m4a", contentType: "audio/mp4", language: "de")
        let expected: [(String, OpenAITranscriber.EvidenceKind, [String])] = [
            ("whisper-1", .segments, ["response_format=verbose_json", "timestamp_granularities[]=segment"]),
            ("gpt-4o-transcribe", .tokenLogprobs, ["response_format=json", "include[]=logprobs"]),
            ("gpt-4o-mini-transcribe-2025-12-15", .tokenLogprobs, ["response_format=json", "include[]=logprobs"]),
            ("gpt-4o-transcribe-diarize", .none, ["response_format=json"]),
            ("gpt-transcribe", .languages, ["response_format=json", "languages[]=de"]),
        ]
        for (model, kind, fields) in expected {
            #expect(OpenAITranscriber.evidenceKind(forModel: model) == kind)
            let form = OpenAITranscriber(connection: Self.offlineConnection, model: model).form(for: request)
            let text = String(decoding: form.encoded(), as: UTF8.self)
            #expect(form.contentType == "multipart/form-data; boundary=\(form.boundary)")
            #expect(text.hasSuffix("--\(form.boundary)--\r\n"))
            let names = text.components(separatedBy: "form-data; name=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
            let allowed: Set<String> = [
                "file", "model", "language", "languages[]", "keywords[]", "prompt", "response_format", "temperature", "include[]",
                "timestamp_granularities[]", "stream", "chunking_strategy",
            ]
            #expect(names.allSatisfy { allowed.contains(String($0)) })
            #expect(text.contains("name=\"file\"; filename=\"m.m4a\"\r\nContent-Type: audio/mp4\r\n\r\n"))
            #expect(text.contains("name=\"model\"\r\n\r\n\(model)\r\n"))
            // gpt-transcribe takes the hint as one of its possible languages, so it still reports what it heard.
            #expect(text.contains("name=\"language\"\r\n\r\nde\r\n") == (kind != .languages))
            for field in fields {
                let parts = field.split(separator: "=", maxSplits: 1).map(String.init)
                #expect(text.contains("name=\"\(parts[0])\"\r\n\r\n\(parts[1])\r\n"))
            }
            #expect(text.contains("include[]") == (kind == .tokenLogprobs))
        }
        #expect(OpenAITranscriber.isoLanguage("english") == "en")
        #expect(OpenAITranscriber.isoLanguage("German") == "de")
        #expect(OpenAITranscriber.isoLanguage("pt-BR") == "pt")
        #expect(OpenAITranscriber.isoLanguage("klingon") == nil)
    }

    static let offlineConnection = OpenAIConnection(
        apiKey: "sk-never-sent", httpClient: .shared, logger: Logger(label: "test.openai.offline"))

    // MARK: - Audio files

    @Test func audioFilesCarryTheirTextAndDuration() throws {
        let samples = (0..<4_800).map { Int16(truncatingIfNeeded: $0 * 7) }
        let wav = SandboxAudioFiles.wav(pcm16: samples, sampleRate: 24_000, text: "Ünïcödé text, with \"quotes\".")
        #expect(SandboxAudioFiles.embeddedText(in: wav) == "Ünïcödé text, with \"quotes\".")
        let decoded = try #require(SandboxAudioFiles.pcm16(wav: wav))
        #expect(decoded.samples == samples && decoded.sampleRate == 24_000)
        #expect(SandboxAudioFiles.durationSeconds(of: wav) == 0.2)
        #expect(wav.count % 2 == 0)

        let mp3 = SandboxAudioFiles.mp3(durationSeconds: 1, text: "Odd.")
        #expect(SandboxAudioFiles.embeddedText(in: mp3) == "Odd.")
        // 42 frames of 24 ms cover one second; every frame is 192 bytes after the ID3 tag.
        #expect(abs((SandboxAudioFiles.durationSeconds(of: mp3) ?? 0) - 42 * 0.024) < 1e-9)
        let tagSize = 10 + mp3[6...9].reduce(0) { $0 << 7 | Int($1) }
        #expect(mp3.count == tagSize + 42 * 192)
        #expect(Array(mp3[tagSize..<tagSize + 4]) == [0xFF, 0xFB, 0x54, 0xC4])
        #expect(SandboxAudioFiles.mp3(durationSeconds: 0, text: "").count == tagSize - "Odd.".utf8.count + 192)

        // An MP4 whose movie header says 90,000 / 30,000 = 3 s.
        var mp4 = Data([0, 0, 0, 16]) + Data("ftypM4A ".utf8) + Data([0, 0, 0, 0])
        var mvhd = Data([0, 0, 0, 0]) + Data(repeating: 0, count: 8)
        mvhd += Data([0, 0, 0x75, 0x30, 0, 1, 0x5F, 0x90]) + Data(repeating: 0, count: 80)
        let mvhdBox = Data([0, 0, 0, UInt8(8 + mvhd.count)]) + Data("mvhd".utf8) + mvhd
        mp4 += Data([0, 0, 0, UInt8(8 + mvhdBox.count)]) + Data("moov".utf8) + mvhdBox
        #expect(SandboxAudioFiles.durationSeconds(of: mp4) == 3)
        #expect(SandboxAudioFiles.embeddedText(in: mp4) == nil)
        #expect(SandboxAudioFiles.durationSeconds(of: Data("not audio".utf8)) == nil)
    }
}

/// A test precondition that did not hold.
struct TestFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}
