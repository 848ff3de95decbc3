import ChorusAPI
import ChorusSandbox
import Foundation
import Testing

@testable import ChorusServer

/// Voice messages: conversations, membership isolation, idempotent sending, read and heard state, search, urgency,
/// recordings (upload limits, range requests, signed URLs), transcription and realtime delivery.
@Suite("Messaging")
struct MessagingTests {
    struct Person {
        var token: String
        var email: String
        var id: String
    }

    static func person(_ server: TestServer, name: String) async throws -> Person {
        let email = "\(name)-\(UUID().uuidString.prefix(6).lowercased())@family.test"
        let token = try await server.register(email: email).accessToken
        let profile = try await server.request(.PUT, "/me/profile", token: token, json: MessagingProfileDTO(displayName: name.capitalized))
        #expect(profile.status == 200, "\(profile.text)")
        let id = try CompactJWS.payload(token)["sub"] as? String
        return Person(token: token, email: email, id: try #require(id))
    }

    /// A message as `person` reads it in the conversation's message list.
    static func stored(_ server: TestServer, _ person: Person, conversation: String, message: String) async throws -> MessageDTO? {
        try await server.request(.GET, "/conversations/\(conversation)/messages", token: person.token).decode(MessagesPage.self)
            .messages.first { $0.id == message }
    }

    static func send(
        _ server: TestServer, _ person: Person, to conversation: String, text: String, clientID: String = UUID().uuidString
    )
        async throws -> MessageDTO
    {
        let reply = try await server.request(
            .POST, "/conversations/\(conversation)/messages", token: person.token,
            json: SendMessageRequest(clientMessageID: clientID, sendMode: "text", content: text))
        #expect(reply.status == 201, "\(reply.text)")
        return try reply.decode(MessageDTO.self)
    }

    @Test("conversations, idempotent sending, pagination, read state, edits and deletes", arguments: TestDatabase.all)
    func conversationsAndMessages(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await Self.person(server, name: "alice")
            let bob = try await Self.person(server, name: "bob")
            let carol = try await Self.person(server, name: "carol")

            // A direct conversation exists once per pair; Bob joins once he accepts (see InvitationTests).
            let direct = try await server.request(
                .POST, "/conversations", token: alice.token, json: CreateConversationRequest(kind: "direct", memberEmails: [bob.email]))
            #expect(direct.status == 201, "\(direct.text)")
            #expect(try direct.decode(ConversationDTO.self).members.map(\.displayName) == ["Alice"])
            let conversation = try await server.acceptInvitation(bob.token, to: try direct.decode(ConversationDTO.self).id)
            #expect(conversation.members.map(\.displayName).sorted() == ["Alice", "Bob"])
            let again = try await server.request(
                .POST, "/conversations", token: bob.token,
                json: CreateConversationRequest(kind: "direct", memberEmails: [alice.email.uppercased()]))
            #expect(again.status == 200)
            #expect(try again.decode(ConversationDTO.self).id == conversation.id)

            // Sending is idempotent per client_message_id.
            let first = try await Self.send(server, alice, to: conversation.id, text: "Hello Bob", clientID: "c-1")
            let retry = try await server.request(
                .POST, "/conversations/\(conversation.id)/messages", token: alice.token,
                json: SendMessageRequest(clientMessageID: "c-1", sendMode: "text", content: "Hello Bob"))
            #expect(retry.status == 200)
            #expect(try retry.decode(MessageDTO.self).id == first.id)
            for index in 2...7 { _ = try await Self.send(server, alice, to: conversation.id, text: "Message \(index)") }

            // Bob: 7 unread; pages of 3, newest first, with a cursor.
            var listed = try await server.request(.GET, "/conversations", token: bob.token).decode(ConversationsResponse.self)
            #expect(listed.conversations.first?.unreadCount == 7)
            #expect(listed.conversations.first?.lastMessageAt != nil)
            var seen: [String] = []
            var cursor: String?
            repeat {
                let path = "/conversations/\(conversation.id)/messages?limit=3" + (cursor.map { "&before=\($0)" } ?? "")
                let page = try await server.request(.GET, path, token: bob.token).decode(MessagesPage.self)
                seen += page.messages.compactMap(\.content)
                cursor = page.nextCursor
            } while cursor != nil
            #expect(seen == (2...7).reversed().map { "Message \($0)" } + ["Hello Bob"])
            let read = try await server.request(.POST, "/conversations/\(conversation.id)/read", token: bob.token)
            #expect(try read.decode(ConversationDTO.self).unreadCount == 0)
            listed = try await server.request(.GET, "/conversations", token: alice.token).decode(ConversationsResponse.self)
            #expect(listed.conversations.first?.unreadCount == 0)

            // Only the sender edits or deletes.
            let edit = try await server.request(.PATCH, "/messages/\(first.id)", token: bob.token, json: EditMessageRequest(content: "hacked"))
            #expect(edit.status == 403)
            let edited = try await server.request(
                .PATCH, "/messages/\(first.id)", token: alice.token, json: EditMessageRequest(content: "Hello, Bob!"))
            #expect(try edited.decode(MessageDTO.self).content == "Hello, Bob!")
            #expect(try edited.decode(MessageDTO.self).editedAt != nil)
            #expect(try await server.request(.DELETE, "/messages/\(first.id)", token: bob.token).status == 403)
            #expect(try await server.request(.DELETE, "/messages/\(first.id)", token: alice.token).status == 204)
            let afterDelete = try await server.request(.GET, "/conversations/\(conversation.id)/messages?limit=50", token: bob.token)
                .decode(MessagesPage.self)
            let deleted = try #require(afterDelete.messages.first { $0.id == first.id })
            #expect(deleted.content == nil && deleted.deletedAt != nil)

            // Carol is not a member: everything is 404.
            #expect(try await server.request(.GET, "/conversations/\(conversation.id)", token: carol.token).status == 404)
            #expect(try await server.request(.GET, "/conversations/\(conversation.id)/messages", token: carol.token).status == 404)
            let message2 = try #require(afterDelete.messages.first { $0.content == "Message 2" })
            #expect(
                try await server.request(.PATCH, "/messages/\(message2.id)", token: carol.token, json: EditMessageRequest(content: "x")).status == 404
            )
            let intrude = try await server.request(
                .POST, "/conversations/\(conversation.id)/messages", token: carol.token,
                json: SendMessageRequest(clientMessageID: "x", sendMode: "text", content: "hi"))
            #expect(intrude.status == 404)
            #expect(try await server.request(.GET, "/conversations", token: carol.token).decode(ConversationsResponse.self).conversations.isEmpty)

            // A client id reused in another conversation is a conflict, not a silent duplicate.
            let groupID = try await server.startConversation(
                alice.token, CreateConversationRequest(kind: "group", title: "Family", memberEmails: [bob.email, carol.email]),
                acceptedBy: [bob.token, carol.token]
            ).id
            let reused = try await server.request(
                .POST, "/conversations/\(groupID)/messages", token: alice.token,
                json: SendMessageRequest(clientMessageID: "c-1", sendMode: "text", content: "again"))
            #expect(reused.status == 409)

            // Search: case-insensitive, only the caller's conversations, LIKE wildcards are literal.
            _ = try await Self.send(server, carol, to: groupID, text: "Soccer practice moved to 5pm, 100% sure")
            let found = try await server.request(.GET, "/messages/search?q=SOCCER", token: bob.token).decode(MessageSearchResponse.self)
            #expect(found.messages.map(\.content) == ["Soccer practice moved to 5pm, 100% sure"])
            let percent = try await server.request(.GET, "/messages/search?q=0%25%20s", token: bob.token).decode(MessageSearchResponse.self)
            #expect(percent.messages.count == 1)
            let wildcard = try await server.request(.GET, "/messages/search?q=%25%25", token: bob.token).decode(MessageSearchResponse.self)
            #expect(wildcard.messages.isEmpty)
            let outsider = try await Self.person(server, name: "dave")
            #expect(
                try await server.request(.GET, "/messages/search?q=soccer", token: outsider.token).decode(MessageSearchResponse.self).messages.isEmpty
            )

