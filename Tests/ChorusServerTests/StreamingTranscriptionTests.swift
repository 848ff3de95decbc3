import ChorusAPI
import ChorusSandbox
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing
import NIOWebSocket
import WebSocketKit

@testable import ChorusServer

/// Issue 21, seed 003: transcription while recording (`GET /audio/stream`): the recording streamed as PCM16 over a
/// WebSocket, relayed to a Realtime transcription session (the sandbox emulator), stored exactly as `POST /audio` would,
/// with the transcript's deltas and final text; bad input refused with coded `error` events; a failing provider
/// replaced by the file transcription of the stored recording.
@Suite("Streaming transcription (GET /audio/stream)")
struct StreamingTranscriptionTests {
    typealias Person = MessagingTests.Person

    /// A client of `GET /audio/stream` that keeps every event and the close code.
    final class StreamClient: Sendable {
        private let socket: WebSocket
        private let received = NIOLockedValueBox<[AudioStreamEvent]>([])

        private init(socket: WebSocket) {
            self.socket = socket
        }

        static func connect(_ server: TestServer, token: String?, viaQuery: Bool = false) async throws -> StreamClient {
            var url = server.baseURL.replacingOccurrences(of: "http://", with: "ws://") + "/audio/stream"
            var headers = HTTPHeaders()
            if let token {
                if viaQuery { url += "?access_token=\(token)" } else { headers.add(name: "Authorization", value: "Bearer \(token)") }
            }
            let upgraded = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: StreamClient.self)
            do {
                try await WebSocket.connect(to: url, headers: headers, configuration: .init(maxFrameSize: 1 << 20), on: MultiThreadedEventLoopGroup.singleton) {
                    socket in
                    let client = StreamClient(socket: socket)
                    socket.onText { _, text in
                        if let event = try? ChorusJSON.makeDecoder().decode(AudioStreamEvent.self, from: Data(text.utf8)) {
                            client.received.withLockedValue { $0.append(event) }
                        }
                    }
                    upgraded.succeed(client)
                }.get()
            } catch {
                upgraded.fail(error)
                throw error
            }
            return try await upgraded.futureResult.get()
        }

        var events: [AudioStreamEvent] { received.withLockedValue { $0 } }

        func send(_ message: AudioStreamClientMessage) async throws {
            try await socket.send(String(decoding: try ChorusJSON.makeEncoder().encode(message), as: UTF8.self))
        }

        func send(text: String) async throws { try await socket.send(text) }

        func send(audio: [UInt8]) async throws { try await socket.send(audio) }

        /// Sends `pcm` in chunks of `chunkBytes`.
        func stream(_ pcm: [UInt8], chunkBytes: Int = 4_800, pause: Duration? = nil) async throws {
            var offset = 0
            while offset < pcm.count {
                let end = min(pcm.count, offset + chunkBytes)
                try await send(audio: Array(pcm[offset..<end]))
                offset = end
                if let pause { try await Task.sleep(for: pause) }
            }
        }

