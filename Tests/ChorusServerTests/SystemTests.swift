import ChorusAPI
import Foundation
import Testing
import Vapor

@testable import ChorusServer

@Suite("System")
struct SystemTests {
    @Test("health, request ids, security headers, error bodies, body limits", arguments: TestDatabase.all)
    func conventions(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let health = try await server.request(.GET, "/health")
            #expect(health.status == 200)
            let body = try health.decode(HealthResponse.self)
            #expect(body.status == "ok" && body.database == "\(database.rawValue):ok" && body.providers["telephony"] == "sandbox")
            let id = try #require(health.headers.first(name: "X-Request-ID"))
            #expect(!id.isEmpty)
            #expect(health.headers.first(name: "X-Content-Type-Options") == "nosniff")
            #expect(health.headers.first(name: "X-Frame-Options") == "DENY")
            let echoed = try await server.request(.GET, "/health", headers: [("X-Request-ID", "client-abc-123")])
            #expect(echoed.headers.first(name: "X-Request-ID") == "client-abc-123")
            let hostile = try await server.request(.GET, "/health", headers: [("X-Request-ID", "bad id\" with spaces")])
            #expect(hostile.headers.first(name: "X-Request-ID") != "bad id\" with spaces")

            let missing = try await server.request(.GET, "/nope")
            #expect(missing.status == 404)
            #expect(missing.detail == "Not Found")
            #expect(missing.headers.first(name: "X-Request-ID") != nil)
            let wrongMethod = try await server.request(.DELETE, "/mobile/usage-stats")
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.headers.first(name: "Allow") == "GET")
            #expect(wrongMethod.detail == "Method Not Allowed")
            // A literal path segment wins over a parameter, as in the contract: /stories/voices is GET only, even though
            // DELETE /stories/{story_id} exists (found by the contract test, scripts/contract-test).
            for (path, allowed) in [("/stories/voices", "GET"), ("/messages/search", "GET"), ("/stories/custom-events/assist", "POST")] {
                let options = try await server.request(.OPTIONS, path)
                #expect(options.status == 405, "\(path)")
                #expect(options.headers.first(name: "Allow") == allowed, "\(path)")
            }
            // ...and a method of the parameter's route does not reach it there: PATCH /messages/search is not a message.
            let searchToken = try await server.register().accessToken
            for (method, path, allowed) in [(HTTPMethod.PATCH, "/messages/search", "GET"), (.DELETE, "/stories/voices", "GET")] {
                let shadowed = try await server.request(method, path, token: searchToken, json: ["content": "x"])
                #expect(shadowed.status == 405, "\(method) \(path)")
                #expect(shadowed.headers.first(name: "Allow") == allowed, "\(method) \(path)")
                #expect(shadowed.detail == "Method Not Allowed")
            }
            #expect(try await server.request(.GET, "/messages/search?q=hello", token: searchToken).status == 200)
            #expect(try await server.request(.DELETE, "/stories/\(UUID().uuidString.lowercased())", token: searchToken).status == 404)

