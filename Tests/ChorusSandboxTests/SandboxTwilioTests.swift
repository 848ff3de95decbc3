import AsyncHTTPClient
import ChorusProviders
import ChorusSandbox
import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing
import Vapor

/// A status callback as the receiver saw it.
struct ReceivedCallback: Sendable {
    let url: String
    let parameters: [(String, String)]
    let signature: String?

    func value(_ name: String) -> String? {
        parameters.first { $0.0 == name }?.1
    }
}

/// A sandbox Twilio on an ephemeral port plus a loopback app receiving its status callbacks.
final class TwilioHarness: Sendable {
    static let accountSID = "AC0123456789abcdef0123456789abcdef"
    static let authToken = "sandbox-auth-token-0123456789"
    static let from = "+15550001111"

    let services: SandboxServices
    let server: SandboxServer
    let receiver: Application
    let callbackURL: URL
    let baseURL: URL
    /// The receiver's TwiML route (`<Say>…</Say><Hangup/>`).
    var twimlURL: URL { callbackURL.deletingLastPathComponent().appendingPathComponent("twiml") }
    private let received: NIOLockedValueBox<[ReceivedCallback]>

    private init(
        services: SandboxServices, server: SandboxServer, receiver: Application, callbackURL: URL, baseURL: URL,
        received: NIOLockedValueBox<[ReceivedCallback]>
    ) {
        self.received = received
        self.services = services
        self.server = server
        self.receiver = receiver
        self.callbackURL = callbackURL
        self.baseURL = baseURL
    }

    static func start() async throws -> TwilioHarness {
        let twilio = SandboxTwilio(
            accountSID: accountSID, authToken: authToken, httpClient: .shared,
            timing: .init(ringDelay: .seconds(1), talkDuration: .seconds(5), timeScale: 0.01)
        )
        let services = SandboxServices(twilio: twilio, appStore: try SandboxAppStore.ephemeral(bundleID: "app.chorus"))
        let server = SandboxServer(services: services)
        try await server.start()

        let receiver = try await Application.make(.testing)
        receiver.logger.logLevel = .notice
        let box = NIOLockedValueBox<[ReceivedCallback]>([])
        let portBox = NIOLockedValueBox<Int>(0)
        receiver.post("status") { request async -> Response in
            let url = "http://127.0.0.1:\(portBox.withLockedValue { $0 })/status"
            let callback = ReceivedCallback(
                url: url, parameters: TwilioFormEncoding.decode(request.body.string ?? ""),
                signature: request.headers.first(name: "X-Twilio-Signature")
            )
            box.withLockedValue { $0.append(callback) }
            return Response(status: .noContent)
        }
        // TwiML without a stream: the emulator plays its simulated conversation.
        receiver.post("twiml") { _ async -> Response in
            var headers = HTTPHeaders()
            headers.contentType = .xml
            return Response(
                status: .ok, headers: headers,
                body: .init(string: #"<?xml version="1.0" encoding="UTF-8"?><Response><Say>Hello from Chorus.</Say><Hangup/></Response>"#)
            )
        }
        try await receiver.asyncBoot()
        try await receiver.server.start(address: .hostname("127.0.0.1", port: 0))
        let port = try #require(receiver.http.server.shared.localAddress?.port)
        portBox.withLockedValue { $0 = port }
        let harness = TwilioHarness(
            services: services, server: server, receiver: receiver,
            callbackURL: URL(string: "http://127.0.0.1:\(port)/status")!,
            baseURL: try #require(server.baseURL), received: box
        )
        return harness
    }

    func shutdown() async throws {
        await receiver.server.shutdown()
        try await receiver.asyncShutdown()
        try await server.shutdown()
    }

    func client(authToken: String = TwilioHarness.authToken) -> TwilioRESTClient {
        TwilioRESTClient(
            accountSID: Self.accountSID, authToken: authToken, baseURL: baseURL, httpClient: .shared,
            logger: Logger(label: "test.twilio")
        )
    }

    func request(to: String, timeLimit: Int = 60, ringTimeout: Int = 30) -> OutboundCallRequest {
        OutboundCallRequest(
            to: to, from: Self.from, twimlURL: twimlURL, statusCallbackURL: callbackURL,
            statusCallbackEvents: ["initiated", "ringing", "answered", "completed"],
            timeLimitSeconds: timeLimit, ringTimeoutSeconds: ringTimeout
        )
    }

    func callbacks(for sid: String) -> [ReceivedCallback] {
        received.withLockedValue { $0 }.filter { $0.value("CallSid") == sid }
    }

    /// Waits until `predicate` holds for the call's callbacks (up to 10 s) and returns them.
    func waitForCallbacks(
        _ sid: String, until predicate: ([ReceivedCallback]) -> Bool = { $0.contains(where: isTerminal) }
    ) async throws -> [ReceivedCallback] {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let callbacks = callbacks(for: sid)
            if predicate(callbacks) { return callbacks }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("timed out waiting for callbacks of \(sid); got \(callbacks(for: sid).compactMap { $0.value("CallStatus") })")
        return callbacks(for: sid)
    }
}

func isTerminal(_ callback: ReceivedCallback) -> Bool {
    ["completed", "busy", "failed", "no-answer", "canceled"].contains(callback.value("CallStatus") ?? "")
}

func withHarness(_ body: (TwilioHarness) async throws -> Void) async throws {
    let harness = try await TwilioHarness.start()
    do {
        try await body(harness)
    } catch {
        try? await harness.shutdown()
        throw error
    }
    try await harness.shutdown()
}

@Suite("Sandbox Twilio")
struct SandboxTwilioTests {
    let validator = TwilioRequestValidator(authToken: TwilioHarness.authToken)

