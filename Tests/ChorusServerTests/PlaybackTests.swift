import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Testing

@testable import ChorusServer

/// Speaks every text as a short WAV after a delay chosen per text, counting how many syntheses run at once; texts
/// containing `failing` (or every text, with `failAll`) fail as a provider outage would.
final class SlowSpeech: SpeechSynthesizer {
    struct Counts: Sendable {
        var inFlight = 0
        var maxInFlight = 0
        var started = 0
        var finished: [String] = []
    }

    let maxInputCharacters = 4_096
    private let delay: @Sendable (String) -> Duration
    private let failing: String?
    private let failAll: Bool
    private let counts = NIOLockedValueBox(Counts())

    init(failing: String? = nil, failAll: Bool = false, delay: @escaping @Sendable (String) -> Duration) {
        self.delay = delay
        self.failing = failing
        self.failAll = failAll
    }

    var snapshot: Counts { counts.withLockedValue { $0 } }

    func synthesize(_ request: SpeechRequest) async throws -> SynthesizedSpeech {
        counts.withLockedValue { counts in
            counts.inFlight += 1
            counts.started += 1
            counts.maxInFlight = max(counts.maxInFlight, counts.inFlight)
        }
        defer { counts.withLockedValue { $0.inFlight -= 1 } }
        try await Task.sleep(for: delay(request.text))
        if failAll || failing.map({ request.text.contains($0) }) == true {
            throw ProviderError.unavailable("speech provider down")
        }
        counts.withLockedValue { $0.finished.append(request.text) }
        // 200 ms of a quiet tone, 24 kHz mono 16-bit PCM.
        let samples = (0..<4_800).map { Int16(truncatingIfNeeded: ($0 % 48) * 100 - 2_400) }
        return SynthesizedSpeech(
            audio: WAVSplicer.encode(PCM16Audio(samples: samples, sampleRate: 24_000)), format: .wav, billedCharacters: request.text.count)
    }
}

/// `POST /conversations/{id}/playback`: clips made concurrently up to `CHORUS_VOICE_PLAYBACK_CONCURRENCY`, cached clips
/// free, the timeline filling in (`stream`, `playback.progress`, `GET /conversations/{id}/playbacks/{id}`), failures
/// per clip, and the summary offered when nothing can be played.
@Suite("Playback of the last messages")
struct PlaybackTests {
    typealias Person = MessagingTests.Person

    /// A group of two with `texts` sent in order, alternating senders.
    static func conversation(_ server: TestServer, texts: [String]) async throws -> (mom: Person, dad: Person, id: String) {
        let mom = try await VoiceTests.adult(server, name: "mom")
        let dad = try await VoiceTests.adult(server, name: "dad")
        let group = try await server.startConversation(
            mom.token, CreateConversationRequest(kind: "group", title: "Family", memberEmails: [dad.email]), acceptedBy: [dad.token])
        for (index, text) in texts.enumerated() {
            _ = try await MessagingTests.send(server, index % 2 == 0 ? mom : dad, to: group.id, text: text)
        }
        return (mom, dad, group.id)
    }

    static func play(_ server: TestServer, _ person: Person, _ conversationID: String, _ body: PlaybackRequest) async throws -> PlaybackResponse {
        let reply = try await server.request(.POST, "/conversations/\(conversationID)/playback", token: person.token, json: body)
        #expect(reply.status == 200, "\(reply.text)")
        return try reply.decode(PlaybackResponse.self)
    }

    @Test(
        "9 clips of 600 ms, 3 at a time: about 3 clip times, never more than 3 in flight; again from the cache for free", arguments: TestDatabase.all)
    func concurrentAndBounded(_ database: TestDatabase) async throws {
        let clip = Duration.milliseconds(600)
        let speech = SlowSpeech { _ in clip }
        try await TestServer.run(
            on: database, environment: ["CHORUS_VOICE_PLAYBACK_CONCURRENCY": "3", "CHORUS_VOICE_URGENCY": "keywords"],
            options: .testing().fake(\.messageSpeech, speech)
        ) { server in
            let texts = (1...9).map { "Message number \($0) about the weekend." }
            let (_, dad, id) = try await Self.conversation(server, texts: texts)
            let started = ContinuousClock.now
            let cold = try await Self.play(server, dad, id, PlaybackRequest(last: 9))
            let coldTime = ContinuousClock.now - started
            #expect(cold.status == "ready" && cold.clips.count == 9 && cold.timeline.count == 9)
            #expect(cold.clips.map(\.position) == Array(1...9) && cold.clips.allSatisfy { $0.state == "ready" && $0.cached == false })
            #expect(speech.snapshot.started == 9)
            // Bounded, and used: exactly 3 at a time.
            #expect(speech.snapshot.maxInFlight == 3)
            // 9 × 600 ms one after another would be 5.4 s; 3 at a time is 1.8 s plus the server's own work (about 1 s for 9 clips
            // on PostgreSQL on a loaded 2-core machine).
            #expect(coldTime >= clip * 3 && coldTime < clip * 9 * 0.6, "cold playback took \(coldTime)")

            // The same messages again: every clip from the speech cache, no provider call, the same file.
            let warmStart = ContinuousClock.now
            let warm = try await Self.play(server, dad, id, PlaybackRequest(last: 9))
            let warmTime = ContinuousClock.now - warmStart
            #expect(warm.status == "ready" && warm.clips.allSatisfy { $0.cached == true })
            #expect(speech.snapshot.started == 9)
            #expect(warm.timeline == cold.timeline && warm.durationMs == cold.durationMs && warm.playbackID != cold.playbackID)
            #expect(warmTime < coldTime && warmTime < clip * 3, "warm playback took \(warmTime)")
        }
    }

