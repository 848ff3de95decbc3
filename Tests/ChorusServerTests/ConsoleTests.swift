import AsyncHTTPClient
import ChorusAPI
import ChorusTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import SQLKit
import Testing

@testable import ChorusServer

/// The operator console over loopback HTTP: cookie sessions for admins only, CSRF on every change, the overview's
/// figures, an audited action, and `chorus admin grant|revoke`.
@Suite("Operator console")
struct ConsoleTests {
    /// A browser-like client: no redirects followed, cookies kept by hand.
    final class Browser: Sendable {
        let base: String
        let client: HTTPClient

        init(base: String) {
            self.base = base
            var configuration = HTTPClient.Configuration()
            configuration.redirectConfiguration = .disallow
            client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        }

        struct Page {
            var status: Int
            var headers: HTTPHeaders
            var text: String
            var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
            /// `name=value` of a `Set-Cookie`, with its attributes.
            func cookie(_ name: String) -> String? { headers[canonicalForm: "Set-Cookie"].map(String.init).first { $0.hasPrefix(name + "=") } }
        }

        func send(
            _ method: HTTPMethod, _ path: String, cookies: [String: String] = [:], form: String? = nil, headers extra: [(String, String)] = []
        ) async throws -> Page {
            var request = HTTPClientRequest(url: base + path)
            request.method = method
            if !cookies.isEmpty { request.headers.add(name: "Cookie", value: cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")) }
            if let form {
                request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                request.body = .bytes(ByteBuffer(string: form))
            }
            for (name, value) in extra { request.headers.add(name: name, value: value) }
            let response = try await client.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 1 << 22)
            return Page(status: Int(response.status.code), headers: response.headers, text: String(buffer: body))
        }

        /// Signs in through the form; returns the answer (a redirect on success) and the session cookie's value.
        func signIn(email: String, password: String, withFormToken: Bool = true) async throws -> (page: Page, session: String?) {
            let form = try await send(.GET, "/console/login")
            let cookie = try #require(form.cookie("chorus_console_csrf"))
            let value = String(cookie.split(separator: ";")[0].dropFirst("chorus_console_csrf=".count))
            let token = try #require(form.text.firstMatch(of: /name="csrf_token" value="([0-9a-f]+)"/)?.1)
            #expect(token == value)
            let body =
                "email=\(email.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")&password=\(password)"
                + (withFormToken ? "&csrf_token=\(token)" : "")
            let page = try await send(.POST, "/console/login", cookies: ["chorus_console_csrf": value], form: body)
            let session = page.cookie("chorus_console").map { String($0.split(separator: ";")[0].dropFirst("chorus_console=".count)) }
            return (page, session)
        }

        func shutdown() async { try? await client.shutdown() }
    }

    static func setRole(_ server: TestServer, email: String, role: String) async throws {
        let store = ChorusStore(sql: server.app.db as! any SQLDatabase, reader: nil, writeGate: WriteGate())
        #expect(try await store.console.setRole(email: email, role: role))
    }