    @Test func answeredCallReportsEveryStatusInOrderWithValidSignatures() async throws {
        try await withHarness { harness in
            let placed = try await harness.client().placeCall(harness.request(to: "+15551230001"))
            #expect(placed.status == "queued")
            #expect(placed.sid.hasPrefix("CA") && placed.sid.count == 34)
            #expect(placed.sid.dropFirst(2).allSatisfy { "0123456789abcdef".contains($0) })

            let callbacks = try await harness.waitForCallbacks(placed.sid)
            #expect(callbacks.compactMap { $0.value("CallStatus") } == ["initiated", "ringing", "in-progress", "completed"])
            #expect(callbacks.compactMap { $0.value("SequenceNumber") } == ["0", "1", "2", "3"])
            for callback in callbacks {
                #expect(validator.isValid(signature: callback.signature, url: callback.url, parameters: callback.parameters))
                #expect(callback.value("AccountSid") == TwilioHarness.accountSID)
                #expect(callback.value("To") == "+15551230001")
                #expect(callback.value("From") == TwilioHarness.from)
                #expect(callback.value("Direction") == "outbound-api")
                #expect(callback.value("ApiVersion") == "2010-04-01")
                #expect(callback.value("CallbackSource") == "call-progress-events")
                #expect(callback.value("Timestamp")?.hasSuffix("+0000") == true)
            }
            #expect(callbacks.last?.value("CallDuration") == "5")
            #expect(callbacks.first?.value("CallDuration") == nil)

            // The sandbox records a delivery once the receiver has answered it.
            let deadline = ContinuousClock.now + .seconds(5)
            while (harness.services.twilio.call(sid: placed.sid)?.callbacks.count ?? 0) < 4, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            let record = try #require(harness.services.twilio.call(sid: placed.sid))
            #expect(record.status == "completed")
            #expect(record.duration == 5)
            #expect(record.history.map(\.status) == ["queued", "initiated", "ringing", "in-progress", "completed"])
            #expect(record.callbacks.count == 4)
            #expect(record.callbacks.allSatisfy { $0.delivered && $0.httpStatus == 204 })
        }
    }