    @Test("clips finishing in reverse order still play in message order", arguments: TestDatabase.all)
    func orderKept(_ database: TestDatabase) async throws {
        // The first message takes longest: the clips finish last to first.
        let speech = SlowSpeech { text in .milliseconds(text.hasPrefix("First") ? 450 : text.hasPrefix("Second") ? 300 : 150) }
        try await TestServer.run(on: database, environment: ["CHORUS_VOICE_URGENCY": "keywords"], options: .testing().fake(\.messageSpeech, speech)) {
            server in
            let texts = ["First, the snacks.", "Second, the rides.", "Third, the kit."]
            let (mom, _, id) = try await Self.conversation(server, texts: texts)
            let playback = try await Self.play(server, mom, id, PlaybackRequest(last: 3))
            #expect(speech.snapshot.finished == texts.reversed())
            #expect(playback.clips.map(\.sender) == ["Mom", "Dad", "Mom"] && playback.timeline.map(\.sender) == ["Mom", "Dad", "Mom"])
            #expect(playback.clips.map(\.messageID) == playback.timeline.map(\.messageID))
            for (previous, next) in zip(playback.timeline, playback.timeline.dropFirst()) {
                #expect(next.startMs - previous.endMs == 300)
            }
            #expect(playback.timeline.map { $0.endMs - $0.startMs } == [200, 200, 200] && playback.durationMs == 1_200)
        }
    }

    @Test(
        "streamed: answered at once, clip 1 ready (and playable) before the last is made, events in order, then the state",
        arguments: TestDatabase.all)
    func streamFillsIn(_ database: TestDatabase) async throws {
        let clip = Duration.milliseconds(300)
        let speech = SlowSpeech { _ in clip }
        try await TestServer.run(
            on: database, environment: ["CHORUS_VOICE_PLAYBACK_CONCURRENCY": "2", "CHORUS_VOICE_URGENCY": "keywords"],
            options: .testing().fake(\.messageSpeech, speech)
        ) { server in
            let (mom, dad, id) = try await Self.conversation(server, texts: (1...6).map { "Line \($0) of the plan." })
            let live = try await RealtimeClient.connect(baseURL: server.baseURL, token: dad.token)
            let started = try await Self.play(server, dad, id, PlaybackRequest(last: 6, stream: true))
            #expect(started.status == "generating" && started.audioURL == nil && started.timeline.isEmpty)
            #expect(started.clips.count == 6 && started.clips.allSatisfy { $0.state == "pending" && $0.audioURL == nil })
            #expect(speech.snapshot.finished.count < 6)

            let ours: @Sendable (RealtimeEventDTO) -> Bool = { $0.type == "playback.progress" && $0.playback?.playbackID == started.playbackID }
            _ = try await live.next { ours($0) && $0.playback?.status != "generating" }
            let events = live.events.filter(ours).compactMap(\.playback)
            await live.close()
            // One event per clip, then the finished playback.
            #expect(events.count == 7)
            #expect(events.dropLast().map { $0.clips.filter { $0.state == "ready" }.count } == Array(1...6))
            let firstPlayable = try #require(events.first { $0.clips[0].state == "ready" })
            #expect(firstPlayable.status == "generating" && firstPlayable.clips.last?.state == "pending")
            let clipURL = try #require(firstPlayable.clips[0].audioURL)
            let audio = try await server.request(.GET, String(clipURL.dropFirst(server.baseURL.count)))
            #expect(audio.status == 200 && audio.body.prefix(4) == Data("RIFF".utf8))
            let finished = try #require(events.last)
            #expect(finished.status == "ready" && finished.timeline.count == 6 && finished.audioURL != nil)
            #expect(speech.snapshot.maxInFlight == 2)

            // The same playback read back; other members and unknown ids are not found.
            let state = try await server.request(.GET, "/conversations/\(id)/playbacks/\(started.playbackID)", token: dad.token)
            #expect(state.status == 200, "\(state.text)")
            let read = try state.decode(PlaybackResponse.self)
            #expect(read.status == "ready" && read.timeline == finished.timeline && read.clips.map(\.state) == finished.clips.map(\.state))
            #expect(try await server.request(.GET, "/conversations/\(id)/playbacks/\(started.playbackID)", token: mom.token).status == 404)
            #expect(try await server.request(.GET, "/conversations/\(id)/playbacks/unknown", token: dad.token).status == 404)
        }
    }