    @Test("admins only, cookie sessions, CSRF on every change, the overview's figures, an audited action, revocation", arguments: TestDatabase.all)
    func console(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let browser = Browser(base: server.baseURL)
            defer { Task { await browser.shutdown() } }
            let adminEmail = "ops-\(UUID().uuidString.prefix(6).lowercased())@chorus.test"
            let admin = try await server.register(email: adminEmail, password: "operator password")
            let userEmail = "user-\(UUID().uuidString.prefix(6).lowercased())@chorus.test"
            let user = try await server.register(email: userEmail, password: "user password")
            try await Self.setRole(server, email: adminEmail, role: "admin")

            // Signing in: a non-admin is refused, a wrong password goes back to the form, a form without its token is refused.
            #expect(try await browser.signIn(email: userEmail, password: "user%20password").page.status == 403)
            let wrong = try await browser.signIn(email: adminEmail, password: "nope").page
            #expect(wrong.status == 303 && wrong.headers.first(name: "Location")?.hasPrefix("/console/login?message=") == true)
            #expect(try await browser.signIn(email: adminEmail, password: "operator%20password", withFormToken: false).page.status == 403)
            let signedIn = try await browser.signIn(email: adminEmail, password: "operator%20password")
            #expect(signedIn.page.status == 303 && signedIn.page.headers.first(name: "Location") == "/console")
            let cookie = try #require(signedIn.page.cookie("chorus_console"))
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/console"))
            let session = try #require(signedIn.session)
            let cookies = ["chorus_console": session]

            // Pages and the API need the cookie; the mobile bearer token is not a console session.
            let page = try await browser.send(.GET, "/console", cookies: cookies)
            #expect(page.status == 200 && page.text.contains(adminEmail))
            #expect(page.headers.first(name: "Content-Security-Policy")?.contains("script-src 'self'") == true)
            let csrf = try #require(page.text.firstMatch(of: /name="csrf-token" content="([0-9a-f]+)"/)?.1).description
            // The page's script and stylesheet are static assets with an ETag.
            let script = try await browser.send(.GET, "/assets/console.js")
            #expect(script.status == 200 && script.text.contains("/console/api/overview") && script.text.contains("/console/api/live"))
            #expect(script.headers.first(name: "Content-Type")?.hasPrefix("text/javascript") == true)
            let etag = try #require(script.headers.first(name: "ETag"))
            #expect(try await browser.send(.GET, "/assets/console.js", headers: [("If-None-Match", etag)]).status == 304)
            #expect(try await browser.send(.GET, "/assets/chorus.css").headers.first(name: "Content-Type")?.hasPrefix("text/css") == true)
            #expect(try await browser.send(.GET, "/assets/nothing.js").status == 404)
            #expect(try await browser.send(.GET, "/console").headers.first(name: "Location") == "/console/login")
            #expect(try await browser.send(.GET, "/console/api/overview").status == 401)
            #expect(try await browser.send(.GET, "/console/api/overview", headers: [("Authorization", "Bearer \(admin.accessToken)")]).status == 401)

            // The overview counts what the API did: two accounts, one call placed today.
            let call = try await server.request(
                .POST, "/mobile/make-call", token: user.accessToken, json: MakeCallRequest(phoneNumber: "+14155550123", scenario: "default"))
            #expect(call.status == 200, "\(call.text)")
            let overview = try ChorusJSON.makeDecoder().decode(
                ConsoleOverviewDTO.self, from: Data(try await browser.send(.GET, "/console/api/overview", cookies: cookies).text.utf8))
            #expect(overview.users.total == 2 && overview.calls.today == 1 && overview.calls.perHour.count == 24 && overview.calls.perHour.last == 1)
            #expect(
                Set(overview.spend.map(\.feature)) == ["calls", "voice_messages", "stories"] && overview.spend.allSatisfy { $0.perDay.count == 14 })

            // Drill-down: the account (no password, masked numbers) and its call.
            let userID0 = try #require(try CompactJWS.payload(user.accessToken)["sub"] as? String)
            let detail = try await browser.send(.GET, "/console/api/users/\(userID0)", cookies: cookies)
            #expect(detail.status == 200 && !detail.text.contains("password") && !detail.text.contains("+14155550123"), "\(detail.text)")
            let account = try ChorusJSON.makeDecoder().decode(ConsoleUserDTO.self, from: Data(detail.text.utf8))
            #expect(account.email == userEmail && account.role == "user" && account.totalCalls == 1 && account.usage.trialCallsUsed == 1)
            #expect(account.recentCalls.first?.phoneNumber == "+14•••••••23")
            let callID = try #require(account.recentCalls.first?.id)
            let callDetail = try ChorusJSON.makeDecoder().decode(
                CallDetailResponse.self, from: Data(try await browser.send(.GET, "/console/api/calls/\(callID)", cookies: cookies).text.utf8))
            #expect(callDetail.call.phoneNumber == "+14•••••••23" && callDetail.call.id == callID)
            #expect(try await browser.send(.GET, "/console/api/users/nobody", cookies: cookies).status == 404)
            #expect(try await browser.send(.GET, "/console/api/stories/nothing", cookies: cookies).status == 404)

