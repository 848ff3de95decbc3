import ChorusKit
import ChorusSandbox
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Voice messages through the SDK against a real server over loopback: two people converse, a voice message is
/// uploaded, transcribed and sent, and the refusals arrive as typed errors.
@Suite("ChorusKit messaging (live server)")
struct MessagingClientTests {
    @Test("two users converse: direct conversation, text messages, pages, read counts, edit, star, search, delete")
    func conversation() async throws {
        try await LiveServer.run { server in
            let alice = try await MessagingPerson.register(on: server, name: "Alice")
            let bob = try await MessagingPerson.register(on: server, name: "Bob")

            let direct = try await alice.directConversation(with: bob)
            #expect(direct.kind == .direct && direct.title == nil)
            #expect(direct.members.map(\.displayName).sorted() == ["Alice", "Bob"])
            #expect(direct.members.first { $0.userID == alice.userID }?.role == .owner)
            // One direct conversation per pair, whoever asks.
            #expect(try await bob.chorus.conversations.createDirect(with: alice.email.uppercased()).id == direct.id)

            var sent: [Message] = []
            for index in 1...5 {
                sent.append(try await alice.chorus.messages.send(text: "Message \(index)", to: direct.id))
            }
            #expect(sent.allSatisfy { $0.sendMode == .text && $0.senderID == alice.userID && $0.senderName == "Alice" })
            // The same client message id again: the original message, not a copy.
            let repeated = try await alice.chorus.messages.send(
                text: "Message 5", to: direct.id, clientMessageID: try #require(sent.last?.clientMessageID))
            #expect(repeated.id == sent.last?.id)

            // Bob reads them page by page, newest first.
            let first = try await bob.chorus.messages.page(conversation: direct.id, limit: 2)
            #expect(first.messages.compactMap(\.content) == ["Message 5", "Message 4"] && first.hasMore)
            let second = try await bob.chorus.messages.page(conversation: direct.id, before: first.nextCursor, limit: 2)
            #expect(second.messages.compactMap(\.content) == ["Message 3", "Message 2"])
            var all: [String] = []
            for try await message in bob.chorus.messages.allMessages(conversation: direct.id, pageSize: 2) {
                all.append(message.content ?? "")
            }
            #expect(all == (1...5).reversed().map { "Message \($0)" })

            // Read counts: Bob has five unread until he marks them read; Alice has none (her own messages).
            var bobsList = try await bob.chorus.conversations.list()
            #expect(bobsList.map(\.id) == [direct.id])
            #expect(bobsList.first?.unreadCount == 5 && bobsList.first?.lastMessageAt != nil)
            #expect(try await alice.chorus.conversations.conversation(id: direct.id).unreadCount == 0)
            let partly = try await bob.chorus.conversations.markRead(direct.id, upTo: sent[2].id)
            #expect(partly.unreadCount == 2)
            #expect(try await bob.chorus.conversations.markRead(direct.id).unreadCount == 0)
            bobsList = try await bob.chorus.conversations.list()
            #expect(bobsList.first?.unreadCount == 0)

            // Edit (sender only), star (per user), search, delete (sender only).
            let edited = try await alice.chorus.messages.edit(sent[0].id, content: "Pick up milk on the way home")
            #expect(edited.content == "Pick up milk on the way home" && edited.editedAt != nil)
            let forbidden = await #expect(throws: ChorusError.self) { try await bob.chorus.messages.edit(sent[0].id, content: "no") }
            #expect(forbidden?.status == 403, "\(String(describing: forbidden))")
            #expect(try await bob.chorus.messages.star(sent[0].id).isStarred)
            #expect(try await alice.chorus.messages.page(conversation: direct.id).messages.first { $0.id == sent[0].id }?.isStarred == false)
            #expect(try await bob.chorus.messages.unstar(sent[0].id).isStarred == false)
            #expect(try await bob.chorus.messages.search("milk").map(\.id) == [sent[0].id])
            try await alice.chorus.messages.delete(sent[1].id)
            let deleted = try #require(try await bob.chorus.messages.page(conversation: direct.id).messages.first { $0.id == sent[1].id })
            #expect(deleted.isDeleted && deleted.content == nil)

            // Someone outside the conversation cannot see it.
            let carol = try await MessagingPerson.register(on: server, name: "Carol")
            #expect(await chorusStatus { try await carol.chorus.conversations.conversation(id: direct.id) } == 404)
            #expect(await chorusStatus { try await carol.chorus.messages.send(text: "hi", to: direct.id) } == 404)
        }
    }

    @Test("a group: create, add a member, the owner removes one, a member leaves; validation errors name the field")
    func group() async throws {
        try await LiveServer.run { server in
            let alice = try await MessagingPerson.register(on: server, name: "Alice")
            let bob = try await MessagingPerson.register(on: server, name: "Bob")
            let carol = try await MessagingPerson.register(on: server, name: "Carol")
            let dan = try await MessagingPerson.register(on: server, name: "Dan")

            let group = try await alice.chorus.conversations.createGroup(title: "Family", memberEmails: [bob.email])
            #expect(group.kind == .group && group.title == "Family" && group.members.count == 1)
            try await bob.acceptInvitation(to: group.id)
            let invited = try await alice.chorus.conversations.addMembers(emails: [carol.email, dan.email, bob.email], to: group.id)
            #expect(invited.members.count == 2)
            try await carol.acceptInvitation(to: group.id)
            try await dan.acceptInvitation(to: group.id)
            let grown = try await alice.chorus.conversations.conversation(id: group.id)
            #expect(Set(grown.members.map(\.displayName)) == ["Alice", "Bob", "Carol", "Dan"])

            try await alice.chorus.conversations.removeMember(userID: dan.userID, from: group.id)
            #expect(await chorusStatus { try await dan.chorus.conversations.conversation(id: group.id) } == 404)
            let refused = await #expect(throws: ChorusError.self) {
                try await bob.chorus.conversations.removeMember(userID: carol.userID, from: group.id)
            }
            #expect(refused?.status == 403, "\(String(describing: refused))")
            try await carol.chorus.conversations.leave(group.id)
            #expect(try await carol.chorus.conversations.list().isEmpty)
            #expect(Set(try await alice.chorus.conversations.conversation(id: group.id).members.map(\.displayName)) == ["Alice", "Bob"])

            let invalid = await #expect(throws: ChorusError.self) {
                try await alice.chorus.conversations.createGroup(title: "", memberEmails: ["nobody@example.com"])
            }
            guard case .validation(let fields) = invalid else {
                Issue.record("expected validation, got \(String(describing: invalid))")
                return
            }
            #expect(fields.map(\.field).contains("title"))
        }
    }

    @Test("a voice message: profile, upload a WAV file, transcribe, send with the reviewed transcript; the recording plays")
    func voiceMessage() async throws {
        try await LiveServer.run { server in
            let alice = try await MessagingPerson.register(on: server, name: "Alice")
            let bob = try await MessagingPerson.register(on: server, name: "Bob")
            let profile = try await alice.chorus.voice.profile()
            #expect(profile.displayName == "Alice" && profile.voiceFeaturesEnabled == true && profile.retentionDays == 30)
            #expect(try await alice.chorus.voice.updateProfile(retentionDays: 60).retentionDays == 60)
            #expect(try await alice.chorus.voice.profile().displayName == "Alice", "fields not given are left as they are")
            let direct = try await alice.directConversation(with: bob)

            let said = "Pick up Emma from soccer at five, please."
            let wav = SandboxAudioFiles.speechWAV(text: said, voice: "alice")
            let file = try MessagingFiles.temporaryFile(wav, extension: "wav")
            defer { try? FileManager.default.removeItem(at: file) }
            let recording = try await alice.chorus.voice.upload(file: file)
            #expect(recording.format == .wav && recording.size == wav.count && recording.contentType == "audio/wav")
            #expect(abs(recording.duration - (SandboxAudioFiles.durationSeconds(of: wav) ?? 0)) < 0.05)
            #expect(recording.expiresAt != nil)

            let transcript = try await alice.chorus.voice.transcribe(audioID: recording.audioID, language: "en")
            #expect(transcript.text == said && transcript.heardSpeech && transcript.confidenceLabel == .good)

            let reviewed = "Pick up Emma from soccer at 5, please."
            let message = try await alice.chorus.messages.sendVoice(audioID: recording.audioID, transcript: reviewed, to: direct.id)
            #expect(message.sendMode == .both && message.content == reviewed && message.transcript == said)
            #expect(message.audioID == recording.audioID && message.hasAudio)
            #expect(abs((message.audioDuration ?? 0) - recording.duration) < 0.01)

            // Bob sees one unheard voice message and plays it through the signed URL (no token).
            #expect(try await bob.chorus.conversations.conversation(id: direct.id).unheardVoiceCount == 1)
            let received = try #require(try await bob.chorus.messages.page(conversation: direct.id).messages.first)
            let audioURL = try #require(received.audioURL)
            let (played, response) = try await URLSession.shared.data(from: audioURL)
            #expect((response as? HTTPURLResponse)?.statusCode == 200 && played == wav)
            try await bob.chorus.messages.markHeard(received.id)
            #expect(try await bob.chorus.conversations.conversation(id: direct.id).unheardVoiceCount == 0)

            // A text message cannot be marked heard; a recording belongs to one message.
            let text = try await alice.chorus.messages.send(text: "See you", to: direct.id)
            #expect(await chorusStatus { try await bob.chorus.messages.markHeard(text.id) } == 400)
            let reuse = await #expect(throws: ChorusError.self) {
                try await alice.chorus.messages.sendVoice(audioID: recording.audioID, mode: .audio, to: direct.id)
            }
            #expect(reuse?.status == 409, "\(String(describing: reuse))")
        }
    }

    @Test("upload refusals: unknown extension, a mislabelled body (415), voice features off (403); long form allowed")
    func uploadRefusals() async throws {
        try await LiveServer.run(environment: ["CHORUS_VOICE_MAX_SECONDS": "2", "CHORUS_VOICE_LONG_FORM_MAX_SECONDS": "10"]) { server in
            let alice = try await MessagingPerson.register(on: server, name: "Alice")
            let long = SandboxAudioFiles.speechWAV(text: "This sentence takes a little more than two seconds to say aloud.", voice: "alice")

            let unknown = await #expect(throws: ChorusError.self) {
                try await alice.chorus.voice.upload(file: URL(fileURLWithPath: "/tmp/recording.ogg"))
            }
            guard case .validation(let fields) = unknown else {
                Issue.record("expected validation, got \(String(describing: unknown))")
                return
            }
            #expect(fields.map(\.field) == ["format"])

            let mislabelled = await #expect(throws: ChorusError.self) { try await alice.chorus.voice.upload(long, format: .mp3) }
            #expect(mislabelled?.status == 415, "\(String(describing: mislabelled))")
            let tooLong = await #expect(throws: ChorusError.self) { try await alice.chorus.voice.upload(long, format: .wav) }
            guard case .api(422, let detail) = tooLong else {
                Issue.record("expected 422, got \(String(describing: tooLong))")
                return
            }
            #expect(detail.contains("long_form"))
            #expect(try await alice.chorus.voice.upload(long, format: .wav, longForm: true).duration > 2)

            try await alice.chorus.voice.updateProfile(voiceFeaturesEnabled: false)
            let off = await #expect(throws: ChorusError.self) { try await alice.chorus.voice.upload(long, format: .wav, longForm: true) }
            #expect(off?.status == 403, "\(String(describing: off))")
        }
    }

    @Test("a failing speech service: transcribe throws the product's message as a 503; the recording can be sent audio only")
    func transcriptionFailure() async throws {
        // The speech provider points at a port nothing listens on.
        let environment = ["CHORUS_OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "CHORUS_OPENAI_API_KEY": "sk-test-unreachable"]
        try await LiveServer.run(environment: environment) { server in
            // The server tries the provider three times before giving up: allow for that on a loaded machine.
            let alice = try await MessagingPerson.register(on: server, name: "Alice", retry: .none, timeout: 180)
            let bob = try await MessagingPerson.register(on: server, name: "Bob")
            let direct = try await alice.directConversation(with: bob)
            let recording = try await alice.chorus.voice.upload(SandboxAudioFiles.speechWAV(text: "Hello there.", voice: "alice"), format: .wav)

            let failure = await #expect(throws: ChorusError.self) { try await alice.chorus.voice.transcribe(audioID: recording.audioID) }
            guard case .api(503, let detail) = failure else {
                Issue.record("expected 503, got \(String(describing: failure))")
                return
            }
            #expect(detail == VoiceClient.transcriptionFailedMessage)
            #expect(failure?.errorDescription == "Couldn't transcribe audio. Please try again in a quieter environment.")

            let audioOnly = try await alice.chorus.messages.sendVoice(audioID: recording.audioID, transcript: "ignored", mode: .audio, to: direct.id)
            #expect(audioOnly.sendMode == .audio && audioOnly.content == nil && audioOnly.hasAudio)
        }
    }
}

