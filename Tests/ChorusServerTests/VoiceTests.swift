import ChorusAPI
import ChorusCore
import ChorusSandbox
import Foundation
import SQLKit
import Testing

@testable import ChorusServer

/// Voice profiles (cloning with consent, 18+, re-recording, revocation) and speech in the sender's voice (cached,
/// single-flight, limits, budget, provider failures).
@Suite("Voice profiles and speech")
struct VoiceTests {
    typealias Person = MessagingTests.Person

    static let script =
        "Hi, I'm setting up my voice so my family can hear my messages read aloud. This is my natural speaking voice. I'm excited to "
        + "try this new feature. The quick brown fox jumps over the lazy dog. Thanks for listening!"

    /// A sample of about 40 seconds of the script, uploaded by `person`.
    static func uploadSample(_ server: TestServer, _ person: Person, repeats: Int = 3) async throws -> String {
        let wav = SandboxAudioFiles.speechWAV(text: Array(repeating: script, count: repeats).joined(separator: " "), voice: person.email)
        let reply = try await server.request(
            .POST, "/audio?long_form=true", token: person.token, body: wav, headers: [("Content-Type", "audio/wav")])
        #expect(reply.status == 201, "\(reply.text)")
        return try reply.decode(AudioUploadResponse.self).audioID
    }

    static func adult(_ server: TestServer, name: String) async throws -> Person {
        let person = try await MessagingTests.person(server, name: name)
        _ = try await server.request(.PUT, "/me/profile", token: person.token, json: MessagingProfileDTO(birthYear: 1985))
        return person
    }

    /// Requests to the sandbox providers whose path contains `path` and whose body contains `text`.
    static func providerRequests(_ server: TestServer, path: String, containing text: String) async throws -> Int {
        let requests = try await server.request(.GET, "/sandbox/requests").json["requests"] as? [[String: Any]] ?? []
        return requests.filter { ($0["path"] as? String)?.contains(path) == true && ($0["body"] as? String)?.contains(text) == true }.count
    }

    /// The texts the Realtime emulator read aloud for `gpt-realtime-2.1-mini` sessions, in order.
    static func realtimeReadings(_ server: TestServer) async throws -> [String] {
        let sessions = try await server.request(.GET, "/sandbox/openai/realtime/sessions").json["sessions"] as? [[String: Any]] ?? []
        return sessions.filter { $0["model"] as? String == "gpt-realtime-2.1-mini" }.flatMap { session in
            (session["responses"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
        }
    }

    static func speech(_ server: TestServer, _ person: Person, message: String) async throws -> TestServer.Reply {
        try await server.request(.POST, "/messages/\(message)/speech", token: person.token)
    }

    @Test("clone a voice with consent, hear messages in it, re-record, revoke", arguments: TestDatabase.all)
    func cloneSpeakRevoke(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await Self.adult(server, name: "alice")
            let bob = try await Self.adult(server, name: "bob")
            let conversation = try await server.startConversation(
                alice.token, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]), acceptedBy: [bob.token])

            // Refusals: no consent, a sample too short, a minor, no birth year.
            let sample = try await Self.uploadSample(server, alice)
            let noConsent = try await server.request(
                .POST, "/voice-profile", token: alice.token, json: CreateVoiceProfileRequest(audioID: sample, script: Self.script, consent: false))
            #expect(noConsent.status == 422)
            let short = try await server.request(
                .POST, "/audio", token: alice.token, body: SandboxAudioFiles.speechWAV(text: "Too short.", voice: "a"),
                headers: [("Content-Type", "audio/wav")]
            ).decode(AudioUploadResponse.self)
            let tooShort = try await server.request(
                .POST, "/voice-profile", token: alice.token,
                json: CreateVoiceProfileRequest(audioID: short.audioID, script: Self.script, consent: true))
            #expect(tooShort.status == 422 && tooShort.text.contains("30 seconds"), "\(tooShort.text)")
            let teen = try await MessagingTests.person(server, name: "teen")
            let year = Calendar(identifier: .gregorian).component(.year, from: Date())
            #expect(
                try await server.request(
                    .POST, "/voice-profile", token: teen.token, json: CreateVoiceProfileRequest(audioID: sample, script: Self.script, consent: true)
                ).status == 403)
            _ = try await server.request(.PUT, "/me/profile", token: teen.token, json: MessagingProfileDTO(birthYear: year - 16))
            let minor = try await server.request(
                .POST, "/voice-profile", token: teen.token, json: CreateVoiceProfileRequest(audioID: sample, script: Self.script, consent: true))
            #expect(minor.status == 403 && minor.text.contains("18+"))