            // An action: refused without the CSRF token, done and audited with it; the user's refresh token stops working.
            let userID = try #require(try CompactJWS.payload(user.accessToken)["sub"] as? String)
            let path = "/console/api/users/\(userID)/revoke-sessions"
            #expect(try await browser.send(.POST, path, cookies: cookies).status == 403)
            #expect(
                try await browser.send(.POST, path, cookies: cookies, headers: [("X-CSRF-Token", String(repeating: "0", count: 64))]).status == 403)
            let done = try await browser.send(.POST, path, cookies: cookies, headers: [("X-CSRF-Token", csrf)])
            #expect(done.status == 200 && done.json["detail"] as? String == "1 app session revoked", "\(done.text)")
            #expect(try await server.request(.POST, "/auth/refresh", json: RefreshRequest(refreshToken: user.refreshToken)).status == 401)
            let audit = try ChorusJSON.makeDecoder().decode(
                ConsoleAuditDTO.self, from: Data(try await browser.send(.GET, "/console/api/audit", cookies: cookies).text.utf8))
            let entry = try #require(audit.entries.first)
            #expect(entry.actor == adminEmail && entry.action == "revoke_sessions" && entry.target == "user:\(userID)")
            #expect(
                try await browser.send(.POST, "/console/api/users/nobody/revoke-sessions", cookies: cookies, headers: [("X-CSRF-Token", csrf)]).status
                    == 404)

            // Losing the role ends the session at its next request: 403 on every console route.
            try await Self.setRole(server, email: adminEmail, role: "user")
            for (method, route) in [
                (HTTPMethod.GET, "/console"), (.GET, "/console/api/overview"), (.GET, "/console/api/audit"), (.GET, "/console/api/live"),
            ] {
                #expect(try await browser.send(method, route, cookies: cookies).status == 403, "\(route)")
            }
            #expect(try await browser.send(.POST, path, cookies: cookies, headers: [("X-CSRF-Token", csrf)]).status == 403)
            #expect(try await browser.send(.POST, "/console/logout", cookies: cookies, headers: [("X-CSRF-Token", csrf)]).status == 403)

            // Signing out ends the session.
            try await Self.setRole(server, email: adminEmail, role: "admin")
            let again = try #require(try await browser.signIn(email: adminEmail, password: "operator%20password").session)
            let againPage = try await browser.send(.GET, "/console", cookies: ["chorus_console": again])
            let againCSRF = try #require(againPage.text.firstMatch(of: /name="csrf-token" content="([0-9a-f]+)"/)?.1).description
            let out = try await browser.send(.POST, "/console/logout", cookies: ["chorus_console": again], form: "csrf_token=\(againCSRF)")
            #expect(out.status == 303 && out.cookie("chorus_console")?.contains("Max-Age=0") == true)
            #expect(try await browser.send(.GET, "/console/api/overview", cookies: ["chorus_console": again]).status == 401)
        }
    }
}

