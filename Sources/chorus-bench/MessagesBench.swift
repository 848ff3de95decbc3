import ArgumentParser
import AsyncHTTPClient
import ChorusAPI
import ChorusSandbox
import ChorusServer
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Vapor
import WebSocketKit

/// Voice-message figures against an in-process server (SQLite, sandbox providers) over loopback:
/// - cached speech at 100 concurrent listeners (time to first byte and to the complete response);
/// - generating speech in the default voice (the Realtime API's `gpt-realtime-2.1-mini` by default) and its verbatim
///   check: pieces spoken, retries, readings kept with a deviation;
/// - the server's overhead of transcription beyond the provider's own time, for a 30 s clip;
/// - transcription while recording (`GET /audio/stream`): from the last chunk of a 30 s recording to the final
///   transcript, the provider's share apart (`--streaming-only` measures only this, ``StreamingTranscriptionBench``);
/// - fan-out of a new message to 200 connected WebSockets;
/// - peak memory while 20 clients upload 10 MB recordings at once;
/// - conversation playback of the last 10 and 30 messages: time to the first clip and to the whole timeline, cold and
///   warm (`--playback-only` measures only this).
struct Messages: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Voice messages: cached speech, transcription overhead, WebSocket fan-out, upload memory, conversation playback.")

    @ArgumentParser.Option(help: "Seconds of cached-speech load (after a 1 s warm-up).")
    var seconds: Double = 5

    @ArgumentParser.Option(help: "Transcriptions measured (each through the server and directly at the provider).")
    var transcriptions: Int = 40

    @ArgumentParser.Option(help: "30 s recordings streamed to GET /audio/stream (transcription while recording).")
    var streamedRecordings: Int = 20

    @ArgumentParser.Option(help: "How many times faster than real time the streamed recordings' 100 ms chunks are sent.")
    var streamSpeed: Double = 10

    @ArgumentParser.Flag(help: "Measure only the transcription while recording.")
    var streamingOnly = false

    @ArgumentParser.Option(help: "Messages fanned out to the WebSockets.")
    var messages: Int = 20

    @ArgumentParser.Option(help: "Messages spoken in the default voice (each generated once).")
    var speeches: Int = 20

    @ArgumentParser.Option(help: "Readings the Realtime emulator makes deviate from their text (exercises the verbatim retries).")
    var deviatingReadings: Int = 0

    @ArgumentParser.Option(help: "Conversation playbacks measured, by number of messages (each cold, then warm).")
    var playbackMessages: [Int] = [10, 30]

    @ArgumentParser.Option(help: "Clips of one playback made at the same time (CHORUS_VOICE_PLAYBACK_CONCURRENCY).")
    var playbackConcurrency: Int = 4

    @ArgumentParser.Flag(help: "Measure only the conversation playback.")
    var playbackOnly = false

    func run() async throws {
        let server = try await BenchServer.start(extra: [
            "CHORUS_VOICE_DAILY_GENERATIONS": "100000", "CHORUS_VOICE_PLAYBACK_CONCURRENCY": String(playbackConcurrency),
        ])
        let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 256)
        let client = HTTPClient(eventLoopGroupProvider: .shared(clientGroup), configuration: clientConfiguration)
        do {
            if playbackOnly {
                try await measurePlayback(client, server: server)
                try await client.shutdown()
                try await clientGroup.shutdownGracefully()
                await server.stop()
                return
            }
            if streamingOnly {
                try await StreamingTranscriptionBench(
                    server: server, client: client, clientGroup: clientGroup, recordings: streamedRecordings, speed: max(0.1, streamSpeed)
                ).run()
                try await client.shutdown()
                try await clientGroup.shutdownGracefully()
                await server.stop()
                return
            }
            try await measureUploads(client, server: server)
            let (alice, bob, conversation) = try await conversationPair(client, server: server)
            try await measureCachedSpeech(client, server: server, clientGroup: clientGroup, listener: bob, sender: alice, conversation: conversation)
            try await measureSpeechGeneration(client, server: server, listener: bob, sender: alice, conversation: conversation)
            try await measureTranscription(client, server: server, token: alice.token)
            try await StreamingTranscriptionBench(
                server: server, client: client, clientGroup: clientGroup, recordings: streamedRecordings, speed: max(0.1, streamSpeed)
            ).run()
            try await measureFanOut(client, server: server, clientGroup: clientGroup)
            try await measurePlayback(client, server: server)
        } catch {
            try? await client.shutdown()
            await server.stop()
            throw error
        }
        try await client.shutdown()
        try await clientGroup.shutdownGracefully()
        await server.stop()
    }

    struct Person {
        var token: String
        var email: String
    }

    private func person(_ client: HTTPClient, server: BenchServer, name: String) async throws -> Person {
        let email = "\(name)-\(UUID().uuidString.prefix(6).lowercased())@bench.test"
        let tokens: TokenResponse = try await server.send(
            client, .POST, "/auth/register", json: RegisterRequest(email: email, password: "benchmark-password"))
        let _: MessagingProfileDTO = try await server.send(
            client, .PUT, "/me/profile", json: MessagingProfileDTO(displayName: name, birthYear: 1980), token: tokens.accessToken)
        return Person(token: tokens.accessToken, email: email)
    }

    private func conversationPair(_ client: HTTPClient, server: BenchServer) async throws -> (Person, Person, String) {
        let alice = try await person(client, server: server, name: "alice")
        let bob = try await person(client, server: server, name: "bob")
        let conversation: ConversationDTO = try await server.send(
            client, .POST, "/conversations", json: CreateConversationRequest(kind: "direct", memberEmails: [bob.email]), token: alice.token)
        try await accept(client, server: server, bob, to: conversation.id)
        return (alice, bob, conversation.id)
    }

    /// Accepts `person`'s invitation to the conversation (adding someone only invites them).
    private func accept(_ client: HTTPClient, server: BenchServer, _ person: Person, to conversationID: String) async throws {
        let pending: InvitationsResponse = try await server.send(client, .GET, "/invitations", token: person.token)
        guard let invitation = pending.invitations.first(where: { $0.conversationID == conversationID }) else {
            throw ValidationError("no invitation to \(conversationID) for \(person.email)")
        }
        let _: ConversationDTO = try await server.send(client, .POST, "/invitations/\(invitation.id)/accept", token: person.token)
    }

    // MARK: Uploads

    private func measureUploads(_ client: HTTPClient, server: BenchServer) async throws {
        let uploader = try await person(client, server: server, name: "uploader")
        // One 10 MB WAV (about 3.6 minutes at 24 kHz), shared by every client: the load generator holds it once.
        let samples = [Int16](repeating: 0, count: 5_200_000)
        let wav = ByteBuffer(data: SandboxAudioFiles.wav(pcm16: samples, sampleRate: 24_000, text: "bench"))
        let before = MemoryUsage.current()
        let clock = ContinuousClock()
        let start = clock.now
        let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    var request = HTTPClientRequest(url: server.base + "/audio?long_form=true")
                    request.method = .POST
                    request.headers.add(name: "Authorization", value: "Bearer \(uploader.token)")
                    request.headers.add(name: "Content-Type", value: "audio/wav")
                    request.body = .bytes(wav)
                    let response = try await client.execute(request, timeout: .seconds(300))
                    _ = try await response.body.collect(upTo: 1 << 20)
                    return response.status.code
                }
            }
            var statuses: [UInt] = []
            for try await status in group { statuses.append(status) }
            return statuses
        }
        let elapsed = clock.now - start
        let after = MemoryUsage.current()
        print("uploads: 20 concurrent 10 MB recordings (\(wav.readableBytes) bytes each): statuses \(Set(statuses).sorted()), \(format(elapsed))")
        print(
            String(
                format: "  process RSS before %.1f MiB, peak %.1f MiB (high-water mark of the whole process: server and load generator)",
                before.residentMiB, after.peakMiB))
    }

    // MARK: Cached speech

    private func measureCachedSpeech(
        _ client: HTTPClient, server: BenchServer, clientGroup: any EventLoopGroup, listener: Person, sender: Person, conversation: String
    ) async throws {
        let message: MessageDTO = try await server.send(
            client, .POST, "/conversations/\(conversation)/messages",
            json: SendMessageRequest(clientMessageID: "speech", sendMode: "text", content: "See you at the game tonight, bring the snacks!"),
            token: sender.token)
        let first: SpeechResponse = try await server.send(client, .POST, "/messages/\(message.id)/speech", token: listener.token)
        let path = String(first.audioURL.dropFirst(server.base.count))
        let size = try await client.execute(HTTPClientRequest(url: first.audioURL), timeout: .seconds(10)).body.collect(upTo: 1 << 24)
            .readableBytes
        let request: @Sendable (Int, Int) -> (HTTPRequestHead, ByteBuffer?) = { _, _ in
            var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
            head.headers.add(name: "Host", value: "127.0.0.1")
            return (head, nil)
        }
        _ = try await LoopbackLoad.run(
            host: "127.0.0.1", port: server.port, clients: 100, group: clientGroup, until: .now() + .seconds(1), request: request)
        let clock = ContinuousClock()
        let start = clock.now
        let outcome = try await LoopbackLoad.run(
            host: "127.0.0.1", port: server.port, clients: 100, group: clientGroup,
            until: .now() + .milliseconds(Int64(seconds * 1000)), request: request)
        let rate = Double(outcome.latencies.count) / (clock.now - start).seconds
        let (p50, p99) = percentiles(outcome.latencies)
        let (firstP50, firstP99) = percentiles(outcome.firstBytes)
        print(
            String(
                format:
                    "cached speech (%d bytes), 100 concurrent listeners: %d responses, %.0f req/s; time to first byte p50 %.2f ms, p99 %.2f ms; complete response p50 %.2f ms, p99 %.2f ms; %d errors",
                size, outcome.latencies.count, rate, firstP50, firstP99, p50, p99, outcome.errors))
    }

    // MARK: Speech generation

    /// Speech for `speeches` different messages, one after the other: generation time and the verbatim figures.
    private func measureSpeechGeneration(
        _ client: HTTPClient, server: BenchServer, listener: Person, sender: Person, conversation: String
    ) async throws {
        if deviatingReadings > 0 {
            var knob = HTTPClientRequest(url: server.base + "/sandbox/openai/realtime/deviations")
            knob.method = .PUT
            knob.headers.add(name: "Content-Type", value: "application/json")
            knob.body = .bytes(ByteBuffer(string: #"{"responses":\#(deviatingReadings)}"#))
            _ = try await client.execute(knob, timeout: .seconds(10)).body.collect(upTo: 1 << 16)
        }
        let lines = [
            "Dinner is at seven, bring the salad and the big bowl.", "Emma has practice on Tuesday at 4pm, can you drive her?",
            "The plumber comes tomorrow between nine and eleven.", "Remember grandma's birthday on the 12th, I ordered flowers.",
            "We are out of milk, eggs and bread.",
        ]
        let before = server.speechVerbatim.snapshot
        let clock = ContinuousClock()
        var durations: [Double] = []
        var contentType = ""
        for index in 0..<speeches {
            let message: MessageDTO = try await server.send(
                client, .POST, "/conversations/\(conversation)/messages",
                json: SendMessageRequest(
                    clientMessageID: "generate-\(index)", sendMode: "text", content: "\(lines[index % lines.count]) (\(index + 1))"),
                token: sender.token)
            let start = clock.now
            let speech: SpeechResponse = try await server.send(client, .POST, "/messages/\(message.id)/speech", token: listener.token)
            durations.append((clock.now - start).seconds)
            contentType = speech.contentType
        }
        let (p50, p99) = percentiles(durations)
        print(
            "speech generation in the default voice: \(speeches) messages (\(contentType)), one at a time: "
                + String(format: "p50 %.0f ms, p99 %.0f ms", p50, p99))
        print("  verbatim check (\(deviatingReadings) readings made to deviate): \(server.speechVerbatim.snapshot.since(before).summary)")
    }

    // MARK: Transcription

    private func measureTranscription(_ client: HTTPClient, server: BenchServer, token: String) async throws {
        // A 30 s clip of sandbox speech: the emulator transcribes it from its embedded text.
        let text = Array(repeating: "Pick up Emma from soccer at five and bring her water bottle, please.", count: 9).joined(separator: " ")
        var clip = SandboxAudioFiles.speechWAV(text: text, voice: "bench")
        let seconds = SandboxAudioFiles.durationSeconds(of: clip) ?? 0
        if seconds > 30, let pcm = SandboxAudioFiles.pcm16(wav: clip) {
            clip = SandboxAudioFiles.wav(pcm16: Array(pcm.samples.prefix(pcm.sampleRate * 30)), sampleRate: pcm.sampleRate, text: text)
        }
        // One recording per transcription: a recording is transcribed once and then answered from storage.
        var recordings: [String] = []
        for _ in 0..<transcriptions {
            var request = HTTPClientRequest(url: server.base + "/audio")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            request.headers.add(name: "Content-Type", value: "audio/wav")
            request.body = .bytes(ByteBuffer(data: clip))
            let uploaded = try await client.execute(request, timeout: .seconds(60))
            recordings.append(
                try ChorusJSON.makeDecoder().decode(AudioUploadResponse.self, from: Data(buffer: try await uploaded.body.collect(upTo: 1 << 20)))
                    .audioID)
        }
        let clock = ContinuousClock()
        var total: [Double] = []
        var provider: [Double] = []
        var overhead: [Double] = []
        for audioID in recordings {
            let body = ByteBuffer(data: try ChorusJSON.makeEncoder().encode(TranscriptionRequestDTO(audioID: audioID)))
            var request = HTTPClientRequest(url: server.base + "/transcriptions")
            request.method = .POST
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(body)
            let start = clock.now
            let response = try await client.execute(request, timeout: .seconds(60))
            _ = try await response.body.collect(upTo: 1 << 20)
            let elapsed = (clock.now - start).seconds
            // `Server-Timing: provider;dur=<ms>`: the provider's share, measured by the server around its call.
            guard response.status == .ok,
                let timing = response.headers.first(name: "Server-Timing"), let range = timing.range(of: "dur="),
                let milliseconds = Double(timing[range.upperBound...])
            else { throw ValidationError("POST /transcriptions answered \(response.status.code) without Server-Timing") }
            total.append(elapsed)
            provider.append(milliseconds / 1000)
            overhead.append(elapsed - milliseconds / 1000)
        }
        let (totalP50, totalP99) = percentiles(total)
        let (providerP50, providerP99) = percentiles(provider)
        let (overheadP50, overheadP99) = percentiles(overhead)
        print(
            String(
                format:
                    "transcription of a %.1f s clip (%d runs): total p50 %.2f / p99 %.2f ms; provider p50 %.2f / p99 %.2f ms; server overhead p50 %.2f / p99 %.2f ms",
                min(seconds, 30), transcriptions, totalP50, totalP99, providerP50, providerP99, overheadP50, overheadP99))
    }

    // MARK: Fan-out

    private func measureFanOut(_ client: HTTPClient, server: BenchServer, clientGroup: any EventLoopGroup) async throws {
        // 50 members (the group maximum), 4 devices each: 200 sockets.
        let owner = try await person(client, server: server, name: "owner")
        var members: [Person] = []
        for index in 0..<49 { members.append(try await person(client, server: server, name: "member\(index)")) }
        let group: ConversationDTO = try await server.send(
            client, .POST, "/conversations",
            json: CreateConversationRequest(kind: "group", title: "Bench", memberEmails: members.map(\.email)), token: owner.token)
        for member in members { try await accept(client, server: server, member, to: group.id) }
        let arrivals = NIOLockedValueBox<[String: [ContinuousClock.Instant]]>([:])
        var sockets: [WebSocket] = []
        for member in members + [owner] {
            for _ in 0..<4 {
                var headers = HTTPHeaders()
                headers.add(name: "Authorization", value: "Bearer \(member.token)")
                let upgraded = clientGroup.any().makePromise(of: WebSocket.self)
                try await WebSocket.connect(
                    to: server.base.replacingOccurrences(of: "http://", with: "ws://") + "/ws", headers: headers, on: clientGroup
                ) { socket in
                    socket.onText { _, text in
                        let now = ContinuousClock.now
                        guard text.contains("\"message.created\""),
                            let event = try? ChorusJSON.makeDecoder().decode(RealtimeEventDTO.self, from: Data(text.utf8)),
                            let id = event.message?.content
                        else { return }
                        arrivals.withLockedValue { $0[id, default: []].append(now) }
                    }
                    upgraded.succeed(socket)
                }.get()
                sockets.append(try await upgraded.futureResult.get())
            }
        }
        // Let every socket register (a ping round trip each).
        try await Task.sleep(for: .milliseconds(500))
        var latencies: [Double] = []
        var incomplete = 0
        for index in 0..<messages {
            let content = "fan-out \(index)"
            let sent = ContinuousClock.now
            let _: MessageDTO = try await server.send(
                client, .POST, "/conversations/\(group.id)/messages",
                json: SendMessageRequest(clientMessageID: "fan-\(index)", sendMode: "text", content: content), token: owner.token)
            let deadline = ContinuousClock.now + .seconds(10)
            while arrivals.withLockedValue({ $0[content]?.count ?? 0 }) < sockets.count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(2))
            }
            let times = arrivals.withLockedValue { $0[content] ?? [] }
            if times.count < sockets.count { incomplete += 1 }
            latencies += times.map { ($0 - sent).seconds }
        }
        for socket in sockets { try? await socket.close() }
        let (p50, p99) = percentiles(latencies)
        print(
            String(
                format: "fan-out to %d sockets (50 members x 4 devices), %d messages: p50 %.2f ms, p99 %.2f ms from the send request, %d incomplete",
                sockets.count, messages, p50, p99, incomplete))
    }

    // MARK: Playback

    /// The last N messages in their senders' voices (`POST /conversations/{id}/playback` with `stream`): time to the
    /// first playable clip and to the whole timeline, cold (every clip generated) and warm (every clip cached), read
    /// by polling the playback every 5 ms.
    private func measurePlayback(_ client: HTTPClient, server: BenchServer) async throws {
        let lines = [
            "Soccer practice moved to Saturday at nine.", "I can drive, the car seats are in my trunk.", "Who brings the orange slices?",
            "Grandma lands at six on Friday, gate twelve.", "I'll pick her up after work.",
        ]
        for count in playbackMessages where (1...30).contains(count) {
            let (alice, bob, conversation) = try await conversationPair(client, server: server)
            for index in 0..<count {
                let _: MessageDTO = try await server.send(
                    client, .POST, "/conversations/\(conversation)/messages",
                    json: SendMessageRequest(
                        clientMessageID: "playback-\(index)", sendMode: "text",
                        content: "\(lines[index % lines.count]) (\(index + 1) of \(count))"),
                    token: index % 2 == 0 ? alice.token : bob.token)
            }
            for run in ["cold", "warm"] {
                let clock = ContinuousClock()
                let start = clock.now
                var playback: PlaybackResponse = try await server.send(
                    client, .POST, "/conversations/\(conversation)/playback", json: PlaybackRequest(last: count, stream: true), token: bob.token)
                let answered = clock.now - start
                var firstClip: Duration? = playback.clips.first?.state == "ready" ? answered : nil
                let deadline = clock.now + .seconds(300)
                while playback.status == "generating", clock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                    playback = try await server.send(
                        client, .GET, "/conversations/\(conversation)/playbacks/\(playback.playbackID)", token: bob.token)
                    if firstClip == nil, playback.clips.first?.state != "pending" { firstClip = clock.now - start }
                }
                let full = clock.now - start
                let ready = playback.clips.filter { $0.state == "ready" }.count
                let cached = playback.clips.filter { $0.cached == true }.count
                print(
                    String(
                        format:
                            "playback of %d messages, %@, %d clips at a time: answered in %.0f ms, first clip %.0f ms, whole timeline %.0f ms (%@, %d/%d clips ready, %d from the cache, %.1f s of audio)",
                        count, run, playbackConcurrency, answered.seconds * 1000, (firstClip ?? full).seconds * 1000, full.seconds * 1000,
                        playback.status, ready, count, cached, Double(playback.durationMs ?? 0) / 1000))
            }
        }
    }

    /// p50 and p99 of durations in seconds, in milliseconds.
    private func percentiles(_ values: [Double]) -> (Double, Double) {
        let (p50, p99) = medianAndP99(values)
        return (p50 * 1000, p99 * 1000)
    }

    private func format(_ duration: Duration) -> String { String(format: "%.2f s", duration.seconds) }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// This process's resident memory and its high-water mark (`/proc/self/status`).
struct MemoryUsage {
    var residentMiB: Double
    var peakMiB: Double

    static func current() -> MemoryUsage {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        func kib(_ key: String) -> Double {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key) }) else { return 0 }
            return Double(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "0") ?? 0
        }
        return MemoryUsage(residentMiB: kib("VmRSS:") / 1024, peakMiB: kib("VmHWM:") / 1024)
    }
}

/// The median and the 99th percentile of `values` (nearest rank, in the values' unit); zeros when there are none.
func medianAndP99(_ values: [Double]) -> (Double, Double) {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return (0, 0) }
    func at(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.down)))] }
    return (at(0.5), at(0.99))
}
