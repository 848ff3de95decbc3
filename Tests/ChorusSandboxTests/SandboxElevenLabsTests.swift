import AsyncHTTPClient
import ChorusCore
import ChorusSandbox
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import Testing
import Vapor

@testable import ChorusProviders

/// The ElevenLabs emulator on a real Vapor server (loopback, ephemeral port) behind a request recorder, driven by the
/// real ElevenLabs clients.
final class ElevenLabsHarness: Sendable {
    static let apiKey = "sk_sandbox_elevenlabs_0123456789abcdef"

    let elevenLabs: SandboxElevenLabs
    let recorder: SandboxRecorder
    let application: Application
    let baseURL: URL

    private init(elevenLabs: SandboxElevenLabs, recorder: SandboxRecorder, application: Application, baseURL: URL) {
        self.elevenLabs = elevenLabs
        self.recorder = recorder
        self.application = application
        self.baseURL = baseURL
    }

    static func start(voiceLimit: Int = 30, characterLimit: Int? = nil) async throws -> ElevenLabsHarness {
        let elevenLabs = SandboxElevenLabs(apiKey: apiKey, voiceLimit: voiceLimit, characterLimit: characterLimit)
        // The recorder is deliberately not told the key: the emulator redacts it itself.
        let recorder = SandboxRecorder()
        var logger = Logger(label: "test.sandbox.elevenlabs")
        logger.logLevel = .warning
        let application = try await Application.make(.testing, logger: logger)
        application.http.server.configuration.hostname = "127.0.0.1"
        application.http.server.configuration.port = 0
        elevenLabs.register(on: application.routes.grouped(recorder).grouped("sandbox", "elevenlabs"))
        elevenLabs.registerControl(on: application.routes.grouped("sandbox"))
        recorder.register(on: application.routes.grouped("sandbox"))
        do {
            try await application.asyncBoot()
            try await application.server.start(address: .hostname("127.0.0.1", port: 0))
        } catch {
            try? await application.asyncShutdown()
            throw error
        }
        let port = try #require(application.http.server.shared.localAddress?.port)
        return ElevenLabsHarness(
            elevenLabs: elevenLabs, recorder: recorder, application: application,
            baseURL: try #require(URL(string: "http://127.0.0.1:\(port)/sandbox")))
    }

    func shutdown() async throws {
        await application.server.shutdown()
        try await application.asyncShutdown()
    }

    /// Runs `body` against a fresh emulator and always stops it.
    static func with(
        voiceLimit: Int = 30, characterLimit: Int? = nil, _ body: (ElevenLabsHarness) async throws -> Void
    ) async throws {
        let harness = try await start(voiceLimit: voiceLimit, characterLimit: characterLimit)
        do {
            try await body(harness)
        } catch {
            try await harness.shutdown()
            throw error
        }
        try await harness.shutdown()
    }

    static let fastRetry = ProviderHTTP.RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10), maxDelay: .seconds(5))

    var apiURL: URL { baseURL.appendingPathComponent("elevenlabs") }

    func connection(
        key: String = ElevenLabsHarness.apiKey, retry: ProviderHTTP.RetryPolicy = ElevenLabsHarness.fastRetry
    )
        -> ElevenLabsConnection
    {
        ElevenLabsConnection(
            apiKey: key, baseURL: apiURL, httpClient: .shared, timeout: .seconds(30), retry: retry, logger: Logger(label: "test.elevenlabs"))
    }

    func cloner(key: String = ElevenLabsHarness.apiKey) -> ElevenLabsVoiceCloner {
        ElevenLabsVoiceCloner(connection: connection(key: key), description: "Chorus sandbox voice", labels: ["app": "chorus"])
    }

    func synthesizer(
        key: String = ElevenLabsHarness.apiKey, retry: ProviderHTTP.RetryPolicy = ElevenLabsHarness.fastRetry
    )
        -> ElevenLabsSpeechSynthesizer
    {
        ElevenLabsSpeechSynthesizer(
            connection: connection(key: key, retry: retry),
            maxInputCharacters: ElevenLabsSpeechSynthesizer.maxInputCharacters(model: "eleven_multilingual_v2"))
    }

    /// `PUT /sandbox/elevenlabs/behavior`; returns the status.
    @discardableResult
    func putBehavior(_ json: String) async throws -> Int {
        var request = HTTPClientRequest(url: baseURL.absoluteString + "/elevenlabs/behavior")
        request.method = .PUT
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: json))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 16)
        return Int(response.status.code)
    }

    /// One raw request to the emulator's API: status, headers and body.
    func raw(
        _ method: HTTPMethod, _ path: String, key: String? = ElevenLabsHarness.apiKey, contentType: String? = nil, body: Data? = nil
    ) async throws -> (status: Int, headers: HTTPHeaders, body: Data) {
        var request = HTTPClientRequest(url: apiURL.absoluteString + path)
        request.method = method
        if let key { request.headers.add(name: "xi-api-key", value: key) }
        if let contentType { request.headers.add(name: "Content-Type", value: contentType) }
        if let body { request.body = .bytes(ByteBuffer(data: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let data = Data(try await response.body.collect(upTo: 16 << 20).readableBytesView)
        return (Int(response.status.code), response.headers, data)
    }

    /// Recorded requests to text-to-speech.
    func speechRequests() -> [SandboxRecorder.Entry] {
        recorder.requests().filter { $0.path.contains("/v1/text-to-speech/") }
    }

    /// A recording of `seconds` of a quiet tone as a 16 kHz WAV (the emulator measures its duration).
    static func sample(seconds: Double, name: String = "sample.wav") -> VoiceSample {
        let count = Int(seconds * 16_000)
        let samples = (0..<count).map { Int16(sin(Double($0) * 0.05) * 3_000) }
        return VoiceSample(
            audio: SandboxAudioFiles.wav(pcm16: samples, sampleRate: 16_000, text: "sample"), filename: name, contentType: "audio/wav")
    }

    static func clone(_ name: String = "chorus-test", seconds: Double = 12) -> VoiceCloneRequest {
        VoiceCloneRequest(name: name, samples: [sample(seconds: seconds)])
    }
}

@Suite("Sandbox ElevenLabs emulator with the ElevenLabs clients")
struct SandboxElevenLabsTests {
    func speech(_ text: String, voice: String, format: SpeechAudioFormat = .mp3) -> SpeechRequest {
        SpeechRequest(text: text, voiceID: voice, model: "eleven_multilingual_v2", format: format, stability: 0.5, similarityBoost: 0.8)
    }

    @Test func cloneSpeakDeleteThenSpeakingIsVoiceNotFound() async throws {
        try await ElevenLabsHarness.with { harness async throws in
            let cloned = try await harness.cloner().cloneVoice(
                VoiceCloneRequest(
                    name: "chorus-abc123",
                    samples: [ElevenLabsHarness.sample(seconds: 6, name: "one.wav"), ElevenLabsHarness.sample(seconds: 6, name: "two.wav")],
                    removeBackgroundNoise: false))
            #expect(cloned.voiceID.count == 20)
            #expect(!cloned.requiresVerification)
            let stored = try #require(harness.elevenLabs.clonedVoices().first)
            #expect(stored.voiceID == cloned.voiceID)
            #expect(stored.name == "chorus-abc123")
            #expect(stored.samples.map(\.fileName) == ["one.wav", "two.wav"])
            #expect(stored.labels == ["app": "chorus"])
            #expect(stored.description == "Chorus sandbox voice")
            #expect(!stored.removeBackgroundNoise)

            let voice = try await harness.raw(.GET, "/v1/voices/\(cloned.voiceID)")
            #expect(voice.status == 200)
            let json = try #require(try JSONSerialization.jsonObject(with: voice.body) as? [String: Any])
            #expect(json["voice_id"] as? String == cloned.voiceID)
            #expect(json["category"] as? String == "cloned")

            let text = "Dinner is at seven, bring the salad."
            let mp3 = try await harness.synthesizer().synthesize(speech(text, voice: cloned.voiceID))
            #expect(mp3.format == .mp3)
            #expect(mp3.billedCharacters == text.count)
            #expect(SandboxAudioFiles.embeddedText(in: mp3.audio) == text)
            #expect((SandboxAudioFiles.durationSeconds(of: mp3.audio) ?? 0) > 1)
            // WAV is asked for as documented raw PCM (`pcm_24000`), and the client writes the header.
            let wav = try await harness.synthesizer().synthesize(speech(text, voice: cloned.voiceID, format: .wav))
            #expect(wav.format == .wav)
            let pcm = try #require(SandboxAudioFiles.pcm16(wav: wav.audio))
            #expect(pcm.sampleRate == 24_000 && pcm.samples.count > 24_000 && pcm.samples.contains { $0 != 0 })
            #expect(wav.audio.count == PCMWAV.headerSize + pcm.samples.count * 2)

            // What went over the wire.
            let sent = try #require(harness.speechRequests().last)
            #expect(sent.query == "output_format=pcm_24000")
            let body = try #require(try JSONSerialization.jsonObject(with: Data((sent.body ?? "").utf8)) as? [String: Any])
            #expect(body["text"] as? String == text)
            #expect(body["model_id"] as? String == "eleven_multilingual_v2")
            #expect((body["voice_settings"] as? [String: Double]) == ["stability": 0.5, "similarity_boost": 0.8])

            try await harness.cloner().deleteVoice(id: cloned.voiceID)
            #expect(harness.elevenLabs.clonedVoices().isEmpty)
            await #expect(
                throws: ProviderError.rejected(
                    httpStatus: 404, code: "voice_not_found", message: "A voice with voice_id '\(cloned.voiceID)' was not found.")
            ) {
                _ = try await harness.synthesizer().synthesize(speech(text, voice: cloned.voiceID))
            }
            // Deleting a voice that is gone counts as deleted.
            try await harness.cloner().deleteVoice(id: cloned.voiceID)
        }
    }

    @Test func theVoiceIdPicksAStablePitch() async throws {
        try await ElevenLabsHarness.with { harness async throws in
            let synthesizer = harness.synthesizer()
            let text = "The same words in every voice."
            var audios: [Data] = []
            for voice in SandboxElevenLabs.defaultPremadeVoices.keys.sorted() {
                let first = try await synthesizer.synthesize(speech(text, voice: voice, format: .wav)).audio
                let again = try await synthesizer.synthesize(speech(text, voice: voice, format: .wav)).audio
                #expect(first == again)
                audios.append(first)
            }
            #expect(Set(audios).count == 5, "each premade voice speaks at a pitch of its own")
        }
    }

    @Test func theVoiceSlotLimitIsVoiceLimitReached() async throws {
        try await ElevenLabsHarness.with(voiceLimit: 2) { harness async throws in
            let cloner = harness.cloner()
            let first = try await cloner.cloneVoice(ElevenLabsHarness.clone("a"))
            _ = try await cloner.cloneVoice(ElevenLabsHarness.clone("b"))
            await #expect {
                _ = try await cloner.cloneVoice(ElevenLabsHarness.clone("c"))
            } throws: { error in
                guard case ProviderError.rejected(400, "voice_limit_reached", let message) = error else { return false }
                return message.contains("(2 / 2)")
            }
            // Cloning is never retried: one refused request, not three.
            #expect(harness.recorder.requests().filter { $0.path.hasSuffix("/v1/voices/add") }.count == 3)
            try await cloner.deleteVoice(id: first.voiceID)
            _ = try await cloner.cloneVoice(ElevenLabsHarness.clone("c"))
            #expect(harness.elevenLabs.clonedVoices().count == 2)
        }
    }

    @Test func samplesMustBeAudioOfSufficientLength() async throws {
        try await ElevenLabsHarness.with { harness async throws in
            let cloner = harness.cloner()
            let text = VoiceSample(audio: Data("not audio".utf8), filename: "notes.txt", contentType: "text/plain")
            await #expect {
                _ = try await cloner.cloneVoice(VoiceCloneRequest(name: "x", samples: [text]))
            } throws: { error in
                guard case ProviderError.rejected(400, "invalid_audio_file", _) = error else { return false }
                return true
            }
            await #expect {
                _ = try await cloner.cloneVoice(ElevenLabsHarness.clone(seconds: 3))
            } throws: { error in
                guard case ProviderError.rejected(400, "voice_sample_too_short", _) = error else { return false }
                return true
            }
            await #expect {
                _ = try await cloner.cloneVoice(VoiceCloneRequest(name: "x", samples: []))
            } throws: { error in
                guard case ProviderError.rejected(_, "no_samples", _) = error else { return false }
                return true
            }
            // A form without files gets FastAPI's validation list.
            var form = MultipartFormData()
            form.append(name: "name", value: "x")
            let answer = try await harness.raw(.POST, "/v1/voices/add", contentType: form.contentType, body: form.encoded())
            #expect(answer.status == 422)
            let detail = ElevenLabsConnection.errorDetail(answer.body)
            #expect(detail == .init(code: "validation_error", message: "body.files: Field required"))
            #expect(harness.elevenLabs.clonedVoices().isEmpty)
        }
    }

    @Test func runningOutOfCharactersIsQuotaExceeded() async throws {
        try await ElevenLabsHarness.with(characterLimit: 20) { harness async throws in
            let synthesizer = harness.synthesizer()
            let voice = "21m00Tcm4TlvDq8ikWAM"
            _ = try await synthesizer.synthesize(speech("Fifteen letters", voice: voice))
            await #expect {
                _ = try await synthesizer.synthesize(speech("Ten more..", voice: voice))
            } throws: { error in
                guard case ProviderError.quotaExceeded(let message) = error else { return false }
                return message.contains("5 credits remaining, while 10 credits are required")
            }
            #expect(harness.elevenLabs.charactersUsed == 15)
            // Quota errors are not retried.
            #expect(harness.speechRequests().count == 2)
        }
    }

    @Test func injectedQuotaFailureIsNotRetried() async throws {
        try await ElevenLabsHarness.with { harness async throws in
            #expect(try await harness.putBehavior(#"{"fail_next": 1, "status": 401, "code": "quota_exceeded"}"#) == 200)
            await #expect {
                _ = try await harness.synthesizer().synthesize(speech("Hello", voice: "21m00Tcm4TlvDq8ikWAM"))
            } throws: { error in
                guard case ProviderError.quotaExceeded = error else { return false }
                return true
            }
            #expect(harness.speechRequests().count == 1)
        }
    }

    @Test func tooManyConcurrentRequestsIsRetried() async throws {
        try await ElevenLabsHarness.with { harness async throws in
            #expect(try await harness.putBehavior(#"{"fail_next": 2, "status": 429, "endpoint": "text-to-speech"}"#) == 200)
            let spoken = try await harness.synthesizer().synthesize(speech("Retried twice", voice: "JBFqnCBsd6RMkjVDRZzb"))
            #expect(SandboxAudioFiles.embeddedText(in: spoken.audio) == "Retried twice")
            #expect(harness.speechRequests().map(\.responseStatus) == [429, 429, 200])

            // A system that stays busy surfaces as rate limiting once the retries are used up.
            #expect(try await harness.putBehavior(#"{"fail_next": 5, "status": 429, "code": "system_busy"}"#) == 200)
            await #expect {
                _ = try await harness.synthesizer().synthesize(speech("Busy", voice: "JBFqnCBsd6RMkjVDRZzb"))
            } throws: { error in
                guard case ProviderError.rateLimited(_, let message) = error else { return false }
                return message.contains("high volume")
            }
        }
    }

    @Test func serverErrorsAreRetriedThenUnavailable() async throws {
        try await ElevenLabsHarness.with { harness async throws in
            #expect(try await harness.putBehavior(#"{"fail_next": 3, "status": 503}"#) == 200)
            await #expect {
                _ = try await harness.synthesizer().synthesize(speech("Down", voice: "JBFqnCBsd6RMkjVDRZzb"))
            } throws: { error in
                guard case ProviderError.unavailable = error else { return false }
                return true
            }
            #expect(harness.speechRequests().count == 3)
        }
    }

    @Test func aWrongKeyIsRejectedAndNoKeyIsRecorded() async throws {
        try await ElevenLabsHarness.with { harness async throws in
            let wrong = "sk_wrong_key_0000000000000000"
            await #expect(throws: ProviderError.rejected(httpStatus: 401, code: "invalid_api_key", message: "Invalid API key")) {
                _ = try await harness.synthesizer(key: wrong).synthesize(speech("Hello", voice: "21m00Tcm4TlvDq8ikWAM"))
            }
            await #expect {
                _ = try await harness.cloner(key: wrong).cloneVoice(ElevenLabsHarness.clone())
            } throws: { error in
                guard case ProviderError.rejected(401, "invalid_api_key", _) = error else { return false }
                return true
            }
            let missing = try await harness.raw(
                .POST, "/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM", key: nil, contentType: "application/json", body: Data(#"{"text":"hi"}"#.utf8))
            #expect(missing.status == 401)
            #expect(ElevenLabsConnection.errorDetail(missing.body)?.code == "needs_authorization")
            _ = try await harness.synthesizer().synthesize(speech("Recorded", voice: "21m00Tcm4TlvDq8ikWAM"))

            let recorded = harness.recorder.requests()
            #expect(recorded.count == 4)
            for entry in recorded {
                let text = "\(entry.headers) \(entry.body ?? "") \(entry.path) \(entry.query ?? "")"
                #expect(!text.contains(ElevenLabsHarness.apiKey))
                #expect(!text.contains(wrong))
            }
            #expect(recorded.filter { $0.headers["xi-api-key"] == "[REDACTED]" }.count == 3)
        }
    }

    @Test func streamingSendsChunkedAudio() async throws {
        try await ElevenLabsHarness.with { harness async throws in
            let text = "A longer sentence, streamed to the listener as it is made."
            let answer = try await harness.raw(
                .POST, "/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM/stream?output_format=mp3_44100_128", contentType: "application/json",
                body: Data(#"{"text":"\#(text)","model_id":"eleven_flash_v2_5"}"#.utf8))
            #expect(answer.status == 200)
            #expect(answer.headers.first(name: "transfer-encoding")?.lowercased() == "chunked")
            #expect(answer.headers.first(name: "content-type") == "audio/mpeg")
            #expect(answer.headers.first(name: "character-cost") == String(text.count))
            #expect(answer.headers.first(name: "request-id")?.isEmpty == false)
            #expect(SandboxAudioFiles.embeddedText(in: answer.body) == text)
        }
    }

    @Test func requestValidation() async throws {
        try await ElevenLabsHarness.with { harness async throws in
            let path = "/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM"
            let badSettings = try await harness.raw(
                .POST, path, contentType: "application/json", body: Data(#"{"text":"hi","voice_settings":{"stability":1.5}}"#.utf8))
            #expect(badSettings.status == 422)
            let tooLong = try await harness.raw(
                .POST, path, contentType: "application/json",
                body: Data(#"{"text":"\#(String(repeating: "a", count: 5_001))","model_id":"eleven_v3"}"#.utf8))
            #expect(tooLong.status == 400)
            #expect(ElevenLabsConnection.errorDetail(tooLong.body)?.code == "max_character_limit_exceeded")
            let detail = try #require(try JSONSerialization.jsonObject(with: tooLong.body) as? [String: [String: String]])
            #expect(detail["detail"]?["request_id"] == tooLong.headers.first(name: "request-id"))
            #expect(detail["detail"]?["status"] == "max_character_limit_exceeded")
            let unknownModel = try await harness.raw(
                .POST, path, contentType: "application/json", body: Data(#"{"text":"hi","model_id":"eleven_v9"}"#.utf8))
            #expect(ElevenLabsConnection.errorDetail(unknownModel.body)?.code == "model_not_found")
            let opus = try await harness.raw(
                .POST, path + "?output_format=opus_48000_64", contentType: "application/json", body: Data(#"{"text":"hi"}"#.utf8))
            #expect(opus.status == 400)
            let unknownFormat = try await harness.raw(
                .POST, path + "?output_format=flac_44100", contentType: "application/json", body: Data(#"{"text":"hi"}"#.utf8))
            #expect(unknownFormat.status == 422)
            // The API reference's enum has no WAV output: `wav_24000` is refused the same way; `pcm_24000` is raw PCM.
            let wavFormat = try await harness.raw(
                .POST, path + "?output_format=wav_24000", contentType: "application/json", body: Data(#"{"text":"hi"}"#.utf8))
            #expect(wavFormat.status == 422 && String(decoding: wavFormat.body, as: UTF8.self).contains("output_format"))
            let pcm = try await harness.raw(
                .POST, path + "?output_format=pcm_16000", contentType: "application/json", body: Data(#"{"text":"hello there"}"#.utf8))
            #expect(pcm.status == 200 && pcm.headers.first(name: "content-type") == "audio/pcm")
            #expect(pcm.body.count % 2 == 0 && pcm.body.count > 16_000 / 5 * 2 && pcm.body.prefix(4) != Data("RIFF".utf8))
            let ulaw = try await harness.raw(
                .POST, path + "?output_format=ulaw_8000", contentType: "application/json", body: Data(#"{"text":"hello there"}"#.utf8))
            #expect(ulaw.status == 200)
            #expect(ulaw.body.count > 8_000 / 5)  // more than 0.2 s of 8 kHz μ-law

            // The client refuses text over its model's limit without a request.
            let synthesizer = harness.synthesizer()
            await #expect {
                _ = try await synthesizer.synthesize(speech(String(repeating: "a", count: 10_001), voice: "21m00Tcm4TlvDq8ikWAM"))
            } throws: { error in
                guard case ProviderError.rejected(400, "max_character_limit_exceeded", _) = error else { return false }
                return true
            }
            #expect(harness.speechRequests().count == 8)

            let subscription = try await harness.raw(.GET, "/v1/user/subscription")
            let json = try #require(try JSONSerialization.jsonObject(with: subscription.body) as? [String: Any])
            #expect(json["voice_limit"] as? Int == 30)
            #expect(json["character_count"] as? Int == 2 * "hello there".count)
        }
    }

    @Test func controlBehaviorIsValidated() async throws {
        try await ElevenLabsHarness.with { harness async throws in
            #expect(try await harness.putBehavior(#"{"status": 418}"#) == 400)
            #expect(try await harness.putBehavior(#"{"fail_next": -1}"#) == 400)
            #expect(try await harness.putBehavior(#"{"code": "Not A Code"}"#) == 400)
            #expect(
                try await harness.putBehavior(#"{"fail_next": 1, "status": 400, "code": "voice_limit_reached", "endpoint": "voices/add"}"#) == 200)
            await #expect {
                _ = try await harness.cloner().cloneVoice(ElevenLabsHarness.clone())
            } throws: { error in
                guard case ProviderError.rejected(400, "voice_limit_reached", _) = error else { return false }
                return true
            }
            #expect(harness.elevenLabs.behavior.failNext == 0)
        }
    }
}

@Suite("ElevenLabs error shapes")
struct ElevenLabsErrorShapeTests {
    func classify(_ status: Int, _ json: String, headers: HTTPHeaders = [:]) -> ProviderError {
        ElevenLabsConnection.providerError(
            for: ProviderHTTP.Response(status: status, headers: headers, body: ByteBuffer(string: json)))
    }

    @Test func currentShape() {
        #expect(
            classify(
                400,
                #"{"detail":{"type":"validation_error","code":"voice_limit_reached","message":"Too many voices","status":"voice_limit_reached","request_id":"r1"}}"#
            )
                == .rejected(httpStatus: 400, code: "voice_limit_reached", message: "Too many voices"))
        #expect(
            classify(401, #"{"detail":{"type":"payment_required","code":"quota_exceeded","message":"Out of credits","status":"quota_exceeded"}}"#)
                == .quotaExceeded(message: "Out of credits"))
    }

    @Test func legacyShape() {
        #expect(
            classify(401, #"{"detail":{"status":"invalid_api_key","message":"Invalid API key"}}"#)
                == .rejected(httpStatus: 401, code: "invalid_api_key", message: "Invalid API key"))
        #expect(
            classify(400, #"{"detail":{"status":"can_not_use_instant_voice_cloning","message":"Upgrade"}}"#)
                == .rejected(httpStatus: 400, code: "can_not_use_instant_voice_cloning", message: "Upgrade"))
        #expect(classify(401, #"{"detail":{"status":"quota_exceeded","message":"Quota"}}"#) == .quotaExceeded(message: "Quota"))
    }

    @Test func validationListAndPlainDetail() {
        #expect(
            classify(422, #"{"detail":[{"type":"missing","loc":["body","text"],"msg":"Field required","input":null}]}"#)
                == .rejected(httpStatus: 422, code: "validation_error", message: "body.text: Field required"))
        #expect(classify(404, #"{"detail":"Not Found"}"#) == .rejected(httpStatus: 404, code: nil, message: "Not Found"))
        #expect(classify(400, "not json") == .rejected(httpStatus: 400, code: nil, message: "ElevenLabs answered 400"))
    }

    @Test func transientAndPaymentStatuses() {
        #expect(
            classify(429, #"{"detail":{"status":"too_many_concurrent_requests","message":"Slow down"}}"#, headers: ["retry-after": "2"])
                == .rateLimited(retryAfter: .seconds(2), message: "Slow down"))
        #expect(classify(429, #"{"detail":{"status":"system_busy","message":"Busy"}}"#).isTransient)
        #expect(classify(503, "") == .unavailable("ElevenLabs 503: ElevenLabs answered 503"))
        #expect(classify(402, #"{"detail":{"status":"payment_required","message":"Pay"}}"#) == .quotaExceeded(message: "Pay"))
    }

    @Test func clientBodies() throws {
        let connection = ElevenLabsConnection(
            apiKey: "k", httpClient: .shared, logger: Logger(label: "test"))
        let synthesizer = ElevenLabsSpeechSynthesizer(connection: connection, maxInputCharacters: 100)
        let plain = try synthesizer.body(for: SpeechRequest(text: "Hi", voiceID: "v", model: "eleven_flash_v2_5"))
        #expect(String(decoding: plain, as: UTF8.self) == #"{"model_id":"eleven_flash_v2_5","text":"Hi"}"#)
        #expect(synthesizer.outputFormat(for: .mp3) == "mp3_44100_128")
        #expect(synthesizer.outputFormat(for: .wav) == "pcm_24000")
        #expect(ElevenLabsSpeechSynthesizer(connection: connection, maxInputCharacters: 1, wavSampleRate: 16_000).outputFormat(for: .wav) == "pcm_16000")
        #expect(ElevenLabsSpeechSynthesizer(connection: connection, maxInputCharacters: 1, wavSampleRate: 32_000).outputFormat(for: .wav) == "pcm_24000")
        #expect(ElevenLabsSpeechSynthesizer.maxInputCharacters(model: "eleven_multilingual_v2") == 10_000)
        #expect(ElevenLabsSpeechSynthesizer.maxInputCharacters(model: "eleven_flash_v2_5") == 40_000)
        #expect(ElevenLabsSpeechSynthesizer.maxInputCharacters(model: "eleven_v3") == 5_000)
        #expect(!"\(connection)".contains("k)"))

        let cloner = ElevenLabsVoiceCloner(connection: connection, labels: ["b": "2", "a": "1"])
        let form = try cloner.form(
            for: VoiceCloneRequest(name: "n", samples: [VoiceSample(audio: Data([1, 2]), filename: "s.m4a", contentType: "audio/mp4")]),
            boundary: "B")
        let text = String(decoding: form.encoded(), as: UTF8.self)
        #expect(text.contains("name=\"files\"; filename=\"s.m4a\"\r\nContent-Type: audio/mp4"))
        #expect(text.contains("name=\"remove_background_noise\"\r\n\r\ntrue\r\n"))
        #expect(text.contains(#"name="labels""# + "\r\n\r\n" + #"{"a":"1","b":"2"}"#))
        #expect(!text.contains("name=\"description\""))
    }
}