            // Without a clone, messages play in the sender's default voice.
            #expect(try await server.request(.GET, "/voice-profile", token: alice.token).decode(VoiceProfileResponse.self).status == "none")
            let before = try await MessagingTests.send(server, alice, to: conversation.id, text: "Dinner at seven.")
            let defaultSpeech = try await Self.speech(server, bob, message: before.id).decode(SpeechResponse.self)
            #expect(defaultSpeech.voice == "default")

            let created = try await server.request(
                .POST, "/voice-profile", token: alice.token, json: CreateVoiceProfileRequest(audioID: sample, script: Self.script, consent: true))
            #expect(created.status == 201, "\(created.text)")
            let profile = try created.decode(VoiceProfileResponse.self)
            #expect(profile.status == "pending_confirmation" && profile.consentedAt != nil && profile.previewURL != nil)
            #expect(!created.text.contains("voice_id"))
            // Alice confirms after hearing the preview (VoiceCloningTests covers the unconfirmed voice).
            let confirmed = try await server.request(.POST, "/voice-profile/confirm", token: alice.token)
            #expect(confirmed.status == 200, "\(confirmed.text)")
            #expect(try confirmed.decode(VoiceProfileResponse.self).status == "ready")
            var voices = try await server.request(.GET, "/sandbox/elevenlabs/voices").json["voices"] as? [[String: Any]] ?? []
            #expect(voices.count == 1)

            // Bob hears Alice's message in her cloned voice; the second time it comes from the cache.
            let message = try await MessagingTests.send(server, alice, to: conversation.id, text: "See you at the game tonight!")
            let spoken = try await Self.speech(server, bob, message: message.id)
            #expect(spoken.status == 200, "\(spoken.text)")
            let speech = try spoken.decode(SpeechResponse.self)
            #expect(speech.voice == "cloned" && !speech.cached && speech.contentType == "audio/mpeg")
            let audio = try await server.request(.GET, String(speech.audioURL.dropFirst(server.baseURL.count)))
            #expect(audio.status == 200 && SandboxAudioFiles.embeddedText(in: audio.body) == "See you at the game tonight!")
            let again = try await Self.speech(server, bob, message: message.id).decode(SpeechResponse.self)
            #expect(again.cached)
            #expect(try await Self.providerRequests(server, path: "elevenlabs/v1/text-to-speech", containing: "See you at the game") == 1)

            // Re-recording replaces the voice and deletes the old one at the provider.
            let sample2 = try await Self.uploadSample(server, alice)
            let rerecorded = try await server.request(
                .POST, "/voice-profile", token: alice.token, json: CreateVoiceProfileRequest(audioID: sample2, script: Self.script, consent: true))
            #expect(rerecorded.status == 201)
            voices = try await server.request(.GET, "/sandbox/elevenlabs/voices").json["voices"] as? [[String: Any]] ?? []
            #expect(voices.count == 1)
            // The old voice's speech was erased with it.
            #expect(try await server.request(.GET, String(speech.audioURL.dropFirst(server.baseURL.count))).status == 404)