// MARK: - Shared by the messaging tests

/// The HTTP status behind the ``ChorusError`` that `body` throws; `nil` when it throws nothing or something else.
func chorusStatus<T>(_ body: () async throws -> T) async -> Int? {
    do {
        _ = try await body()
        return nil
    } catch let error as ChorusError {
        return error.status
    } catch {
        return nil
    }
}

extension ChorusError {
    /// The HTTP status this error stands for, when it stands for one.
    var status: Int? {
        switch self {
        case .paymentRequired: 402
        case .rateLimited: 429
        case .validation, .refused: 422
        case .unauthorized: 401
        case .notFound: 404
        case .server(let status, _), .api(let status, _): status
        case .tokenExpired: 401
        case .signedOut, .network, .decoding: nil
        }
    }
}

/// A registered user with a display name, and their client.
struct MessagingPerson {
    let chorus: ChorusClient
    let tokenStore: InMemoryTokenStore
    let email: String
    let userID: String

    /// Registers a new account named `name` (its display name too), through `transport`.
    static func register(
        on server: LiveServer, name: String, transport: any HTTPTransport = URLSessionTransport(), retry: RetryPolicy = .standard,
        timeout: TimeInterval = 30
    ) async throws -> MessagingPerson {
        let store = InMemoryTokenStore()
        let chorus = ChorusClient(
            baseURL: server.baseURL, tokenStore: store, transport: transport, options: ChorusClientOptions(timeout: timeout, retry: retry))
        let email = LiveServer.newEmail(name.lowercased())
        try await chorus.auth.register(email: email, password: "correct horse battery")
        try await chorus.voice.updateProfile(displayName: name)
        let accountID = try #require(await chorus.auth.accountID)
        return MessagingPerson(chorus: chorus, tokenStore: store, email: email, userID: accountID.uuidString.lowercased())
    }
}

