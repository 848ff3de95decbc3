import AsyncHTTPClient
import ChorusCore
import ChorusSandbox
import ChorusTestSupport
import Foundation
import NIOCore
import Testing
import Vapor

@testable import ChorusServer

/// Issue 22: the model lifecycle check against the OpenAI emulator's `GET /v1/models` — warnings on the console and in
/// `/metrics` 60 days ahead, development keeps running with a shut-down model, production refuses to start (exit 78),
/// the periodic re-check, and `/metrics`' 401/404/200.
@Suite("Model lifecycle check")
struct ModelLifecycleCheckTests {
    static let metricsToken = "scrape-token-0123456789abcdef"

    /// One sample of the Prometheus text format.
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// Parses the Prometheus text exposition format (0.0.4) strictly: `# HELP`/`# TYPE` lines, then
    /// `name{label="value",…} value` samples with escaped label values. Any other line fails the test.
    static func parseExposition(_ text: String) -> [Sample] {
        var samples: [Sample] = []
        var typed: [String: String] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) {
            if line.hasPrefix("# HELP ") {
                #expect(line.split(separator: " ", maxSplits: 3).count == 4, "HELP line: \(line)")
                continue
            }
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                #expect(parts.count == 4 && ["gauge", "counter", "histogram", "summary", "untyped"].contains(String(parts[3])), "TYPE line: \(line)")
                if parts.count == 4 { typed[String(parts[2])] = String(parts[3]) }
                continue
            }
            guard let match = line.wholeMatch(of: /([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ([^ ]+)/) else {
                Issue.record("not a sample line: \(line)")
                continue
            }
            let name = String(match.1)
            // A histogram's samples are its name with `_bucket`, `_sum` or `_count`.
            let family = ["_bucket", "_sum", "_count"].filter { name.hasSuffix($0) }.map { String(name.dropLast($0.count)) }
                .first { typed[$0] == "histogram" } ?? name
            #expect(typed[family] != nil, "sample before its TYPE: \(line)")
            var labels: [String: String] = [:]
            if let body = match.2 {
                var rest = Substring(body)
                while !rest.isEmpty {
                    guard let label = rest.prefixMatch(of: /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/) else {
                        Issue.record("bad labels: \(line)")
                        break
                    }
                    labels[String(label.1)] = String(label.2).replacingOccurrences(of: #"\""#, with: "\"")
                        .replacingOccurrences(of: #"\n"#, with: "\n").replacingOccurrences(of: #"\\"#, with: "\\")
                    rest = rest[label.range.upperBound...]
                }
            }
            guard let value = Double(String(match.3)) else {
                Issue.record("bad value: \(line)")
                continue
            }
            samples.append(Sample(name: name, labels: labels, value: value))
        }
        return samples
    }

    static func scrape(_ server: TestServer) async throws -> [Sample] {
        let reply = try await server.request(.GET, "/metrics", headers: [("Authorization", "Bearer \(metricsToken)")])
        #expect(reply.status == 200)
        #expect(reply.headers.first(name: "Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        return parseExposition(reply.text)
    }

    static func value(_ samples: [Sample], _ name: String, model: ConfiguredModel) -> Double? {
        samples.first { $0.name == name && $0.labels == ["model": model.model, "setting": model.setting] }?.value
    }

    static func day(_ date: Date, plus days: Int) -> String { CalendarDay(utc: date.addingTimeInterval(TimeInterval(days) * 86_400)).description }

    static func consolePage(_ server: TestServer) async throws -> String {
        let (browser, cookies, _) = try await ConsoleTests.operatorSession(server)
        defer { Task { await browser.shutdown() } }
        return try await browser.send(.GET, "/console", cookies: cookies).text
    }

    @Test("development: a configured model 30 days from shutdown warns on the console and in /metrics; the re-check follows the date and the clock")
    func warningAheadAndRecheck() async throws {
        let clock = TestClock()
        let environment = ["CHORUS_METRICS_TOKEN": Self.metricsToken, "CHORUS_MODEL_CHECK_INTERVAL_SECONDS": "1"]
        try await TestServer.run(on: .sqlite, environment: environment, options: .testing(clock: clock.closure)) { server in
            // The image model, whatever the configuration says it is, is moved to 30 days ahead.
            let image = try #require(server.configuration.openAIModels.first { $0.setting == "CHORUS_STORIES_IMAGE_MODEL" })
            let date = Self.day(clock.now, plus: 30)
            let put = try await server.request(.PUT, "/sandbox/openai/behavior", body: Data(#"{"shutdown_dates":{"\#(image.model)":"\#(date)"}}"#.utf8))
            #expect(put.status == 200, "\(put.text)")
            try await server.eventually("the gauge says 30 days") {
                Self.value(try await Self.scrape(server), "chorus_openai_model_days_until_shutdown", model: image) == 30
            }
            let samples = try await Self.scrape(server)
            #expect(Self.value(samples, "chorus_openai_model_shut_down", model: image) == 0)
            let checked = try #require(samples.first { $0.name == "chorus_openai_model_check_timestamp_seconds" }?.value)
            #expect(abs(checked - clock.now.timeIntervalSince1970) < 30)
            #expect(samples.first { $0.name == "chorus_openai_model_check_failed" }?.value == 0)
            // Only configured models carry labels, and only dated ones a days gauge.
            let configured = Set(server.configuration.openAIModels.map(\.model))
            #expect(samples.filter { $0.name.hasPrefix("chorus_openai_model_") }.allSatisfy { $0.labels["model"].map(configured.contains) ?? true })
            #expect(samples.filter { $0.name == "chorus_openai_model_shut_down" }.count == server.configuration.openAIModels.count)

            let page = try await Self.consolePage(server)
            #expect(page.contains("Model lifecycle"))
            #expect(page.contains("\(image.model) (CHORUS_STORIES_IMAGE_MODEL, stories) shuts down on \(date), in 30 days"), "\(page)")

            // The next run reads the list again: the date moved closer…
            let closer = Self.day(clock.now, plus: 10)
            _ = try await server.request(.PUT, "/sandbox/openai/behavior", body: Data(#"{"shutdown_dates":{"\#(image.model)":"\#(closer)"}}"#.utf8))
            try await server.eventually("the gauge says 10 days") {
                Self.value(try await Self.scrape(server), "chorus_openai_model_days_until_shutdown", model: image) == 10
            }
            // …and the days pass on the app clock.
            clock.advance(days: 4)
            try await server.eventually("the gauge says 6 days") {
                Self.value(try await Self.scrape(server), "chorus_openai_model_days_until_shutdown", model: image) == 6
            }
            // A date withdrawn takes its series away.
            _ = try await server.request(.PUT, "/sandbox/openai/behavior", body: Data(#"{"shutdown_dates":{}}"#.utf8))
            try await server.eventually("the days gauge is gone") {
                Self.value(try await Self.scrape(server), "chorus_openai_model_days_until_shutdown", model: image) == nil
            }
        }
    }

    @Test("development: a model shut down yesterday and one not offered are warned about; the server keeps serving")
    func developmentWarnsAndRuns() async throws {
        let environment = [
            "CHORUS_METRICS_TOKEN": Self.metricsToken, "CHORUS_MODEL_CHECK_INTERVAL_SECONDS": "1",
            "CHORUS_STORIES_MODERATION_MODEL": "omni-moderation-withdrawn-test",
        ]
        try await TestServer.run(on: .sqlite, environment: environment) { server in
            let summary = try #require(server.configuration.openAIModels.first { $0.setting == "CHORUS_VOICE_SUMMARY_MODEL" })
            let moderation = try #require(server.configuration.openAIModels.first { $0.setting == "CHORUS_STORIES_MODERATION_MODEL" })
            let yesterday = Self.day(Date(), plus: -1)
            _ = try await server.request(.PUT, "/sandbox/openai/behavior", body: Data(#"{"shutdown_dates":{"\#(summary.model)":"\#(yesterday)"}}"#.utf8))
            try await server.eventually("the summary model counts as shut down") {
                Self.value(try await Self.scrape(server), "chorus_openai_model_shut_down", model: summary) == 1
            }
            let samples = try await Self.scrape(server)
            #expect(Self.value(samples, "chorus_openai_model_days_until_shutdown", model: summary) == -1)
            #expect(Self.value(samples, "chorus_openai_model_shut_down", model: moderation) == 1)
            #expect(Self.value(samples, "chorus_openai_model_days_until_shutdown", model: moderation) == nil)
            let page = try await Self.consolePage(server)
            #expect(page.contains("\(summary.model) (CHORUS_VOICE_SUMMARY_MODEL, voice messages) was shut down on \(yesterday)"))
            #expect(page.contains("omni-moderation-withdrawn-test (CHORUS_STORIES_MODERATION_MODEL, stories) is not offered by the provider"))
            #expect(try await server.request(.GET, "/health").status == 200)
            _ = try await server.register()
        }
    }

    @Test("a model list that cannot be read warns and keeps the server up; the console says the check failed")
    func failedCheck() async throws {
        let environment = ["CHORUS_METRICS_TOKEN": Self.metricsToken, "CHORUS_MODEL_CHECK_INTERVAL_SECONDS": "1"]
        try await TestServer.run(on: .sqlite, environment: environment) { server in
            _ = try await server.request(.PUT, "/sandbox/openai/behavior", body: Data(#"{"fail_next":1000,"status":503,"endpoint":"models"}"#.utf8))
            try await server.eventually("the failure gauge") {
                try await Self.scrape(server).first { $0.name == "chorus_openai_model_check_failed" }?.value == 1
            }
            #expect(try await Self.consolePage(server).contains("could not read the model list"))
            _ = try await server.request(.DELETE, "/sandbox/openai/behavior")
            try await server.eventually("the check succeeds again") {
                try await Self.scrape(server).first { $0.name == "chorus_openai_model_check_failed" }?.value == 0
            }
        }
    }

    @Test("/metrics: 404 without a configured token, 401 without or with another bearer token, 200 with it")
    func metricsAccess() async throws {
        try await TestServer.run(on: .sqlite) { server in
            let reply = try await server.request(.GET, "/metrics", headers: [("Authorization", "Bearer \(Self.metricsToken)")])
            #expect(reply.status == 404 && reply.detail == "Not Found")
        }
        try await TestServer.run(on: .sqlite, environment: ["CHORUS_METRICS_TOKEN": Self.metricsToken]) { server in
            #expect(try await server.request(.GET, "/metrics").status == 401)
            let api = try await server.register().accessToken
            let wrong = try await server.request(.GET, "/metrics", token: api)
            #expect(wrong.status == 401 && wrong.headers.first(name: "WWW-Authenticate")?.hasPrefix("Bearer") == true)
            #expect(try await server.request(.GET, "/metrics", headers: [("Authorization", "Basic \(Self.metricsToken)")]).status == 401)
            #expect(try await server.request(.GET, "/metrics", token: Self.metricsToken + "x").status == 401)
            #expect(try await server.request(.GET, "/metrics", token: Self.metricsToken).status == 200)
        }
        #expect(throws: ConfigurationError.self) { try ChorusConfiguration.load(from: ["CHORUS_METRICS_TOKEN": "short"]) }
        #expect(throws: ConfigurationError.self) { try ChorusConfiguration.load(from: ["CHORUS_MODEL_CHECK_INTERVAL_SECONDS": "0"]) }
    }

    /// A standalone OpenAI emulator on loopback (`/v1/...`), as a production server would reach OpenAI.
    final class StandaloneOpenAI: Sendable {
        let app: Application
        let port: Int

        static func start(apiKey: String, shutdownDates: [String: String]) async throws -> StandaloneOpenAI {
            let app = try await Application.make(.testing)
            app.logger.logLevel = .warning
            SandboxOpenAI(apiKey: apiKey, behavior: SandboxOpenAI.Behavior(shutdownDates: shutdownDates)).register(on: app.grouped("v1"))
            do {
                try await app.asyncBoot()
                try await app.server.start(address: .hostname("127.0.0.1", port: 0))
            } catch {
                try? await app.asyncShutdown()
                throw error
            }
            guard let port = app.http.server.shared.localAddress?.port else { throw TestSetupError(message: "no port") }
            return StandaloneOpenAI(app: app, port: port)
        }

        private init(app: Application, port: Int) {
            self.app = app
            self.port = port
        }

        func stop() async {
            await app.server.shutdown()
            try? await app.asyncShutdown()
        }
    }

    static func productionEnvironment(openAIPort: Int, directory: URL) -> [String: String] {
        [
            "CHORUS_ENVIRONMENT": "production", "CHORUS_HOSTNAME": "127.0.0.1", "CHORUS_PORT": "0",
            "CHORUS_JWT_SECRET": "production-secret-production-secret-0123456789",
            "CHORUS_NUMBER_HASH_SECRET": "production-number-hash-secret-production-0123", "CHORUS_PUBLIC_URL": "https://chorus.example.com",
            "CHORUS_TWILIO_ACCOUNT_SID": "AC" + String(repeating: "0", count: 32), "CHORUS_TWILIO_AUTH_TOKEN": "twilio-token",
            "CHORUS_TWILIO_FROM_NUMBER": "+15005550006", "CHORUS_OPENAI_API_KEY": "sk-test-lifecycle",
            "CHORUS_OPENAI_BASE_URL": "http://127.0.0.1:\(openAIPort)/v1", "CHORUS_ELEVENLABS_API_KEY": "eleven-test",
            "CHORUS_APPLE_APP_ID": "1234567890", "CHORUS_APPLE_SHARED_SECRET": "shared-secret",
            "CHORUS_DATABASE_URL": directory.appendingPathComponent("chorus.sqlite").path,
            "CHORUS_DATA_DIR": directory.appendingPathComponent("data").path,
        ]
    }

    @Test("production: chorus serve refuses to start with a model that shut down yesterday, exit 78 naming the model and its setting")
    func productionRefusal() async throws {
        let directory = try CLITests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let base = Self.productionEnvironment(openAIPort: 1, directory: directory)
        let configuration = try ChorusConfiguration.load(from: base)
        #expect(configuration.startupProblems().isEmpty, "\(configuration.startupProblems())")
        let realtime = try #require(configuration.openAIModels.first { $0.setting == "CHORUS_OPENAI_REALTIME_MODEL" })
        let yesterday = Self.day(Date(), plus: -1)
        let openAI = try await StandaloneOpenAI.start(apiKey: "sk-test-lifecycle", shutdownDates: [realtime.model: yesterday])
        let result: CLITests.SplitRun
        do {
            let environment = Self.productionEnvironment(openAIPort: openAI.port, directory: directory)
            // The child process blocks a thread until it exits: not one of the cooperative pool's, which serves the emulator.
            result = try await withCheckedThrowingContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(with: Result { try CLITests.runSplit(["serve"], environment: environment, in: directory) })
                }
            }
        } catch {
            await openAI.stop()
            throw error
        }
        await openAI.stop()
        #expect(result.status == 78, "\(result.stderr)")
        #expect(
            result.stderr.contains("chorus: \(realtime.model) (CHORUS_OPENAI_REALTIME_MODEL, calls) was shut down on \(yesterday)"),
            "\(result.stderr)")
        #expect(result.stderr.contains("set CHORUS_OPENAI_REALTIME_MODEL to a model the provider offers"))
    }

    @Test("production: the same server starts when its models are offered, and when the model list cannot be read")
    func productionStarts() async throws {
        let directory = try CLITests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let openAI = try await StandaloneOpenAI.start(apiKey: "sk-test-lifecycle", shutdownDates: [:])
        do {
            var environment = Self.productionEnvironment(openAIPort: openAI.port, directory: directory)
            environment["CHORUS_METRICS_TOKEN"] = Self.metricsToken
            environment.removeValue(forKey: "CHORUS_PORT")
            let server = try await LoopbackServer.start(environment: environment, options: .testing())
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            var request = HTTPClientRequest(url: server.baseURL.absoluteString + "/metrics")
            request.headers.add(name: "Authorization", value: "Bearer \(Self.metricsToken)")
            let response = try await client.execute(request, timeout: .seconds(10))
            let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
            try? await client.shutdown()
            await server.stop()
            let samples = Self.parseExposition(text)
            #expect(samples.contains { $0.name == "chorus_openai_model_check_failed" && $0.value == 0 })
            #expect(samples.filter { $0.name == "chorus_openai_model_shut_down" }.allSatisfy { $0.value == 0 }, "\(text)")
        } catch {
            await openAI.stop()
            throw error
        }
        await openAI.stop()
        // Nothing answers on this port: the check warns and the server starts anyway.
        var unreachable = Self.productionEnvironment(openAIPort: openAI.port, directory: directory)
        unreachable.removeValue(forKey: "CHORUS_PORT")
        let server = try await LoopbackServer.start(environment: unreachable, options: .testing())
        await server.stop()
    }
}
