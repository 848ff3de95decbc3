import ChorusAPI
import ChorusCore
import ChorusTestSupport
import Foundation
import SQLKit
import Testing

@testable import ChorusServer

/// `/metrics` after real traffic — requests, a bridged call through the sandbox Twilio and OpenAI Realtime emulators, a
/// failing job — read with Prometheus' own text-format parser (`prometheus_client` from PyPI, run by the Python in
/// `CHORUS_TEST_PYTHON`, which scripts/test provides).
@Suite("Prometheus metrics", .serialized)
struct MetricsTests {
    static let token = "metrics-token-0123456789abcdef0123456789"

    /// One sample as the parser read it.
    struct Sample: Decodable, Sendable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// One metric family as the parser read it.
    struct Family: Decodable, Sendable {
        var name: String
        var type: String
        var samples: [Sample]
    }

    /// The families of `text`, parsed by `prometheus_client.parser.text_string_to_metric_families`.
    static func parse(_ text: String) async throws -> [Family] {
        let python = ProcessInfo.processInfo.environment["CHORUS_TEST_PYTHON"] ?? "python3"
        let script = """
            import json, math, sys
            from prometheus_client.parser import text_string_to_metric_families
            families = [
                {"name": f.name, "type": f.type,
                 "samples": [{"name": s.name, "labels": s.labels, "value": s.value if math.isfinite(s.value) else -1} for s in f.samples]}
                for f in text_string_to_metric_families(sys.stdin.read())
            ]
            json.dump(families, sys.stdout)
            """
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-metrics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("metrics.txt")
        let output = directory.appendingPathComponent("families.json")
        let errors = directory.appendingPathComponent("errors.txt")
        try Data(text.utf8).write(to: input)
        try Data().write(to: output)
        try Data().write(to: errors)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python, "-c", script]
        process.standardInput = try FileHandle(forReadingFrom: input)
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        guard status == 0 else {
            let message = String(decoding: (try? Data(contentsOf: errors)) ?? Data(), as: UTF8.self)
            throw TestSetupError(
                message: """
                    the Prometheus text-format parser (\(python), prometheus_client) failed with status \(status): \(message) \
                    Run ./scripts/test, or set CHORUS_TEST_PYTHON to a Python with prometheus_client installed \
                    (python3 -m venv v && v/bin/pip install prometheus_client).
                    """)
        }
        return try JSONDecoder().decode([Family].self, from: try Data(contentsOf: output))
    }

    static func scrape(_ server: TestServer) async throws -> [Family] {
        let reply = try await server.request(.GET, "/metrics", token: token)
        #expect(reply.status == 200)
        #expect(reply.headers.first(name: "Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        return try await parse(reply.text)
    }

    /// The samples named `name` whose labels include `labels`.
    static func samples(_ families: [Family], _ name: String, _ labels: [String: String] = [:]) -> [Sample] {
        families.flatMap(\.samples).filter { sample in
            sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
        }
    }

    static func value(_ families: [Family], _ name: String, _ labels: [String: String] = [:]) -> Double? {
        let found = samples(families, name, labels)
        return found.isEmpty ? nil : found.reduce(0) { $0 + $1.value }
    }

    /// Every series of histogram `name`: buckets never decrease with `le`, the `+Inf` bucket equals `_count`, and the
    /// configured bounds are all there. Returns the series' counts by their labels (without `le`).
    @discardableResult
    static func checkHistogram(_ families: [Family], _ name: String, bounds: Int) -> [[String: String]: Double] {
        let family = families.first { $0.name == name }
        #expect(family?.type == "histogram", "\(name) is a histogram")
        var counts: [[String: String]: Double] = [:]
        for count in samples(families, name + "_count") { counts[count.labels] = count.value }
        #expect(!counts.isEmpty, "\(name) has series")
        for (labels, count) in counts {
            let buckets = samples(families, name + "_bucket", labels).filter { $0.labels.count == labels.count + 1 }
            let finite = buckets.filter { $0.labels["le"] != "+Inf" }.sorted { Double($0.labels["le"]!)! < Double($1.labels["le"]!)! }
            #expect(finite.count == bounds, "\(name)\(labels): \(finite.count) finite buckets")
            #expect(zip(finite, finite.dropFirst()).allSatisfy { $0.value <= $1.value }, "\(name)\(labels): buckets never decrease")
            let infinite = buckets.first { $0.labels["le"] == "+Inf" }
            #expect(infinite?.value == count, "\(name)\(labels): +Inf bucket == count")
            #expect((finite.last?.value ?? 0) <= count)
            #expect(value(families, name + "_sum", labels) != nil, "\(name)\(labels) has a sum")
        }
        return counts
    }

    @Test("/metrics after real traffic parses with prometheus_client: HTTP by route template, calls, bridge, jobs, providers, database, connections, spend", arguments: TestDatabase.all)
    func afterTraffic(_ database: TestDatabase) async throws {
        let environment = [
            "CHORUS_METRICS_TOKEN": Self.token, "CHORUS_VOICE_DAILY_BUDGET_USD": "12.5", "CHORUS_STORIES_MONTHLY_BUDGET_USD": "300",
            "CHORUS_STORIES_DAILY_BUDGET_USD": "off",
        ]
        try await TestServer.run(on: database, environment: environment) { server in
            // Who may read it.
            let missing = try await server.request(.GET, "/metrics")
            #expect(missing.status == 401 && missing.headers.first(name: "WWW-Authenticate") == "Bearer")
            let wrong = try await server.request(.GET, "/metrics", token: Self.token + "x")
            #expect(wrong.status == 401 && wrong.headers.first(name: "WWW-Authenticate") == #"Bearer error="invalid_token""#)

            // Requests: a sign-up, a matched route that answers 404 and a path no route matches.
            let token = try await server.register().accessToken
            #expect(try await server.request(.GET, "/mobile/calls/CA-no-such-call", token: token).status == 404)
            #expect(try await server.request(.GET, "/no/such/path/12345").status == 404)

            // A bridged call: the sandbox Twilio dials back, the bridge relays to the Realtime emulator, the callee hangs up.
            let number = "+14155557091"
            try await LiveCallTests.configure(
                server, number: number,
                callee: LiveCallTests.Callee(lines: ["Hello? Who is this?", "Okay, bye now."], hangup_after_seconds: 4, reply_after_ms: 300),
                realtime: LiveCallTests.RealtimeBehavior(
                    first_audio_delay_ms: 100, speed: 4, reply_lines: ["Hi, it's Sam, just calling to say hello.", "Bye for now."],
                    caller_transcripts: ["Hello? Who is this?", "Okay, bye now."]))
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            let detail = try await LiveCallTests.settled(server, token, sid: placed.callSid)
            #expect(detail.call.status == "completed")
            try await LiveCallTests.expectNothingOpen(server)

            // A job whose kind this version does not know fails for good.
            let store = server.app.chorus.store(server.app.db as! any SQLDatabase, on: server.app.eventLoopGroup.any())
            let now = server.app.chorus.now()
            let jobID = try await store.jobs.enqueueJob(kind: "metrics_test_unknown_kind", payload: "{}", runAt: now, now: now)
            server.app.chorus.jobSignal.notify()
            try await server.eventually("the unknown job fails") {
                let rows = try await (server.app.db as! any SQLDatabase).raw("SELECT status FROM jobs WHERE id = \(bind: Int64(jobID))").all()
                return try rows.first?.decode(column: "status", as: String.self) == "failed"
            }

            // The ended call is counted right after the update that ended it commits, which the call's detail can show
            // first: wait for the count (a loaded CI machine scraped in between once). Its label is the reason known
            // when Twilio's final status arrived: the bridge saves "callee_hangup" when the media stream closes, which
            // may come after that status (docs/operations.md), and then it is counted as "completed".
            #expect(detail.call.endedReason == "callee_hangup")
            try await server.eventually("the ended call is counted") {
                Self.value(try await Self.scrape(server), "chorus_calls_ended_total", ["status": "completed"]) != nil
            }

            let healthBefore = server.app.chorus.providerHealth.figures().map { [$0.provider, $0.operation, String($0.calls)] }
            let families = try await Self.scrape(server)
            let health = server.app.chorus.providerHealth.figures()
            // Each family once (TYPE and HELP deduplicated), and every family this server defines is there.
            #expect(Set(families.map(\.name)).count == families.count, "families are unique")
            let names = Set(families.map(\.name))
            for expected in [
                "chorus_http_requests", "chorus_http_request_duration_seconds", "chorus_calls_ended", "chorus_calls_in_progress",
                "chorus_bridge_relay_latency_seconds", "chorus_bridge_barge_in_latency_seconds", "chorus_call_first_audio_seconds",
                "chorus_jobs", "chorus_jobs_oldest_due_age_seconds", "chorus_job_failures", "chorus_provider_calls", "chorus_provider_call_duration_seconds",
                "chorus_db_connection_wait_seconds", "chorus_open_connections", "chorus_feature_spend_usd", "chorus_feature_budget_usd",
            ] {
                #expect(names.contains(expected), "\(expected) in /metrics")
            }

            // HTTP: route templates, never raw paths.
            #expect((Self.value(families, "chorus_http_requests_total", ["route": "/auth/register", "method": "POST", "status": "200"]) ?? 0) >= 1)
            #expect(Self.value(families, "chorus_http_requests_total", ["route": "/mobile/calls/:call_sid", "method": "GET", "status": "404"]) == 1)
            #expect(Self.value(families, "chorus_http_requests_total", ["route": "unmatched", "method": "GET", "status": "404"]) == 1)
            #expect(Self.value(families, "chorus_http_requests_total", ["route": "/metrics", "status": "401"]) == 2)
            let routes = Set(Self.samples(families, "chorus_http_requests_total").compactMap { $0.labels["route"] })
            let templates = Set(server.app.routes.all.map { "/" + $0.path.map(\.description).joined(separator: "/") })
            #expect(routes.subtracting(templates) == ["unmatched"], "route labels are templates: \(routes.subtracting(templates))")
            #expect(!routes.contains { $0.contains("CA-no-such-call") || $0.contains("12345") })
            Self.checkHistogram(families, "chorus_http_request_duration_seconds", bounds: ChorusMetrics.httpBuckets.count)

            // Calls: the one that ended, none in progress.
            #expect(Self.value(families, "chorus_calls_ended_total", ["status": "completed"]) == 1)
            let endedReasons = Self.samples(families, "chorus_calls_ended_total", ["status": "completed"]).filter { $0.value > 0 }.compactMap { $0.labels["ended_reason"] }
            #expect(endedReasons == ["callee_hangup"] || endedReasons == ["completed"], "counted once, with the reason known then: \(endedReasons)")
            #expect(Self.value(families, "chorus_calls_in_progress") == 0)
            #expect(Self.value(families, "chorus_open_connections", ["kind": "media_stream"]) == 0)
            #expect(Self.value(families, "chorus_open_connections", ["kind": "websocket"]) == 0)
            #expect(Self.value(families, "chorus_open_connections", ["kind": "event_stream"]) == 0)

            // The bridge's figures: both relay directions, the answer → first audio of the one call.
            let relay = Self.checkHistogram(families, "chorus_bridge_relay_latency_seconds", bounds: ChorusMetrics.relayBuckets.count)
            #expect((relay[["direction": "to_realtime"]] ?? 0) > 0 && (relay[["direction": "to_twilio"]] ?? 0) > 0, "relayed frames: \(relay)")
            Self.checkHistogram(families, "chorus_bridge_barge_in_latency_seconds", bounds: ChorusMetrics.bargeInBuckets.count)
            let firstAudio = Self.checkHistogram(families, "chorus_call_first_audio_seconds", bounds: ChorusMetrics.firstAudioBuckets.count)
            #expect(firstAudio[[:]] == 1)
            let snapshot = server.app.chorus.bridges.metrics.snapshot()
            #expect(relay[["direction": "to_realtime"]] == Double(snapshot.relayToRealtime.count))

            // Providers: the same exchanges as the console's provider health.
            #expect(!health.isEmpty)
            #expect(health.map { [$0.provider, $0.operation, String($0.calls)] } == healthBefore, "no provider exchange during the scrape")
            for figures in health {
                let labels = ["provider": figures.provider, "operation": figures.operation]
                #expect(
                    Self.value(families, "chorus_provider_calls_total", labels) == Double(figures.calls),
                    "\(figures.provider) \(figures.operation): the console counts \(figures.calls)")
                #expect(Self.value(families, "chorus_provider_calls_total", labels.merging(["outcome": "ok"]) { $1 }) == Double(figures.calls - figures.failures))
            }
            #expect((Self.value(families, "chorus_provider_calls_total", ["provider": "twilio", "outcome": "ok"]) ?? 0) >= 1)
            Self.checkHistogram(families, "chorus_provider_call_duration_seconds", bounds: ChorusMetrics.providerBuckets.count)

            // Jobs: the failure by kind ("unknown": a kind without a handler), and the queue's gauges.
            #expect(Self.value(families, "chorus_job_failures_total", ["kind": "unknown", "final": "true"]) == 1)
            #expect(Self.samples(families, "chorus_jobs").allSatisfy { ["due", "scheduled", "running"].contains($0.labels["state"] ?? "") })
            #expect(Self.samples(families, "chorus_jobs").allSatisfy { $0.value >= 0 })

            // Database: write transactions waited for their connection (and SQLite's reads for theirs).
            let waits = Self.checkHistogram(families, "chorus_db_connection_wait_seconds", bounds: ChorusMetrics.databaseWaitBuckets.count)
            #expect((waits[["pool": "write_transaction"]] ?? 0) > 0)
            if database == .sqlite { #expect((waits[["pool": "sqlite_read"]] ?? 0) > 0) }

            // Spend per feature against the configured budgets.
            for feature in MeteredFeature.allCases {
                for period in ["day", "month"] {
                    #expect(Self.value(families, "chorus_feature_spend_usd", ["feature": feature.rawValue, "period": period]).map { $0 >= 0 } == true)
                }
            }
            // The call's realtime audio and phone minutes were metered against the Calls budget.
            #expect((Self.value(families, "chorus_feature_spend_usd", ["feature": "calls", "period": "day"]) ?? 0) > 0)
            #expect(Self.value(families, "chorus_feature_budget_usd", ["feature": "calls", "period": "day"]) == 250)
            #expect(Self.value(families, "chorus_feature_budget_usd", ["feature": "calls", "period": "month"]) == 5_000)
            #expect(Self.value(families, "chorus_feature_budget_usd", ["feature": "voice_messages", "period": "day"]) == 12.5)
            #expect(Self.value(families, "chorus_feature_budget_usd", ["feature": "stories", "period": "month"]) == 300)
            #expect(Self.value(families, "chorus_feature_budget_usd", ["feature": "voice_messages", "period": "month"]) == 1_000)
            #expect(Self.value(families, "chorus_feature_budget_usd", ["feature": "stories", "period": "day"]) == nil, "no limit: no series")

            // No label carries an account: no user id, e-mail or phone number anywhere.
            let labelValues = families.flatMap(\.samples).flatMap(\.labels.values)
            #expect(!labelValues.contains { $0.contains("@") || $0.contains(number) || $0.contains(placed.callSid) })
        }
    }

    @Test("the bridges' histograms in the text format: cumulative buckets at their bounds, exact sum and count")
    func bridgeHistograms() async throws {
        var snapshot = BridgeMetrics.Snapshot()
        for microseconds: UInt64 in [50, 240, 300, 900, 2_000, 40_000, 2_000_000] { snapshot.relayToRealtime.record(microseconds: microseconds) }
        snapshot.answerToFirstAudio.record(microseconds: 620_000)
        #expect(snapshot.relayToRealtime.sumMicroseconds == 2_043_490)
        #expect(snapshot.relayToRealtime.count(atMost: 250) == 2)
        #expect(snapshot.relayToRealtime.count(atMost: 0) == 0)
        #expect(snapshot.relayToRealtime.count(atMost: .max) == 7)
        let families = try await Self.parse(ChorusMetrics.bridgeHistograms(snapshot))
        #expect(families.map(\.name) == ["chorus_bridge_relay_latency_seconds", "chorus_bridge_barge_in_latency_seconds", "chorus_call_first_audio_seconds"])
        let relay = Self.checkHistogram(families, "chorus_bridge_relay_latency_seconds", bounds: ChorusMetrics.relayBuckets.count)
        #expect(relay == [["direction": "to_realtime"]: 7, ["direction": "to_twilio"]: 0])
        func bucket(_ le: String) -> Double? {
            Self.value(families, "chorus_bridge_relay_latency_seconds_bucket", ["direction": "to_realtime", "le": le])
        }
        // 0.1 ms: 50 µs; 0.25 ms: and 240 µs; 0.5 ms: and 300 µs; 1 ms: and 900 µs; 2.5 ms: and 2 ms; 50 ms: and 40 ms.
        #expect([bucket("0.0001"), bucket("0.00025"), bucket("0.0005"), bucket("0.001"), bucket("0.0025"), bucket("0.05"), bucket("0.1")] == [1, 2, 3, 4, 5, 6, 6])
        #expect(bucket("+Inf") == 7)
        #expect(abs((Self.value(families, "chorus_bridge_relay_latency_seconds_sum", ["direction": "to_realtime"]) ?? 0) - 2.04349) < 1e-9)
        #expect(Self.value(families, "chorus_call_first_audio_seconds_bucket", ["le": "0.5"]) == 0)
        #expect(Self.value(families, "chorus_call_first_audio_seconds_bucket", ["le": "0.75"]) == 1)
    }

    @Test("open WebSockets and event streams are counted while open and released when closed", arguments: TestDatabase.all)
    func openConnections(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_METRICS_TOKEN": Self.token]) { server in
            let token = try await server.register().accessToken
            let first = try await RealtimeClient.connect(baseURL: server.baseURL, token: token)
            let second = try await RealtimeClient.connect(baseURL: server.baseURL, token: token)
            // A call that keeps ringing (no callbacks), and its progress as an event stream.
            try await server.setCallee("+14155557092", behavior: "busy", callbacks: false)
            let placed = try await server.makeCall(token, to: "+14155557092").decode(MakeCallResponse.self)
            let stream = EventStreamReader(
                client: server.client, url: server.baseURL + "/mobile/calls/\(placed.callSid)/events", headers: [("Authorization", "Bearer \(token)")])
            try await server.eventually("the stream's snapshot") { stream.received.contains { $0.name == "snapshot" } }

            var families = try await Self.scrape(server)
            #expect(Self.value(families, "chorus_open_connections", ["kind": "websocket"]) == 2)
            #expect(Self.value(families, "chorus_open_connections", ["kind": "event_stream"]) == 1)
            #expect((Self.value(families, "chorus_calls_in_progress") ?? 0) == 1, "the ringing call")

            // Twilio reports the call busy: it ends (counted once, however often the callback comes), its stream with it.
            let callID = try await server.request(.GET, "/mobile/calls/\(placed.callSid)", token: token).decode(CallHistoryItem.self).id
            #expect(try await MoneyRaceTests.callback(server, callID: callID, sid: placed.callSid, status: "busy") == 204)
            #expect(try await MoneyRaceTests.callback(server, callID: callID, sid: placed.callSid, status: "busy") == 204)
            try await server.eventually("the stream ends") { stream.hasEnded }
            await first.close()
            await second.close()
            try await server.eventually("the connections are released") { server.app.chorus.messaging.hub.admittedCount == 0 }
            families = try await Self.scrape(server)
            #expect(Self.value(families, "chorus_open_connections", ["kind": "websocket"]) == 0)
            #expect(Self.value(families, "chorus_open_connections", ["kind": "event_stream"]) == 0)
            #expect(Self.value(families, "chorus_calls_in_progress") == 0)
            #expect(Self.value(families, "chorus_calls_ended_total", ["status": "busy", "ended_reason": "busy"]) == 1)
        }
    }

    @Test("a queued job shows in the queue gauges and its age; a gauge whose jobs are gone drops to 0")
    func jobQueueGauges() async throws {
        var options = ChorusApp.Options.testing()
        options.runsJobs = false
        try await TestServer.run(on: .sqlite, environment: ["CHORUS_METRICS_TOKEN": Self.token], options: options) { server in
            let store = server.app.chorus.store(server.app.db as! any SQLDatabase, on: server.app.eventLoopGroup.any())
            let now = server.app.chorus.now()
            let due = try await store.jobs.enqueueJob(kind: JobKind.purgeTranscript, payload: "1", runAt: now.addingTimeInterval(-90), now: now)
            try await store.jobs.enqueueJob(kind: JobKind.purgeTranscript, payload: "2", runAt: now.addingTimeInterval(3_600), now: now)
            var families = try await Self.scrape(server)
            #expect(Self.value(families, "chorus_jobs", ["kind": "purge_transcript", "state": "due"]) == 1)
            #expect(Self.value(families, "chorus_jobs", ["kind": "purge_transcript", "state": "scheduled"]) == 1)
            #expect(Self.value(families, "chorus_jobs", ["kind": "purge_transcript", "state": "running"]) == 0)
            let age = Self.value(families, "chorus_jobs_oldest_due_age_seconds", ["kind": "purge_transcript"]) ?? 0
            #expect(age >= 89 && age < 600, "oldest due age \(age)")

            // Every kind shows, 0 when it has no jobs; the list is the handlers' kinds.
            #expect(Set(JobKind.all) == Set(ChorusApp.jobHandlers(server.app.chorus).keys))
            for kind in JobKind.all where kind != JobKind.purgeTranscript {
                #expect(Self.value(families, "chorus_jobs", ["kind": kind]) == 0, "\(kind)")
                #expect(Self.value(families, "chorus_jobs_oldest_due_age_seconds", ["kind": kind]) == 0, "\(kind)")
            }

            try await store.jobs.cancelJob(id: due, now: now)
            families = try await Self.scrape(server)
            #expect(Self.value(families, "chorus_jobs", ["kind": "purge_transcript", "state": "due"]) == 0)
            #expect(Self.value(families, "chorus_jobs_oldest_due_age_seconds", ["kind": "purge_transcript"]) == 0)
        }
    }
}
