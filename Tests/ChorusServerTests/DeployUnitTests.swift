import AsyncHTTPClient
import ChorusAPI
import ChorusCore
import Foundation
import NIOCore
import Testing

@testable import ChorusServer

/// The deploy units of `deploy/` against the server they deploy (issue 18): the environment template names every
/// production setting and is a configuration that starts, the unit's stop timeout outlasts the drain, and nginx's body
/// limits are Chorus's. `scripts/deploy-check` checks the files with `systemd-analyze` and `nginx`.
@Suite("Deploy units")
struct DeployUnitTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized

    static func text(_ path: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
    }

    /// Settings that production ignores or refuses: the sandbox's, the development server's network switch, and test
    /// roots for the App Store (refused in production). Everything else in ``ChorusConfiguration/documentedKeys`` is a
    /// production setting and belongs in the template.
    static let developmentOnlyKeys: Set<String> = [
        "CHORUS_SANDBOX_RING_SECONDS", "CHORUS_SANDBOX_TALK_SECONDS", "CHORUS_SANDBOX_REQUEST_LOG_ENTRIES",
        "CHORUS_SANDBOX_REQUEST_LOG_BYTES", "CHORUS_SANDBOX_KEPT_CALLS", "CHORUS_SANDBOX_KEPT_AUDIO_BYTES", "CHORUS_SANDBOX_SPEECH",
        "CHORUS_DEVELOPMENT_ON_NETWORK", "CHORUS_APPLE_EXTRA_ROOTS",
    ]

    /// One `KEY=value` line of the template, set or shown commented out (`#KEY=default`).
    struct Line: Equatable {
        var key: String
        var value: String
        var commented: Bool
    }

    /// The template's settings, read as systemd reads an environment file (one surrounding pair of quotes removed).
    static func template() throws -> [Line] {
        try text("deploy/chorus.env.example").split(separator: "\n", omittingEmptySubsequences: false).compactMap { raw in
            let commented = raw.hasPrefix("#CHORUS_")
            let line = commented ? raw.dropFirst() : raw[...]
            guard line.hasPrefix("CHORUS_"), let equals = line.firstIndex(of: "=") else { return nil }
            var value = String(line[line.index(after: equals)...])
            if value.count >= 2, let first = value.first, first == "'" || first == "\"", value.last == first {
                value = String(value.dropFirst().dropLast())
            }
            return Line(key: String(line[..<equals]), value: value, commented: commented)
        }
    }

    /// What an operator fills in: every required secret and account, blank in the template.
    static let filledIn: [String: String] = [
        "CHORUS_JWT_SECRET": String(repeating: "j", count: 48), "CHORUS_NUMBER_HASH_SECRET": String(repeating: "n", count: 48),
        "CHORUS_TWILIO_ACCOUNT_SID": "AC" + String(repeating: "0", count: 32), "CHORUS_TWILIO_AUTH_TOKEN": "twilio-token",
        "CHORUS_TWILIO_FROM_NUMBER": "+14155550100", "CHORUS_OPENAI_API_KEY": "sk-test", "CHORUS_ELEVENLABS_API_KEY": "xi-test",
        "CHORUS_APPLE_APP_ID": "1234567890", "CHORUS_APPLE_SHARED_SECRET": "apple-shared-secret",
    ]

    @Test("the environment template names every production setting once, and nothing the server does not read")
    func templateNamesEverySetting() throws {
        let keys = try Self.template().map(\.key)
        let documented = Set(ChorusConfiguration.documentedKeys)
        let production = documented.subtracting(Self.developmentOnlyKeys)
        #expect(production.subtracting(keys).sorted() == [], "missing from deploy/chorus.env.example")
        #expect(Set(keys).subtracting(documented).sorted() == [], "in deploy/chorus.env.example but not a setting")
        #expect(Set(keys).intersection(Self.developmentOnlyKeys).sorted() == [], "development-only settings in the template")
        #expect(Self.developmentOnlyKeys.subtracting(documented).sorted() == [], "stale development-only keys")
        #expect(keys.count == Set(keys).count, "a setting appears twice")
    }

    @Test("the template refuses to start until its secrets are filled in, then is a production configuration that starts")
    func templateStarts() throws {
        let lines = try Self.template()
        let cwd = URL(fileURLWithPath: "/var/lib/chorus")
        let asShipped = Dictionary(lines.filter { !$0.commented }.map { ($0.key, $0.value) }) { $1 }
        let blank = try ChorusConfiguration.load(from: asShipped, workingDirectory: cwd)
        let problems = blank.startupProblems()
        #expect(blank.isProduction)
        for key in ["CHORUS_JWT_SECRET", "CHORUS_NUMBER_HASH_SECRET", "CHORUS_OPENAI_API_KEY", "CHORUS_APPLE_APP_ID"] {
            #expect(problems.contains { $0.contains(key) }, "no refusal naming \(key): \(problems)")
        }
        // Every secret the template leaves blank is one the operator must fill in, and nothing else is.
        let blanks = Set(lines.filter { !$0.commented && $0.value.isEmpty }.map(\.key))
        let optionalBlanks: Set = [
            "CHORUS_DATABASE_URL", "CHORUS_METRICS_TOKEN", "CHORUS_S3_ENDPOINT", "CHORUS_S3_BUCKET", "CHORUS_S3_ACCESS_KEY_ID",
            "CHORUS_S3_SECRET_ACCESS_KEY",
        ]
        #expect(blanks.subtracting(optionalBlanks) == Set(Self.filledIn.keys))

        let filled = asShipped.merging(Self.filledIn) { $1 }
        let configuration = try ChorusConfiguration.load(from: filled, workingDirectory: cwd)
        #expect(configuration.startupProblems() == [])
        #expect(configuration.hostname == "127.0.0.1" && configuration.port == 5050)
        #expect(configuration.publicURL.scheme == "https")
        #expect(configuration.dataDirectory.path == "/var/lib/chorus")
        #expect(configuration.database == .sqlite(path: "/var/lib/chorus/chorus.sqlite"))
        // Behind nginx every peer is 127.0.0.1: the template trusts it, so the per-address limits keep their production
        // defaults and count the client X-Forwarded-For names.
        #expect(configuration.trustedProxies == TrustedProxies(list: "127.0.0.1,::1"))
        #expect(configuration.trustedProxies.clientAddress(peer: "127.0.0.1", forwardedFor: ["198.51.100.7"]) == "198.51.100.7")
        #expect(configuration.rateLimits == ChorusConfiguration.RateLimits.standard)
        #expect(configuration.admission.signupsPerAddress == 5 && configuration.admission.signupsPerNetwork == 50)

        // The commented-out lines show the defaults: uncommented, they change nothing.
        let shown = Dictionary(lines.map { ($0.key, $0.value) }) { $1 }.merging(Self.filledIn) { $1 }
        let withDefaultsShown = try ChorusConfiguration.load(from: shown, workingDirectory: cwd)
        #expect(String(describing: withDefaultsShown) == String(describing: configuration))
    }

    /// `TimeoutStopSec=` of the unit, in seconds.
    static func unitSetting(_ name: String) throws -> String {
        let unit = try text("deploy/chorus.service")
        let line = try #require(unit.split(separator: "\n").first { $0.hasPrefix("\(name)=") }, "\(name)= in deploy/chorus.service")
        return String(line.dropFirst(name.count + 1))
    }

    /// `client_max_body_size` values of the nginx site, in bytes, in the order they appear (the server's, then
    /// `location = /audio`'s).
    static func nginxBodyLimits() throws -> [Int] {
        try text("deploy/nginx/chorus.conf").split(separator: "\n").compactMap { line -> Int? in
            let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
            guard words.count == 2, words[0] == "client_max_body_size" else { return nil }
            let size = words[1].dropLast()  // the ';'
            let units: [Character: Int] = ["k": 1 << 10, "m": 1 << 20, "g": 1 << 30]
            guard let unit = size.last.flatMap({ units[Character($0.lowercased())] }) else { return Int(size) }
            return Int(size.dropLast()).map { $0 * unit }
        }
    }

    @Test("the unit's stop timeout outlasts the longest drain, and nginx's body limits are Chorus's defaults")
    func unitAndSiteMatchTheServer() throws {
        let configuration = try ChorusConfiguration.load(from: ["CHORUS_ENVIRONMENT": "production"].merging(Self.filledIn) { $1 })
        // The drain waits at most the longest call limit, the ring timeout and a margin (30 s each); 30 s to close.
        let plans = configuration.plans
        let longestCall = max(
            plans.trial.durationLimitSeconds, plans.basic.durationLimitSeconds, plans.premium.durationLimitSeconds,
            plans.addon.durationLimitWithoutPlanSeconds)
        let stopTimeout = try #require(Int(try Self.unitSetting("TimeoutStopSec")))
        #expect(stopTimeout >= longestCall + 30 + 30 + 30, "TimeoutStopSec=\(stopTimeout), longest call \(longestCall) s")
        #expect(try Self.unitSetting("LimitNOFILE").split(separator: ":").allSatisfy { Int($0).map { $0 > 10_000 } ?? false })

        let limits = try Self.nginxBodyLimits()
        #expect(limits == [configuration.maxBodySize, configuration.voiceMessages.maxUploadBytes])
    }

    @Test("a body of exactly CHORUS_MAX_BODY_BYTES is accepted, one byte more is refused with 413", arguments: TestDatabase.all)
    func bodyLimitIsInclusive(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_MAX_BODY_BYTES": "2048"]) { server in
            let form = "username=nobody%40example.com&password=wrong-password&pad="
            /// The status of a sign-in whose form body is `bytes` long, sent with `Content-Length` or chunked.
            func login(bytes: Int, chunked: Bool) async throws -> Int {
                let body = ByteBuffer(string: form + String(repeating: "a", count: bytes - form.utf8.count))
                var request = HTTPClientRequest(url: server.baseURL + "/auth/login")
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                // A stream of unknown length goes out chunked (no Content-Length for the server to check first).
                request.body = chunked ? .stream(AsyncStream { $0.yield(body); $0.finish() }, length: .unknown) : .bytes(body)
                let response = try await server.client.execute(request, timeout: .seconds(30))
                _ = try await response.body.collect(upTo: 1 << 20)
                return Int(response.status.code)
            }
            for chunked in [false, true] {
                // Exactly the limit reaches the sign-in itself (unknown account: 401); one byte more is refused.
                let exact = try await login(bytes: 2048, chunked: chunked)
                #expect(exact == 401, "2048 bytes, chunked: \(chunked)")
                let over = try await login(bytes: 2049, chunked: chunked)
                #expect(over == 413, "2049 bytes, chunked: \(chunked)")
            }
        }
    }
}