    @Test func timeLimitCapsTheDuration() async throws {
        try await withHarness { harness in
            let placed = try await harness.client().placeCall(harness.request(to: "+15551230002", timeLimit: 2))
            let callbacks = try await harness.waitForCallbacks(placed.sid)
            #expect(callbacks.last?.value("CallStatus") == "completed")
            #expect(callbacks.last?.value("CallDuration") == "2")
        }
    }

    @Test(arguments: [
        (SandboxTwilio.CalleeBehavior.busy, ["initiated", "ringing", "busy"]),
        (.noAnswer, ["initiated", "ringing", "no-answer"]),
        (.fail, ["initiated", "failed"]),
    ])
    func unansweredCallsEndWithZeroDuration(behavior: SandboxTwilio.CalleeBehavior, statuses: [String]) async throws {
        try await withHarness { harness in
            let number = "+15551230003"
            harness.services.twilio.setBehavior(behavior, for: number)
            let placed = try await harness.client().placeCall(harness.request(to: number))
            let callbacks = try await harness.waitForCallbacks(placed.sid)
            #expect(callbacks.compactMap { $0.value("CallStatus") } == statuses)
            #expect(callbacks.last?.value("CallDuration") == "0")
            #expect(callbacks.allSatisfy { validator.isValid(signature: $0.signature, url: $0.url, parameters: $0.parameters) })
            #expect(harness.services.twilio.call(sid: placed.sid)?.status == behavior.rawValue)
        }
    }

    @Test func hangUpMidCallCompletesEarly() async throws {
        try await withHarness { harness in
            let number = "+15551230004"
            harness.services.twilio.setBehavior(.answer, for: number, talkSeconds: 300)
            let client = harness.client()
            let placed = try await client.placeCall(harness.request(to: number, timeLimit: 600))
            _ = try await harness.waitForCallbacks(placed.sid) { $0.contains { $0.value("CallStatus") == "in-progress" } }
            try await client.hangUp(callSid: placed.sid)

            let callbacks = try await harness.waitForCallbacks(placed.sid)
            #expect(callbacks.compactMap { $0.value("CallStatus") } == ["initiated", "ringing", "in-progress", "completed"])
            let duration = try #require(callbacks.last?.value("CallDuration").flatMap(Int.init))
            #expect(duration < 300)
            #expect(harness.services.twilio.call(sid: placed.sid)?.status == "completed")
        }
    }

    @Test func hangUpWhileRingingCancels() async throws {
        try await withHarness { harness in
            let number = "+15551230005"
            harness.services.twilio.setBehavior(.noAnswer, for: number)
            let client = harness.client()
            let placed = try await client.placeCall(harness.request(to: number, ringTimeout: 600))
            _ = try await harness.waitForCallbacks(placed.sid) { $0.contains { $0.value("CallStatus") == "ringing" } }
            try await client.hangUp(callSid: placed.sid)
            let callbacks = try await harness.waitForCallbacks(placed.sid)
            #expect(callbacks.last?.value("CallStatus") == "canceled")
            #expect(callbacks.last?.value("CallDuration") == "0")
        }
    }

    @Test func hangUpOnAnEndedCallSucceeds() async throws {
        try await withHarness { harness in
            let number = "+15551230006"
            harness.services.twilio.setBehavior(.busy, for: number)
            let client = harness.client()
            let placed = try await client.placeCall(harness.request(to: number))
            _ = try await harness.waitForCallbacks(placed.sid)
            try await client.hangUp(callSid: placed.sid)
            try await client.hangUp(callSid: placed.sid)
            #expect(harness.callbacks(for: placed.sid).count == 3)
        }
    }

    @Test func hangUpOnAnUnknownCallIsRejected() async throws {
        try await withHarness { harness in
            await #expect(throws: TelephonyError.self) {
                try await harness.client().hangUp(callSid: "CA00000000000000000000000000000000")
            }
        }
    }

    @Test func wrongCredentialsAreRejected() async throws {
        try await withHarness { harness in
            do {
                _ = try await harness.client(authToken: "wrong").placeCall(harness.request(to: "+15551230007"))
                Issue.record("expected a rejection")
            } catch let error as TelephonyError {
                #expect(error == .rejected(httpStatus: 401, code: 20003, message: "Authenticate"))
            }
            #expect(harness.services.twilio.calls().isEmpty)
        }
    }

