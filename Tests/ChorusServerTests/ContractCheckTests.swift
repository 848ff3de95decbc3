import ChorusAPI
import ChorusTestSupport
import Foundation
import Testing
import Vapor
import VaporTesting

/// The contract check every test server runs (``ContractCheckMiddleware``) catches answers that depart from
/// openapi.json, and answers keep a stable member order.
@Suite("Contract check")
struct ContractCheckTests {
    private let health =
        #"{"database":"sqlite:ok","draining":false,"environment":"development","providers":{"telephony":"sandbox"},"status":"ok","version":"0.1.0"}"#

    private func check(
        _ body: String, method: String = "GET", route: String? = "/health", path: String = "/health", status: Int = 200,
        contentType: String? = "application/json; charset=utf-8"
    ) throws -> ContractCheck.Outcome {
        try ContractCheck.chorus().check(method: method, route: route, path: path, status: status, contentType: contentType, body: Data(body.utf8))
    }

    @Test("a documented answer passes; HEAD uses GET's operation")
    func documentedAnswer() throws {
        #expect(try check(health) == ContractCheck.Outcome(operation: "GET /health", violations: []))
        #expect(try check("", method: "HEAD").violations == [])
    }

    @Test("wrong types, missing required members, unknown members, undocumented values are violations")
    func schemaViolations() throws {
        let wrongType = try check(health.replacingOccurrences(of: #""version":"0.1.0""#, with: #""version":1"#)).violations
        #expect(wrongType.count == 1 && wrongType[0].contains("$.version: expected string, got integer"), "\(wrongType)")
        let missing = try check(health.replacingOccurrences(of: #","version":"0.1.0""#, with: "")).violations
        #expect(missing.count == 1 && missing[0].contains("$.version: missing required property"), "\(missing)")
        let unknown = try check(health.replacingOccurrences(of: #""status":"ok""#, with: #""status":"ok","uptime":3"#)).violations
        #expect(unknown.count == 1 && unknown[0].contains("$.uptime: unknown property"), "\(unknown)")
        let value = try check(health.replacingOccurrences(of: #""status":"ok""#, with: #""status":"fine""#)).violations
        #expect(value.count == 1 && value[0].contains(#"$.status: "fine" is not one of"#), "\(value)")
        let notJSON = try check("{").violations
        #expect(notJSON.count == 1 && notJSON[0].contains("not JSON"), "\(notJSON)")
    }

    @Test("undocumented statuses, content types, operations and unrouted answers are violations")
    func operationViolations() throws {
        let status = try check(health, status: 418).violations
        #expect(status.count == 1 && status[0].contains("does not document status 418"), "\(status)")
        let type = try check("ok", contentType: "text/plain").violations
        #expect(type.count == 1 && type[0].contains("Content-Type text/plain is not documented"), "\(type)")
        let untyped = try check(health, contentType: nil).violations
        #expect(untyped.count == 1 && untyped[0].contains("no Content-Type"), "\(untyped)")
        let operation = try check(health, method: "DELETE").violations
        #expect(operation.count == 1 && operation[0].contains("DELETE /health is not in the contract"), "\(operation)")
        let unrouted = try check(health, route: nil, path: "/nowhere").violations
        #expect(unrouted.count == 1 && unrouted[0].contains("answered by no route"), "\(unrouted)")
        // A 204 documents no content.
        let noContent = try check("{}", method: "DELETE", route: "/messages/{message_id}", path: "/messages/m1", status: 204)
        #expect(noContent.violations.count == 1 && noContent.violations[0].contains("documents no content"), "\(noContent)")
    }

    @Test("exempt: unrouted 404s and 405s with an error body, CORS preflights")
    func exemptAnswers() throws {
        #expect(try check(#"{"detail":"Not Found"}"#, route: nil, path: "/nowhere", status: 404) == .init(operation: nil, violations: []))
        let notAllowed = #"{"detail":"Method Not Allowed"}"#
        #expect(try check(notAllowed, method: "PATCH", route: "/messages/{message_id}", path: "/messages/search", status: 405).violations == [])
        #expect(try check(notAllowed, method: "DELETE", route: nil, path: "/mobile/usage-stats", status: 405).violations == [])
        let badBody = try check(#"{"error":"Not Found"}"#, route: nil, path: "/nowhere", status: 404).violations
        #expect(badBody.contains { $0.contains("$.detail: missing required property") }, "\(badBody)")
        let preflight = try ContractCheck.chorus().check(
            method: "OPTIONS", route: nil, path: "/health", status: 200, contentType: nil, body: Data(), isPreflight: true)
        #expect(preflight == .init(operation: nil, violations: []))
    }

    @Test("formats and if/then conditions of the contract's schemas are checked")
    func formatsAndConditions() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let document = try Data(contentsOf: root.appendingPathComponent("Sources/ChorusServer/Resources/openapi.json"))
        let validator = try SpecSchemaValidator(document: document, checkFormats: true)
        let member = #"{"user_id":"7d1f0c9e-2b1a-4c3d-8e9f-0a1b2c3d4e5f","display_name":"Ann","role":"member","joined_at":"JOINED"}"#
        let problems = try validator.validate(json: Data(member.utf8), against: "ConversationMember")
        #expect(problems.contains { $0.contains(#"$.joined_at: "JOINED" is not a date-time"#) }, "\(problems)")
        let valid = member.replacingOccurrences(of: "JOINED", with: "2024-01-15T10:30:00Z")
        #expect(try validator.validate(json: Data(valid.utf8), against: "ConversationMember") == [])
        // Without checkFormats (the providers' fixtures), formats are not checked.
        #expect(try SpecSchemaValidator(document: document).validate(json: Data(member.utf8), against: "ConversationMember") == [])
    }

    @Test("the middleware records violations of a real answer, and counts checked answers")
    func middlewareRecords() async throws {
        let app = try await Application.make(.testing)
        let recorder = ContractCheckRecorder()
        app.middleware.use(ContractCheckMiddleware(check: try ContractCheck.chorus(), recorder: recorder), at: .beginning)
        app.get("health") { _ in
            Response(status: .ok, headers: ["Content-Type": "application/json"], body: .init(string: #"{"status":"ok"}"#))
        }
        do {
            try await app.testing().test(.GET, "/health") { response in #expect(response.status == .ok) }
            try await app.testing().test(.GET, "/nowhere") { response in #expect(response.status == .notFound) }
        } catch {
            try await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
        #expect(recorder.checked == ["GET /health 200"] && recorder.exempt == 1)
        let violations = recorder.violations
        // version, environment, database, providers and draining are missing.
        #expect(violations.filter { $0.hasPrefix("GET /health → 200 (GET /health): $.") }.count == 5, "\(violations)")
        // A bare Vapor app answers its 404 as {"error": true, "reason": ...}, not Chorus's ErrorResponse.
        #expect(violations.contains("GET /nowhere → 404: $.detail: missing required property"), "\(violations)")
    }

    @Test("the same answer is the same bytes on every call: members in sorted key order", arguments: [TestDatabase.sqlite])
    func stableMemberOrder(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            for path in ["/health", "/mobile/usage-stats"] {
                let first = try await server.request(.GET, path, token: token, headers: [("X-App-Type", "mobile")])
                #expect(first.status == 200, "\(path): \(first.text)")
                for _ in 0..<5 {
                    let again = try await server.request(.GET, path, token: token, headers: [("X-App-Type", "mobile")])
                    #expect(again.text == first.text, "\(path)")
                }
            }
            let health = try await server.request(.GET, "/health")
            let positions = ["database", "environment", "providers", "status", "version"].compactMap { health.text.range(of: "\"\($0)\":")?.lowerBound }
            #expect(positions.count == 5 && positions == positions.sorted() && health.text.hasPrefix(#"{"database":"#), "\(health.text)")
        }
    }
}
