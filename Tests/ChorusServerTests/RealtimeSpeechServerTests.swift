import ChorusAPI
import ChorusCore
import ChorusProviders
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusServer

/// Speech on the default model (`gpt-realtime-2.1-mini`, the Realtime API) through the product: a message in the
/// default voice, a story's narration, and both as WAV on a machine without libmp3lame.
@Suite("Realtime speech in the product")
struct RealtimeSpeechServerTests {
    @Test("the speech sessions' client events are valid GA Realtime events, strictly (no member the spec lacks)")
    func clientEventsMatchTheSpec() throws {
        let validator = try SpecSchemaValidator.openAIRealtime()
        for (model, voice) in [("gpt-realtime-2.1-mini", "fable"), ("gpt-realtime", "voice_1234")] {
            let request = SpeechRequest(text: "Once upon a time.", voiceID: voice, model: model, instructions: "Softly.", format: .mp3)
            for event in OpenAIRealtimeSpeechSynthesizer.clientEvents(for: request) {
                #expect(try validator.validate(json: Data(event.utf8), against: "RealtimeClientEvent", strictProperties: true) == [], "\(event)")
            }
        }
    }

    @Test("without libmp3lame, default-voice speech and story narration are WAV, named and served as such")
    func wavWithoutEncoder() async throws {
        var options = ChorusApp.Options.testing()
        options.speechEncoder = nil
        try await TestServer.run(on: .sqlite, environment: StoriesTests.environment, options: options) { server in
            // A message in the default voice.
            let alice = try await VoiceTests.adult(server, name: "alice")
            let bob = try await VoiceTests.adult(server, name: "bob")
            let conversation = try await server.startConversation(
                alice.token, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]), acceptedBy: [bob.token])
            let message = try await MessagingTests.send(server, alice, to: conversation.id, text: "Dinner is at seven, bring the salad.")
            let speech = try await VoiceTests.speech(server, bob, message: message.id).decode(SpeechResponse.self)
            #expect(speech.voice == "default" && speech.contentType == "audio/wav")
            let file = try await server.request(.GET, String(speech.audioURL.dropFirst(server.baseURL.count)))
            #expect(file.status == 200 && file.headers.first(name: "Content-Type") == "audio/wav")
            let info = try AudioContainer.inspect(file.body)
            #expect(info.format == .wav && info.sampleRate == 24_000)
            #expect(try await VoiceTests.realtimeReadings(server) == ["Dinner is at seven, bring the salad."])

            // A story: WAV parts (more than one: the text is over 1,000 characters) joined into one WAV file.
            let parent = try await MessagingTests.person(server, name: "parent")
            let hero = try await StoriesTests.hero(server, parent)
            let id = try await StoriesTests.create(server, parent, hero: hero.id, minutes: 2, illustrations: 1, voice: "onyx")
            try await server.eventually(timeout: .seconds(60), "the story is finished") {
                StoriesTests.finished(try await StoriesTests.story(server, parent, id))
            }
            let story = try await StoriesTests.story(server, parent, id)
            #expect(story.stages.narration == "succeeded")
            let audio = try #require(story.audio)
            #expect(audio.parts.count >= 2 && audio.parts.count == audio.partsTotal)
            let narration = try await server.request(.GET, StoriesTests.path(server, try #require(audio.url)))
            #expect(narration.headers.first(name: "Content-Type") == "audio/wav")
            let joined = try AudioContainer.inspect(narration.body)
            #expect(joined.format == .wav && abs(joined.durationSeconds - (audio.durationSeconds ?? 0)) < 0.01)
            let sum = audio.parts.reduce(0) { $0 + $1.durationSeconds }
            #expect(abs((audio.durationSeconds ?? 0) - sum) < 0.01)
            let part = try await server.request(.GET, StoriesTests.path(server, try #require(audio.parts.first?.url)))
            #expect(part.headers.first(name: "Content-Type") == "audio/wav")
            // The story voice `onyx` is read by the Realtime voice `cedar`.
            let sessions = try await server.request(.GET, "/sandbox/openai/realtime/sessions").json["sessions"] as? [[String: Any]] ?? []
            #expect(sessions.contains { $0["voice"] as? String == "cedar" })
        }
    }
}