extension ConsoleTests {
    @Test("chorus admin grant and revoke: the account becomes an admin of the console and stops being one; an unknown email exits 1")
    func adminCommand() async throws {
        let provisioned = try TestDatabase.sqlite.make()
        defer { provisioned.drop() }
        let email = "ops-\(UUID().uuidString.prefix(6).lowercased())@chorus.test"
        try await TestServer.run(on: .sqlite, database: provisioned) { server in
            _ = try await server.register(email: email, password: "operator password")
        }
        let environment = ["CHORUS_DATABASE_URL": provisioned.url, "CHORUS_DATA_DIR": provisioned.directory.appendingPathComponent("data").path]
        let granted = try CLITests.run(["admin", "grant", email.uppercased()], environment: environment, in: provisioned.directory)
        #expect(granted.status == 0 && granted.output.contains("is now an admin"), "\(granted.output)")
        let unknown = try CLITests.run(["admin", "grant", "nobody@chorus.test"], environment: environment, in: provisioned.directory)
        #expect(unknown.status == 1 && unknown.output.contains("no account has the email nobody@chorus.test"), "\(unknown.output)")
        try await TestServer.run(on: .sqlite, database: provisioned) { (server: TestServer) async throws in
            let browser = Browser(base: server.baseURL)
            defer { Task { await browser.shutdown() } }
            #expect(try await browser.signIn(email: email, password: "operator%20password").page.status == 303)
        }
        let revoked = try CLITests.run(["admin", "revoke", email], environment: environment, in: provisioned.directory)
        #expect(revoked.status == 0 && revoked.output.contains("is no longer an admin"), "\(revoked.output)")
        try await TestServer.run(on: .sqlite, database: provisioned) { (server: TestServer) async throws in
            let browser = Browser(base: server.baseURL)
            defer { Task { await browser.shutdown() } }
            #expect(try await browser.signIn(email: email, password: "operator%20password").page.status == 403)
        }
    }
}

extension ConsoleTests {
    /// An admin signed in: the browser, its session cookie and the page's CSRF token.
    static func operatorSession(_ server: TestServer) async throws -> (Browser, [String: String], String) {
        let email = "ops-\(UUID().uuidString.prefix(6).lowercased())@chorus.test"
        _ = try await server.register(email: email, password: "operator password")
        try await setRole(server, email: email, role: "admin")
        let browser = Browser(base: server.baseURL)
        let session = try #require(try await browser.signIn(email: email, password: "operator%20password").session)
        let page = try await browser.send(.GET, "/console", cookies: ["chorus_console": session])
        let csrf = try #require(page.text.firstMatch(of: /name="csrf-token" content="([0-9a-f]+)"/)?.1).description
        return (browser, ["chorus_console": session], csrf)
    }

