import AsyncHTTPClient
import ChorusCore
import ChorusProviders
import ChorusSandbox
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOPosix
import Testing

/// Text to speech on the Realtime API (`OpenAIRealtimeSpeechSynthesizer`) against the Realtime emulator over a real
/// loopback WebSocket: what is sent, the audio that comes back (MP3 by libmp3lame, WAV), the verbatim check and its
/// retries, and every way a session can fail.
@Suite("Realtime speech", .serialized)
struct RealtimeSpeechTests {
    static let model = "gpt-realtime-2.1-mini"
    static let text = "Once upon a time, a small fox found a lantern in the snow and carried it home to her three sisters."

    static func synthesizer(
        _ harness: RealtimeHarness, encoder: MP3Encoder? = MP3Encoder.system, timeout: Duration = .seconds(30),
        statistics: SpeechVerbatimStatistics = SpeechVerbatimStatistics()
    ) throws -> OpenAIRealtimeSpeechSynthesizer {
        let connector = try OpenAIRealtimeConnector(
            baseURL: harness.baseURL.appendingPathComponent("openai/v1"), apiKey: RealtimeHarness.apiKey, logger: Logger(label: "test"))
        return OpenAIRealtimeSpeechSynthesizer(
            connector: connector, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, encoder: encoder, responseTimeout: timeout,
            statistics: statistics, logger: Logger(label: "test"))
    }

    /// Milliseconds of the emulator's speech of `text` (8 kHz μ-law, 8 bytes a millisecond).
    static func speechMs(_ text: String, voice: String) -> Double {
        Double(SandboxRealtime.speechAudio(for: text, voice: voice).count) / 8
    }

