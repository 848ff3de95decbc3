import AsyncHTTPClient
import ChorusAPI
import ChorusTestSupport
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import Testing
import WebSocketKit

@testable import ChorusServer

/// Whole calls through the real bridge over real sockets: the sandbox Twilio dials back over the Media Streams
/// protocol, the bridge relays to the sandbox OpenAI Realtime emulator, and the outcome is read back through the API.
@Suite("Live calls (media bridge)", .serialized)
struct LiveCallTests {
    /// Calls a test places; the callee's script decides what happens.
    struct Callee: Encodable {
        var behavior = "answer"
        var lines: [String]? = nil
        var hangup_after_seconds: Double? = nil
        var interrupt_after_ms: Int? = nil
        var reply_after_ms: Int? = nil
        var first_line_after_ms: Int? = nil
        var press_key: String? = nil
        var press_key_after_ms: Int? = nil
    }

    struct RealtimeBehavior: Encodable {
        var first_audio_delay_ms: Int? = nil
        var speed: Double? = nil
        var reply_lines: [String]? = nil
        var caller_transcripts: [String]? = nil
        var fail_after_ms: Int? = nil
        var failure: String? = nil
    }

    static func configure(_ server: TestServer, number: String, callee: Callee, realtime: RealtimeBehavior) async throws {
        let encoded = number.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? number
        let set = try await server.request(.PUT, "/sandbox/callees/\(encoded)", json: callee)
        #expect((200..<300).contains(set.status), "callee: \(set.text)")
        let behavior = try await server.request(.PUT, "/sandbox/openai/realtime/behavior", json: realtime)
        #expect((200..<300).contains(behavior.status), "realtime behavior: \(behavior.text)")
    }

    static func detail(_ server: TestServer, _ token: String, sid: String) async throws -> CallDetailResponse {
        let reply = try await server.request(.GET, "/mobile/calls/\(sid)", token: token)
        #expect(reply.status == 200, "\(reply.text)")
        return try reply.decode(CallDetailResponse.self)
    }

    /// Waits until the call has ended and the bridge has reported (its latency figures are saved).
    static func settled(_ server: TestServer, _ token: String, sid: String) async throws -> CallDetailResponse {
        var detail: CallDetailResponse?
        try await server.eventually(timeout: .seconds(30), "call \(sid) settles") {
            detail = try await Self.detail(server, token, sid: sid)
            return detail?.call.endedReason != nil && detail?.latency != nil
        }
        return detail!
    }

    /// Nothing of the call is left open: no bridge, no prepared session, no realtime socket.
    static func expectNothingOpen(_ server: TestServer) async throws {
        try await server.eventually(timeout: .seconds(15), "bridges and sessions closed") {
            let metrics = server.app.chorus.bridges.metrics.snapshot()
            let sessions = try await server.request(.GET, "/sandbox/openai/realtime/sessions").json["sessions"] as? [[String: Any]] ?? []
            let open = sessions.filter { ($0["closed_at"] as? String) == nil }
            return metrics.openBridges == 0 && metrics.preparedSessions == 0 && open.isEmpty
        }
    }