    @Test("a failing clip is reported on its own; when none can be made the summary is offered", arguments: TestDatabase.all)
    func failures(_ database: TestDatabase) async throws {
        let speech = SlowSpeech(failing: "[broken]") { _ in .milliseconds(20) }
        try await TestServer.run(on: database, environment: ["CHORUS_VOICE_URGENCY": "keywords"], options: .testing().fake(\.messageSpeech, speech)) {
            server in
            let (mom, dad, id) = try await Self.conversation(server, texts: ["Pickup at 3.", "This one is [broken].", "See you then."])
            let partial = try await Self.play(server, dad, id, PlaybackRequest(last: 3))
            #expect(partial.status == "partial" && partial.clips.map(\.state) == ["ready", "failed", "ready"])
            #expect(partial.clips[1].error == "Audio unavailable. You can still read the message." && partial.clips[1].audioURL == nil)
            #expect(partial.timeline.map(\.messageID) == [partial.clips[0].messageID, partial.clips[2].messageID])
            #expect(partial.audioURL != nil && partial.fallback == nil)

            // Only the broken message: nothing to play, the summary instead (answered, and announced when streamed).
            _ = try await MessagingTests.send(server, mom, to: id, text: "Also [broken].")
            let failed = try await Self.play(server, dad, id, PlaybackRequest(last: 1))
            #expect(failed.status == "failed" && failed.audioURL == nil && failed.durationMs == nil && failed.timeline.isEmpty)
            #expect(failed.fallback?.summaryPath == "/conversations/\(id)/summary")
            #expect(failed.fallback?.message == "Couldn't play the conversation right now. Listen to the summary instead.")
            let live = try await RealtimeClient.connect(baseURL: server.baseURL, token: dad.token)
            let streamed = try await Self.play(server, dad, id, PlaybackRequest(last: 1, stream: true))
            let event = try await live.next { $0.type == "playback.progress" && $0.playback?.status == "failed" }
            await live.close()
            #expect(event.playback?.playbackID == streamed.playbackID && event.playback?.fallback == failed.fallback)
        }
    }

    @Test("bad requests are refused without generating anything", arguments: TestDatabase.all)
    func badInput(_ database: TestDatabase) async throws {
        let speech = SlowSpeech { _ in .milliseconds(10) }
        try await TestServer.run(on: database, environment: ["CHORUS_VOICE_URGENCY": "keywords"], options: .testing().fake(\.messageSpeech, speech)) {
            server in
            let (mom, _, id) = try await Self.conversation(server, texts: ["Hello."])
            let path = "/conversations/\(id)/playback"
            for body in [#"{"last": 0}"#, #"{"last": 31}"#, #"{"last": 1e300}"#, #"{"last": "ten"}"#, #"{"stream": "yes"}"#, #"[1]"#] {
                let reply = try await server.request(
                    .POST, path, token: mom.token, body: Data(body.utf8), headers: [("Content-Type", "application/json")])
                #expect([400, 422].contains(reply.status), "\(body): \(reply.status) \(reply.text)")
            }
            #expect(try await server.request(.POST, "/conversations/unknown/playback", token: mom.token, json: PlaybackRequest()).status == 404)
            #expect(speech.snapshot.started == 0)
        }
    }

