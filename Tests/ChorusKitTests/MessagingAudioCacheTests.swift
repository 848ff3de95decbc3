import ChorusKit
import ChorusSandbox
import Foundation
import Testing

/// The on-disk audio cache: least-recently-used eviction by size, persistence across instances, and offline playback
/// of a message's recording downloaded once through its signed URL from a real server.
@Suite("ChorusKit audio cache")
struct MessagingAudioCacheTests {
    @Test("evicts the least recently used entries once over the byte limit; a read counts as a use")
    func evictionBySize() async throws {
        let directory = try MessagingFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try AudioCache(directory: directory, byteLimit: 1_000)

        try await cache.store(Data(repeating: 1, count: 400), for: "a", fileExtension: "m4a")
        try await cache.store(Data(repeating: 2, count: 400), for: "b", fileExtension: "m4a")
        #expect(await cache.totalBytes == 800)
        let third = try await cache.store(Data(repeating: 3, count: 400), for: "c", fileExtension: "mp3")
        #expect(third.pathExtension == "mp3")
        #expect(await cache.keys == ["b", "c"], "a, the least recently used, made room")
        #expect(await cache.totalBytes == 800)
        #expect(await cache.data(for: "a") == nil)

        // Reading b makes c the least recently used.
        #expect(await cache.data(for: "b") == Data(repeating: 2, count: 400))
        try await cache.store(Data(repeating: 4, count: 400), for: "d", fileExtension: "m4a")
        #expect(await cache.keys == ["b", "d"])

        // Replacing an entry replaces its bytes.
        try await cache.store(Data(repeating: 5, count: 100), for: "b", fileExtension: "m4a")
        #expect(await cache.data(for: "b") == Data(repeating: 5, count: 100))
        #expect(await cache.totalBytes == 500)

        // An entry larger than the whole limit is kept until the next store.
        try await cache.store(Data(repeating: 6, count: 1_500), for: "big", fileExtension: "wav")
        #expect(await cache.keys == ["big"])
        try await cache.store(Data(repeating: 7, count: 10), for: "small", fileExtension: "wav")
        #expect(await cache.keys == ["small"])

        // Files on disk match the entries.
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("files").path)
        #expect(files.count == 1)
    }

    @Test("a new cache on the same directory finds the entries; a smaller limit trims them; stray files are removed")
    func persistence() async throws {
        let directory = try MessagingFiles.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try AudioCache(directory: directory, byteLimit: 10_000)
        try await first.store(Data(repeating: 1, count: 300), for: "one", fileExtension: "m4a")
        try await first.store(Data(repeating: 2, count: 300), for: "two", fileExtension: "m4a")
        let stray = directory.appendingPathComponent("files/stray.m4a")
        try Data([0]).write(to: stray)

        let second = try AudioCache(directory: directory, byteLimit: 10_000)
        #expect(Set(await second.keys) == ["one", "two"])
        #expect(await second.data(for: "two") == Data(repeating: 2, count: 300))
        #expect(!FileManager.default.fileExists(atPath: stray.path))

        let smaller = try AudioCache(directory: directory, byteLimit: 400)
        #expect(await smaller.keys.count == 1)
        #expect(await smaller.totalBytes == 300)
        await smaller.removeAll()
        #expect(await smaller.keys.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("files").path).isEmpty)
    }

    @Test("a message's recording is downloaded once through its signed URL, then plays offline from disk")
    func offlinePlayback() async throws {
        try await LiveServer.run { server in
            let alice = try await MessagingPerson.register(on: server, name: "Alice")
            let bob = try await MessagingPerson.register(on: server, name: "Bob")
            let direct = try await alice.directConversation(with: bob)
            let wav = SandboxAudioFiles.speechWAV(text: "Goodnight, Emma. Sleep well.", voice: "alice")
            let recording = try await alice.chorus.voice.upload(wav, format: .wav)
            try await alice.chorus.messages.sendVoice(audioID: recording.audioID, mode: .audio, to: direct.id)
            let message = try #require(try await bob.chorus.messages.page(conversation: direct.id).messages.first)

            let directory = try MessagingFiles.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let transport = MessagingTestTransport()
            let cache = try AudioCache(directory: directory, byteLimit: 10 * 1024 * 1024, transport: transport)

            // Concurrent plays of one recording download it once.
            let files = try await withThrowingTaskGroup(of: URL.self) { group in
                for _ in 0..<5 { group.addTask { try await cache.playableURL(for: message) } }
                return try await group.reduce(into: [URL]()) { $0.append($1) }
            }
            #expect(Set(files).count == 1)
            let file = try #require(files.first)
            #expect(file.pathExtension == "wav")
            #expect(try Data(contentsOf: file) == wav)
            #expect(await transport.log.count == 1)
            #expect(await cache.contains(recording.audioID))

            // Offline, with a later copy of the message (a fresh signed URL): served from disk.
            await transport.setOffline(true)
            let again = try #require(try await bob.chorus.messages.page(conversation: direct.id).messages.first)
            #expect(try await cache.playableURL(for: again) == file)
            #expect(await transport.log.count == 1)

            // Not cached and offline: a network error. A tampered link: refused by the server.
            await cache.remove(recording.audioID)
            let offline = await #expect(throws: ChorusError.self) { try await cache.playableURL(for: again) }
            guard case .network = offline else {
                Issue.record("expected network, got \(String(describing: offline))")
                return
            }
            await transport.setOffline(false)
            let audioURL = try #require(again.audioURL?.absoluteString)
            let tampered = try #require(URL(string: audioURL.replacingOccurrences(of: "signature=", with: "signature=0")))
            #expect(await chorusStatus { try await cache.playableURL(for: tampered, key: "tampered") } == 403)
            #expect(await !cache.contains("tampered"))

            // A message without a recording has nothing to play.
            let text = try await alice.chorus.messages.send(text: "Love you", to: direct.id)
            #expect(await chorusStatus { try await cache.playableURL(for: text) } == 404)
        }
    }
}
