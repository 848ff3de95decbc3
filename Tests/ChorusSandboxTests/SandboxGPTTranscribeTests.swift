import AsyncHTTPClient
import ChorusCore
@testable import ChorusProviders
import ChorusSandbox
import Foundation
import NIOCore
import NIOFoundationCompat
import Testing

/// `gpt-transcribe` on the OpenAI emulator: json only, `languages[]`/`keywords[]`, `languages` in the answer.
@Suite("Sandbox OpenAI gpt-transcribe", .serialized)
struct SandboxGPTTranscribeTests {
    static func post(_ harness: OpenAIHarness, audio: Data, _ fields: [(String, String)]) async throws -> (status: Int, body: String) {
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
        return (Int(response.status.code), String(buffer: body))
    }

    @Test func answersTextLanguagesAndUsageOnly() async throws {
        try await withOpenAI { harness in
            let text = "Pick up Sam at noon. Then we go home."
            let audio = SandboxAudioFiles.speechWAV(text: text, voice: "verse")
            let answer = try await Self.post(
                harness, audio: audio,
                [("model", "gpt-transcribe"), ("languages[]", "de"), ("languages[]", "en"), ("keywords[]", "Sam"), ("response_format", "json")])
            #expect(answer.status == 200, "\(answer.body)")
            let json = try TestJSON.parse(answer.body)
            guard case .object(let members) = json else { throw TestFailure("not an object") }
            #expect(Set(members.keys) == ["text", "languages", "usage"])
            #expect(json["text"] == .string(text))
            #expect(json["languages"] == .array([.object(["code": .string("de")])]), "the first possible language")
            #expect(json["usage"]?["type"] == .string("duration"))

            // Silence: no "Thank you." as Whisper would write, and no language detected.
            let quiet = SandboxAudioFiles.wav(pcm16: [Int16](repeating: 2, count: 16_000), sampleRate: 16_000, text: "")
            let silent = try TestJSON.parse(try await Self.post(harness, audio: quiet, [("model", "gpt-transcribe")]).body)
            #expect(silent["text"] == .string("") && silent["languages"] == .array([]))

            // Through the client: the languages are evidence, the hint goes out as languages[].
            let transcription = try await harness.transcriber("gpt-transcribe").transcribe(
                TranscriptionRequest(audio: audio, filename: "clip.wav", contentType: "audio/wav", language: "fr"))
            #expect(transcription.text == text)
            #expect(transcription.language == "fr" && transcription.evidence.detectedLanguages == ["fr"])
            #expect(transcription.durationSeconds == (SandboxAudioFiles.durationSeconds(of: audio) ?? 0).rounded(.up))
        }
    }

    @Test func refusesWhatTheModelDoesNotDo() async throws {
        try await withOpenAI { harness in
            let audio = SandboxAudioFiles.speechWAV(text: "Hi there.", voice: "echo")
            let refusals: [([(String, String)], String, String)] = [
                ([("model", "gpt-transcribe"), ("response_format", "verbose_json")], "unsupported_value", "is not compatible with model 'gpt-transcribe'. Use 'json' instead."),
                ([("model", "gpt-transcribe"), ("response_format", "srt")], "unsupported_value", "is not compatible"),
                ([("model", "gpt-transcribe"), ("response_format", "vtt")], "unsupported_value", "is not compatible"),
                ([("model", "gpt-transcribe"), ("response_format", "text")], "unsupported_value", "is not compatible"),
                ([("model", "gpt-transcribe"), ("include[]", "logprobs")], "unsupported_value", "logprobs are only supported"),
                ([("model", "gpt-transcribe"), ("timestamp_granularities[]", "word")], "unsupported_value", "requires response_format 'verbose_json'"),
                ([("model", "gpt-transcribe"), ("languages[]", "english")], "invalid_language_format", "ISO-639-1"),
                ([("model", "whisper-1"), ("languages[]", "en")], "unsupported_parameter", "'languages' is not supported with this model"),
                ([("model", "gpt-4o-transcribe"), ("keywords[]", "Emma")], "unsupported_parameter", "'keywords' is not supported with this model"),
            ]
            for (fields, code, message) in refusals {
                let refused = try await Self.post(harness, audio: audio, fields)
                #expect(refused.status == 400, "\(fields)")
                let error = try TestJSON.parse(refused.body)["error"]
                #expect(error?["type"] == .string("invalid_request_error"))
                #expect(error?["code"] == .string(code), "\(fields): \(refused.body)")
                if case .string(let text)? = error?["message"] { #expect(text.contains(message), "\(text)") } else { Issue.record("no message") }
                #expect(error?["param"] != nil)
            }
        }
    }

    @Test func theClientReadsUsageAndRefusesOutOfRangeNumbers() throws {
        func usage(_ json: String) throws -> (seconds: Double?, inputTokens: Int?, outputTokens: Int?) {
            try OpenAITranscriber.checkedUsage(JSONDecoder().decode(OpenAITranscriber.Usage.self, from: Data(json.utf8)))
        }
        let duration = try usage(#"{"type":"duration","seconds":4.5}"#)
        #expect(duration.seconds == 4.5 && duration.inputTokens == nil && duration.outputTokens == nil)
        let tokens = try usage(
            #"{"type":"tokens","input_tokens":14,"input_token_details":{"text_tokens":10,"audio_tokens":4},"output_tokens":101,"total_tokens":115}"#)
        #expect(tokens.seconds == nil && tokens.inputTokens == 14 && tokens.outputTokens == 101)
        let future = try usage(#"{"type":"future"}"#)
        #expect(future.seconds == nil && future.inputTokens == nil && future.outputTokens == nil)
        for bad in [
            #"{"type":"duration","seconds":-1}"#, #"{"type":"duration","seconds":1e300}"#, #"{"type":"tokens","input_tokens":-3}"#,
            #"{"type":"tokens","output_tokens":1000000000000}"#,
        ] {
            #expect(throws: ProviderError.self, "\(bad)") { _ = try usage(bad) }
        }
        // Integers beyond Int do not decode (no trap).
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode(OpenAITranscriber.Usage.self, from: Data(#"{"type":"tokens","input_tokens":1e30}"#.utf8))
        }
    }
}