    @Test(
        "an answered call: the AI speaks first, the callee talks and interrupts, hangs up; transcript and latency saved",
        arguments: TestDatabase.all)
    func conversation(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let number = "+14155557001"
            try await Self.configure(
                server, number: number,
                callee: Callee(
                    lines: ["Hello? Who is this?", "Wait, wait, hold on a second.", "Okay, bye now."],
                    hangup_after_seconds: 12, interrupt_after_ms: 700, reply_after_ms: 400),
                realtime: RealtimeBehavior(
                    first_audio_delay_ms: 150, speed: 4,
                    reply_lines: [
                        "Hey there, it's your old friend Sam, I was just thinking about you and wanted to catch up for a bit.",
                        "Sorry, go ahead, I'm listening.", "That is wonderful to hear.",
                    ],
                    caller_transcripts: ["Hello? Who is this?", "Wait, wait, hold on a second.", "Okay, bye now."]))
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            let detail = try await Self.settled(server, token, sid: placed.callSid)

            #expect(detail.call.status == "completed")
            #expect(detail.call.endedReason == "callee_hangup")
            #expect(
                // The callee hangs up at 12 s of wall clock; a loaded machine may settle the call a little later.
                (detail.call.durationSeconds ?? 0) >= 11 && (detail.call.durationSeconds ?? 99) <= 16,
                "duration \(String(describing: detail.call.durationSeconds))")
            #expect(detail.answeredAt != nil && detail.endedAt != nil)
            let transcript = detail.transcript ?? []
            #expect(transcript.first?.speaker == "assistant", "the AI speaks first: \(transcript)")
            #expect(transcript.contains { $0.speaker == "callee" && $0.text == "Hello? Who is this?" })
            #expect(transcript.contains { $0.speaker == "assistant" && $0.interrupted }, "a barge-in: \(transcript)")
            #expect((detail.bargeIns ?? 0) >= 1)
            let latency = try #require(detail.latency)
            // Figures, not performance (that is chorus-bench's job): present and plausible.
            #expect((latency.firstAudioMs ?? -1) > 0)
            #expect(latency.turns >= 1 && latency.turnP50Ms != nil)

            // The emulator's view: truncations never exceeded the audio generated, and no event was refused.
            let sessions = try await server.request(.GET, "/sandbox/openai/realtime/sessions").json["sessions"] as? [[String: Any]] ?? []
            #expect(sessions.count == 1)
            let session = sessions.first ?? [:]
            let truncations = session["truncations"] as? [[String: Any]] ?? []
            #expect(!truncations.isEmpty)
            for truncation in truncations {
                let end = truncation["audio_end_ms"] as? Int ?? -1
                let generated = truncation["generated_ms"] as? Int ?? -1
                #expect(end >= 0 && end <= generated, "truncate \(end) of \(generated) ms")
            }
            #expect((session["errors"] as? [Any] ?? []).isEmpty, "realtime errors: \(session["errors"] ?? "")")