    @Test func theClientEventsAreWhatTheRealtimeAPIExpects() throws {
        let events = OpenAIRealtimeSpeechSynthesizer.clientEvents(
            for: SpeechRequest(text: "Hello.", voiceID: "nova", model: Self.model, instructions: "Warm and slow.", format: .mp3))
        let decoded = try events.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(decoded.map { $0["type"] as? String } == ["session.update", "conversation.item.create", "response.create"])
        let session = try #require(decoded[0]["session"] as? [String: Any])
        #expect(session["type"] as? String == "realtime" && session["output_modalities"] as? [String] == ["audio"])
        #expect((session["reasoning"] as? [String: Any])?["effort"] as? String == "minimal")
        let audio = try #require(session["audio"] as? [String: Any])
        let input = try #require(audio["input"] as? [String: Any])
        #expect(input.keys.contains("turn_detection") && input["turn_detection"] is NSNull)
        let output = try #require(audio["output"] as? [String: Any])
        #expect(output["voice"] as? String == "marin")
        #expect((output["format"] as? [String: Any])?["type"] as? String == "audio/pcm")
        #expect((output["format"] as? [String: Any])?["rate"] as? Int == 24_000)
        let instructions = try #require(session["instructions"] as? String)
        #expect(instructions.contains("word for word") && instructions.hasSuffix("How to read it: Warm and slow."))
        let item = try #require(decoded[1]["item"] as? [String: Any])
        #expect(item["role"] as? String == "user")
        #expect((item["content"] as? [[String: Any]])?.first?["type"] as? String == "input_text")
        #expect((item["content"] as? [[String: Any]])?.first?["text"] as? String == "Hello.")
        // A model without reasoning gets no `reasoning`; a custom voice is sent as an object.
        let older = OpenAIRealtimeSpeechSynthesizer.clientEvents(for: SpeechRequest(text: "Hi.", voiceID: "voice_abc", model: "gpt-realtime"))
        let olderSession = try #require(
            (try JSONSerialization.jsonObject(with: Data(older[0].utf8)) as? [String: Any])?["session"] as? [String: Any])
        #expect(olderSession["reasoning"] == nil)
        #expect(((olderSession["audio"] as? [String: Any])?["output"] as? [String: Any])?["voice"] as? [String: String] == ["id": "voice_abc"])
    }

    @Test func serverEventsAreReadDefensively() throws {
        func read(_ lines: [String]) throws -> (samples: [Int16], transcript: String)? {
            try OpenAIRealtimeSpeechSynthesizer.reading(of: lines.map { ByteBuffer(string: $0) })
        }
        // Usage numbers that do not fit are dropped, not trusted; an odd trailing byte is not a sample.
        let reading = try #require(
            try read([
                #"{"type":"session.created","session":{}}"#, #"{"type":"response.output_audio.delta","delta":"AAABAAIA"}"#,
                #"{"type":"response.output_audio.delta","delta":"AQ=="}"#,
                #"{"type":"response.output_audio_transcript.done","transcript":"Hello there."}"#,
                #"{"type":"response.done","response":{"status":"completed","usage":{"output_token_details":{"audio_tokens":99999999999999999999999}}}}"#,
            ]))
        #expect(reading.samples == [0, 1, 2] && reading.transcript == "Hello there.")
        #expect(try read([#"{"type":"response.output_audio.delta","delta":"AAAB"}"#]) == nil)
        #expect(throws: ProviderError.invalidResponse("the OpenAI Realtime API sent an audio delta that is not base64")) {
            try read([#"{"type":"response.output_audio.delta","delta":"not base64!"}"#])
        }
        #expect(throws: ProviderError.invalidResponse("the OpenAI Realtime API returned no audio")) {
            try read([#"{"type":"response.done","response":{"status":"completed"}}"#])
        }
        #expect(throws: ProviderError.unavailable("OpenAI Realtime: the speech response failed")) {
            try read([#"{"type":"response.done","response":{"status":"failed","status_details":{"type":"failed","error":{"type":"server_error"}}}}"#])
        }
        #expect(throws: ProviderError.rejected(httpStatus: 400, code: "content_filter", message: "the OpenAI Realtime API stopped the speech response early (content_filter)")) {
            try read([#"{"type":"response.done","response":{"status":"incomplete","status_details":{"type":"incomplete","reason":"content_filter"}}}"#])
        }
        #expect(throws: ProviderError.quotaExceeded(message: "You exceeded your current quota.")) {
            try read([#"{"type":"error","error":{"type":"insufficient_quota","code":"insufficient_quota","message":"You exceeded your current quota."}}"#])
        }
        #expect(throws: ProviderError.self) { try read(["not json"]) }
    }

    @Test func theProductVoicesMapToRealtimeVoices() {
        #expect(OpenAIRealtimeSpeechSynthesizer.realtimeVoice(for: "nova") == "marin")
        #expect(OpenAIRealtimeSpeechSynthesizer.realtimeVoice(for: "fable") == "ballad")
        #expect(OpenAIRealtimeSpeechSynthesizer.realtimeVoice(for: "onyx") == "cedar")
        for voice in ["coral", "alloy", "echo", "shimmer", "sage"] { #expect(OpenAIRealtimeSpeechSynthesizer.realtimeVoice(for: voice) == voice) }
        // Every story voice is one the Realtime API has once mapped.
        for voice in StoryVoiceCatalog.all {
            #expect(OpenAIRealtimeSpeechSynthesizer.realtimeVoices.contains(OpenAIRealtimeSpeechSynthesizer.realtimeVoice(for: voice.id)), "\(voice.id)")
        }
    }

    @Test func aShortTextIsSpokenAsMP3FramesOfTheRightLength() async throws {
        let encoder = try #require(MP3Encoder.system, "libmp3lame must be installed for the tests (scripts/test installs it)")
        try await withRealtime { harness in
            let synthesizer = try Self.synthesizer(harness, encoder: encoder)
            let speech = try await synthesizer.synthesize(
                SpeechRequest(text: Self.text, voiceID: "nova", model: Self.model, instructions: "Calm bedtime voice.", format: .mp3))
            #expect(speech.format == .mp3 && speech.billedCharacters == Self.text.count)
            #expect(speech.audio.prefix(2) == Data([0xFF, 0xF3]), "MPEG-2 Layer III frame sync, no tag in front")
            let frames = try MP3Joiner.frames(of: speech.audio)
            #expect(frames.sampleRate == 24_000 && frames.channels == 1 && frames.samplesPerFrame == 576)
            let info = try AudioContainer.inspect(speech.audio)
            #expect(info.format == .mp3 && info.sampleRate == 24_000)
            // The length of the emulator's speech of the text in the mapped voice, plus LAME's padding (under 3 frames).
            let expected = Self.speechMs(Self.text, voice: "marin")
            #expect(info.durationSeconds * 1_000 >= expected && info.durationSeconds * 1_000 - expected < 3 * 24 + 1, "\(info.durationSeconds) s vs \(expected) ms")
            #expect(abs(frames.durationSeconds - info.durationSeconds) < 0.001)

            let session = try #require(harness.realtime.sessions().last)
            #expect(session.model == Self.model && session.voice == "marin" && session.outputAudioFormat == "audio/pcm")
            #expect(session.turnDetection == nil && session.instructions.contains("Calm bedtime voice."))
            #expect(session.responses.map(\.text) == [Self.text] && session.responses.first?.status == "completed")
            #expect(session.errors.isEmpty)
            #expect(session.eventsSent["response.output_audio_transcript.done"] == 1 && session.eventsSent["response.done"] == 1)
            #expect(synthesizer.statistics.snapshot.chunks == 1 && synthesizer.statistics.snapshot.retries == 0)
        }
    }

    @Test func aLongTextIsSpokenInPiecesAndJoined() async throws {
        try await withRealtime { harness in
            let synthesizer = try Self.synthesizer(harness)
            let sentence = "The owl counted the stars above the quiet valley while the river sang softly. "
            let text = String(repeating: sentence, count: 30).trimmingCharacters(in: .whitespaces)
            let parts = TextChunker(maxCharacters: synthesizer.maxInputCharacters).split(text)
            #expect(synthesizer.maxInputCharacters == 1_000 && parts.count == 3 && parts.allSatisfy { TextChunker.length($0) <= 1_000 })
            var frames: [MP3Frames] = []
            for part in parts {
                let speech = try await synthesizer.synthesize(SpeechRequest(text: part, voiceID: "coral", model: Self.model))
                frames.append(try MP3Joiner.frames(of: speech.audio))
            }
            let joined = try MP3Joiner.join(frames)
            #expect(abs(joined.durationSeconds - frames.reduce(0) { $0 + $1.durationSeconds }) < 0.001)
            #expect(harness.realtime.sessions().flatMap(\.responses).map(\.text) == parts)
            #expect(synthesizer.statistics.snapshot.chunks == 3)
        }
    }

    @Test func aWAVRequestGetsTheSamplesInARIFFFile() async throws {
        try await withRealtime { harness in
            let speech = try await Self.synthesizer(harness).synthesize(
                SpeechRequest(text: Self.text, voiceID: "sage", model: Self.model, format: .wav))
            #expect(speech.format == .wav && speech.audio.prefix(4) == Data("RIFF".utf8))
            let info = try AudioContainer.inspect(speech.audio)
            #expect(info.format == .wav && info.sampleRate == 24_000 && info.channels == 1)
            // The emulator's 8 kHz speech is upsampled 3× to 24 kHz: 2 bytes a sample.
            #expect(speech.audio.count == 44 + 6 * SandboxRealtime.speechAudio(for: Self.text, voice: "sage").count)
        }
    }

    @Test func withoutAnEncoderMP3RequestsAreAnsweredWithWAV() async throws {
        try await withRealtime { harness in
            let synthesizer = try Self.synthesizer(harness, encoder: nil)
            for _ in 0..<2 {
                let speech = try await synthesizer.synthesize(SpeechRequest(text: "Good night, moon.", voiceID: "alloy", model: Self.model, format: .mp3))
                #expect(speech.format == .wav && speech.format.contentType == "audio/wav")
                #expect(try AudioContainer.inspect(speech.audio).format == .wav)
            }
        }
    }

    @Test func aDeviatingReadingIsSpokenAgainAndCounted() async throws {
        try await withRealtime { harness in
            let synthesizer = try Self.synthesizer(harness)
            harness.realtime.deviateReadings(1)
            let speech = try await synthesizer.synthesize(SpeechRequest(text: Self.text, voiceID: "coral", model: Self.model, format: .wav))
            // The second reading was verbatim and is the one returned.
            #expect(speech.audio.count == 44 + 6 * SandboxRealtime.speechAudio(for: Self.text, voice: "coral").count)
            let responses = harness.realtime.sessions().flatMap(\.responses)
            #expect(responses.count == 2 && responses[0].transcript != Self.text && responses[1].transcript == Self.text)
            #expect(VerbatimCheck.wordErrorRate(text: Self.text, transcript: responses[0].transcript) > 0.4)
            let counts = synthesizer.statistics.snapshot
            #expect(counts.chunks == 1 && counts.retries == 1 && counts.acceptedWithDeviation == 0 && counts.retryRate == 1)
            #expect(harness.realtime.readingDeviations == (0, 1))
        }
    }

    @Test func whenEveryReadingDeviatesTheClosestIsKept() async throws {
        try await withRealtime { harness in
            let synthesizer = try Self.synthesizer(harness)
            harness.realtime.deviateReadings(5)
            let speech = try await synthesizer.synthesize(SpeechRequest(text: Self.text, voiceID: "coral", model: Self.model, format: .wav))
            let responses = harness.realtime.sessions().flatMap(\.responses)
            #expect(responses.count == 3)
            // Readings 1–3 drop every 2nd, 3rd and 4th word: the third is the closest, and it is the audio returned.
            let rates = responses.map { VerbatimCheck.wordErrorRate(text: Self.text, transcript: $0.transcript) }
            #expect(rates == rates.sorted(by: >) && rates.allSatisfy { $0 > 0.1 }, "\(rates)")
            let closest = Self.text.split(separator: " ").enumerated().filter { ($0.offset + 1) % 4 != 0 }.map(\.element).joined(separator: " ")
            #expect(responses[2].transcript == closest)
            #expect(speech.audio.count == 44 + 6 * SandboxRealtime.speechAudio(for: closest, voice: "coral").count)
            let counts = synthesizer.statistics.snapshot
            #expect(counts.chunks == 1 && counts.retries == 2 && counts.acceptedWithDeviation == 1 && counts.deviationRate == 1)
            #expect(harness.realtime.readingDeviations == (2, 3))
        }
    }

    @Test func anErrorEventIsAProviderError() async throws {
        try await withRealtime { harness in
            let synthesizer = try Self.synthesizer(harness)
            // `nova` would be refused by the API (not a Realtime voice) but is mapped; an unknown voice is sent and refused.
            await #expect(throws: ProviderError.self) {
                _ = try await synthesizer.synthesize(SpeechRequest(text: "Hi.", voiceID: "robot", model: Self.model))
            }
            do {
                _ = try await synthesizer.synthesize(SpeechRequest(text: "Hi.", voiceID: "robot", model: Self.model))
            } catch let error as ProviderError {
                guard case .rejected(_, let code, let message) = error else {
                    Issue.record("expected rejected, got \(error)")
                    return
                }
                #expect(code == "invalid_value" && message.contains("'robot'"))
            }
            #expect(harness.realtime.sessions().allSatisfy { $0.errors.first?.param == "session.audio.output.voice" }, "\(harness.realtime.sessions().map(\.errors))")
            #expect(synthesizer.statistics.snapshot.failed == 2 && synthesizer.statistics.snapshot.chunks == 0)

            // A server error inside the session.
            var failing = SandboxRealtime.Behavior.testing
            failing.firstAudioDelayMs = 2_000
            failing.failAfterMs = 100
            failing.failure = .error
            harness.realtime.setBehavior(failing)
            await #expect(throws: ProviderError.unavailable("OpenAI Realtime: The server had an error while processing your request. Sorry about that!")) {
                _ = try await synthesizer.synthesize(SpeechRequest(text: "Hi.", voiceID: "alloy", model: Self.model))
            }
        }
    }

    @Test func theEmulatorReadsTextAloudWithTheGAEventSequence() async throws {
        try await withRealtime { harness in
            let client = try await harness.connect(url: harness.socketURL.replacingOccurrences(of: "gpt-realtime", with: Self.model))
            _ = try await client.next("session.created")
            for event in OpenAIRealtimeSpeechSynthesizer.clientEvents(for: SpeechRequest(text: Self.text, voiceID: "cedar", model: Self.model)) {
                client.send(event)
            }
            let done = try #require(try await client.next("response.done")["response"] as? [String: Any])
            let types = client.events.compactMap { $0["type"] as? String }.filter {
                !["response.output_audio.delta", "response.output_audio_transcript.delta"].contains($0)
            }
            #expect(
                types == [
                    "session.created", "session.updated", "conversation.item.added", "conversation.item.done", "response.created",
                    "response.output_item.added", "conversation.item.added", "response.content_part.added", "response.output_audio.done",
                    "response.output_audio_transcript.done", "response.content_part.done", "response.output_item.done", "conversation.item.done",
                    "response.done",
                ], "\(types)")
            let transcript = client.events.filter { $0["type"] as? String == "response.output_audio_transcript.delta" }
                .compactMap { $0["delta"] as? String }.joined()
            #expect(transcript == Self.text)
            #expect(client.events("response.output_audio_transcript.done").first?["transcript"] as? String == Self.text)
            let audio = client.events("response.output_audio.delta").compactMap { ($0["delta"] as? String).flatMap { Data(base64Encoded: $0) } }
            let bytes = audio.reduce(0) { $0 + $1.count }
            #expect(bytes == 6 * SandboxRealtime.speechAudio(for: Self.text, voice: "cedar").count)
            // Usage: the instructions and the text in, about 1 token per 50 ms of audio out.
            #expect(done["status"] as? String == "completed")
            let usage = try #require(done["usage"] as? [String: Any])
            let inputText = (usage["input_token_details"] as? [String: Any])?["text_tokens"] as? Int ?? 0
            #expect(inputText >= Self.text.count / 4)
            let outputAudio = (usage["output_token_details"] as? [String: Any])?["audio_tokens"] as? Int ?? 0
            #expect(outputAudio == bytes / 48 / 50)
            #expect((done["audio"] as? [String: Any]).flatMap { ($0["output"] as? [String: Any])?["voice"] as? String } == "cedar")
            expectSpecShapes(client.events)
            try await client.close()
        }
    }

    @Test func theEmulatorRefusesReasoningOnModelsWithoutIt() async throws {
        try await withRealtime { harness in
            let client = try await harness.connect()  // model gpt-realtime
            _ = try await client.next("session.created")
            client.send(#"{"type":"session.update","session":{"type":"realtime","reasoning":{"effort":"minimal"}}}"#)
            let error = try #require(try await client.next("error")["error"] as? [String: Any])
            #expect(error["code"] as? String == "unsupported_parameter" && error["param"] as? String == "session.reasoning")
            try await client.close()

            let reasoning = try await harness.connect(url: harness.socketURL.replacingOccurrences(of: "gpt-realtime", with: Self.model))
            _ = try await reasoning.next("session.created")
            reasoning.send(#"{"type":"session.update","session":{"type":"realtime","reasoning":{"effort":"minimal"}}}"#)
            _ = try await reasoning.next("session.updated")
            reasoning.send(#"{"type":"session.update","session":{"type":"realtime","reasoning":{"effort":"none"}}}"#)
            #expect((try await reasoning.next("error")["error"] as? [String: Any])?["param"] as? String == "session.reasoning.effort")
            try await reasoning.close()
        }
    }

    @Test func aSessionThatTakesTooLongOrClosesEarlyFails() async throws {
        var slow = SandboxRealtime.Behavior.testing
        slow.firstAudioDelayMs = 5_000
        try await withRealtime(behavior: slow) { harness in
            let synthesizer = try Self.synthesizer(harness, timeout: .milliseconds(300))
            let started = ContinuousClock.now
            do {
                _ = try await synthesizer.synthesize(SpeechRequest(text: "Hi.", voiceID: "alloy", model: Self.model))
                Issue.record("a response slower than the timeout succeeded")
            } catch let error as ProviderError {
                guard case .unavailable(let message) = error else {
                    Issue.record("expected unavailable, got \(error)")
                    return
                }
                #expect(message.contains("did not finish speaking"))
            }
            #expect(ContinuousClock.now - started < .seconds(3))
            try await Task.sleep(for: .milliseconds(200))
            #expect(harness.realtime.openSessionCount == 0, "the session was closed")

            var closing = SandboxRealtime.Behavior.testing
            closing.firstAudioDelayMs = 2_000
            closing.failAfterMs = 100
            closing.failure = .close
            harness.realtime.setBehavior(closing)
            await #expect(throws: ProviderError.unavailable("the OpenAI Realtime session closed before the response was done")) {
                _ = try await Self.synthesizer(harness).synthesize(SpeechRequest(text: "Hi.", voiceID: "alloy", model: Self.model))
            }
            // A refused connection.
            var refusing = SandboxRealtime.Behavior.testing
            refusing.rejectConnections = true
            harness.realtime.setBehavior(refusing)
            await #expect(throws: ProviderError.self) {
                _ = try await Self.synthesizer(harness).synthesize(SpeechRequest(text: "Hi.", voiceID: "alloy", model: Self.model))
            }
        }
    }

    @Test func theDeviationKnobIsOnTheControlAPI() async throws {
        try await withRealtime { harness in
            func put(_ body: String) async throws -> (status: UInt, body: [String: Int]?) {
                var request = HTTPClientRequest(url: harness.baseURL.appendingPathComponent("openai/realtime/deviations").absoluteString)
                request.method = .PUT
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: body))
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                let data = Data(buffer: try await response.body.collect(upTo: 1 << 16))
                return (response.status.code, try? JSONSerialization.jsonObject(with: data) as? [String: Int])
            }
            let set = try await put(#"{"responses":2}"#)
            #expect(set.status == 200 && set.body == ["remaining": 2, "made": 0])
            #expect(harness.realtime.readingDeviations == (2, 0))
            #expect(try await put(#"{"responses":-1}"#).status == 400)
            harness.realtime.deviateReadings(0)
        }
    }
}
