import ChorusAPI
import ChorusCore
import ChorusSandbox
import Foundation
import SQLKit
import Testing

@testable import ChorusServer

/// Issue 21: a cloned voice is previewed and confirmed before it speaks for anyone; unconfirmed voices (and those
/// ElevenLabs holds for verification) are never used and are deleted after a day, here and at ElevenLabs.
@Suite("Voice cloning: preview, confirm, verification, expiry")
struct VoiceCloningTests {
    typealias Person = MessagingTests.Person

    static func clone(_ server: TestServer, _ person: Person, sample: String) async throws -> TestServer.Reply {
        try await server.request(
            .POST, "/voice-profile", token: person.token, json: CreateVoiceProfileRequest(audioID: sample, script: VoiceTests.script, consent: true))
    }

    static func profile(_ server: TestServer, _ person: Person) async throws -> VoiceProfileResponse {
        try await server.request(.GET, "/voice-profile", token: person.token).decode(VoiceProfileResponse.self)
    }

    static func sandboxVoices(_ server: TestServer) async throws -> Int {
        (try await server.request(.GET, "/sandbox/elevenlabs/voices").json["voices"] as? [[String: Any]] ?? []).count
    }

    static func store(_ server: TestServer) -> ChorusStore {
        server.app.chorus.store(server.app.db as! any SQLDatabase, on: server.app.eventLoopGroup.any())
    }

