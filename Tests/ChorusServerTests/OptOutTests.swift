import AsyncHTTPClient
import ChorusAPI
import ChorusCore
import ChorusTestSupport
import Foundation
import NIOCore
import SQLKit
import Testing

@testable import ChorusServer

/// Issue 17, disclosure and opt-out, end to end through the real bridge: the sandbox Twilio callee hears the disclosure,
/// says it does not want these calls or presses 9; the Realtime emulator calls the declared `opt_out` tool; the bridge
/// says goodbye, hangs up and puts the number on the do-not-call list; other accounts are then refused.
@Suite("Disclosure and opt-out (live calls)", .serialized)
struct OptOutTests {
    /// A short disclosure keeps the calls short (the built-in one is about 8 s of audio).
    static let shortDisclosure = ["CHORUS_CALL_DISCLOSURE": "AI call for {caller}. Say stop or press 9."]

    static let replies = LiveCallTests.RealtimeBehavior(
        first_audio_delay_ms: 150, speed: 4,
        reply_lines: ["Hi, it's Sam from the bakery, your cake is ready.", "Of course. You will not be called again. Goodbye."])

    static func store(_ server: TestServer) -> ChorusStore {
        ChorusStore(sql: server.app.db as! any SQLDatabase, reader: nil, writeGate: WriteGate())
    }

    /// Every row of the do-not-call list, every column as text.
    static func doNotCallRows(_ server: TestServer) async throws -> [[String]] {
        let rows = try await (server.app.db as! any SQLDatabase).raw("SELECT number_hash, source, created_at FROM do_not_call").all()
        return try rows.map { row in
            [try row.decode(column: "number_hash", as: String.self), try row.decode(column: "source", as: String.self),
             String(try row.decode(column: "created_at", as: Int64.self))]
        }
    }

    /// Another account is refused the number: 422 `number_opted_out`, nothing charged, nothing dialled, nothing scheduled.
    static func expectRefused(_ server: TestServer, number: String) async throws {
        let other = try await server.register().accessToken
        let dialled = try await CallDestinationServerTests.dialled(server)
        let refusal = RefusalDetail(error: "number_opted_out", message: "This number has asked not to receive calls from this service.")
        #expect(try CallDestinationServerTests.refusal(try await server.makeCall(other, to: number)) == refusal)
        let scheduled = try await server.request(
            .POST, "/mobile/schedule-call", token: other,
            json: ScheduleCallRequest(phoneNumber: number, scenario: "default", scheduledTime: Date().addingTimeInterval(3_600)))
        #expect(try CallDestinationServerTests.refusal(scheduled) == refusal)
        let usage = try await server.usage(other)
        #expect(usage.trialCallsUsed == 0 && usage.callsMadeTotal == 0)
        #expect(try await CallDestinationServerTests.dialled(server) == dialled)
        #expect(try await server.request(.GET, "/mobile/scheduled-calls", token: other).text.contains(number) == false)
    }