        /// The first event of `type`, waiting up to `timeout`.
        func next(_ type: String, timeout: Duration = .seconds(30)) async throws -> AudioStreamEvent {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if let event = events.first(where: { $0.type == type }) { return event }
                try await Task.sleep(for: .milliseconds(10))
            }
            throw TestSetupError(message: "no \(type) event; received \(events.map(\.type)) \(events.compactMap(\.detail))")
        }

        /// The close code, once the server closed the socket.
        func closed(timeout: Duration = .seconds(10)) async throws -> WebSocketErrorCode? {
            try await socket.onClose.get()
            return socket.closeCode
        }
    }

    /// `seconds` of the sandbox's synthetic speech as 24 kHz PCM16 little-endian bytes.
    static func speechPCM(seconds: Double) throws -> [UInt8] {
        let text = Array(repeating: "Grandma lands on Tuesday at ten, please pick her up at the station.", count: 20).joined(separator: " ")
        let samples = try #require(SandboxAudioFiles.pcm16(wav: SandboxAudioFiles.speechWAV(text: text, voice: "alice"))).samples
        let count = Int(seconds * 24_000)
        #expect(samples.count >= count)
        var bytes = [UInt8]()
        bytes.reserveCapacity(count * 2)
        for sample in samples.prefix(count) {
            let value = UInt16(bitPattern: sample)
            bytes.append(UInt8(value & 0xFF))
            bytes.append(UInt8(value >> 8))
        }
        return bytes
    }

    static func person(_ server: TestServer, name: String) async throws -> Person {
        try await MessagingTests.person(server, name: name)
    }

    @Test("a recording streamed as it is made: deltas, the final transcript and the stored recording", arguments: TestDatabase.all)
    func streamsTranscribesAndStores(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await Self.person(server, name: "alice")
            let client = try await StreamClient.connect(server, token: alice.token)
            try await client.send(.start(language: "en"))
            _ = try await client.next("ready")
            let pcm = try Self.speechPCM(seconds: 3)
            try await client.stream(pcm)
            try await client.send(AudioStreamClientMessage(type: "end"))
            let completed = try await client.next("transcript.completed")
            #expect(try await client.closed() == .normalClosure)

            // The deltas add up to the transcript the live session heard.
            let deltas = client.events.filter { $0.type == "transcript.delta" }.compactMap(\.delta).joined()
            let transcript = try #require(completed.transcript)
            #expect(!deltas.isEmpty)
            #expect(transcript.transcript == deltas.trimmingCharacters(in: .whitespaces))
            #expect(transcript.transcript == "This is a sandbox transcription of 3.0 seconds of audio.")
            #expect(transcript.language == "en" && abs(transcript.durationSeconds - 3) < 0.01)
            #expect(completed.source == .stream)
            let timing = try #require(completed.timing)
            #expect(timing.providerMs >= 0 && timing.totalMs >= timing.providerMs)
            #expect(client.events.filter { $0.type == "error" }.isEmpty)

            // The recording is kept exactly as an upload: a WAV of the streamed samples, readable by its owner.
            let audio = try #require(completed.audio)
            #expect(audio.format == .wav && audio.contentType == "audio/wav" && abs(audio.durationSeconds - 3) < 0.01)
            #expect(audio.sizeBytes == pcm.count + 44)
            let stored = try await server.request(.GET, "/audio/\(audio.audioID)", token: alice.token)
            #expect(stored.status == 200 && stored.body.count == pcm.count + 44)
            #expect(Array(stored.body.suffix(pcm.count)) == pcm)

            // The transcript is the recording's: asking for it again makes no provider call.
            let again = try await server.request(
                .POST, "/transcriptions", token: alice.token, json: TranscriptionRequestDTO(audioID: audio.audioID, language: "en"))
            #expect(again.status == 200, "\(again.text)")
            #expect(try again.decode(TranscriptionResponse.self).transcript == transcript.transcript)
            #expect(again.headers.first(name: "Server-Timing") == "provider;dur=0.0")

            // The relay spoke the Realtime transcription protocol: one transcription session, audio committed once.
            let sessions = try await server.request(.GET, "/sandbox/openai/realtime/sessions").json["sessions"] as? [[String: Any]] ?? []
            let session = try #require(sessions.last { $0["model"] as? String == "transcription" })
            let received = session["events_received"] as? [String: Int] ?? [:]
            #expect(received["session.update"] == 1 && received["input_audio_buffer.commit"] == 1)
            #expect((received["input_audio_buffer.append"] ?? 0) == pcm.count / 4_800)
            #expect(session["turn_detection"] == nil || session["turn_detection"] is NSNull)

            // The token may come in the query (browsers); the recording may be cancelled, and nothing is stored.
            let browser = try await StreamClient.connect(server, token: alice.token, viaQuery: true)
            try await browser.send(.start())
            _ = try await browser.next("ready")
            try await browser.stream(Array(pcm.prefix(9_600)))
            try await browser.send(AudioStreamClientMessage(type: "cancel"))
            #expect(try await browser.closed() == .normalClosure)
            #expect(!browser.events.contains { $0.type == "transcript.completed" || $0.type == "error" })
        }
    }

    /// A recording stream is one of the user's WebSockets: with `CHORUS_WS_PER_USER=1`, an open stream makes the next
    /// `/audio/stream` or `/ws` a 429 before the upgrade, and its place is given back when it closes.
    @Test("recording streams count toward the user's cap of open WebSockets", arguments: TestDatabase.all)
    func streamsCountTowardTheSocketCap(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_WS_PER_USER": "1"]) { server in
            let carol = try await Self.person(server, name: "carol")
            let hub = server.app.chorus.messaging.hub
            let first = try await StreamClient.connect(server, token: carol.token)
            try await first.send(.start())
            _ = try await first.next("ready")
            #expect(hub.admittedCount == 1)
            for path in ["/audio/stream", "/ws"] {
                let refused = try await server.request(.GET, path, token: carol.token)
                #expect(refused.status == 429, "\(path): \(refused.text)")
                #expect(refused.text.contains("at most 1 WebSockets per user"), "\(path): \(refused.text)")
            }
            try await first.send(AudioStreamClientMessage(type: "cancel"))
            #expect(try await first.closed() == .normalClosure)
            try await server.eventually("the stream's place is given back") { hub.admittedCount == 0 }
            let second = try await StreamClient.connect(server, token: carol.token)
            try await second.send(.start())
            _ = try await second.next("ready")
            try await second.send(AudioStreamClientMessage(type: "cancel"))
            #expect(try await second.closed() == .normalClosure)
        }
    }

    @Test("bad input ends the stream with a coded error event, never a crash", arguments: TestDatabase.all)
    func refusesBadInput(_ database: TestDatabase) async throws {
        try await TestServer.run(
            on: database, environment: ["CHORUS_VOICE_MAX_SECONDS": "1", "CHORUS_VOICE_STREAM_IDLE_SECONDS": "0.5"]
        ) { server in
            let bob = try await Self.person(server, name: "bob")

            // No token: refused before the upgrade.
            await #expect(throws: (any Error).self) { _ = try await StreamClient.connect(server, token: nil) }

            func refused(
                _ expected: String, close: WebSocketErrorCode = .policyViolation, _ steps: (StreamClient) async throws -> Void
            ) async throws {
                let client = try await StreamClient.connect(server, token: bob.token)
                try await steps(client)
                let error = try await client.next("error")
                #expect(error.code == expected, "\(error.detail ?? "")")
                #expect(error.detail?.isEmpty == false)
                #expect(try await client.closed() == close, "\(expected)")
                #expect(!client.events.contains { $0.type == "transcript.completed" })
            }
            try await refused("invalid_message") { try await $0.send(text: "{not json") }
            try await refused("invalid_message") { try await $0.send(text: #"{"type":"dance"}"#) }
            try await refused("not_started") { try await $0.send(audio: [0, 0, 0, 0]) }
            try await refused("not_started") { try await $0.send(AudioStreamClientMessage(type: "end")) }
            try await refused("unsupported_format") {
                try await $0.send(AudioStreamClientMessage(type: "start", format: "pcm16", sampleRate: 16_000))
            }
            try await refused("unsupported_format") { try await $0.send(AudioStreamClientMessage(type: "start", format: "opus")) }
            try await refused("invalid_message") { try await $0.send(.start(language: "english!")) }
            try await refused("already_started") { client in
                try await client.send(.start())
                try await client.send(.start())
            }
            try await refused("chunk_too_large", close: .messageTooLarge) { client in
                try await client.send(.start())
                try await client.send(audio: [UInt8](repeating: 1, count: 40_000))
            }
            try await refused("invalid_chunk") { client in
                try await client.send(.start())
                try await client.send(audio: [1, 2, 3])
            }
            // CHORUS_VOICE_MAX_SECONDS=1: two seconds of audio are too long, as an upload would be.
            let pcm = try Self.speechPCM(seconds: 2)
            try await refused("too_long") { client in
                try await client.send(.start())
                try await client.stream(pcm)
            }
            // Less than 0.1 s: the checks of POST /audio refuse it.
            try await refused("recording_rejected") { client in
                try await client.send(.start())
                try await client.send(audio: Array(pcm.prefix(2_400)))
                try await client.send(AudioStreamClientMessage(type: "end"))
            }
            // Silence from the app for CHORUS_VOICE_STREAM_IDLE_SECONDS.
            try await refused("idle_timeout") { client in
                try await client.send(.start())
                _ = try await client.next("ready")
            }

            // The server still serves a good recording afterwards.
            let client = try await StreamClient.connect(server, token: bob.token)
            try await client.send(.start())
            try await client.stream(Array(pcm.prefix(24_000)))
            try await client.send(AudioStreamClientMessage(type: "end"))
            let completed = try await client.next("transcript.completed")
            #expect(completed.source == .stream && completed.transcript?.transcript == "This is a sandbox transcription of 0.5 seconds of audio.")
        }
    }

    @Test("the provider failing mid-stream: the stored recording is transcribed as a file", arguments: TestDatabase.all)
    func fallsBackToTheFile(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let carol = try await Self.person(server, name: "carol")
            let pcm = try Self.speechPCM(seconds: 2)

            for behavior in [#"{"fail_after_ms":150,"failure":"error"}"#, #"{"fail_after_ms":150,"failure":"close"}"#, #"{"reject_connections":true}"#] {
                let set = try await server.request(.PUT, "/sandbox/openai/realtime/behavior", body: Data(behavior.utf8), headers: [("Content-Type", "application/json")])
                #expect(set.status == 200, "\(set.text)")
                let client = try await StreamClient.connect(server, token: carol.token)
                try await client.send(.start(language: "en"))
                _ = try await client.next("ready")
                // Half of it before the session fails, half after.
                try await client.stream(Array(pcm.prefix(pcm.count / 2)))
                try await Task.sleep(for: .milliseconds(300))
                try await client.stream(Array(pcm.suffix(pcm.count / 2)))
                try await client.send(AudioStreamClientMessage(type: "end"))
                let completed = try await client.next("transcript.completed")
                #expect(try await client.closed() == .normalClosure)
                #expect(completed.source == .file, "\(behavior)")
                let transcript = try #require(completed.transcript)
                #expect(!transcript.transcript.isEmpty, "\(behavior)")
                let audio = try #require(completed.audio)
                #expect(audio.sizeBytes == pcm.count + 44 && abs(audio.durationSeconds - 2) < 0.01)
                let stored = try await server.request(.GET, "/audio/\(audio.audioID)", token: carol.token)
                #expect(stored.status == 200 && Array(stored.body.suffix(pcm.count)) == pcm)
            }
            _ = try await server.request(.DELETE, "/sandbox/openai/realtime/behavior")
        }
    }
}