            // Revoking deletes the provider voice; messages fall back to the default voice.
            #expect(try await server.request(.DELETE, "/voice-profile", token: alice.token).status == 204)
            voices = try await server.request(.GET, "/sandbox/elevenlabs/voices").json["voices"] as? [[String: Any]] ?? []
            #expect(voices.isEmpty)
            #expect(try await Self.speech(server, bob, message: message.id).decode(SpeechResponse.self).voice == "default")
            #expect(try await server.request(.DELETE, "/voice-profile", token: alice.token).status == 404)
            // A non-member cannot have the message spoken.
            #expect(try await Self.speech(server, teen, message: message.id).status == 404)
        }
    }

    @Test("50 concurrent requests for one message's speech make one provider call", arguments: TestDatabase.all)
    func concurrentSpeech(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await Self.adult(server, name: "alice")
            let bob = try await Self.adult(server, name: "bob")
            let conversation = try await server.startConversation(
                alice.token, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]), acceptedBy: [bob.token])
            let message = try await MessagingTests.send(server, alice, to: conversation.id, text: "Concurrent listeners everywhere.")
            let statuses = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for index in 0..<50 {
                    let person = index.isMultiple(of: 2) ? alice : bob
                    group.addTask {
                        let reply = try await Self.speech(server, person, message: message.id)
                        return (reply.status, (try? reply.decode(SpeechResponse.self).audioURL) ?? reply.text)
                    }
                }
                var results: [(Int, String)] = []
                for try await result in group { results.append(result) }
                return results
            }
            #expect(statuses.allSatisfy { $0.0 == 200 }, "\(statuses.filter { $0.0 != 200 })")
            // Default voices speak on the Realtime API: one session, whose user message carries the text.
            #expect(try await Self.providerRequests(server, path: "openai/v1/realtime", containing: "Concurrent listeners") == 1)
        }
    }

    @Test("daily generation limit, spend budget and provider failures", arguments: TestDatabase.all)
    func limitsAndFailures(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_VOICE_DAILY_GENERATIONS": "2"]) { server in
            let alice = try await Self.adult(server, name: "alice")
            let bob = try await Self.adult(server, name: "bob")
            let conversation = try await server.startConversation(
                alice.token, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]), acceptedBy: [bob.token])
            var messages: [MessageDTO] = []
            for index in 1...4 { messages.append(try await MessagingTests.send(server, alice, to: conversation.id, text: "Note number \(index).")) }

            // A provider failure (the Realtime API refuses sessions): the PRD's message, nothing charged, and the next try works.
            let failing = try await server.request(
                .PUT, "/sandbox/openai/realtime/behavior", body: Data(#"{"reject_connections":true}"#.utf8),
                headers: [("Content-Type", "application/json")])
            #expect(failing.status == 200, "\(failing.text)")
            let failed = try await Self.speech(server, bob, message: messages[0].id)
            #expect(failed.status == 503 && failed.detail == "Audio unavailable. You can still read the message.", "\(failed.text)")
            #expect(try await server.request(.DELETE, "/sandbox/openai/realtime/behavior").status < 300)
            #expect(try await Self.speech(server, bob, message: messages[0].id).status == 200)
            #expect(try await Self.speech(server, bob, message: messages[1].id).status == 200)
            // Bob's two generations for today are used; cached speech still plays, new speech is refused.
            let refused = try await Self.speech(server, bob, message: messages[2].id)
            #expect(refused.status == 429 && refused.text.contains("today's limit of 2"), "\(refused.text)")
            #expect(try await Self.speech(server, bob, message: messages[0].id).decode(SpeechResponse.self).cached)
            #expect(try await Self.speech(server, alice, message: messages[2].id).status == 200)
        }
        // Urgency by keywords: the model's readings would spend the same voice budget.
        let budget = ["CHORUS_VOICE_DAILY_BUDGET_USD": "0.001", "CHORUS_VOICE_URGENCY": "keywords"]
        try await TestServer.run(on: database, environment: budget) { server in
            let alice = try await Self.adult(server, name: "alice")
            let bob = try await Self.adult(server, name: "bob")
            let conversation = try await server.startConversation(
                alice.token, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]), acceptedBy: [bob.token])
            // gpt-realtime-2.1-mini at $28 per 1M characters: 20 characters (560 micro-dollars) fit in 1,000, the next 46 do not.
            let small = try await MessagingTests.send(server, alice, to: conversation.id, text: "Twenty characters!!!")
            let large = try await MessagingTests.send(
                server, alice, to: conversation.id, text: String(repeating: "Forty characters here. ", count: 2))
            #expect(try await Self.speech(server, bob, message: small.id).status == 200)
            let paused = try await Self.speech(server, bob, message: large.id)
            #expect(paused.status == 503 && paused.text.contains("spending limit"), "\(paused.text)")
        }
    }

    @Test("export and erase voice data; opting out revokes the cloned voice", arguments: TestDatabase.all)
    func exportAndErase(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await Self.adult(server, name: "alice")
            let bob = try await Self.adult(server, name: "bob")
            let conversation = try await server.startConversation(
                alice.token, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]), acceptedBy: [bob.token])
            let sample = try await Self.uploadSample(server, alice)
            #expect(
                try await server.request(
                    .POST, "/voice-profile", token: alice.token, json: CreateVoiceProfileRequest(audioID: sample, script: Self.script, consent: true)
                ).status == 201)
            #expect(try await server.request(.POST, "/voice-profile/confirm", token: alice.token).status == 200)
            let recording = SandboxAudioFiles.speechWAV(text: "Call grandma tonight.", voice: "alice")
            let audio = try await server.request(.POST, "/audio", token: alice.token, body: recording, headers: [("Content-Type", "audio/wav")])
                .decode(AudioUploadResponse.self)
            _ = try await server.request(.POST, "/transcriptions", token: alice.token, json: TranscriptionRequestDTO(audioID: audio.audioID))
            let message = try await server.request(
                .POST, "/conversations/\(conversation.id)/messages", token: alice.token,
                json: SendMessageRequest(clientMessageID: "v", sendMode: "audio", audioID: audio.audioID)
            ).decode(MessageDTO.self)
            #expect(message.transcript == "Call grandma tonight.")
            let text = try await MessagingTests.send(server, alice, to: conversation.id, text: "Pizza tonight?")
            #expect(try await Self.speech(server, bob, message: text.id).decode(SpeechResponse.self).voice == "cloned")

            let export = try await server.request(.GET, "/me/voice-data", token: alice.token)
            #expect(export.status == 200)
            let json = export.json
            #expect((json["recordings"] as? [[String: Any]])?.count == 2)
            #expect((json["voice_messages"] as? [[String: Any]])?.first?["transcript"] as? String == "Call grandma tonight.")
            #expect((json["cloned_voice"] as? [String: Any])?["consent_statement"] != nil)
            #expect(json["generated_speech_in_your_voice"] as? Int == 2)
            #expect(!export.text.contains("voice_id"))
            let exportedURL = try #require((json["recordings"] as? [[String: Any]])?.first?["audio_url"] as? String)
            #expect(try await server.request(.GET, String(exportedURL.dropFirst(server.baseURL.count))).status == 200)

            let erased = try await server.request(.DELETE, "/me/voice-data", token: alice.token)
            #expect(erased.status == 200)
            #expect(erased.json["recordings"] as? Int == 2 && erased.json["cloned_voice"] as? Bool == true)
            #expect(try await server.request(.GET, String(exportedURL.dropFirst(server.baseURL.count))).status == 404)
            let voices = try await server.request(.GET, "/sandbox/elevenlabs/voices").json["voices"] as? [[String: Any]] ?? []
            #expect(voices.isEmpty)
            let after = try await server.request(.GET, "/me/voice-data", token: alice.token).json
            #expect((after["recordings"] as? [Any])?.isEmpty == true && after["cloned_voice"] == nil)
            let page = try await server.request(.GET, "/conversations/\(conversation.id)/messages", token: bob.token).decode(MessagesPage.self)
            #expect(page.messages.first { $0.id == message.id }?.transcript == nil)
            #expect(page.messages.first { $0.id == message.id }?.audioURL == nil)
            #expect(page.messages.first { $0.id == text.id }?.content == "Pizza tonight?")
            // Every blob is gone from storage (the data directory holds no recording or speech file).
            let blobs = server.configuration.dataDirectory.appendingPathComponent("blobs")
            let files =
                FileManager.default.enumerator(atPath: blobs.path)?.compactMap { $0 as? String }.filter {
                    $0.hasSuffix(".wav") || $0.hasSuffix(".mp3")
                } ?? []
            #expect(files.isEmpty, "\(files)")

            // Opting out revokes a new clone.
            let sample2 = try await Self.uploadSample(server, alice)
            _ = try await server.request(
                .POST, "/voice-profile", token: alice.token, json: CreateVoiceProfileRequest(audioID: sample2, script: Self.script, consent: true))
            _ = try await server.request(.PUT, "/me/profile", token: alice.token, json: MessagingProfileDTO(voiceFeaturesEnabled: false))
            #expect(try await server.request(.GET, "/voice-profile", token: alice.token).decode(VoiceProfileResponse.self).status == "none")
            #expect((try await server.request(.GET, "/sandbox/elevenlabs/voices").json["voices"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("recordings are deleted after the retention period, starred ones are kept", arguments: TestDatabase.all)
    func retention(_ database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(on: database, environment: ["CHORUS_VOICE_RETENTION_SWEEP_SECONDS": "1"], options: .testing(clock: clock.closure)) {
            server in
            let alice = try await Self.adult(server, name: "alice")
            let bob = try await Self.adult(server, name: "bob")
            _ = try await server.request(.PUT, "/me/profile", token: alice.token, json: MessagingProfileDTO(retentionDays: 2))
            let conversation = try await server.startConversation(
                alice.token, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]), acceptedBy: [bob.token])
            var ids: [String] = []
            for name in ["kept", "expired"] {
                let recording = SandboxAudioFiles.speechWAV(text: "The \(name) one.", voice: "alice")
                let audio = try await server.request(.POST, "/audio", token: alice.token, body: recording, headers: [("Content-Type", "audio/wav")])
                    .decode(AudioUploadResponse.self)
                #expect(audio.expiresAt != nil)
                let message = try await server.request(
                    .POST, "/conversations/\(conversation.id)/messages", token: alice.token,
                    json: SendMessageRequest(clientMessageID: name, sendMode: "audio", audioID: audio.audioID)
                ).decode(MessageDTO.self)
                ids.append(audio.audioID)
                if name == "kept" { #expect(try await server.request(.PUT, "/messages/\(message.id)/star", token: bob.token).status == 200) }
            }
            clock.advance(days: 3)
            let login = try await server.request(
                .POST, "/auth/login", form: "username=\(alice.email)&password=correct%20horse%20battery", headers: [("X-App-Type", "mobile")])
            let token = try login.decode(TokenResponse.self).accessToken
            try await server.eventually("the expired recording is deleted") {
                try await server.request(.GET, "/audio/\(ids[1])", token: token).status == 404
            }
            #expect(try await server.request(.GET, "/audio/\(ids[0])", token: token).status == 200)
        }
    }

    @Test("generated speech nobody asked for within the cache lifetime is deleted; speech in use is kept", arguments: TestDatabase.all)
    func speechCacheExpiry(_ database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(
            on: database, environment: ["CHORUS_VOICE_RETENTION_SWEEP_SECONDS": "1", "CHORUS_VOICE_SPEECH_CACHE_DAYS": "7"],
            options: .testing(clock: clock.closure)
        ) { server in
            let alice = try await Self.adult(server, name: "alice")
            let bob = try await Self.adult(server, name: "bob")
            let conversation = try await server.startConversation(
                alice.token, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]), acceptedBy: [bob.token])
            var messages: [String: String] = [:]
            for name in ["Played every few days", "Played once and forgotten"] {
                messages[name] = try await server.request(
                    .POST, "/conversations/\(conversation.id)/messages", token: alice.token,
                    json: SendMessageRequest(clientMessageID: name, sendMode: "text", content: "\(name).")
                ).decode(MessageDTO.self).id
            }
            let used = try #require(messages["Played every few days"])
            let forgotten = try #require(messages["Played once and forgotten"])
            #expect(try await Self.speech(server, bob, message: used).decode(SpeechResponse.self).cached == false)
            #expect(try await Self.speech(server, bob, message: forgotten).decode(SpeechResponse.self).cached == false)

            clock.advance(days: 5)
            #expect(try await Self.speech(server, bob, message: used).decode(SpeechResponse.self).cached == true)
            clock.advance(days: 3)
            // 8 days after it was made and never asked for again, the forgotten speech is deleted (row and file); the
            // other was asked for 3 days ago. Watched in the database, since asking for the speech would keep it.
            let sql = server.app.db as! any SQLDatabase
            let speechFiles = {
                try FileManager.default.subpathsOfDirectory(atPath: server.configuration.dataDirectory.appendingPathComponent("blobs").path)
                    .filter { $0.hasPrefix("speech/") && $0.hasSuffix(".mp3") }
            }
            // The row goes first, then its file: wait for both.
            try await server.eventually("the unused speech is deleted") {
                try await sql.raw("SELECT COUNT(*) AS n FROM speech_cache").first()?.decode(column: "n", as: Int.self) == 1
                    && (try speechFiles()).count == 1
            }
            let blobs = try speechFiles()
            #expect(blobs.count == 1, "\(blobs)")
            #expect(try await Self.speech(server, bob, message: forgotten).decode(SpeechResponse.self).cached == false)
            #expect(try await Self.speech(server, bob, message: used).decode(SpeechResponse.self).cached == true)
            #expect(try await Self.providerRequests(server, path: "openai/v1/realtime", containing: "Played once and forgotten") == 2)
            #expect(try await Self.providerRequests(server, path: "openai/v1/realtime", containing: "Played every few days") == 1)
        }
    }

    @Test("a summary the model cannot write: 503 with the PRD's failure text, and the day's summary is not spent", arguments: TestDatabase.all)
    func summaryFails(_ database: TestDatabase) async throws {
        // What the text client reports once its retries of a failing model are used up.
        let text = FakeTextGenerator(failure: .unavailable("openai answered 503"))
        let environment = ["CHORUS_VOICE_URGENCY": "keywords", "CHORUS_VOICE_DAILY_SUMMARIES": "1"]
        try await TestServer.run(on: database, environment: environment, options: .testing().fake(\.text, text)) { server in
            let mom = try await Self.adult(server, name: "mom")
            let dad = try await Self.adult(server, name: "dad")
            let group = try await server.startConversation(
                mom.token, CreateConversationRequest(kind: "group", title: "Family", memberEmails: [dad.email]), acceptedBy: [dad.token])
            _ = try await MessagingTests.send(server, mom, to: group.id, text: "Soccer practice moved to Saturday at 9am.")
            _ = try await MessagingTests.send(server, dad, to: group.id, text: "I will bring the snacks on Saturday.")
            for _ in 0..<2 {
                let failed = try await server.request(.POST, "/conversations/\(group.id)/summary", token: mom.token, json: SummaryRequest(last: 60))
                #expect(failed.status == 503 && failed.detail == "Couldn't generate summary right now. Try again in a moment.", "\(failed.text)")
                #expect(failed.headers.first(name: "Retry-After") == "5")
            }
            #expect(text.requests.count == 2)
        }
    }

    @Test("a narrated summary of a 60-message thread, cached until a new message; multi-voice playback", arguments: TestDatabase.all)
    func summaryAndPlayback(_ database: TestDatabase) async throws {
        // Keyword urgency only: the summaries are the only text the model is asked for.
        try await TestServer.run(on: database, environment: ["CHORUS_VOICE_URGENCY": "keywords"]) { server in
            let mom = try await Self.adult(server, name: "mom")
            let dad = try await Self.adult(server, name: "dad")
            let outsider = try await Self.adult(server, name: "outsider")
            let group = try await server.startConversation(
                mom.token, CreateConversationRequest(kind: "group", title: "Family", memberEmails: [dad.email]), acceptedBy: [dad.token])
            let lines = [
                (mom, "Soccer practice moved to Saturday at 9am."), (dad, "I will bring the snacks on Saturday."),
                (mom, "We decided to skip the pizza place this week."), (dad, "Emma has a fever, this is urgent, call the doctor."),
                (mom, "Can you pick up Leo from school tomorrow at 3pm?"), (dad, "Sure, I can do the pickup tomorrow."),
            ]
            for index in 0..<60 {
                let (person, text) = lines[index % lines.count]
                _ = try await MessagingTests.send(server, person, to: group.id, text: index < lines.count ? text : "\(text) (\(index))")
            }
            let live = try await RealtimeClient.connect(baseURL: server.baseURL, token: dad.token)
            let reply = try await server.request(.POST, "/conversations/\(group.id)/summary", token: dad.token, json: SummaryRequest(last: 60))
            #expect(reply.status == 200, "\(reply.text)")
            let summary = try reply.decode(SummaryResponse.self)
            #expect(summary.messageCount == 60 && !summary.cached)
            #expect(!summary.overview.isEmpty && !summary.urgentItems.isEmpty && !summary.actionItems.isEmpty)
            #expect(summary.narration.split(whereSeparator: \.isWhitespace).count <= 300)
            let audioURL = try #require(summary.audioURL)
            let audio = try await server.request(.GET, String(audioURL.dropFirst(server.baseURL.count)))
            // Narrated on the Realtime API (the default speech model): MP3 of the narration, read by the emulator's sessions.
            #expect(audio.status == 200 && audio.headers.first(name: "Content-Type") == "audio/mpeg")
            #expect(try MP3Joiner.frames(of: audio.body).sampleRate == 24_000)
            let read = try await Self.realtimeReadings(server).joined(separator: " ")
            #expect(read.split(whereSeparator: \.isWhitespace) == summary.narration.split(whereSeparator: \.isWhitespace))
            _ = try await live.next { $0.type == "summary.ready" && $0.summaryID == summary.summaryID }
            await live.close()
            let stored = try await server.request(.GET, "/conversations/\(group.id)/summaries/\(summary.summaryID)", token: mom.token)
                .decode(SummaryResponse.self)
            #expect(stored.overview == summary.overview && stored.narration == summary.narration)
            #expect(try await server.request(.GET, "/conversations/\(group.id)/summaries/\(summary.summaryID)", token: outsider.token).status == 404)
            // Cached until a new message arrives.
            let again = try await server.request(.POST, "/conversations/\(group.id)/summary", token: mom.token, json: SummaryRequest(last: 60))
                .decode(SummaryResponse.self)
            #expect(again.cached && again.summaryID == summary.summaryID)
            _ = try await MessagingTests.send(server, mom, to: group.id, text: "One more thing: bring sunscreen.")
            let fresh = try await server.request(.POST, "/conversations/\(group.id)/summary", token: mom.token, json: SummaryRequest(last: 60))
                .decode(SummaryResponse.self)
            #expect(!fresh.cached && fresh.summaryID != summary.summaryID)
            // Bounds and isolation (the PRD's failure text: summaryFails).
            #expect(
                try await server.request(.POST, "/conversations/\(group.id)/summary", token: mom.token, json: SummaryRequest(last: 5)).status == 422)
            #expect(
                try await server.request(.POST, "/conversations/\(group.id)/summary", token: outsider.token, json: SummaryRequest(last: 60)).status
                    == 404)
            _ = try await MessagingTests.send(server, mom, to: group.id, text: "And towels.")

            // Playback: the last 3 messages in their senders' voices, 300 ms apart.
            let playback = try await server.request(.POST, "/conversations/\(group.id)/playback", token: dad.token, json: PlaybackRequest(last: 3))
            #expect(playback.status == 200, "\(playback.text)")
            let result = try playback.decode(PlaybackResponse.self)
            #expect(result.timeline.count == 3)
            #expect(result.timeline.map(\.sender) == ["Dad", "Mom", "Mom"])
            for (previous, next) in zip(result.timeline, result.timeline.dropFirst()) {
                #expect(next.startMs - previous.endMs == 300)
            }
            #expect(result.timeline.first?.startMs == 0 && result.timeline.last?.endMs == result.durationMs)
            #expect(result.status == "ready" && result.clips.map(\.state) == ["ready", "ready", "ready"] && result.fallback == nil)
            let wav = try await server.request(.GET, String(try #require(result.audioURL).dropFirst(server.baseURL.count)))
            #expect(wav.status == 200)
            let seconds = try #require(SandboxAudioFiles.durationSeconds(of: wav.body))
            #expect(abs(seconds * 1000 - Double(result.durationMs ?? -1_000)) < 50)
            #expect(
                try await server.request(.POST, "/conversations/\(group.id)/playback", token: dad.token, json: PlaybackRequest(last: 31)).status
                    == 422)
        }
    }

    @Test("a daily digest: subscribed in the morning, delivered over the WebSocket, the next one scheduled", arguments: TestDatabase.all)
    func dailyDigest(_ database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(on: database, options: .testing(clock: clock.closure)) { server in
            let mom = try await Self.adult(server, name: "mom")
            let dad = try await Self.adult(server, name: "dad")
            let outsider = try await Self.adult(server, name: "outsider")
            let group = try await server.startConversation(
                mom.token, CreateConversationRequest(kind: "group", title: "Family", memberEmails: [dad.email]), acceptedBy: [dad.token])
            #expect(
                try await server.request(.GET, "/conversations/\(group.id)/digest", token: dad.token).decode(DigestSubscriptionDTO.self).schedule
                    == "off")
            let bad = try await server.request(
                .PUT, "/conversations/\(group.id)/digest", token: dad.token, json: DigestSubscriptionDTO(schedule: "noon", timeZone: "Mars/Olympus"))
            #expect(bad.status == 422 && bad.text.contains("schedule") && bad.text.contains("time_zone"))
            #expect(
                try await server.request(
                    .PUT, "/conversations/\(group.id)/digest", token: outsider.token, json: DigestSubscriptionDTO(schedule: "morning")
                )
                .status == 404)
            let subscribed = try await server.request(
                .PUT, "/conversations/\(group.id)/digest", token: dad.token,
                json: DigestSubscriptionDTO(schedule: "morning", timeZone: "Europe/Paris")
            ).decode(DigestSubscriptionDTO.self)
            let first = try #require(subscribed.nextDigestAt)
            var paris = Calendar(identifier: .gregorian)
            paris.timeZone = TimeZone(identifier: "Europe/Paris")!
            #expect(paris.component(.hour, from: first) == 7 && first > clock.now && first.timeIntervalSince(clock.now) <= 86_400)

            for text in ["Swim class moved to Thursday at 4pm.", "I will pack the towels.", "Grandma visits on Sunday."] {
                _ = try await MessagingTests.send(server, mom, to: group.id, text: text)
            }
            let live = try await RealtimeClient.connect(baseURL: server.baseURL, token: dad.token)
            clock.advance(days: first.timeIntervalSince(clock.now) / 86_400 + 0.001)
            let event = try await live.next(timeout: .seconds(30)) { $0.type == "digest.ready" }
            #expect(event.conversationID == group.id && event.summaryID != nil)
            await live.close()
            let login = try await server.request(
                .POST, "/auth/login", form: "username=\(dad.email)&password=correct%20horse%20battery", headers: [("X-App-Type", "mobile")])
            let token = try login.decode(TokenResponse.self).accessToken
            let digest = try await server.request(.GET, "/conversations/\(group.id)/summaries/\(event.summaryID ?? "")", token: token)
                .decode(SummaryResponse.self)
            #expect(digest.messageCount == 3 && !digest.overview.isEmpty)
            try await server.eventually("the next digest is scheduled") {
                let next = try await server.request(.GET, "/conversations/\(group.id)/digest", token: token).decode(DigestSubscriptionDTO.self)
                return (next.nextDigestAt ?? first) > first
            }
        }
    }
}