    @Test(
        "a streamed playback is read on another instance of the same database while it fills in and when done; expired ones are 404 and swept",
        arguments: TestDatabase.all)
    func readOnAnotherInstance(_ database: TestDatabase) async throws {
        let speech = SlowSpeech { _ in .milliseconds(400) }
        let provisioned = try database.make()
        defer { provisioned.drop() }
        let maker = try await TestServer.start(
            database: provisioned, environment: ["CHORUS_VOICE_PLAYBACK_CONCURRENCY": "1", "CHORUS_VOICE_URGENCY": "keywords"],
            options: .testing().fake(\.messageSpeech, speech))
        let other = try await TestServer.start(database: provisioned)
        do {
            let (mom, dad, id) = try await Self.conversation(maker, texts: (1...4).map { "Part \($0) of the trip." })
            let started = try await Self.play(maker, dad, id, PlaybackRequest(last: 4, stream: true))
            #expect(started.status == "generating")
            let path = "/conversations/\(id)/playbacks/\(started.playbackID)"

            // While it is made: the other instance sees clips ready as they are stored, the rest still pending.
            var partial: PlaybackResponse?
            try await other.eventually("the other instance sees a clip ready") {
                let reply = try await other.request(.GET, path, token: dad.token)
                guard reply.status == 200 else { return false }
                let read = try reply.decode(PlaybackResponse.self)
                guard read.clips.contains(where: { $0.state == "ready" }) else { return false }
                partial = read
                return true
            }
            let seen = try #require(partial)
            #expect(seen.playbackID == started.playbackID && seen.clips.count == 4)
            #expect(seen.status != "generating" || (seen.timeline.isEmpty && seen.audioURL == nil))

            // When done: the same state on both instances; the clip URLs are signed on the answering instance and play there.
            var finished: PlaybackResponse?
            try await other.eventually("the other instance sees it finished") {
                let read = try await other.request(.GET, path, token: dad.token).decode(PlaybackResponse.self)
                finished = read
                return read.status != "generating"
            }
            let done = try #require(finished)
            let local = try await maker.request(.GET, path, token: dad.token).decode(PlaybackResponse.self)
            #expect(done.status == "ready" && done.timeline.count == 4 && done.durationMs == 4 * 200 + 3 * 300)
            #expect(done.timeline == local.timeline && done.clips.map(\.state) == local.clips.map(\.state))
            let joined = try #require(done.audioURL)
            let audio = try await other.request(.GET, String(joined.dropFirst(other.baseURL.count)))
            #expect(audio.status == 200 && audio.body.prefix(4) == Data("RIFF".utf8))
            // Only the requester reads it, in its own conversation.
            #expect(try await other.request(.GET, path, token: mom.token).status == 404)
            #expect(try await other.request(.GET, "/conversations/\(id)/playbacks/unknown", token: dad.token).status == 404)

            // Older than an hour: not found on any instance, and the retention sweep deletes it.
            let sql = other.app.db as! any SQLDatabase
            let old = Date().addingTimeInterval(-PlaybackStore.lifetime - 1).epochMillis
            try await sql.raw("UPDATE playbacks SET created_at = \(bind: old) WHERE id = \(bind: started.playbackID)").run()
            #expect(try await other.request(.GET, path, token: dad.token).status == 404)
            #expect(try await maker.request(.GET, path, token: dad.token).status == 404)
            let store = other.app.chorus.store(sql, on: other.app.eventLoopGroup.any())
            #expect(try await store.playbacks.deleteExpired(now: Date()) == 1)
            let left = try await sql.raw("SELECT COUNT(*) AS n FROM playbacks WHERE id = \(bind: started.playbackID)").first()?.decode(
                column: "n", as: Int64.self)
            #expect(left == 0)
        } catch {
            await maker.stop()
            await other.stop()
            throw error
        }
        await maker.stop()
        await other.stop()
    }

    @Test("snapshots written in parallel with shuffled versions: the highest version is the one stored", arguments: TestDatabase.all)
    func snapshotsNeverGoBack(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_VOICE_URGENCY": "keywords"]) { server in
            let (_, dad, id) = try await Self.conversation(server, texts: ["One.", "Two."])
            let userID = try #require(try CompactJWS.payload(dad.token)["sub"] as? String)
            let store = server.app.chorus.store(server.app.db as! any SQLDatabase, on: server.app.eventLoopGroup.any())
            let clipCount = 40
            let base = PlaybackState(
                id: UUID().uuidString.lowercased(), conversationID: id, userID: userID,
                clips: (1...clipCount).map { PlaybackState.Clip(messageID: "m\($0)", sender: "Dad") })
            try await store.playbacks.insert(base, now: Date())
            // Version n has n clips ready: the stored state tells which version it is.
            let written = try await withThrowingTaskGroup(of: Bool.self) { group in
                for version in (1...clipCount).shuffled() {
                    var state = base
                    for index in 0..<version { state.clips[index].state = "ready" }
                    group.addTask { try await store.playbacks.update(state, version: version, now: Date()) }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(written.count == clipCount && written.contains(true))
            let stored = try #require(try await store.playbacks.snapshot(id: base.id, conversationID: id, userID: userID, now: Date()))
            #expect(stored.version == clipCount)
            #expect(stored.state.clips.allSatisfy { $0.state == "ready" })
            // A late, older snapshot changes nothing.
            #expect(try await store.playbacks.update(base, version: 3, now: Date()) == false)
            let after = try #require(try await store.playbacks.snapshot(id: base.id, conversationID: id, userID: userID, now: Date()))
            #expect(after.version == clipCount && after.state.clips.allSatisfy { $0.state == "ready" })
            // The JSON round trip keeps the playback as answered.
            #expect(after.state.response(services: server.app.chorus, now: Date()).clips.count == clipCount)
        }
    }
}