            // The call was charged once; nothing stayed open.
            #expect(try await server.usage(token).trialCallsUsed == 1)
            try await Self.expectNothingOpen(server)
        }
    }

    @Test(
        "a call watched live: the owner's event stream and the console's live view show status and transcript as they happen",
        arguments: TestDatabase.all)
    func watchedLive(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let email = "watcher-\(UUID().uuidString.prefix(6).lowercased())@chorus.test"
            let token = try await server.register(email: email).accessToken
            try await ConsoleTests.setRole(server, email: email, role: "admin")
            let browser = ConsoleTests.Browser(base: server.baseURL)
            defer { Task { await browser.shutdown() } }
            let session = try #require(try await browser.signIn(email: email, password: "correct horse battery").session)
            let console = EventStreamReader(
                client: server.client, url: server.baseURL + "/console/api/live", headers: [("Cookie", "chorus_console=\(session)")])
            defer { console.cancel() }
            try await server.eventually("the console's first live view") { console.received.first?.name == "calls" }
            let decoder = ChorusJSON.makeDecoder()
            let first = try decoder.decode(ConsoleLiveDTO.self, from: Data(try #require(console.received.first).data.utf8))
            #expect(first.calls.isEmpty)

            let number = "+14155557010"
            try await Self.configure(
                server, number: number,
                // The callee says hello as they pick up (the AI's first words wait for it, or for machine detection).
                callee: Callee(
                    lines: ["Hello? Who is this?", "Okay, bye now."], hangup_after_seconds: 7, reply_after_ms: 300, first_line_after_ms: 300),
                realtime: RealtimeBehavior(
                    speed: 4, reply_lines: ["Hi, it's Sam from the bakery.", "Have a lovely day."],
                    caller_transcripts: ["Hello? Who is this?", "Okay, bye now."]))
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            let owner = EventStreamReader(
                client: server.client, url: server.baseURL + "/mobile/calls/\(placed.callSid)/events", headers: [("Authorization", "Bearer \(token)")]
            )
            defer { owner.cancel() }

            // The console lists the call while it is going on, with the number masked.
            try await server.eventually(timeout: .seconds(20), "the console shows the call in progress") {
                console.received.filter { $0.name == "calls" }.contains { event in
                    let live = try? decoder.decode(ConsoleLiveDTO.self, from: Data(event.data.utf8))
                    return live?.calls.contains { $0.callSid == placed.callSid && $0.phoneNumber == "+14•••••••10" } == true
                }
            }
            // The owner's stream: a snapshot, transcript lines while the call goes on, then `done`, and it ends.
            try await server.eventually(timeout: .seconds(30), "the owner's stream ends with done") { owner.hasEnded }
            let names = owner.received.map(\.name)
            #expect(names.first == "snapshot" && names.last == "done", "\(names)")
            let lines = owner.received.filter { $0.name == "transcript" }.compactMap {
                try? decoder.decode(CallProgressDTO.self, from: Data($0.data.utf8)).line
            }
            #expect(lines.contains { $0.speaker == "assistant" } && lines.contains { $0.speaker == "callee" && $0.text == "Hello? Who is this?" })
            let done = try decoder.decode(CallProgressDTO.self, from: Data(try #require(owner.received.last).data.utf8))
            let detail = try #require(done.detail)
            #expect(detail.call.endedReason == "callee_hangup" && detail.latency != nil)
            // Every line shown live is in the saved transcript.
            let saved = Set((detail.transcript ?? []).map { "\($0.speaker)|\($0.text)" })
            #expect(lines.allSatisfy { saved.contains("\($0.speaker)|\($0.text)") }, "\(lines) vs \(saved)")
            // A live line comes before anything says the call is over (a final status, or `done` — which may come
            // first when the bridge's report and Twilio's last callback land together): the caller saw it during the
            // call.
            let firstLine = try #require(names.firstIndex(of: "transcript"))
            let over = try #require(
                owner.received.firstIndex { event in
                    let status = (try? decoder.decode(CallProgressDTO.self, from: Data(event.data.utf8)))?.call?.status
                    return event.name == "done"
                        || (event.name == "status" && ["completed", "busy", "no-answer", "failed", "canceled"].contains(status ?? ""))
                })
            #expect(firstLine < over, "\(names)")

            // Every event matches the contract.
            let contract = try SpecSchemaValidator(document: try await server.request(.GET, "/openapi.json").body)
            for event in owner.received {
                let problems = try contract.validate(json: Data(event.data.utf8), against: "CallProgress", strictProperties: true)
                #expect(problems.isEmpty, "\(event.name): \(problems)")
            }
            for event in console.received {
                let problems = try contract.validate(
                    json: Data(event.data.utf8), against: event.name == "calls" ? "ConsoleLive" : "CallProgress", strictProperties: true)
                #expect(problems.isEmpty, "\(event.name): \(problems)")
            }

            // The console saw the lines too, and finally an empty list.
            #expect(console.received.contains { $0.name == "transcript" })
            try await server.eventually(timeout: .seconds(10), "the console shows no call in progress") {
                let last = console.received.last { $0.name == "calls" }
                return (try? decoder.decode(ConsoleLiveDTO.self, from: Data((last?.data ?? "").utf8)))?.calls.isEmpty == true
            }

            // Someone else's call is not found; without a token, nothing is streamed.
            let stranger = try await server.register().accessToken
            #expect(try await server.request(.GET, "/mobile/calls/\(placed.callSid)/events", token: stranger).status == 404)
            #expect(try await server.request(.GET, "/mobile/calls/\(placed.callSid)/events").status == 401)
            // A call that is over: the snapshot, then `done` at once.
            let replay = try await server.request(.GET, "/mobile/calls/\(placed.callSid)/events", token: token)
            #expect(replay.text.split(separator: "\n").filter { $0.hasPrefix("event: ") } == ["event: snapshot", "event: done"])
        }
    }

    @Test("without scripted transcripts, the model emulator transcribes what the simulated callee said, from its audio")
    func calleeLinesTranscribed() async throws {
        try await TestServer.run(on: .sqlite) { server in
            let token = try await server.register().accessToken
            let number = "+14155557011"
            let lines = ["Hello? Who is this?", "Oh, hi Sam. I am fine, thanks.", "Okay, bye now."]
            try await Self.configure(
                server, number: number, callee: Callee(lines: lines, hangup_after_seconds: 9, reply_after_ms: 300),
                realtime: RealtimeBehavior(speed: 4, reply_lines: ["Hi, it's Sam.", "How have you been?", "Talk soon!"]))
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            let detail = try await Self.settled(server, token, sid: placed.callSid)
            let heard = (detail.transcript ?? []).filter { $0.speaker == "callee" }.map(\.text)
            #expect(!heard.isEmpty && heard.allSatisfy(lines.contains), "\(heard)")
            #expect(heard.first == lines[0])
        }
    }

    @Test("every client event the bridge sent validates against the OpenAI spec (strict)", arguments: TestDatabase.all)
    func realtimeEventsMatchSpec(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let number = "+14155557002"
            try await Self.configure(
                server, number: number, callee: Callee(lines: ["Hi!", "Sure."], hangup_after_seconds: 6, interrupt_after_ms: 400),
                realtime: RealtimeBehavior(
                    speed: 4,
                    reply_lines: ["Hello, this is a rather long greeting, on purpose, so that you have all the time you need to interrupt me."]))
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            _ = try await Self.settled(server, token, sid: placed.callSid)

            let requests = try await server.request(.GET, "/sandbox/requests").json["requests"] as? [[String: Any]] ?? []
            let events = requests.filter { ($0["method"] as? String) == "WS" && ($0["path"] as? String)?.hasSuffix("/realtime") == true }
            let validator = try SpecSchemaValidator.openAIRealtime()
            var types: [String: Int] = [:]
            for event in events {
                let body = event["body"] as? String ?? ""
                let type = ((try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any])?["type"] as? String ?? "?"
                types[type, default: 0] += 1
                if type == "input_audio_buffer.append" && types[type]! > 5 { continue }
                let problems = try validator.validate(json: Data(body.utf8), against: "RealtimeClientEvent", strictProperties: true)
                #expect(problems.isEmpty, "\(type): \(problems)")
            }
            // The session, then turning on the model's own answers once machine detection released the first words.
            #expect(types["session.update"] == 2)
            #expect(types["response.create"] == 1)
            #expect((types["input_audio_buffer.append"] ?? 0) > 20)
            #expect((types["conversation.item.truncate"] ?? 0) >= 1)
        }
    }

    @Test("the duration limit ends the call at the limit, without a warning, as max_duration", arguments: TestDatabase.all)
    func durationLimit(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_TRIAL_CALL_SECONDS": "3"]) { server in
            let token = try await server.register().accessToken
            let number = "+14155557003"
            try await Self.configure(
                server, number: number, callee: Callee(lines: ["Mm-hm."], hangup_after_seconds: 30),
                realtime: RealtimeBehavior(speed: 4, reply_lines: ["I could talk all day long about the weather and my garden."]))
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            #expect(placed.durationLimit == 3)
            let detail = try await Self.settled(server, token, sid: placed.callSid)
            #expect(detail.call.endedReason == "max_duration")
            #expect((detail.call.durationSeconds ?? 99) <= 3)
            let sandbox = try await server.request(.GET, "/sandbox/calls").json["calls"] as? [[String: Any]] ?? []
            #expect(sandbox.first?["time_limit"] as? Int == 3)
            #expect(sandbox.first?["ended_by"] as? String == "rest_hangup" || sandbox.first?["ended_by"] as? String == "server_closed_stream")
            try await Self.expectNothingOpen(server)
        }
    }

    @Test("an OpenAI failure mid-call ends the phone call within 2 s as error_openai", arguments: TestDatabase.all)
    func openAIFailure(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let number = "+14155557004"
            try await Self.configure(
                server, number: number, callee: Callee(lines: ["Hello?"], hangup_after_seconds: 30),
                realtime: RealtimeBehavior(speed: 4, fail_after_ms: 1_500, failure: "error"))
            let started = ContinuousClock.now
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            let detail = try await Self.settled(server, token, sid: placed.callSid)
            #expect(detail.call.endedReason == "error_openai")
            // Ended by the failure (at 1.5 s of the session), long before the callee's own hang-up at 30 s; the
            // emulated Twilio saw the REST hang-up or the stream close.
            #expect(ContinuousClock.now - started < .seconds(25))
            #expect((detail.call.durationSeconds ?? 99) < 20)
            let sandbox = try await server.request(.GET, "/sandbox/calls").json["calls"] as? [[String: Any]] ?? []
            #expect(["rest_hangup", "server_closed_stream"].contains(sandbox.first?["ended_by"] as? String ?? ""))
            try await Self.expectNothingOpen(server)
        }
    }

    @Test("unanswered and busy calls close the session opened while ringing and are refunded", arguments: TestDatabase.all)
    func unansweredCloseSessions(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, sandboxTimeScale: LoopbackServer.fastCalls) { server in
            let token = try await server.register().accessToken
            for (number, behavior, reason) in [("+14155557005", "no-answer", "no_answer"), ("+14155557006", "busy", "busy")] {
                try await server.setCallee(number, behavior: behavior)
                let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
                let ended = try await server.waitForEnd(token, sid: placed.callSid)
                #expect(ended.endedReason?.rawValue == reason)
            }
            #expect(try await server.usage(token).trialCallsUsed == 0)
            try await Self.expectNothingOpen(server)
        }
    }

    @Test("the media stream refuses unsigned upgrades, unknown tokens and replayed tokens", arguments: TestDatabase.all)
    func streamAuthentication(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let number = "+14155557007"
            try await Self.configure(
                server, number: number, callee: Callee(lines: ["Hi"], hangup_after_seconds: 2), realtime: RealtimeBehavior(speed: 4))
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            _ = try await Self.settled(server, token, sid: placed.callSid)
            let calls = try await server.request(.GET, "/sandbox/calls").json["calls"] as? [[String: Any]] ?? []
            let used = (calls.first?["custom_parameters"] as? [String: String])?["token"]
            #expect(used != nil)

            let streamURL = MediaStreamController(services: server.app.chorus).streamURL
            let port = server.configuration.port
            // No signature, and a wrong one: 403 before any upgrade.
            for signature in [nil, "bm90IGEgc2lnbmF0dXJl"] {
                var headers = HTTPHeaders()
                if let signature { headers.add(name: "X-Twilio-Signature", value: signature) }
                do {
                    try await WebSocket.connect(
                        to: "ws://127.0.0.1:\(port)/media-stream", headers: headers, on: MultiThreadedEventLoopGroup.singleton
                    ) { socket in _ = socket.close() }.get()
                    Issue.record("an upgrade without a valid signature was accepted")
                } catch WebSocketClient.Error.invalidResponseStatus(let head) {
                    #expect(head.status == .forbidden)
                }
            }
            // Signed, but the start frame's token is unknown, then replayed: the server closes with 1008.
            let signature = server.app.chorus.twilioSignatures.signature(url: streamURL, parameters: [])
            for candidate in ["not-a-token", used ?? ""] {
                let code = try await Self.closeCode(port: port, signature: signature, token: candidate)
                #expect(code == .policyViolation, "token \(candidate.prefix(6)): \(String(describing: code))")
            }
            try await Self.expectNothingOpen(server)
        }
    }

    /// Connects like Twilio, sends `connected` and `start` with `token`, and returns how the server closed the socket.
    static func closeCode(port: Int, signature: String, token: String) async throws -> WebSocketErrorCode? {
        let closed = NIOLockedValueBox<WebSocketErrorCode?>(nil)
        let done = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
        var headers = HTTPHeaders()
        headers.add(name: "X-Twilio-Signature", value: signature)
        try await WebSocket.connect(to: "ws://127.0.0.1:\(port)/media-stream", headers: headers, on: MultiThreadedEventLoopGroup.singleton) {
            socket in
            socket.send(#"{"event":"connected","protocol":"Call","version":"1.0.0"}"#)
            socket.send(
                #"{"event":"start","sequenceNumber":"1","streamSid":"MZ00000000000000000000000000000001","start":{"streamSid":"MZ00000000000000000000000000000001","accountSid":"AC1","callSid":"CA1","tracks":["inbound"],"customParameters":{"token":"\#(token)"},"mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1}}}"#
            )
            socket.onClose.whenComplete { _ in
                closed.withLockedValue { $0 = socket.closeCode }
                done.succeed(())
            }
        }.get()
        try await done.futureResult.get()
        return closed.withLockedValue { $0 }
    }

    @Test("a transcript can be deleted by its owner only; the call stays in the history", arguments: TestDatabase.all)
    func deleteTranscript(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let other = try await server.register().accessToken
            let number = "+14155557008"
            try await Self.configure(
                server, number: number, callee: Callee(lines: ["Hello there."], hangup_after_seconds: 3, first_line_after_ms: 200),
                realtime: RealtimeBehavior(speed: 4, reply_lines: ["Hi, it's me."], caller_transcripts: ["Hello there."]))
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            let before = try await Self.settled(server, token, sid: placed.callSid)
            #expect(!(before.transcript ?? []).isEmpty)
            #expect(try await server.request(.GET, "/mobile/calls/\(placed.callSid)", token: other).status == 404)
            #expect(try await server.request(.DELETE, "/mobile/calls/\(placed.callSid)/transcript", token: other).status == 404)
            #expect(try await server.request(.DELETE, "/mobile/calls/\(placed.callSid)/transcript", token: token).status == 204)
            #expect(try await server.request(.DELETE, "/mobile/calls/\(placed.callSid)/transcript", token: token).status == 204)
            let after = try await Self.detail(server, token, sid: placed.callSid)
            #expect(after.transcript == nil && after.transcriptDeletedAt != nil)
            #expect(after.call.endedReason == before.call.endedReason)
            #expect(try await server.history(token).totalCalls == 1)
        }
    }

    @Test("a burst of calls is paced to the configured calls per second, none refused", arguments: TestDatabase.all)
    func dialPacing(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_TWILIO_CALLS_PER_SECOND": "5"], sandboxTimeScale: LoopbackServer.fastCalls) { server in
            let users = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<6 { group.addTask { try await server.register().accessToken } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            try await server.setCallee("+14155557009", behavior: "busy")
            let started = ContinuousClock.now
            let answers = try await withThrowingTaskGroup(of: (Int, Duration).self) { group in
                for token in users {
                    group.addTask { (try await server.makeCall(token, to: "+14155557009").status, ContinuousClock.now - started) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.map(\.0) == Array(repeating: 200, count: 6))
            // Dial slots 0, 0.2, …, 1.0 s: the last call is placed about a second after the first.
            let times = answers.map(\.1).sorted()
            #expect(times.last! - times.first! >= .milliseconds(750), "answers \(times)")
            let calls = try await server.request(.GET, "/sandbox/calls").json["calls"] as? [[String: Any]] ?? []
            #expect(calls.count == 6)
        }
    }
}
