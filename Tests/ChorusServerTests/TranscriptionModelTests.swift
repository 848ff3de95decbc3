import AsyncHTTPClient
import ChorusAPI
import ChorusCore
import ChorusProviders
import ChorusSandbox
import ChorusTestSupport
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import Testing

@testable import ChorusServer

/// Issue 22: voice messages on `gpt-transcribe` and call transcripts on `gpt-live-transcribe`, the new defaults.
@Suite("Transcription on the live models (gpt-transcribe, gpt-live-transcribe)", .serialized)
struct TranscriptionModelTests {
    static let offlineConnection = OpenAIConnection(apiKey: "sk-never-sent", httpClient: .shared, logger: Logger(label: "test.openai.offline"))

    /// The text fields of a multipart body as a JSON object: `name[]` fields become arrays under `name`, files a string.
    static func formAsJSON(_ form: MultipartFormData) throws -> Data {
        let text = String(decoding: form.encoded(), as: UTF8.self)
        var object: [String: Any] = [:]
        for part in text.components(separatedBy: "--\(form.boundary)").dropFirst().dropLast() {
            guard let nameStart = part.range(of: "name=\""), let headerEnd = part.range(of: "\r\n\r\n") else { continue }
            let name = String(part[nameStart.upperBound...].prefix { $0 != "\"" })
            var value = String(part[headerEnd.upperBound...])
            if value.hasSuffix("\r\n") { value.removeLast() }  // one Character: CR LF is a single grapheme
            if part[..<headerEnd.lowerBound].contains("filename=") { value = "<binary>" }
            if name.hasSuffix("[]") {
                let key = String(name.dropLast(2))
                object[key] = ((object[key] as? [String]) ?? []) + [value]
            } else {
                object[name] = value
            }
        }
        return try JSONSerialization.data(withJSONObject: object)
    }

    @Test("the gpt-transcribe request and the emulator's answer validate against the pinned OpenAI spec")
    func requestAndAnswerMatchTheSpec() async throws {
        let validator = try SpecSchemaValidator.fixture("openai-audio-transcriptions")
        let request = TranscriptionRequest(audio: Data([1, 2, 3]), filename: "m.wav", contentType: "audio/wav", language: "en")
        for model in ["gpt-transcribe", "whisper-1", "gpt-4o-mini-transcribe"] {
            let form = OpenAITranscriber(connection: Self.offlineConnection, model: model).form(for: request)
            let json = try Self.formAsJSON(form)
            let problems = try validator.validate(json: json, against: "CreateTranscriptionRequest", strictProperties: true)
            #expect(problems.isEmpty, "\(model): \(problems)")
            let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            if model == "gpt-transcribe" {
                #expect(object["languages"] as? [String] == ["en"] && object["language"] == nil)
                #expect(object["response_format"] as? String == "json" && object["include"] == nil)
                #expect(object["timestamp_granularities"] == nil)
            }
        }

        // The emulator's answers: a spoken message and silence.
        let services = SandboxServices(
            twilio: SandboxTwilio(accountSID: "AC1", authToken: "sandbox-token-for-spec-tests", httpClient: .shared),
            appStore: try SandboxAppStore.ephemeral(bundleID: "app.chorus"), openAI: SandboxOpenAI(apiKey: nil))
        let sandbox = SandboxServer(services: services)
        try await sandbox.start()
        do {
            let url = try #require(sandbox.baseURL).appendingPathComponent("openai/v1/audio/transcriptions")
            let said = "Grandma lands on Tuesday at ten."
            for (audio, expected) in [
                (SandboxAudioFiles.speechWAV(text: said, voice: "alice"), said),
                (SandboxAudioFiles.wav(pcm16: [Int16](repeating: 1, count: 16_000), sampleRate: 16_000, text: ""), ""),
            ] {
                var form = MultipartFormData()
                form.append(name: "file", filename: "m.wav", contentType: "audio/wav", data: audio)
                form.append(name: "model", value: "gpt-transcribe")
                form.append(name: "languages[]", value: "en")
                form.append(name: "keywords[]", value: "Grandma")
                var request = HTTPClientRequest(url: url.absoluteString)
                request.method = .POST
                request.headers.add(name: "Content-Type", value: form.contentType)
                request.body = .bytes(ByteBuffer(data: form.encoded()))
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                let body = Data(buffer: try await response.body.collect(upTo: 1 << 20))
                #expect(response.status.code == 200, "\(String(decoding: body, as: UTF8.self))")
                let problems = try validator.validate(json: body, against: "CreateTranscriptionResponseJson", strictProperties: true)
                #expect(problems.isEmpty, "\(problems)")
                let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
                #expect(json["text"] as? String == expected)
                let languages = try #require(json["languages"] as? [[String: Any]])
                #expect(languages.map { $0["code"] as? String } == (expected.isEmpty ? [] : ["en"]))
            }
        } catch {
            try? await sandbox.shutdown()
            throw error
        }
        try await sandbox.shutdown()
    }

