import ArgumentParser
import AsyncHTTPClient
import ChorusAPI
import ChorusServer
import Foundation
import NIOCore
import NIOHTTP1

/// Stories figures against an in-process server (SQLite, sandbox providers) over loopback:
/// - the whole pipeline of a 10-minute story with 8 illustrations, from `POST /stories` to the `done` event, with the
///   sandbox's time subtracted (what is left is the server's own overhead);
/// - from the `text` event to the first playable narration part, minus one provider call for that part;
/// - peak memory while 20 such stories are made at once.
///
/// The pause between illustration batches (2 s by default) is deliberate rate limiting, not overhead: it is set to 0.
struct Stories: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Stories: pipeline overhead, time to first narration, memory with 20 at once.")

    @ArgumentParser.Option(help: "Single stories measured one after the other.")
    var runs: Int = 5

    @ArgumentParser.Option(help: "Stories made at once for the memory figure.")
    var concurrent: Int = 20

    func run() async throws {
        let server = try await BenchServer.start(extra: [
            "CHORUS_STORIES_ILLUSTRATION_SPACING_SECONDS": "0", "CHORUS_STORIES_FREE_ILLUSTRATIONS": "8", "CHORUS_STORIES_DAILY_BUDGET_USD": "off",
            "CHORUS_STORIES_MONTHLY_BUDGET_USD": "off", "CHORUS_JOB_CONCURRENCY": "64",
        ])
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 128)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let token = try await user(client, server: server)
            let hero: HeroDTO = try await server.send(
                client, .POST, "/heroes",
                json: HeroRequest(name: "Mia", traits: ["brave", "kind"], appearance: "a girl with red curly hair and green eyes"), token: token)
            let _: HeroDTO = try await server.send(client, .POST, "/heroes/\(hero.id)/avatar", token: token)
            _ = try await story(client, server: server, token: token, hero: hero.id)  // warm-up

            var totals: [Double] = []
            var providers: [Double] = []
            var firstAudio: [Double] = []
            let verbatimBefore = server.speechVerbatim.snapshot
            for _ in 0..<runs {
                let before = try await providerSeconds(client, server: server)
                let realtimeBefore = server.speechVerbatim.snapshot.sessionSeconds
                let timing = try await story(client, server: server, token: token, hero: hero.id)
                // The sandbox's time: its HTTP answers and the Realtime sessions that spoke the narration.
                let spent = try await providerSeconds(client, server: server) - before + server.speechVerbatim.snapshot.sessionSeconds - realtimeBefore
                totals.append(timing.total)
                providers.append(spent)
                firstAudio.append(timing.firstAudio - timing.firstPartProvider)
            }
            let overheads = zip(totals, providers).map { $0 - $1 }
            print("stories: a 10-minute story (about 1,500 words, narration parts of at most the speech model's piece: 3 on /v1/audio/speech, 9 on the Realtime API) with 8 illustrations, \(runs) runs")
            print(
                String(
                    format:
                        "  POST → done: median %.0f ms, of which sandbox providers %.0f ms; server overhead median %.0f ms, max %.0f ms (target ≤ 1,000 ms)",
                    median(totals) * 1000, median(providers) * 1000, median(overheads) * 1000, (overheads.max() ?? 0) * 1000))
            print(
                String(
                    format:
                        "  text ready → first playable narration part, minus that part's provider call: median %.0f ms, max %.0f ms (target ≤ 100 ms)",
                    median(firstAudio) * 1000, (firstAudio.max() ?? 0) * 1000))
            print("  narration verbatim check (Realtime speech, \(runs) stories): \(server.speechVerbatim.snapshot.since(verbatimBefore).summary)")

            let memoryBefore = MemoryUsage.current()
            let clock = ContinuousClock()
            let start = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<concurrent {
                    group.addTask {
                        let token = try await user(client, server: server)
                        let hero: HeroDTO = try await server.send(
                            client, .POST, "/heroes", json: HeroRequest(name: "Leo", traits: ["curious"], appearance: "a boy with brown hair"),
                            token: token)
                        _ = try await story(client, server: server, token: token, hero: hero.id)
                    }
                }
                try await group.waitForAll()
            }
            let memoryAfter = MemoryUsage.current()
            print(
                String(
                    format: "  %d stories at once: all done in %.2f s; process RSS before %.1f MiB, peak %.1f MiB (server and load generator)",
                    concurrent, (clock.now - start).seconds, memoryBefore.residentMiB, memoryAfter.peakMiB))
            print("  narration verbatim check, whole run: \(server.speechVerbatim.snapshot.summary)")
        } catch {
            try? await client.shutdown()
            await server.stop()
            throw error
        }
        try await client.shutdown()
        await server.stop()
    }

    private func user(_ client: HTTPClient, server: BenchServer) async throws -> String {
        let tokens: TokenResponse = try await server.send(
            client, .POST, "/auth/register",
            json: RegisterRequest(email: "bench-\(UUID().uuidString.prefix(8))@bench.test", password: "benchmark-password"))
        return tokens.accessToken
    }

    struct Timing {
        var total: Double
        var firstAudio: Double
        var firstPartProvider: Double
    }

    /// Makes one story and follows its server-sent events: the time to `done`, and from `text` to the first part.
    private func story(_ client: HTTPClient, server: BenchServer, token: String, hero: String) async throws -> Timing {
        var clear = HTTPClientRequest(url: server.base + "/sandbox/requests")
        clear.method = .DELETE
        _ = try await client.execute(clear, timeout: .seconds(10)).body.collect(upTo: 1 << 16)
        let clock = ContinuousClock()
        let start = clock.now
        let accepted: StoryAcceptedDTO = try await server.send(
            client, .POST, "/stories",
            json: CreateStoryRequest(heroID: hero, eventID: "birthday", lengthMinutes: 10, language: "en", voice: "coral", illustrationCount: 8),
            token: token)
        var request = HTTPClientRequest(url: server.base + "/stories/\(accepted.id)/events")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await client.execute(request, timeout: .seconds(120))
        var pending = ""
        var textAt: Duration?
        var firstPartAt: Duration?
        // Realtime narration: the time in sessions until the first part was ready is that part's provider call (parts
        // are spoken one after the other, and a session's time counts once it is over).
        let realtimeBefore = server.speechVerbatim.snapshot.sessionSeconds
        var firstPartRealtime: Double?
        var doneAt: Duration?
        var story: StoryDTO?
        let decoder = ChorusJSON.makeDecoder()
        reading: for try await chunk in response.body {
            pending += String(buffer: chunk)
            while let end = pending.range(of: "\n\n") {
                let block = String(pending[..<end.lowerBound])
                pending.removeSubrange(..<end.upperBound)
                guard let data = block.split(separator: "\n").first(where: { $0.hasPrefix("data: ") })?.dropFirst(6),
                    let progress = try? decoder.decode(StoryProgressDTO.self, from: Data(data.utf8))
                else { continue }
                let now = clock.now - start
                switch progress.type {
                case "text": textAt = now
                case "narration_part" where firstPartAt == nil:
                    firstPartAt = now
                    firstPartRealtime = server.speechVerbatim.snapshot.sessionSeconds - realtimeBefore
                case "done":
                    doneAt = now
                    story = progress.story
                    break reading
                default: break
                }
            }
        }
        guard let doneAt, let textAt, let firstPartAt, let story, story.illustrations.allSatisfy({ $0.status == "succeeded" }) else {
            throw ValidationError("the story did not finish with every stage done")
        }
        if let firstPartRealtime, firstPartRealtime > 0 {
            return Timing(total: doneAt.seconds, firstAudio: (firstPartAt - textAt).seconds, firstPartProvider: firstPartRealtime)
        }
        // `/v1/audio/speech` narration: the provider call of the first part, as long as the sandbox took to answer it
        // (its request log, cleared before each story, lists answers in the order they were given).
        let log = try await client.execute(HTTPClientRequest(url: server.base + "/sandbox/requests"), timeout: .seconds(30))
            .body.collect(upTo: 256 << 20)
        let entries = ((try? JSONSerialization.jsonObject(with: Data(buffer: log))) as? [String: Any])?["requests"] as? [[String: Any]] ?? []
        guard let speech = entries.first(where: { ($0["path"] as? String)?.hasSuffix("audio/speech") == true }),
            let milliseconds = speech["duration_ms"] as? Double
        else { throw ValidationError("the sandbox logged no narration request") }
        return Timing(total: doneAt.seconds, firstAudio: (firstPartAt - textAt).seconds, firstPartProvider: milliseconds / 1_000)
    }

    /// Seconds the sandbox OpenAI spent answering so far (its own counter).
    private func providerSeconds(_ client: HTTPClient, server: BenchServer) async throws -> Double {
        var request = HTTPClientRequest(url: server.base + "/sandbox/openai/request-counts")
        request.headers.add(name: "Accept", value: "application/json")
        let body = try await client.execute(request, timeout: .seconds(10)).body.collect(upTo: 1 << 20)
        let counts = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
        return Double(counts["busy_ms"] as? Int ?? 0) / 1000
    }

    private func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}