    @Test func invalidToIsRejected() async throws {
        try await withHarness { harness in
            do {
                _ = try await harness.client().placeCall(harness.request(to: "555-1234"))
                Issue.record("expected a rejection")
            } catch let TelephonyError.rejected(httpStatus, code, message) {
                #expect(httpStatus == 400)
                #expect(code == 21211)
                #expect(message.contains("555-1234"))
            }
        }
    }

    @Test func controlAPIConfiguresCalleesAndListsCallsAndRequests() async throws {
        try await withHarness { harness in
            let base = harness.baseURL.absoluteString
            var put = HTTPClientRequest(url: base + "/callees/%2B15551230008")
            put.method = .PUT
            put.headers.add(name: "Content-Type", value: "application/json")
            put.body = .bytes(ByteBuffer(string: #"{"behavior":"busy","talk_seconds":3}"#))
            let putResponse = try await HTTPClient.shared.execute(put, timeout: .seconds(30))
            #expect(putResponse.status == .ok)

            let placed = try await harness.client().placeCall(harness.request(to: "+15551230008"))
            let callbacks = try await harness.waitForCallbacks(placed.sid)
            #expect(callbacks.last?.value("CallStatus") == "busy")

            let calls = try await getJSON(base + "/calls")
            let list = try #require((calls["calls"] as? [[String: Any]]))
            #expect(list.count == 1)
            #expect(list.first?["sid"] as? String == placed.sid)
            #expect((list.first?["history"] as? [[String: Any]])?.compactMap { $0["status"] as? String }.last == "busy")

            let requests = try await getJSON(base + "/requests")
            let entries = try #require(requests["requests"] as? [[String: Any]])
            let create = try #require(entries.first { ($0["path"] as? String)?.hasSuffix("/Calls.json") == true })
            #expect((create["headers"] as? [String: String])?["authorization"] == "[REDACTED]")
            #expect((create["body"] as? String)?.contains("To=%2B15551230008") == true)
            #expect(create["response_status"] as? Int == 201)
            let raw = try await getText(base + "/requests")
            #expect(!raw.contains(TwilioHarness.authToken))
        }
    }

    @Test func fetchReturnsTheTwilioCallResource() async throws {
        try await withHarness { harness in
            let placed = try await harness.client().placeCall(harness.request(to: "+15551230009"))
            _ = try await harness.waitForCallbacks(placed.sid)
            var get = HTTPClientRequest(
                url: harness.baseURL.absoluteString + "/2010-04-01/Accounts/\(TwilioHarness.accountSID)/Calls/\(placed.sid).json"
            )
            let credentials = Data("\(TwilioHarness.accountSID):\(TwilioHarness.authToken)".utf8).base64EncodedString()
            get.headers.add(name: "Authorization", value: "Basic \(credentials)")
            let response = try await HTTPClient.shared.execute(get, timeout: .seconds(30))
            #expect(response.status == .ok)
            let body = try await response.body.collect(upTo: 1 << 20)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
            #expect(json["sid"] as? String == placed.sid)
            #expect(json["status"] as? String == "completed")
            #expect(json["duration"] as? String == "5")
            #expect(json["direction"] as? String == "outbound-api")
            #expect(json["api_version"] as? String == "2010-04-01")
            #expect(json["to_formatted"] as? String == "(555) 123-0009")
            #expect(json["uri"] as? String == "/2010-04-01/Accounts/\(TwilioHarness.accountSID)/Calls/\(placed.sid).json")
            #expect(json.keys.contains("answered_by"))
            #expect((json["date_created"] as? String)?.hasSuffix("+0000") == true)
        }
    }
}

func getText(_ url: String) async throws -> String {
    let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
    let body = try await response.body.collect(upTo: 4 << 20)
    return String(buffer: body)
}

func getJSON(_ url: String) async throws -> [String: Any] {
    let text = try await getText(url)
    return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
}