            // Members: the owner removes, others cannot; a member can leave.
            #expect(try await server.request(.DELETE, "/conversations/\(groupID)/members/\(alice.id)", token: bob.token).status == 403)
            #expect(try await server.request(.DELETE, "/conversations/\(groupID)/members/\(carol.id)", token: alice.token).status == 204)
            #expect(try await server.request(.GET, "/conversations/\(groupID)", token: carol.token).status == 404)
            // Adding her again invites her: she is back once she accepts.
            let readded = try await server.request(
                .POST, "/conversations/\(groupID)/members", token: bob.token, json: AddMembersRequest(memberEmails: [carol.email]))
            #expect(try readded.decode(ConversationDTO.self).members.count == 2)
            #expect(try await server.acceptInvitation(carol.token, to: groupID).members.count == 3)
        }
    }

    @Test("urgent messages are flagged by the keyword policy and by the summary model, and shown on the conversation", arguments: TestDatabase.all)
    func urgency(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let mom = try await Self.person(server, name: "mom")
            let dad = try await Self.person(server, name: "dad")
            let conversation = try await server.startConversation(
                mom.token, CreateConversationRequest(kind: "direct", memberEmails: [dad.email]), acceptedBy: [dad.token])
            let dadLive = try await RealtimeClient.connect(baseURL: server.baseURL, token: dad.token)
            defer { Task { await dadLive.close() } }
            let calm = try await Self.send(server, mom, to: conversation.id, text: "Don't forget the milk")
            #expect(!calm.urgent)
            var listed = try await server.request(.GET, "/conversations", token: dad.token).decode(ConversationsResponse.self)
            #expect(listed.conversations.first?.hasUrgent == false)
            let urgent = try await Self.send(server, mom, to: conversation.id, text: "Emma has a high fever, we're going to the hospital")
            #expect(urgent.urgent && urgent.urgentReasons.contains("medical"))
            listed = try await server.request(.GET, "/conversations", token: dad.token).decode(ConversationsResponse.self)
            #expect(listed.conversations.first?.hasUrgent == true)
            // The sender does not see their own message as urgent-unread.
            listed = try await server.request(.GET, "/conversations", token: mom.token).decode(ConversationsResponse.self)
            #expect(listed.conversations.first?.hasUrgent == false)

            // No keyword matches, but the summary model (the emulator) reads it as urgent: flagged shortly after, live.
            let pressing = try await Self.send(server, mom, to: conversation.id, text: "Please call the school right away")
            #expect(!pressing.urgent)
            let updated = try await dadLive.next { $0.type == "message.updated" && $0.message?.id == pressing.id }
            #expect(updated.message?.urgent == true && updated.message?.urgentReasons == ["model"])
            let stored = try await Self.stored(server, dad, conversation: conversation.id, message: pressing.id)
            #expect(stored?.urgent == true && stored?.urgentReasons == ["model"])
            // The model read the calm message first (jobs run in order) and left it alone; the sender's own "not
            // urgent" is never second-guessed.
            #expect(try await Self.stored(server, dad, conversation: conversation.id, message: calm.id)?.urgent == false)
            let overruled = try await server.request(
                .POST, "/conversations/\(conversation.id)/messages", token: mom.token,
                json: SendMessageRequest(clientMessageID: "overruled", sendMode: "text", content: "Come right away when you can", urgent: false)
            ).decode(MessageDTO.self)
            #expect(!overruled.urgent)
            let requests = try await server.request(.GET, "/sandbox/requests").json["requests"] as? [[String: Any]] ?? []
            let asked = requests.filter { ($0["path"] as? String)?.contains("chat/completions") == true }.compactMap { $0["body"] as? String }
            #expect(asked.contains { $0.contains("message_urgency") && $0.contains("right away") && $0.contains("Please call the school") })
            #expect(!asked.contains { $0.contains("Come right away when you can") })
        }
    }

    @Test("with CHORUS_VOICE_URGENCY=keywords the model is never asked")
    func urgencyByKeywordsOnly() async throws {
        // The text model in process: what matters is whether it is asked, not what an emulator would answer.
        let model = FakeTextGenerator(content: #"{"urgent":true}"#)
        let options = ChorusApp.Options.testing().fake(\.text, model)
        try await TestServer.run(on: .sqlite, environment: ["CHORUS_VOICE_URGENCY": "keywords"], options: options) { server in
            let mom = try await Self.person(server, name: "mom")
            let dad = try await Self.person(server, name: "dad")
            let conversation = try await server.startConversation(
                mom.token, CreateConversationRequest(kind: "direct", memberEmails: [dad.email]), acceptedBy: [dad.token])
            let pressing = try await Self.send(server, mom, to: conversation.id, text: "Please call the school right away")
            // Jobs run within a second of being queued: by now a model job would have run.
            try await Task.sleep(for: .seconds(2))
            #expect(try await Self.stored(server, dad, conversation: conversation.id, message: pressing.id)?.urgent == false)
            #expect(model.requests.isEmpty)
        }
    }

    @Test("a voice message: upload, review the transcript, send; the other member gets it live", arguments: TestDatabase.all)
    func voiceMessage(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await Self.person(server, name: "alice")
            let bob = try await Self.person(server, name: "bob")
            let carol = try await Self.person(server, name: "carol")
            let conversation = try await server.startConversation(
                alice.token, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]), acceptedBy: [bob.token])
            let bobLive = try await RealtimeClient.connect(baseURL: server.baseURL, token: bob.token)
            defer { Task { await bobLive.close() } }

            let said = "Pick up Emma from soccer at five, please."
            let recording = SandboxAudioFiles.speechWAV(text: said, voice: "alice")
            let upload = try await server.request(.POST, "/audio", token: alice.token, body: recording, headers: [("Content-Type", "audio/wav")])
            #expect(upload.status == 201, "\(upload.text)")
            let stored = try upload.decode(AudioUploadResponse.self)
            #expect(stored.format == "wav" && stored.sizeBytes == recording.count)
            #expect(abs(stored.durationSeconds - (SandboxAudioFiles.durationSeconds(of: recording) ?? 0)) < 0.05)

            let transcribed = try await server.request(
                .POST, "/transcriptions", token: alice.token, json: TranscriptionRequestDTO(audioID: stored.audioID))
            #expect(transcribed.status == 200, "\(transcribed.text)")
            let transcript = try transcribed.decode(TranscriptionResponse.self)
            #expect(transcript.transcript == said)
            #expect(transcript.confidenceLabel == "good")
            // Only the owner transcribes their recording.
            #expect(
                try await server.request(.POST, "/transcriptions", token: bob.token, json: TranscriptionRequestDTO(audioID: stored.audioID)).status
                    == 404)

            let sent = try await server.request(
                .POST, "/conversations/\(conversation.id)/messages", token: alice.token,
                json: SendMessageRequest(clientMessageID: "voice-1", sendMode: "both", content: said, audioID: stored.audioID))
            #expect(sent.status == 201, "\(sent.text)")
            let message = try sent.decode(MessageDTO.self)
            #expect(message.transcript == said && message.transcriptionConfidenceLabel == "good")
            let event = try await bobLive.next { $0.type == "message.created" }
            #expect(event.message?.id == message.id && event.message?.transcript == said)
            let audioURL = try #require(event.message?.audioURL)

            // Bob plays it through the signed URL (no token), seeking with Range.
            let path = String(audioURL.dropFirst(server.baseURL.count))
            let whole = try await server.request(.GET, path)
            #expect(whole.status == 200 && whole.body == recording)
            #expect(whole.headers.first(name: "Accept-Ranges") == "bytes")
            let part = try await server.request(.GET, path, headers: [("Range", "bytes=100-199")])
            #expect(part.status == 206 && part.body == recording[100..<200])
            #expect(part.headers.first(name: "Content-Range") == "bytes 100-199/\(recording.count)")
            let tail = try await server.request(.GET, path, headers: [("Range", "bytes=-10")])
            #expect(tail.status == 206 && tail.body == recording.suffix(10))
            let beyond = try await server.request(.GET, path, headers: [("Range", "bytes=\(recording.count)-")])
            #expect(beyond.status == 416)
            let tampered = path.replacingOccurrences(of: "signature=", with: "signature=0")
            #expect(try await server.request(.GET, tampered).status == 403)
            // With a bearer token: members only.
            #expect(try await server.request(.GET, "/audio/\(stored.audioID)", token: bob.token).status == 200)
            #expect(try await server.request(.GET, "/audio/\(stored.audioID)", token: carol.token).status == 404)
            #expect(try await server.request(.GET, "/audio/\(stored.audioID)").status == 401)

            // Heard state: one unheard voice message for Bob until he plays it.
            var bobView = try await server.request(.GET, "/conversations/\(conversation.id)", token: bob.token).decode(ConversationDTO.self)
            #expect(bobView.unheardVoiceCount == 1)
            #expect(try await server.request(.POST, "/messages/\(message.id)/heard", token: bob.token).status == 204)
            bobView = try await server.request(.GET, "/conversations/\(conversation.id)", token: bob.token).decode(ConversationDTO.self)
            #expect(bobView.unheardVoiceCount == 0)

            // Sent without reviewing: the server transcribes it and announces the transcript.
            let second = SandboxAudioFiles.speechWAV(text: "Dinner is at seven.", voice: "alice")
            let upload2 = try await server.request(.POST, "/audio", token: alice.token, body: second, headers: [("Content-Type", "audio/wav")])
                .decode(AudioUploadResponse.self)
            let audioOnly = try await server.request(
                .POST, "/conversations/\(conversation.id)/messages", token: alice.token,
                json: SendMessageRequest(clientMessageID: "voice-2", sendMode: "audio", audioID: upload2.audioID)
            ).decode(MessageDTO.self)
            #expect(audioOnly.transcript == nil && audioOnly.content == nil)
            let ready = try await bobLive.next { $0.type == "transcript.ready" && $0.message?.id == audioOnly.id }
            #expect(ready.message?.transcript == "Dinner is at seven.")
            // A recording belongs to one message.
            let reuse = try await server.request(
                .POST, "/conversations/\(conversation.id)/messages", token: alice.token,
                json: SendMessageRequest(clientMessageID: "voice-3", sendMode: "audio", audioID: upload2.audioID))
            #expect(reuse.status == 409)

            // Deleting the message deletes the recording.
            #expect(try await server.request(.DELETE, "/messages/\(message.id)", token: alice.token).status == 204)
            #expect(try await server.request(.GET, "/audio/\(stored.audioID)", token: alice.token).status == 404)
            #expect(try await server.request(.GET, path).status == 404)
        }
    }

    @Test("uploads: wrong type 415, not audio 415, too large 413, too long 422, children never store voice", arguments: TestDatabase.all)
    func uploadLimits(_ database: TestDatabase) async throws {
        try await TestServer.run(
            on: database,
            environment: ["CHORUS_VOICE_MAX_UPLOAD_BYTES": "200000", "CHORUS_VOICE_MAX_SECONDS": "2", "CHORUS_VOICE_LONG_FORM_MAX_SECONDS": "4"]
        ) { server in
            let alice = try await Self.person(server, name: "alice")
            let short = SandboxAudioFiles.speechWAV(text: "Hi.", voice: "alice")
            let long = SandboxAudioFiles.speechWAV(text: "This sentence takes a little more than two seconds to say aloud.", voice: "alice")
            #expect((SandboxAudioFiles.durationSeconds(of: long) ?? 0) > 2.5)

            let text = try await server.request(.POST, "/audio", token: alice.token, body: short, headers: [("Content-Type", "text/plain")])
            #expect(text.status == 415)
            let junk = try await server.request(
                .POST, "/audio", token: alice.token, body: Data(repeating: 7, count: 4_000), headers: [("Content-Type", "audio/wav")])
            #expect(junk.status == 415, "\(junk.text)")
            let mislabelled = try await server.request(.POST, "/audio", token: alice.token, body: short, headers: [("Content-Type", "audio/mpeg")])
            #expect(mislabelled.status == 415)
            let big = try await server.request(
                .POST, "/audio", token: alice.token, body: Data(count: 300_000), headers: [("Content-Type", "audio/wav")])
            #expect(big.status == 413)
            let tooLong = try await server.request(.POST, "/audio", token: alice.token, body: long, headers: [("Content-Type", "audio/wav")])
            #expect(tooLong.status == 422 && tooLong.detail?.contains("long_form") == true, "\(tooLong.text)")
            let longForm = try await server.request(
                .POST, "/audio?long_form=true", token: alice.token, body: long, headers: [("Content-Type", "audio/wav")])
            #expect(longForm.status == 201, "\(longForm.text)")
            #expect(
                try await server.request(.POST, "/audio", token: alice.token, body: short, headers: [("Content-Type", "audio/wav")]).status == 201)

            // Opted out, and under 13: no voice data.
            let optOut = try await server.request(.PUT, "/me/profile", token: alice.token, json: MessagingProfileDTO(voiceFeaturesEnabled: false))
            #expect(optOut.status == 200)
            #expect(
                try await server.request(.POST, "/audio", token: alice.token, body: short, headers: [("Content-Type", "audio/wav")]).status == 403)
            let child = try await Self.person(server, name: "kid")
            let year = Calendar(identifier: .gregorian).component(.year, from: Date())
            _ = try await server.request(.PUT, "/me/profile", token: child.token, json: MessagingProfileDTO(birthYear: year - 9))
            let refused = try await server.request(.POST, "/audio", token: child.token, body: short, headers: [("Content-Type", "audio/wav")])
            #expect(refused.status == 403 && refused.detail?.contains("under 13") == true)
            let badProfile = try await server.request(.PUT, "/me/profile", token: child.token, json: MessagingProfileDTO(retentionDays: 0))
            #expect(badProfile.status == 422)
        }
    }

    @Test("the free tier's monthly voice messages: the PRD's over-quota text; retries are not charged", arguments: TestDatabase.all)
    func monthlyVoiceLimit(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_VOICE_FREE_MONTHLY_MESSAGES": "1"]) { server in
            let alice = try await Self.person(server, name: "alice")
            let bob = try await Self.person(server, name: "bob")
            let conversation = try await server.startConversation(
                alice.token, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]), acceptedBy: [bob.token])
            func voice(_ clientID: String) async throws -> TestServer.Reply {
                let recording = SandboxAudioFiles.speechWAV(text: "Message \(clientID).", voice: "alice")
                let audio = try await server.request(.POST, "/audio", token: alice.token, body: recording, headers: [("Content-Type", "audio/wav")])
                    .decode(AudioUploadResponse.self)
                return try await server.request(
                    .POST, "/conversations/\(conversation.id)/messages", token: alice.token,
                    json: SendMessageRequest(clientMessageID: clientID, sendMode: "audio", audioID: audio.audioID))
            }
            #expect(try await voice("v1").status == 201)
            let over = try await voice("v2")
            #expect(over.status == 402)
            #expect(over.detail == "You've reached your monthly voice limit (1 messages). Upgrade for unlimited.")
            // Text messages are not voice messages; the refused one was not created.
            _ = try await Self.send(server, alice, to: conversation.id, text: "Still typing is fine")
            let page = try await server.request(.GET, "/conversations/\(conversation.id)/messages", token: bob.token).decode(MessagesPage.self)
            #expect(page.messages.map(\.clientMessageID) == [page.messages[0].clientMessageID, "v1"])
        }
    }

    @Test("typing and presence reach co-members; a non-member cannot type into a conversation")
    func typingAndPresence() async throws {
        try await TestServer.run(on: .sqlite) { server in
            let alice = try await Self.person(server, name: "alice")
            let bob = try await Self.person(server, name: "bob")
            let conversation = try await server.startConversation(
                alice.token, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]), acceptedBy: [bob.token])
            let bobLive = try await RealtimeClient.connect(baseURL: server.baseURL, token: bob.token)
            let aliceLive = try await RealtimeClient.connect(baseURL: server.baseURL, token: alice.token, viaQuery: true)
            let online = try await bobLive.next { $0.type == "presence" && $0.userID == alice.id }
            #expect(online.online == true)
            aliceLive.send(#"{"type":"typing","conversation_id":"\#(conversation.id)"}"#)
            let typing = try await bobLive.next { $0.type == "typing" }
            #expect(typing.userID == alice.id && typing.conversationID == conversation.id)
            aliceLive.send(#"{"type":"typing","conversation_id":"not-mine"}"#)
            _ = try await aliceLive.next { $0.type == "error" && $0.detail == "Conversation not found" }
            await aliceLive.close()
            let offline = try await bobLive.next { $0.type == "presence" && $0.online == false }
            #expect(offline.userID == alice.id)
            await bobLive.close()
            // No token: no socket.
            await #expect(throws: (any Error).self) { _ = try await RealtimeClient.connect(baseURL: server.baseURL, token: "bogus") }
        }
    }

    @Test("with PostgreSQL, a message sent on one instance reaches a member connected to another")
    func fanOutAcrossInstances() async throws {
        guard TestDatabase.all.contains(.postgres) else {
            Issue.record("PostgreSQL is required for this test: run it through ./scripts/test")
            return
        }
        let database = try TestDatabase.postgres.make()
        defer { database.drop() }
        let first = try await TestServer.start(database: database)
        let second = try await TestServer.start(database: database)
        do {
            let alice = try await Self.person(first, name: "alice")
            let bob = try await Self.person(first, name: "bob")
            let conversation = try await first.startConversation(
                alice.token, CreateConversationRequest(kind: "direct", memberEmails: [bob.email]), acceptedBy: [bob.token])
            let bobLive = try await RealtimeClient.connect(baseURL: second.baseURL, token: bob.token)
            let sent = try await Self.send(first, alice, to: conversation.id, text: "Across instances")
            let event = try await bobLive.next { $0.type == "message.created" }
            #expect(event.message?.id == sent.id)
            // A message larger than a PostgreSQL notification travels by reference.
            let long = String(repeating: "All the details of the weekend plan. ", count: 250)
            let big = try await Self.send(first, alice, to: conversation.id, text: long)
            let bigEvent = try await bobLive.next { $0.type == "message.created" && $0.message?.id == big.id }
            #expect(bigEvent.message?.content == long.trimmingCharacters(in: .whitespaces))
            await bobLive.close()
        } catch {
            await first.stop()
            await second.stop()
            throw error
        }
        await first.stop()
        await second.stop()
    }
}
