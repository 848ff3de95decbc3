import ChorusKit
import ChorusSandbox
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The offline outbox against a real server: recorded offline, kept across a restart, sent once the network is back,
/// never twice — even when the answer to the send is lost — and refusals set aside with the server's reason.
@Suite("ChorusKit voice outbox (live server)")
struct MessagingOutboxTests {
    @Test("offline → kept across a restart → online with a lost answer → sent exactly once, uploaded once")
    func offlineThenOnline() async throws {
        try await LiveServer.run { server in
            let transport = MessagingTestTransport()
            // No automatic retries: each flush makes one attempt, so the outbox's own retry is what is tested.
            let alice = try await MessagingPerson.register(on: server, name: "Alice", transport: transport, retry: .none)
            let bob = try await MessagingPerson.register(on: server, name: "Bob")
            let direct = try await alice.directConversation(with: bob)
            let directory = try MessagingFiles.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }

            let said = "I'm running late, start dinner without me."
            let wav = SandboxAudioFiles.speechWAV(text: said, voice: "alice")
            let file = try MessagingFiles.temporaryFile(wav, extension: "wav")
            defer { try? FileManager.default.removeItem(at: file) }

            // Offline: the recording is kept, nothing reaches the server.
            await transport.setOffline(true)
            let outbox = try VoiceOutbox(directory: directory, client: alice.chorus)
            let entry = try await outbox.enqueue(recording: file, conversationID: direct.id, transcript: said)
            try FileManager.default.removeItem(at: file)  // the outbox has its own copy
            #expect(entry.isPending && !entry.isUploaded && entry.format == .wav && entry.mode == .both)
            let offline = await outbox.flush()
            #expect(offline.sent.isEmpty && offline.failed.isEmpty)
            #expect(offline.pending.map(\.clientMessageID) == [entry.clientMessageID])
            #expect(offline.pending.first?.attempts == 1 && offline.pending.first?.lastError != nil)
            #expect(await transport.exchanges("POST", pathEndingWith: "/audio").isEmpty)
            #expect(await transport.exchanges("POST", pathEndingWith: "/messages").isEmpty)

            // The app is killed and relaunched: a new outbox on the same directory has the entry.
            let relaunched = try VoiceOutbox(directory: directory, client: alice.chorus)
            #expect(await relaunched.entries.map(\.clientMessageID) == [entry.clientMessageID])
            #expect(await relaunched.entries.first?.transcript == said)

            // Online, but the answer to the send is lost: the recording is uploaded, its id kept, the entry pending.
            await transport.setOffline(false)
            await transport.dropNextAnswer(toPathEndingWith: "/messages")
            let lost = await relaunched.flush()
            #expect(lost.sent.isEmpty && lost.pending.count == 1)
            #expect(lost.pending.first?.isUploaded == true)
            #expect(try await bob.chorus.messages.page(conversation: direct.id).messages.count == 1, "the server did create it")

            // The next flush sends the same client message id again: the server answers with the original message.
            let delivered = await relaunched.flush()
            let message = try #require(delivered.sent.first)
            #expect(delivered.sent.count == 1 && delivered.pending.isEmpty && delivered.failed.isEmpty)
            #expect(message.clientMessageID == entry.clientMessageID && message.content == said && message.sendMode == .both)
            #expect(await relaunched.entries.isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("recordings").path).isEmpty)

            #expect(await transport.exchanges("POST", pathEndingWith: "/audio").map(\.status) == [201], "uploaded once")
            #expect(await transport.exchanges("POST", pathEndingWith: "/messages").map(\.status) == [201, 200], "created, then replayed")
            let received = try await bob.chorus.messages.page(conversation: direct.id).messages
            #expect(received.map(\.id) == [message.id], "exactly one message")
            let (played, _) = try await URLSession.shared.data(from: try #require(received.first?.audioURL))
            #expect(played == wav)
        }
    }

    @Test("a refusal moves the entry to failed with the server's reason, the rest are sent; retry and discard")
    func permanentFailure() async throws {
        try await LiveServer.run { server in
            let alice = try await MessagingPerson.register(on: server, name: "Alice")
            let bob = try await MessagingPerson.register(on: server, name: "Bob")
            let direct = try await alice.directConversation(with: bob)
            let directory = try MessagingFiles.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let outbox = try VoiceOutbox(directory: directory, client: alice.chorus)

            let wav = SandboxAudioFiles.speechWAV(text: "Call me back.", voice: "alice")
            let stray = try await outbox.enqueue(recording: wav, format: .wav, conversationID: "no-such-conversation")
            let good = try await outbox.enqueue(recording: wav, format: .wav, conversationID: direct.id, mode: .audio, urgent: true)
            let duplicate = await #expect(throws: ChorusError.self) {
                try await outbox.enqueue(recording: wav, format: .wav, conversationID: direct.id, clientMessageID: good.clientMessageID)
            }
            #expect(duplicate?.status == 422)

            let report = await outbox.flush()
            #expect(report.sent.map(\.clientMessageID) == [good.clientMessageID])
            #expect(report.sent.first?.isUrgent == true && report.sent.first?.urgentReasons == [.sender])
            #expect(report.pending.isEmpty)
            let failed = try #require(report.failed.first)
            #expect(failed.clientMessageID == stray.clientMessageID && failed.isUploaded, "uploaded, then refused")
            guard case .failed(let failure) = failed.state else {
                Issue.record("expected failed, got \(failed.state)")
                return
            }
            #expect(failure.status == 404 && !failure.message.isEmpty)

            // Skipped by later flushes until retried.
            #expect(await outbox.flush().sent.isEmpty)
            try await outbox.retry(stray.clientMessageID)
            #expect(await outbox.entries.first?.isPending == true)
            #expect(await outbox.flush().failed.map(\.clientMessageID) == [stray.clientMessageID])
            try await outbox.discard(stray.clientMessageID)
            #expect(await outbox.entries.isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("recordings").path).isEmpty)
            #expect(try await bob.chorus.messages.page(conversation: direct.id).messages.count == 1)
        }
    }

    @Test("concurrent flushes join one: each recording uploaded and sent once")
    func concurrentFlushes() async throws {
        try await LiveServer.run { server in
            let transport = MessagingTestTransport()
            let alice = try await MessagingPerson.register(on: server, name: "Alice", transport: transport)
            let bob = try await MessagingPerson.register(on: server, name: "Bob")
            let direct = try await alice.directConversation(with: bob)
            let directory = try MessagingFiles.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let outbox = try VoiceOutbox(directory: directory, client: alice.chorus)
            for index in 1...3 {
                let wav = SandboxAudioFiles.speechWAV(text: "Voice note \(index).", voice: "alice")
                try await outbox.enqueue(recording: wav, format: .wav, conversationID: direct.id, transcript: "Voice note \(index).")
            }

            let reports = await withTaskGroup(of: VoiceOutbox.FlushReport.self) { group in
                for _ in 0..<4 { group.addTask { await outbox.flush() } }
                return await group.reduce(into: [VoiceOutbox.FlushReport]()) { $0.append($1) }
            }
            let sentIDs = Set(reports.flatMap { $0.sent.map(\.id) })
            #expect(sentIDs.count == 3)
            #expect(await transport.exchanges("POST", pathEndingWith: "/audio").count == 3)
            #expect(await transport.exchanges("POST", pathEndingWith: "/messages").count == 3)
            let received = try await bob.chorus.messages.page(conversation: direct.id).messages
            #expect(received.compactMap(\.content) == ["Voice note 3.", "Voice note 2.", "Voice note 1."], "in the order enqueued")
        }
    }
}