            let token = try await server.register().accessToken
            let huge = Data(#"{"phone_number":"+14155550100","scenario":""#.utf8) + Data(repeating: 0x61, count: 200_000) + Data(#""}"#.utf8)
            let tooBig = try await server.request(
                .POST, "/mobile/make-call", token: token, body: huge, headers: [("Content-Type", "application/json")])
            #expect(tooBig.status == 413)
            #expect(tooBig.detail != nil)
            #expect(try await server.usage(token).trialCallsUsed == 0)
        }
    }

    @Test("unexpected errors: a generic 500 with the request id, nothing internal")
    func unexpectedError() async throws {
        struct Internal: Error {}
        let app = try await Application.make(.testing)
        let request = Request(application: app, on: app.eventLoopGroup.any())
        request.storage[RequestIDKey.self] = "req-42"
        let response = ChorusErrorMiddleware.response(for: Internal(), request: request)
        #expect(response.status == .internalServerError)
        let body = try #require(response.body.data)
        let decoded = try JSONDecoder().decode(ErrorResponse.self, from: body)
        #expect(decoded == ErrorResponse(detail: "An unexpected error occurred. Please try again later.", requestID: "req-42"))
        #expect(!String(decoding: body, as: UTF8.self).contains("Internal"))
        try await app.asyncShutdown()
    }

    @Test("the OpenAPI contract names exactly the registered routes", arguments: [TestDatabase.sqlite])
    func contractMatchesRoutes(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let reply = try await server.request(.GET, "/openapi.json")
            #expect(reply.status == 200)
            let document = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
            #expect(document["openapi"] as? String == "3.1.0")
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            var documented = Set<String>()
            for (path, operations) in paths {
                for method in operations.keys where ["get", "post", "put", "delete", "patch"].contains(method) {
                    documented.insert("\(method.uppercased()) \(path)")
                }
            }
            let registered = Set(
                server.app.routes.all.map { route in
                    "\(route.method.rawValue) /"
                        + route.path.map { component -> String in
                            switch component {
                            case .constant(let text): text
                            case .parameter(let name): "{\(name)}"
                            case .anything: "*"
                            case .catchall: "**"
                            }
                        }.joined(separator: "/")
                })
            #expect(registered.subtracting(documented).sorted() == [], "routes missing from openapi.json")
            #expect(documented.subtracting(registered).sorted() == [], "openapi.json names routes that do not exist")
        }
    }

    @Test("the playground: served outside production with its sandbox parts, off in production unless opted in, off when turned off")
    func playground() async throws {
        try await TestServer.run(on: .sqlite) { server in
            let page = try await server.request(.GET, "/playground")
            #expect(page.status == 200 && page.headers.first(name: "Content-Type")?.hasPrefix("text/html") == true)
            #expect(page.text.contains(#"src="/assets/playground.js""#) && page.text.contains(#"name="chorus-sandbox" content="true""#))
            #expect(page.headers.first(name: "Content-Security-Policy")?.contains("script-src 'self'") == true)
            let script = try await server.request(.GET, "/assets/playground.js")
            #expect(script.status == 200 && script.text.contains("/mobile/calls/") && script.text.contains("/sandbox/app-store/purchases"))
            // The recorder streams to GET /audio/stream through its AudioWorklet, a same-origin module ('self' allows it).
            #expect(script.text.contains("/audio/stream") && script.text.contains("addModule('/assets/pcm-recorder.js')"))
            let worklet = try await server.request(.GET, "/assets/pcm-recorder.js")
            #expect(worklet.status == 200 && worklet.headers.first(name: "Content-Type")?.hasPrefix("text/javascript") == true)
            #expect(worklet.text.contains("registerProcessor('pcm-recorder'"))
        }
        for environment in [["CHORUS_PLAYGROUND": "false"], ["CHORUS_ENVIRONMENT": "production"]] {
            try await TestServer.run(on: .sqlite, environment: environment) { server in
                let page = try await server.request(.GET, "/playground")
                #expect(page.status == 404, "\(environment)")
            }
        }
        try await TestServer.run(on: .sqlite, environment: ["CHORUS_ENVIRONMENT": "production", "CHORUS_PLAYGROUND": "yes"]) { server in
            let page = try await server.request(.GET, "/playground")
            #expect(page.status == 200 && page.text.contains(#"name="chorus-sandbox" content="false""#))
        }
        #expect(throws: ConfigurationError.self) { try ChorusConfiguration.load(from: ["CHORUS_PLAYGROUND": "maybe"]) }
    }

    @Test("production: development endpoints do not exist", arguments: [TestDatabase.sqlite])
    func productionHidesTestEndpoints(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_ENVIRONMENT": "production"]) { server in
            let token = try await server.register().accessToken
            let call = MakeCallRequest(phoneNumber: "+14155550100", scenario: "default")
            #expect(try await server.request(.POST, "/test/test-call", token: token, json: call).status == 404)
            #expect(
                try await server.request(
                    .POST, "/test/bypass-rate-limit", token: token, json: BypassRateLimitRequest(endpoint: "/mobile/make-call", data: call)
                ).status == 404)
        }
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let call = MakeCallRequest(phoneNumber: "+14155550100", scenario: "default")
            #expect(try await server.request(.POST, "/test/test-call", json: call).status == 401)
            let free = try await server.request(.POST, "/test/test-call", token: token, json: call)
            #expect(free.status == 200)
            #expect(try await server.usage(token).trialCallsUsed == 0)
            let bypass = try await server.request(
                .POST, "/test/bypass-rate-limit", token: token, json: BypassRateLimitRequest(endpoint: "/mobile/make-call", data: call)
            )
            #expect(bypass.status == 200)
            #expect(try await server.usage(token).trialCallsUsed == 1)
        }
    }

    @Test("every configuration key is documented in docs/configuration.md")
    func configurationIsDocumented() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/configuration.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let missing = ChorusConfiguration.documentedKeys.filter { !text.contains("`\($0)`") }
        #expect(missing == [])
    }

    @Test("configuration: defaults, malformed values and production refusals")
    func configuration() throws {
        let cwd = URL(fileURLWithPath: "/srv/chorus")
        let defaults = try ChorusConfiguration.load(from: [:], workingDirectory: cwd)
        #expect(defaults.environment == .development && defaults.port == 5050 && defaults.hostname == "127.0.0.1")
        #expect(defaults.database == .sqlite(path: "/srv/chorus/chorus.sqlite"))
        #expect(defaults.publicURL.absoluteString == "http://127.0.0.1:5050")
        #expect(defaults.dataDirectory.path == "/srv/chorus/data")
        #expect(defaults.usesSandboxTelephony && defaults.startupProblems().isEmpty)
        #expect(defaults.rateLimits == .standard)

        let postgres = try ChorusConfiguration.load(
            from: ["CHORUS_DATABASE_URL": "postgres://u:p@db/chorus", "CHORUS_RATE_LIMITS": "off", "CHORUS_BASIC_CALLS": "7"], workingDirectory: cwd
        )
        #expect(postgres.database == .postgres(url: "postgres://u:p@db/chorus"))
        #expect(postgres.rateLimits == .off && postgres.plans.basic.callsPerCycle == 7)

        #expect(throws: ConfigurationError.self) {
            try ChorusConfiguration.load(from: ["CHORUS_PORT": "eighty", "CHORUS_ENVIRONMENT": "staging"], workingDirectory: cwd)
        }
        do {
            _ = try ChorusConfiguration.load(from: ["CHORUS_PORT": "eighty", "CHORUS_TWILIO_ACCOUNT_SID": "AC1"], workingDirectory: cwd)
        } catch let error as ConfigurationError {
            #expect(error.problems.count == 2)
        }

        let s3 = try ChorusConfiguration.load(
            from: [
                "CHORUS_S3_ENDPOINT": "http://127.0.0.1:9000", "CHORUS_S3_BUCKET": "voice", "CHORUS_S3_ACCESS_KEY_ID": "AKID",
                "CHORUS_S3_SECRET_ACCESS_KEY": "secret", "CHORUS_S3_ADDRESSING": "virtualHost",
            ], workingDirectory: cwd)
        #expect(s3.objectStorage?.bucket == "voice" && s3.objectStorage?.region == "us-east-1" && s3.objectStorage?.addressing == .virtualHost)
        do {
            _ = try ChorusConfiguration.load(from: ["CHORUS_S3_BUCKET": "voice"], workingDirectory: cwd)
            Issue.record("a bucket without endpoint and keys was accepted")
        } catch let error as ConfigurationError {
            #expect(error.problems.contains { $0.contains("must be set together") })
        }

        // Price overrides from a JSON file (relative to the working directory); a bad one names the price.
        let prices = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-prices-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: prices, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: prices) }
        try Data(#"{"chat_usd_per_million_tokens": {"gpt-5-mini": {"input": 0.25, "output": 2}}}"#.utf8).write(
            to: prices.appendingPathComponent("good.json"))
        try Data(#"{"image_usd_per_image": {"dall-e-3": -1}}"#.utf8).write(to: prices.appendingPathComponent("bad.json"))
        let priced = try ChorusConfiguration.load(from: ["CHORUS_PRICE_TABLE_FILE": "good.json"], workingDirectory: prices)
        #expect(priced.prices.chatCostMicrodollars(model: "gpt-5-mini", promptTokens: 1_000_000, completionTokens: 0) == 250_000)
        #expect(priced.prices.speechUSDPerMillionCharacters == defaults.prices.speechUSDPerMillionCharacters)
        for file in ["bad.json", "missing.json"] {
            do {
                _ = try ChorusConfiguration.load(from: ["CHORUS_PRICE_TABLE_FILE": file], workingDirectory: prices)
                Issue.record("the price file \(file) was accepted")
            } catch let error as ConfigurationError {
                #expect(error.problems.contains { $0.hasPrefix("CHORUS_PRICE_TABLE_FILE") }, "\(error.problems)")
            }
        }

        let production = try ChorusConfiguration.load(from: ["CHORUS_ENVIRONMENT": "production"], workingDirectory: cwd)
        let problems = production.startupProblems()
        #expect(problems.contains { $0.hasPrefix("CHORUS_JWT_SECRET is required") })
        #expect(problems.contains { $0.hasPrefix("CHORUS_NUMBER_HASH_SECRET is required") })
        #expect(problems.contains { $0.hasPrefix("CHORUS_PUBLIC_URL is required") })
        #expect(problems.contains { $0.hasPrefix("Telephony would use the sandbox") })
        #expect(problems.contains { $0.hasPrefix("Cloned voices would use the sandbox") })
    }
}