    static func noisy(_ text: String, noiseOverSpeech: Double) throws -> Data {
        let pcm = try #require(SandboxAudioFiles.pcm16(wav: SandboxAudioFiles.speechWAV(text: text, voice: "alice")))
        let voiced = pcm.samples.filter { abs(Int($0)) > 30 }
        let level = (voiced.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, voiced.count))).squareRoot() * noiseOverSpeech
        var state: UInt64 = 7
        let samples = pcm.samples.map { sample -> Int16 in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let uniform = Double(state >> 11) / Double(1 << 53) * 2 - 1
            return Int16(max(-32_767, min(32_767, Double(sample) + uniform * level * 3.0.squareRoot())))
        }
        return SandboxAudioFiles.wav(pcm16: samples, sampleRate: pcm.sampleRate, text: text)
    }

    @Test("voice messages on the default gpt-transcribe: clean good, drowned in noise poor, silence empty and poor", arguments: TestDatabase.all)
    func voiceMessagesOnTheDefault(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            #expect(server.app.chorus.configuration.voiceMessages.transcriptionModel == "gpt-transcribe")
            let mom = try await MessagingTests.person(server, name: "mom")
            func transcribe(_ wav: Data, language: String? = nil) async throws -> TranscriptionResponse {
                let upload = try await server.request(.POST, "/audio", token: mom.token, body: wav, headers: [("Content-Type", "audio/wav")])
                #expect(upload.status == 201, "\(upload.text)")
                let audioID = try upload.decode(AudioUploadResponse.self).audioID
                let reply = try await server.request(
                    .POST, "/transcriptions", token: mom.token, json: TranscriptionRequestDTO(audioID: audioID, language: language))
                #expect(reply.status == 200, "\(reply.text)")
                return try reply.decode(TranscriptionResponse.self)
            }
            let said = "Remember the dentist appointment after school tomorrow."
            let clean = try await transcribe(SandboxAudioFiles.speechWAV(text: said, voice: "alice"), language: "en")
            #expect(clean.transcript == said && clean.confidenceLabel == "good" && clean.language == "en")
            #expect(clean.confidence == TranscriptQuality.signalsCeiling)

            let drowned = try await transcribe(try Self.noisy(said, noiseOverSpeech: 2))
            #expect(drowned.confidenceLabel == "poor", "\(drowned)")
            #expect(drowned.transcript != said)

            let quiet = SandboxAudioFiles.wav(pcm16: [Int16](repeating: 2, count: 24_000), sampleRate: 24_000, text: "")
            let silent = try await transcribe(quiet)
            #expect(silent.transcript == "" && silent.confidence == 0 && silent.confidenceLabel == "poor")

            // Billed as gpt-transcribe by the minute.
            let report = try await server.request(.GET, "/me/usage", token: mom.token).decode(ProviderUsageReport.self)
            let items = try #require(report.features.first?.items)
            let transcription = try #require(items.first { $0.operation == "transcription" })
            #expect(transcription.model == "gpt-transcribe" && transcription.calls == 3 && transcription.usdMicros > 0)
        }
    }

    @Test("call transcripts on the default gpt-live-transcribe: the session asks for it and the callee's lines are transcribed")
    func callTranscriptOnTheDefault() async throws {
        try await TestServer.run(on: .sqlite) { server in
            #expect(server.app.chorus.configuration.callBridge.transcriptionModel == "gpt-live-transcribe")
            let token = try await server.register().accessToken
            let number = "+14155557022"
            let lines = ["Hello? Who is this?", "Oh, hi Sam. I am fine, thanks.", "Okay, bye now."]
            try await LiveCallTests.configure(
                server, number: number, callee: LiveCallTests.Callee(lines: lines, hangup_after_seconds: 9, reply_after_ms: 300),
                realtime: LiveCallTests.RealtimeBehavior(speed: 4, reply_lines: ["Hi, it's Sam.", "How have you been?", "Talk soon!"]))
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            let detail = try await LiveCallTests.settled(server, token, sid: placed.callSid)
            let heard = (detail.transcript ?? []).filter { $0.speaker == "callee" }.map(\.text)
            #expect(!heard.isEmpty && heard.allSatisfy(lines.contains), "\(heard)")

            let requests = try await server.request(.GET, "/sandbox/requests").json["requests"] as? [[String: Any]] ?? []
            let updates = requests.compactMap { entry -> [String: Any]? in
                guard (entry["method"] as? String) == "WS", let body = entry["body"] as? String,
                    let json = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], json["type"] as? String == "session.update"
                else { return nil }
                return json
            }
            let update = try #require(updates.first)
            let input = ((update["session"] as? [String: Any])?["audio"] as? [String: Any])?["input"] as? [String: Any]
            #expect((input?["transcription"] as? [String: Any])?["model"] as? String == "gpt-live-transcribe")
        }
    }
}