    @Test("opt-out by speech: the disclosure first, the emulator calls opt_out, goodbye, hung up; the number refused to others", arguments: TestDatabase.all)
    func bySpeech(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: Self.shortDisclosure) { server in
            let token = try await server.register().accessToken
            let number = "+14155557101"
            try await LiveCallTests.configure(
                server, number: number,
                callee: LiveCallTests.Callee(lines: ["Stop calling me, I don't want these calls."], hangup_after_seconds: 25, reply_after_ms: 1_200),
                realtime: Self.replies)
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            let detail = try await LiveCallTests.settled(server, token, sid: placed.callSid)

            #expect(detail.call.endedReason == "opted_out")
            let transcript = detail.transcript ?? []
            #expect(transcript.first?.speaker == "assistant" && transcript.first?.text == "AI call for a user. Say stop or press 9.", "\(transcript)")
            #expect(transcript.contains { $0.speaker == "callee" && $0.text == "Stop calling me, I don't want these calls." }, "\(transcript)")
            #expect(transcript.last?.speaker == "assistant" && transcript.last?.text.contains("Goodbye") == true, "the goodbye: \(transcript)")
            #expect((detail.call.durationSeconds ?? 99) < 25, "hung up by the bridge, not the callee")

            // The emulator saw the tool declared and called it once; the bridge answered with its output.
            let sessions = try await server.request(.GET, "/sandbox/openai/realtime/sessions").json["sessions"] as? [[String: Any]] ?? []
            let session = try #require(sessions.first)
            #expect(session["function_calls"] as? [String] == ["opt_out"])
            #expect((session["errors"] as? [Any] ?? []).isEmpty, "realtime errors: \(session["errors"] ?? "")")
            #expect((session["instructions"] as? String ?? "").contains("call the opt_out function"))

            // The list holds the keyed hash, never the number.
            let rows = try await Self.doNotCallRows(server)
            #expect(rows.count == 1)
            #expect(rows.first?[0] == server.app.chorus.numberHasher.hash(number))
            #expect(rows.first?[1] == "speech")
            #expect(!rows.flatMap { $0 }.contains { $0.contains("4155557101") })

            try await Self.expectRefused(server, number: number)
            // The caller too.
            #expect(try await server.makeCall(token, to: number).status == 422)
            try await LiveCallTests.expectNothingOpen(server)
        }
    }

    @Test(
        "opt-out by key during the disclosure: goodbye, opted_out, refused to others; the console counts it and removes it on request, audited",
        arguments: TestDatabase.all)
    func byKey(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: Self.shortDisclosure) { server in
            let token = try await server.register().accessToken
            let number = "+14155557102"
            var callee = LiveCallTests.Callee(lines: ["Okay."], hangup_after_seconds: 25, reply_after_ms: 5_000)
            callee.press_key = "9"
            callee.press_key_after_ms = 600
            // The persona never speaks: the only reply the emulated model gives is the goodbye.
            try await LiveCallTests.configure(
                server, number: number, callee: callee,
                realtime: LiveCallTests.RealtimeBehavior(
                    first_audio_delay_ms: 150, speed: 4, reply_lines: ["You will not be called again. Goodbye."]))
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            let detail = try await LiveCallTests.settled(server, token, sid: placed.callSid)

            #expect(detail.call.endedReason == "opted_out")
            let transcript = detail.transcript ?? []
            #expect(transcript.first?.speaker == "assistant" && transcript.first?.text.hasPrefix("AI call") == true, "\(transcript)")
            #expect(
                transcript.filter { $0.speaker == "assistant" }.last?.text == "You will not be called again. Goodbye.", "the goodbye: \(transcript)")
            // The callee heard the key acknowledged: the disclosure was cut when the key was pressed.
            let calls = try await server.request(.GET, "/sandbox/calls").json["calls"] as? [[String: Any]] ?? []
            let record = try #require(calls.first { ($0["sid"] as? String) == placed.callSid })
            #expect((record["clears_received"] as? Int ?? 0) >= 1)
            let rows = try await Self.doNotCallRows(server)
            #expect(rows.count == 1 && rows.first?[1] == "key")
            #expect(!rows.flatMap { $0 }.contains { $0.contains("4155557102") })
            try await Self.expectRefused(server, number: number)

            // The console: the figures, then the removal the callee asked for, audited with the number masked.
            let (browser, cookies, csrf) = try await ConsoleTests.operatorSession(server)
            defer { Task { await browser.shutdown() } }
            let figures = try await browser.send(.GET, "/console/api/opt-outs", cookies: cookies)
            #expect(figures.status == 200)
            let counts = try JSONDecoder().decode(ConsoleOptOutsDTO.self, from: Data(figures.text.utf8))
            #expect(counts == ConsoleOptOutsDTO(total: 1, lastDay: 1, lastWeek: 1, bySpeech: 0, byKey: 1))
            let page = try await browser.send(.GET, "/console", cookies: cookies)
            #expect(page.text.contains("Do-not-call list"))

            func remove(_ phoneNumber: String) async throws -> HTTPClientResponse {
                var request = HTTPClientRequest(url: server.baseURL + "/console/api/opt-outs/remove")
                request.method = .POST
                request.headers.add(name: "Cookie", value: "chorus_console=\(cookies["chorus_console"]!)")
                request.headers.add(name: "X-CSRF-Token", value: csrf)
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(ConsoleRemoveOptOutRequest(phoneNumber: phoneNumber))))
                return try await browser.client.execute(request, timeout: .seconds(30))
            }
            #expect(try await remove("4155557102").status == .unprocessableEntity)
            #expect(try await remove("+14155557199").status == .notFound)
            #expect(try await remove(number).status == .ok)
            #expect(try await remove(number).status == .notFound)
            let audit = try await browser.send(.GET, "/console/api/audit", cookies: cookies)
            #expect(audit.text.contains("remove_opt_out"))
            #expect(!audit.text.contains("4155557102"), "the audit log holds the masked number only")
            #expect(try await Self.doNotCallRows(server).isEmpty)
            // The number can be called again.
            #expect(try await server.makeCall(try await server.register().accessToken, to: number).status == 200)
            try await LiveCallTests.expectNothingOpen(server)
        }
    }

    @Test("the built-in disclosure is heard first, naming the caller's first name, then the persona speaks", arguments: [TestDatabase.sqlite])
    func disclosureHeardFirst(_ database: TestDatabase) async throws {
        // The shared test settings turn the disclosure off; an empty value restores the built-in one.
        try await TestServer.run(on: database, environment: ["CHORUS_CALL_DISCLOSURE": ""]) { server in
            let token = try await server.register().accessToken
            let named = try await server.request(.PUT, "/me/profile", token: token, json: MessagingProfileDTO(displayName: "maria"))
            #expect(named.status == 200, "\(named.text)")
            let number = "+14155557103"
            try await LiveCallTests.configure(
                server, number: number, callee: LiveCallTests.Callee(lines: ["Oh, okay. Hello?"], hangup_after_seconds: 16, reply_after_ms: 800),
                realtime: Self.replies)
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            let detail = try await LiveCallTests.settled(server, token, sid: placed.callSid)
            #expect(detail.call.endedReason == "callee_hangup")
            let assistant = (detail.transcript ?? []).filter { $0.speaker == "assistant" }.map(\.text)
            #expect(
                assistant.first
                    == "This is an AI-generated call from Chorus on behalf of Maria. Say stop, or press 9, at any time and you will not be called again.",
                "\(assistant)")
            #expect(assistant.dropFirst().first == "Hi, it's Sam from the bakery, your cake is ready.", "the persona follows: \(assistant)")
            #expect((detail.transcript ?? []).first?.speaker == "assistant")
            // Nothing was put on the list.
            #expect(try await Self.doNotCallRows(server).isEmpty)
        }
    }
}