/// Temporary files and directories for the messaging tests.
enum MessagingFiles {
    /// A new file holding `data`.
    static func temporaryFile(_ data: Data, extension fileExtension: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-kit-\(UUID().uuidString).\(fileExtension)")
        try data.write(to: file)
        return file
    }

    /// A new, empty directory.
    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-kit-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }
}

/// The real URLSession transport with a switch to go offline, and one answer it can lose on the way back (the server
/// handled the request, the client hears the connection drop). Records what reached the server.
actor MessagingTestTransport: HTTPTransport {
    struct Exchange: Sendable {
        var method: String
        var path: String
        var status: Int
    }

    private let inner = URLSessionTransport()
    private var offline = false
    private var dropPath: String?
    private(set) var log: [Exchange] = []

    /// Fails every request without sending it (`notConnectedToInternet`) while `offline`.
    func setOffline(_ offline: Bool) {
        self.offline = offline
    }

    /// Loses the answer to the next POST whose path ends with `suffix`.
    func dropNextAnswer(toPathEndingWith suffix: String) {
        dropPath = suffix
    }

    /// The exchanges that reached the server with this method and a path ending with `suffix`.
    func exchanges(_ method: String, pathEndingWith suffix: String) -> [Exchange] {
        log.filter { $0.method == method && $0.path.hasSuffix(suffix) }
    }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        if offline { throw URLError(.notConnectedToInternet) }
        let (data, response) = try await inner.send(request)
        let method = request.httpMethod ?? "GET"
        let path = request.url?.path ?? ""
        log.append(Exchange(method: method, path: path, status: response.statusCode))
        if method == "POST", let dropPath, path.hasSuffix(dropPath) {
            self.dropPath = nil
            throw URLError(.networkConnectionLost)
        }
        return (data, response)
    }
}