    @Test("a new clone is pending: its preview plays, others hear the default voice until it is confirmed", arguments: TestDatabase.all)
    func previewThenConfirm(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await VoiceTests.adult(server, name: "alice")
            let bob = try await VoiceTests.adult(server, name: "bob")
            let conversation = try await server.startConversation(
                alice.token, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]), acceptedBy: [bob.token])
            #expect(try await server.request(.POST, "/voice-profile/confirm", token: alice.token).status == 404)

            let created = try await Self.clone(server, alice, sample: try await VoiceTests.uploadSample(server, alice))
            #expect(created.status == 201, "\(created.text)")
            let pending = try created.decode(VoiceProfileResponse.self)
            #expect(pending.status == .pendingConfirmation && pending.confirmedAt == nil && pending.message?.contains("confirm") == true)
            let createdAt = try #require(pending.createdAt)
            #expect(pending.expiresAt == createdAt.addingTimeInterval(86_400))
            // The preview is the new voice speaking, served from storage by the speech download (Range supported).
            let previewURL = try #require(pending.previewURL)
            let preview = try await server.request(.GET, String(previewURL.dropFirst(server.baseURL.count)))
            #expect(preview.status == 200 && SandboxAudioFiles.embeddedText(in: preview.body) == VoiceController.previewText)
            let range = try await server.request(.GET, String(previewURL.dropFirst(server.baseURL.count)), headers: [("Range", "bytes=0-9")])
            #expect(range.status == 206 && range.body.count == 10)
            // …with the PRD's voice settings.
            let requests = try await server.request(.GET, "/sandbox/requests").json["requests"] as? [[String: Any]] ?? []
            let previewRequest = try #require(
                requests.first { ($0["path"] as? String)?.contains("elevenlabs/v1/text-to-speech") == true })
            let body = try #require(
                try JSONSerialization.jsonObject(with: Data(((previewRequest["body"] as? String) ?? "").utf8)) as? [String: Any])
            #expect((body["voice_settings"] as? [String: Double]) == ["stability": 0.5, "similarity_boost": 0.8])

            // Unconfirmed, the voice never speaks for others.
            let message = try await MessagingTests.send(server, alice, to: conversation.id, text: "Back by nine.")
            #expect(try await VoiceTests.speech(server, bob, message: message.id).decode(SpeechResponse.self).voice == "default")
            #expect(try await VoiceTests.providerRequests(server, path: "elevenlabs/v1/text-to-speech", containing: "Back by nine") == 0)

            let confirmed = try await server.request(.POST, "/voice-profile/confirm", token: alice.token)
            #expect(confirmed.status == 200, "\(confirmed.text)")
            let ready = try confirmed.decode(VoiceProfileResponse.self)
            #expect(ready.status == .ready && ready.confirmedAt != nil && ready.expiresAt == nil && ready.message == nil)
            // Confirming again changes nothing.
            let again = try await server.request(.POST, "/voice-profile/confirm", token: alice.token).decode(VoiceProfileResponse.self)
            #expect(again.status == .ready && again.confirmedAt == ready.confirmedAt)
            let other = try await MessagingTests.send(server, alice, to: conversation.id, text: "Bring the blue jacket.")
            #expect(try await VoiceTests.speech(server, bob, message: other.id).decode(SpeechResponse.self).voice == "cloned")

            // Re-recording replaces the voice at once: pending again, the old voice deleted at ElevenLabs.
            let rerecorded = try await Self.clone(server, alice, sample: try await VoiceTests.uploadSample(server, alice))
            #expect(try rerecorded.decode(VoiceProfileResponse.self).status == .pendingConfirmation)
            #expect(try await Self.sandboxVoices(server) == 1)
            let third = try await MessagingTests.send(server, alice, to: conversation.id, text: "Call when you land.")
            #expect(try await VoiceTests.speech(server, bob, message: third.id).decode(SpeechResponse.self).voice == "default")
            // Discarding a pending voice deletes it at ElevenLabs; nothing is left to confirm.
            #expect(try await server.request(.DELETE, "/voice-profile", token: alice.token).status == 204)
            #expect(try await Self.sandboxVoices(server) == 0)
            #expect(try await Self.profile(server, alice).status == .none)
            #expect(try await server.request(.POST, "/voice-profile/confirm", token: alice.token).status == 404)
        }
    }

    @Test("a voice ElevenLabs holds for verification is never used, cannot be confirmed, and expires", arguments: TestDatabase.all)
    func requiresVerification(_ database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(on: database, environment: ["CHORUS_VOICE_RETENTION_SWEEP_SECONDS": "1"], options: .testing(clock: clock.closure)) {
            server in
            let alice = try await VoiceTests.adult(server, name: "alice")
            let bob = try await VoiceTests.adult(server, name: "bob")
            let conversation = try await server.startConversation(
                alice.token, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]), acceptedBy: [bob.token])
            let reading = Array(repeating: VoiceTests.script, count: 3).joined(separator: " ") + " " + SandboxElevenLabs.requiresVerificationMarker
            let upload = try await server.request(
                .POST, "/audio?long_form=true", token: alice.token, body: SandboxAudioFiles.speechWAV(text: reading, voice: alice.email),
                headers: [("Content-Type", "audio/wav")])
            let sample = try upload.decode(AudioUploadResponse.self).audioID
            let created = try await Self.clone(server, alice, sample: sample)
            #expect(created.status == 201, "\(created.text)")
            let held = try created.decode(VoiceProfileResponse.self)
            #expect(held.status == .requiresVerification && held.previewURL == nil && held.message?.contains("verify") == true)
            #expect(held.expiresAt != nil)
            let confirm = try await server.request(.POST, "/voice-profile/confirm", token: alice.token)
            #expect(confirm.status == 409 && confirm.text.contains("verify"), "\(confirm.text)")
            let message = try await MessagingTests.send(server, alice, to: conversation.id, text: "Lunch at noon.")
            #expect(try await VoiceTests.speech(server, bob, message: message.id).decode(SpeechResponse.self).voice == "default")
            // ElevenLabs was never asked to speak in it (no preview either).
            #expect(try await VoiceTests.providerRequests(server, path: "elevenlabs/v1/text-to-speech", containing: "") == 0)
            #expect(try await Self.sandboxVoices(server) == 1)

            // After a day the sweep deletes it, at ElevenLabs too.
            clock.advance(days: 1.01)
            try await server.eventually("the held voice is deleted") { try await Self.sandboxVoices(server) == 0 }
            #expect(try await Self.profile(server, alice).status == .none)
        }
    }

    @Test("unconfirmed voices are deleted after a day, confirmed ones are kept", arguments: TestDatabase.all)
    func expiry(_ database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(on: database, environment: ["CHORUS_VOICE_RETENTION_SWEEP_SECONDS": "1"], options: .testing(clock: clock.closure)) {
            server in
            let alice = try await VoiceTests.adult(server, name: "alice")
            let carol = try await VoiceTests.adult(server, name: "carol")
            #expect(try await Self.clone(server, alice, sample: try await VoiceTests.uploadSample(server, alice)).status == 201)
            #expect(try await Self.clone(server, carol, sample: try await VoiceTests.uploadSample(server, carol)).status == 201)
            #expect(try await server.request(.POST, "/voice-profile/confirm", token: carol.token).status == 200)
            #expect(try await Self.sandboxVoices(server) == 2)
            // Within the day nothing is swept.
            clock.advance(days: 0.9)
            try await Task.sleep(for: .milliseconds(1_500))
            #expect(try await Self.profile(server, alice).status == .pendingConfirmation)
            clock.advance(days: 0.2)
            try await server.eventually("alice's unconfirmed voice is deleted") { try await Self.profile(server, alice).status == .none }
            #expect(try await Self.sandboxVoices(server) == 1)
            #expect(try await Self.profile(server, carol).status == .ready)
            // The speech generated in it (the preview) is gone with it.
            #expect(try await Self.store(server).voices.speechCount(voiceOwnerID: alice.id) == 0)
            #expect(try await server.request(.POST, "/voice-profile/confirm", token: alice.token).status == 404)
        }
    }

    @Test("confirmation racing discard and expiry: one of them wins, atomically", arguments: TestDatabase.all)
    func confirmRaces(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await VoiceTests.adult(server, name: "alice")
            let sample = try await VoiceTests.uploadSample(server, alice)
            // Over HTTP: confirm and discard at the same time. The discard always deletes the voice (pending or just
            // confirmed); the confirmation either came first (200) or found nothing (404), never an error.
            for _ in 0..<4 {
                #expect(try await Self.clone(server, alice, sample: sample).status == 201)
                async let confirm = server.request(.POST, "/voice-profile/confirm", token: alice.token)
                async let discard = server.request(.DELETE, "/voice-profile", token: alice.token)
                let (confirmed, discarded) = try await (confirm, discard)
                #expect(discarded.status == 204)
                #expect([200, 404].contains(confirmed.status), "\(confirmed.status) \(confirmed.text)")
                #expect(try await Self.profile(server, alice).status == .none)
                #expect(try await Self.sandboxVoices(server) == 0)
            }

            // In the store: 8 confirmations racing the expiry sweep of the same pending voice. Exactly one wins.
            let store = Self.store(server)
            let now = Date()
            for round in 0..<4 {
                let record = VoiceProfileRecord(
                    userID: alice.id, provider: "elevenlabs", providerVoiceID: "race-\(round)", sampleAudioID: nil, script: "s",
                    consentStatement: "c", consentedAt: now, previewBlobKey: nil, createdAt: now.addingTimeInterval(-90_000),
                    state: .pendingConfirmation)
                _ = try await store.voices.replaceVoiceProfile(record)
                let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
                    for index in 0..<8 {
                        if index == 3 {
                            group.addTask {
                                try await store.voices.deleteUnconfirmedVoiceProfiles(createdBefore: now.addingTimeInterval(-86_400), limit: 10)
                                    .isEmpty ? "sweep-none" : "swept"
                            }
                        } else {
                            group.addTask {
                                try await store.voices.confirmVoiceProfile(userID: alice.id, providerVoiceID: "race-\(round)", now: now) == nil
                                    ? "confirm-none" : "confirmed"
                            }
                        }
                    }
                    return try await group.reduce(into: [String]()) { $0.append($1) }
                }
                let winners = outcomes.filter { $0 == "swept" || $0 == "confirmed" }
                #expect(winners.count == 1, "\(outcomes)")
                let left = try await store.voices.voiceProfile(userID: alice.id)
                if winners == ["swept"] {
                    #expect(left == nil)
                } else {
                    #expect(left?.state == .ready && left?.confirmedAt != nil)
                    _ = try await store.voices.deleteVoiceProfile(userID: alice.id)
                }
            }
            // A confirmation names the voice it confirms: a stale one (the voice was re-recorded) changes nothing.
            _ = try await store.voices.replaceVoiceProfile(
                VoiceProfileRecord(
                    userID: alice.id, provider: "elevenlabs", providerVoiceID: "new", sampleAudioID: nil, script: "s", consentStatement: "c",
                    consentedAt: now, previewBlobKey: nil, createdAt: now, state: .pendingConfirmation))
            #expect(try await store.voices.confirmVoiceProfile(userID: alice.id, providerVoiceID: "old", now: now) == nil)
            #expect(try await store.voices.voiceProfile(userID: alice.id)?.state == .pendingConfirmation)
        }
    }
}
