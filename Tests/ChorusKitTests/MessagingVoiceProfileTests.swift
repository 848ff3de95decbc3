import ChorusKit
import ChorusSandbox
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The cloned voice, speech, summaries, playback, digests and voice-data rights through the SDK against a real server
/// over loopback (sandbox providers).
@Suite("ChorusKit voice profile, speech and conversation audio (live server)")
struct MessagingVoiceProfileTests {
    /// About 200 characters: three readings make a sample of about 40 seconds.
    static let script =
        "Hi, I'm setting up my voice so my family can hear my messages read aloud. This is my natural speaking voice. I'm excited to "
        + "try this new feature. The quick brown fox jumps over the lazy dog. Thanks for listening!"

    /// `name`, registered and 18 or older (cloning needs it).
    static func adult(on server: LiveServer, name: String) async throws -> MessagingPerson {
        let person = try await MessagingPerson.register(on: server, name: name)
        try await person.chorus.voice.updateProfile(birthYear: 1985)
        return person
    }

    /// The bytes behind a signed URL, fetched without the access token.
    static func download(_ url: URL) async throws -> (status: Int, body: Data) {
        let (body, response) = try await URLSession.shared.data(from: url)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, body)
    }

    @Test("clone a voice, hear a message in it (then from the cache), export and erase voice data, delete the profile")
    func cloneSpeakExportErase() async throws {
        try await LiveServer.run { server in
            let alice = try await Self.adult(on: server, name: "Alice")
            let bob = try await MessagingPerson.register(on: server, name: "Bob")
            let direct = try await alice.directConversation(with: bob)

            let voices = try await alice.chorus.voice.defaultVoices()
            #expect(!voices.isEmpty && voices.allSatisfy { !$0.id.isEmpty })
            let none = try await alice.chorus.voice.voiceProfile()
            #expect(none.status == .none && !none.hasClonedVoice && none.previewURL == nil && !none.defaultVoice.isEmpty)

            // A sample of about 40 seconds, uploaded long-form, cloned with consent.
            let reading = Array(repeating: Self.script, count: 3).joined(separator: " ")
            let sample = try await alice.chorus.voice.upload(
                SandboxAudioFiles.speechWAV(text: reading, voice: alice.email), format: .wav, longForm: true)
            #expect((30...180).contains(sample.duration), "\(sample.duration)")
            let noConsent = await #expect(throws: ChorusError.self) {
                try await alice.chorus.voice.cloneVoice(sampleAudioID: sample.audioID, script: Self.script, consent: false)
            }
            guard case .validation(let fields) = noConsent else {
                Issue.record("expected a validation error, got \(String(describing: noConsent))")
                return
            }
            #expect(fields.map(\.field) == ["consent"])
            let minorStatus = await chorusStatus {
                try await bob.chorus.voice.cloneVoice(sampleAudioID: sample.audioID, script: Self.script, consent: true)
            }
            #expect(minorStatus == 403)  // Bob has no birth year

            let cloned = try await alice.chorus.voice.cloneVoice(sampleAudioID: sample.audioID, script: Self.script, consent: true)
            #expect(cloned.status == .pendingConfirmation && cloned.needsConfirmation && !cloned.hasClonedVoice && cloned.script == Self.script)
            #expect(cloned.consentedAt != nil && cloned.consentStatement?.isEmpty == false && cloned.expiresAt != nil && cloned.message != nil)
            // The preview is in the new voice, before confirmation; the app plays it, then confirms.
            let previewURL = try #require(cloned.previewURL)
            let preview = try await Self.download(previewURL)
            #expect(preview.status == 200 && SandboxAudioFiles.embeddedText(in: preview.body)?.contains("how my messages will sound") == true)
            let confirmed = try await alice.chorus.voice.confirmVoiceProfile()
            #expect(confirmed.status == .ready && confirmed.hasClonedVoice && confirmed.confirmedAt != nil && confirmed.expiresAt == nil)
            #expect(try await alice.chorus.voice.voiceProfile().status == .ready)

            // Bob hears Alice's message in her cloned voice; the second request is served from storage.
            let message = try await alice.chorus.messages.send(text: "See you at the game tonight!", to: direct.id)
            let speech = try await bob.chorus.messages.speech(for: message.id)
            #expect(speech.voice == .cloned && !speech.isCached && speech.contentType == "audio/mpeg")
            let audio = try await Self.download(speech.audioURL)
            #expect(audio.status == 200 && SandboxAudioFiles.embeddedText(in: audio.body) == "See you at the game tonight!")
            let again = try await alice.chorus.messages.speech(for: message.id)
            #expect(again.voice == .cloned && again.isCached)
            // Bob's own message, without a cloned voice, is spoken in his default voice.
            let bobsMessage = try await bob.chorus.messages.send(text: "Save me a seat.", to: direct.id)
            #expect(try await alice.chorus.messages.speech(for: bobsMessage.id).voice == .default)

            // The export lists the recording and the cloned voice with its consent.
            let export = try await alice.chorus.voice.exportVoiceData()
            #expect(export.recordings.map(\.audioID).contains(sample.audioID))
            #expect(export.recordings.first { $0.audioID == sample.audioID }?.format == "wav")
            #expect(export.clonedVoice?.script == Self.script && export.clonedVoice?.sampleAudioID == sample.audioID)
            #expect(export.profile.displayName == "Alice" && export.profile.birthYear == 1985)
            #expect(export.generatedSpeechInYourVoice >= 1)
            // It encodes (to save as a file) and reads back the same.
            let saved = try JSONEncoder().encode(export)
            #expect(try JSONDecoder().decode(VoiceDataExport.self, from: saved) == export)
            #expect(String(decoding: saved, as: UTF8.self).contains("\"generated_speech_in_your_voice\""))

            // Deleting the voice profile: the default voice again; a second deletion finds nothing.
            try await alice.chorus.voice.deleteVoiceProfile()
            #expect(try await alice.chorus.voice.voiceProfile().status == .none)
            #expect(try await bob.chorus.messages.speech(for: message.id).voice == .default)
            #expect(await chorusStatus { try await alice.chorus.voice.deleteVoiceProfile() } == 404)

            // What Bob's listening cost: speech generated for him, metered in the month and the day.
            let month = try await bob.chorus.account.providerUsage()
            let spoken = try #require(month.features.first { $0.feature == "voice_messages" }?.items.filter { $0.operation == "speech" })
            #expect(spoken.reduce(0) { $0 + $1.calls } >= 2 && spoken.allSatisfy { $0.characters > 0 && $0.usdMicros > 0 })
            #expect(month.period == "month" && month.totalUSDMicros >= spoken.reduce(0) { $0 + $1.usdMicros })
            #expect(try await bob.chorus.account.providerUsage(in: .day).period == "day")

            // Erasure empties the export; erasing again erases nothing more.
            let erased = try await alice.chorus.voice.eraseVoiceData()
            #expect(erased.recordings >= 1 && !erased.clonedVoice)
            let empty = try await alice.chorus.voice.exportVoiceData()
            #expect(empty.recordings.isEmpty && empty.clonedVoice == nil && empty.generatedSpeechInYourVoice == 0)
            let twice = try await alice.chorus.voice.eraseVoiceData()
            #expect(twice.recordings == 0 && twice.transcripts == 0 && !twice.clonedVoice && twice.generatedSpeech == 0)
            // Text messages stay.
            #expect(try await bob.chorus.messages.page(conversation: direct.id).messages.contains { $0.id == message.id && $0.content != nil })
        }
    }

    @Test("a narrated summary of 25 messages, read again by id; a playback timeline of 3 messages; a daily digest")
    func summaryPlaybackDigest() async throws {
        try await LiveServer.run { server in
            let alice = try await MessagingPerson.register(on: server, name: "Alice")
            let bob = try await MessagingPerson.register(on: server, name: "Bob")
            let direct = try await alice.directConversation(with: bob)

            // Too few messages for the smallest summary: refused by field.
            #expect(await chorusStatus { try await alice.chorus.conversations.summary(of: direct.id, last: 5) } == 422)

            let start = Date()
            for index in 1...25 {
                let (sender, text) =
                    index.isMultiple(of: 2)
                    ? (bob, "Bob here, message \(index): I can bring the snacks on Saturday.")
                    : (alice, "Alice here, message \(index): the picnic is on Saturday at noon in the park.")
                try await sender.chorus.messages.send(text: text, to: direct.id)
            }

            let summary = try await alice.chorus.conversations.summary(of: direct.id, last: 25)
            #expect(summary.conversationID == direct.id && summary.messageCount == 25 && !summary.isCached)
            #expect(!summary.overview.isEmpty && !summary.narration.isEmpty)
            let narrated = try #require(summary.audioURL)
            #expect(try await Self.download(narrated).status == 200)
            // No new message since: the same summary from storage.
            let repeated = try await bob.chorus.conversations.summary(of: direct.id, last: 25)
            #expect(repeated.id == summary.id && repeated.isCached)
            let stored = try await bob.chorus.conversations.storedSummary(id: summary.id, in: direct.id)
            #expect(stored.id == summary.id && stored.overview == summary.overview && stored.actionItems == summary.actionItems)
            #expect(stored.messageCount == 25 && stored.narration == summary.narration)
            let since = try await alice.chorus.conversations.summary(of: direct.id, since: start.addingTimeInterval(-60))
            #expect(since.messageCount == 25)
            let carol = try await MessagingPerson.register(on: server, name: "Carol")
            #expect(await chorusStatus { try await carol.chorus.conversations.storedSummary(id: summary.id, in: direct.id) } == 404)

            // The last 3 messages, each in its sender's voice, in order with their speakers.
            let playback = try await bob.chorus.conversations.playback(of: direct.id, last: 3)
            #expect(playback.timeline.map(\.sender) == ["Alice", "Bob", "Alice"])
            let recent = try await bob.chorus.messages.page(conversation: direct.id, limit: 3).messages
            #expect(playback.timeline.map(\.messageID) == recent.reversed().map(\.id))
            for (earlier, later) in zip(playback.timeline, playback.timeline.dropFirst()) {
                #expect(earlier.start < earlier.end && earlier.end < later.start)
            }
            let last = try #require(playback.timeline.last)
            #expect(playback.duration >= last.end && playback.duration > 0)
            let middle = playback.timeline[1]
            #expect(playback.entry(at: (middle.start + middle.end) / 2)?.messageID == middle.messageID)
            #expect(playback.status == .ready && playback.clips.map(\.state) == [.ready, .ready, .ready])
            let wav = try await Self.download(try #require(playback.audioURL))
            #expect(wav.status == 200 && wav.body.prefix(4) == Data("RIFF".utf8))
            // The same playback as it fills in: started at once, then finished; every clip is cached by now.
            var updates: [ConversationPlayback] = []
            for try await update in bob.chorus.conversations.playbackUpdates(of: direct.id, last: 3, interval: 0.05) { updates.append(update) }
            let finished = try #require(updates.last)
            #expect(updates.count >= 1 && finished.isFinished && finished.status == .ready)
            #expect(finished.clips.allSatisfy { $0.isCached && $0.audioURL != nil } && finished.timeline == playback.timeline)
            // An interval no comparison bounds (NaN) polls at the default instead of trapping.
            var nanUpdates: [ConversationPlayback] = []
            for try await update in bob.chorus.conversations.playbackUpdates(of: direct.id, last: 3, interval: .nan) { nanUpdates.append(update) }
            #expect(nanUpdates.last?.isFinished == true)
            let again = try await bob.chorus.conversations.playbackState(id: finished.id, in: direct.id)
            #expect(again.id == finished.id && again.status == .ready)
            #expect(await chorusStatus { try await alice.chorus.conversations.playbackState(id: finished.id, in: direct.id) } == 404)
            #expect(await chorusStatus { try await bob.chorus.conversations.playback(of: direct.id, last: 31) } == 422)

            // Daily digest: off until subscribed, then evening in New York, then off again.
            let initial = try await alice.chorus.conversations.digest(of: direct.id)
            #expect(initial.schedule == .off && initial.nextDigestAt == nil)
            let newYork = try #require(TimeZone(identifier: "America/New_York"))
            let evening = try await alice.chorus.conversations.setDigest(of: direct.id, schedule: .evening, timeZone: newYork)
            #expect(evening.schedule == .evening && evening.timeZone == "America/New_York")
            let next = try #require(evening.nextDigestAt)
            #expect(next > Date() && next < Date().addingTimeInterval(86_400 + 3_600))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = newYork
            #expect(calendar.component(.hour, from: next) == 19)
            #expect(try await alice.chorus.conversations.digest(of: direct.id) == evening)
            // Each member has their own subscription.
            #expect(try await bob.chorus.conversations.digest(of: direct.id).schedule == .off)
            let off = try await alice.chorus.conversations.setDigest(of: direct.id, schedule: .off, timeZone: newYork)
            #expect(off.schedule == .off && off.nextDigestAt == nil)
            #expect(await chorusStatus { try await alice.chorus.conversations.setDigest(of: direct.id, schedule: "noon") } == 422)
            #expect(await chorusStatus { try await carol.chorus.conversations.digest(of: direct.id) } == 404)
        }
    }

    @Test("the daily generation limit is rate limiting; a paused service is 503 with the product's text")
    func limits() async throws {
        try await LiveServer.run(environment: ["CHORUS_VOICE_DAILY_GENERATIONS": "1"]) { server in
            let alice = try await MessagingPerson.register(on: server, name: "Alice")
            let bob = try await MessagingPerson.register(on: server, name: "Bob")
            let direct = try await alice.directConversation(with: bob)
            let first = try await alice.chorus.messages.send(text: "First message to hear.", to: direct.id)
            let second = try await alice.chorus.messages.send(text: "Second message to hear.", to: direct.id)
            #expect(try await bob.chorus.messages.speech(for: first.id).isCached == false)
            let limited = await #expect(throws: ChorusError.self) { try await bob.chorus.messages.speech(for: second.id) }
            guard case .rateLimited = limited else {
                Issue.record("expected rateLimited, got \(String(describing: limited))")
                return
            }
            // Cached speech still plays.
            #expect(try await bob.chorus.messages.speech(for: first.id).isCached)
        }
        // Urgency by keywords: the model's readings would spend the same voice budget.
        try await LiveServer.run(environment: ["CHORUS_VOICE_DAILY_BUDGET_USD": "0.0005", "CHORUS_VOICE_URGENCY": "keywords"]) { server in
            let alice = try await MessagingPerson.register(on: server, name: "Alice")
            let bob = try await MessagingPerson.register(on: server, name: "Bob")
            let direct = try await alice.directConversation(with: bob)
            // $17 per 1M characters: these 46 characters (782 micro-dollars) do not fit in 500.
            let message = try await alice.chorus.messages.send(text: String(repeating: "Forty characters here. ", count: 2), to: direct.id)
            let paused = await #expect(throws: ChorusError.self) { try await bob.chorus.messages.speech(for: message.id) }
            guard case .api(503, let detail) = paused else {
                Issue.record("expected api(503), got \(String(describing: paused))")
                return
            }
            #expect(detail == VoiceClient.speechUnavailableMessage)
        }
    }
}