    @Test("actions: grant calls, refund a call once under 10 concurrent refunds, run a failed job again; each audited", arguments: TestDatabase.all)
    func actions(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let (browser, cookies, csrf) = try await Self.operatorSession(server)
            defer { Task { await browser.shutdown() } }
            let headers = [("X-CSRF-Token", csrf), ("Content-Type", "application/json")]
            let user = try await server.register()
            let userID = try #require(try CompactJWS.payload(user.accessToken)["sub"] as? String)

            // Grant calls: an add-on allowance the user sees at once.
            let badGrant = try await browser.send(.POST, "/console/api/users/\(userID)/grant-calls", cookies: cookies, headers: headers)
            #expect(badGrant.status == 422)
            var request = HTTPClientRequest(url: server.baseURL + "/console/api/users/\(userID)/grant-calls")
            request.method = .POST
            request.headers.add(name: "Cookie", value: "chorus_console=\(cookies["chorus_console"]!)")
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(ConsoleGrantCallsRequest(calls: 5, days: 30))))
            let granted = try await browser.client.execute(request, timeout: .seconds(30))
            #expect(granted.status == .ok)
            #expect(try await server.usage(user.accessToken).addonCallsRemaining == 5)

            // Refund: the user's trial call comes back exactly once however many operators press the button.
            let call = try await server.request(
                .POST, "/mobile/make-call", token: user.accessToken, json: MakeCallRequest(phoneNumber: "+14155550124", scenario: "default"))
            #expect(call.status == 200, "\(call.text)")
            let before = try await server.usage(user.accessToken).trialCallsRemaining
            let callID = try #require(try await server.history(user.accessToken).callHistory.first?.id)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<10 {
                    group.addTask { try await browser.send(.POST, "/console/api/calls/\(callID)/refund", cookies: cookies, headers: headers).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.sorted() == [200] + Array(repeating: 409, count: 9), "\(statuses)")
            #expect(try await server.usage(user.accessToken).trialCallsRemaining == before + 1)
            #expect(try await browser.send(.POST, "/console/api/calls/999999/refund", cookies: cookies, headers: headers).status == 404)

            // A job that failed for good runs again when asked (and fails again: its kind has no handler).
            let store = ChorusStore(sql: server.app.db as! any SQLDatabase, reader: nil, writeGate: WriteGate())
            let jobID = try await store.jobs.enqueueJob(kind: "no_such_job", payload: "", runAt: Date(), now: Date())
            try await server.eventually("the job fails") {
                try await (server.app.db as! any SQLDatabase).raw("SELECT status FROM jobs WHERE id = \(bind: Int64(jobID))").first()?
                    .decode(column: "status", as: String.self) == "failed"
            }
            let rerun = try await browser.send(.POST, "/console/api/jobs/\(jobID)/rerun", cookies: cookies, headers: headers)
            #expect(rerun.status == 200, "\(rerun.text)")
            #expect(try await browser.send(.POST, "/console/api/jobs/999999/rerun", cookies: cookies, headers: headers).status == 409)

            let audit = try ChorusJSON.makeDecoder().decode(
                ConsoleAuditDTO.self, from: Data(try await browser.send(.GET, "/console/api/audit", cookies: cookies).text.utf8))
            #expect(audit.entries.map(\.action) == ["rerun_job", "refund_call", "grant_calls"])
            #expect(audit.entries.map(\.target) == ["job:\(jobID)", "call:\(callID)", "user:\(userID)"])
        }
    }

    @Test("provider health: every exchange counted per provider and operation, retried failures included", arguments: TestDatabase.all)
    func providerHealth(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: StoriesTests.environment) { server in
            let browser = Browser(base: server.baseURL)
            defer { Task { await browser.shutdown() } }
            let admin = try await MessagingTests.person(server, name: "ops")
            try await Self.setRole(server, email: admin.email, role: "admin")
            let session = try #require(try await browser.signIn(email: admin.email, password: "correct horse battery").session)

            // The model fails once with a 500; the transport retries and the user gets an answer.
            try await StoriesTests.setFaults(server, #"{"faults":[{"kind":"server_error","endpoint":"chat/completions","times":1}]}"#)
            let assisted = try await server.request(
                .POST, "/stories/custom-events/assist", token: admin.token,
                json: EventAssistRequest(description: "Our puppy learns to swim in the lake", category: "pets", ageRange: "4-6", tone: "playful"))
            #expect(assisted.status == 200, "\(assisted.text)")
            // A call: Twilio's REST API and a realtime connection.
            try await server.setCallee("+14155557020", behavior: "busy")
            #expect(try await server.makeCall(admin.token, to: "+14155557020").status == 200)

            var providers: [ConsoleProviderHealthDTO] = []
            try await server.eventually(timeout: .seconds(15), "the call's provider exchanges are counted") {
                let page = try await browser.send(.GET, "/console/api/overview", cookies: ["chorus_console": session])
                providers = try ChorusJSON.makeDecoder().decode(ConsoleOverviewDTO.self, from: Data(page.text.utf8)).providers
                return providers.contains { $0.provider == "twilio" && $0.operation == "create_call" }
            }
            let chat = try #require(providers.first { $0.provider == "openai" && $0.operation == "chat.completions" })
            #expect(chat.calls == 2 && chat.failures == 1 && chat.errorRate == 0.5, "\(chat)")
            #expect(chat.failuresByKind == [ConsoleCountDTO(name: "http_500", count: 1)] && chat.lastFailure == "http_500")
            #expect(chat.status == "degraded" && chat.lastFailureAt != nil && chat.p50Ms != nil)
            let twilio = try #require(providers.first { $0.provider == "twilio" && $0.operation == "create_call" })
            #expect(twilio.calls == 1 && twilio.failures == 0 && twilio.status == "ok")
            // The answer matches the contract.
            let contract = try SpecSchemaValidator(document: try await server.request(.GET, "/openapi.json").body)
            let overview = try await browser.send(.GET, "/console/api/overview", cookies: ["chorus_console": session])
            #expect(try contract.validate(json: Data(overview.text.utf8), against: "ConsoleOverview", strictProperties: true) == [])
        }
    }
}
