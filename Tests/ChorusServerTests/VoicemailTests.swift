import ChorusAPI
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusServer

/// Answering machines and fax machines (issue 17), through the real bridge: the sandbox Twilio runs asynchronous
/// answering-machine detection on its simulated callee and posts the signed result; the bridge holds the AI's first
/// words meanwhile.
@Suite("Voicemail and answering machines", .serialized)
struct VoicemailTests {
    typealias Callee = LiveCallTests.Callee
    typealias RealtimeBehavior = LiveCallTests.RealtimeBehavior

    struct MachineCallee: Encodable {
        var behavior: String
        var lines: [String]? = nil
        var beep: Bool? = nil
        var hangup_after_seconds: Double? = nil
    }

    static func configure(_ server: TestServer, number: String, callee: some Encodable, realtime: RealtimeBehavior) async throws {
        let encoded = number.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? number
        let set = try await server.request(.PUT, "/sandbox/callees/\(encoded)", json: callee)
        #expect((200..<300).contains(set.status), "callee: \(set.text)")
        let behavior = try await server.request(.PUT, "/sandbox/openai/realtime/behavior", json: realtime)
        #expect((200..<300).contains(behavior.status), "realtime behavior: \(behavior.text)")
    }

    static func sandboxCall(_ server: TestServer, sid: String) async throws -> [String: Any] {
        let calls = try await server.request(.GET, "/sandbox/calls").json["calls"] as? [[String: Any]] ?? []
        return calls.first { $0["sid"] as? String == sid } ?? [:]
    }

    /// The emulator's call once it has recorded the answer to its detection callback: the server hangs up on a
    /// machine before it answers the callback, so the call can settle a moment before that answer is recorded.
    static func sandboxCallAfterDetection(_ server: TestServer, sid: String) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let call = try await sandboxCall(server, sid: sid)
            if call["machine_detection_http_status"] is Int || ContinuousClock.now > deadline { return call }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    static func realtimeResponses(_ server: TestServer) async throws -> [[String: Any]] {
        let sessions = try await server.request(.GET, "/sandbox/openai/realtime/sessions").json["sessions"] as? [[String: Any]] ?? []
        return sessions.flatMap { $0["responses"] as? [[String: Any]] ?? [] }
    }

    /// The events the bridge sent to the Realtime API, by type, in order.
    static func realtimeClientEvents(_ server: TestServer) async throws -> [[String: Any]] {
        let requests = try await server.request(.GET, "/sandbox/requests").json["requests"] as? [[String: Any]] ?? []
        return requests.filter { ($0["method"] as? String) == "WS" && ($0["path"] as? String)?.hasSuffix("/realtime") == true }.compactMap {
            (try? JSONSerialization.jsonObject(with: Data(($0["body"] as? String ?? "").utf8))) as? [String: Any]
        }.filter { $0["type"] as? String != "input_audio_buffer.append" }
    }

    @Test("a voicemail greeting with a beep: hung up without a word, ended_reason voicemail, nothing charged", arguments: TestDatabase.all)
    func voicemailHungUp(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let number = "+14155557101"
            try await Self.configure(
                server, number: number, callee: MachineCallee(behavior: "voicemail"), realtime: RealtimeBehavior(speed: 4))
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            #expect(try await server.usage(token).trialCallsUsed == 1)  // charged while it rings
            let detail = try await LiveCallTests.settled(server, token, sid: placed.callSid)

            #expect(detail.call.status == "completed")
            #expect(detail.call.endedReason == "voicemail")
            #expect(try await server.usage(token).trialCallsUsed == 0, "a machine is not charged")
            // The AI never spoke: no response, no audio played, no assistant line.
            #expect(try await Self.realtimeResponses(server).isEmpty)
            let call = try await Self.sandboxCallAfterDetection(server, sid: placed.callSid)
            #expect(call["answered_by"] as? String == "machine_end_beep")
            #expect(call["machine_detection_http_status"] as? Int == 204)
            #expect(call["media_frames_received"] as? Int == 0, "audio reached the machine: \(call)")
            // The server ends it: by the REST hang-up, or — when its bridge closes the machine's stream first, which
            // under load it can — by closing the stream (the hang-up then finds the call ended).
            #expect(["rest_hangup", "server_closed_stream"].contains(call["ended_by"] as? String ?? ""), "\(call)")
            #expect(!(detail.transcript ?? []).contains { $0.speaker == "assistant" })
            #expect(detail.latency?.firstAudioMs == nil)
            // The placed call asked for asynchronous detection with a signed callback on our route.
            #expect((call["url"] as? String).flatMap(URL.init(string:))?.path == "/twilio/voice")
            let twilio = try await server.request(.GET, "/sandbox/requests").json["requests"] as? [[String: Any]] ?? []
            let create = try #require(twilio.first { ($0["path"] as? String)?.hasSuffix("/Calls.json") == true && $0["method"] as? String == "POST" })
            let form = create["body"] as? String ?? ""
            #expect(form.contains("MachineDetection=DetectMessageEnd") && form.contains("AsyncAmd=true"), "\(form)")
            #expect(form.contains("AsyncAmdStatusCallback=") && form.contains("machine-detection"), "\(form)")
            try await LiveCallTests.expectNothingOpen(server)
        }
    }

    @Test("a greeting without a beep and a fax machine: voicemail and fax, nothing charged", arguments: TestDatabase.all)
    func silenceAndFax(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            try await Self.configure(
                server, number: "+14155557102", callee: MachineCallee(
                    behavior: "voicemail", lines: ["Hello, you have reached the Millers. Nobody is home right now, so please leave your name and number."],
                    beep: false),
                realtime: RealtimeBehavior(speed: 4))
            try await Self.configure(server, number: "+14155557103", callee: MachineCallee(behavior: "fax"), realtime: RealtimeBehavior(speed: 4))
            let silent = try await server.makeCall(token, to: "+14155557102").decode(MakeCallResponse.self)
            let fax = try await server.makeCall(token, to: "+14155557103").decode(MakeCallResponse.self)
            let silentDetail = try await LiveCallTests.settled(server, token, sid: silent.callSid)
            let faxDetail = try await LiveCallTests.settled(server, token, sid: fax.callSid)
            #expect(silentDetail.call.endedReason == "voicemail")
            #expect(faxDetail.call.endedReason == "fax")
            #expect(try await Self.sandboxCall(server, sid: silent.callSid)["answered_by"] as? String == "machine_end_silence")
            #expect(try await Self.sandboxCall(server, sid: fax.callSid)["answered_by"] as? String == "fax")
            #expect(try await server.usage(token).trialCallsUsed == 0)
            // The long greeting held the AI's words; a fax's first tone is a short sound followed by silence, which the
            // gate takes for a "hello", so the AI may have started before detection said `fax` (a machine hears it).
            #expect(try await Self.sandboxCall(server, sid: silent.callSid)["media_frames_received"] as? Int == 0)
            #expect(["rest_hangup", "server_closed_stream"].contains(try await Self.sandboxCall(server, sid: fax.callSid)["ended_by"] as? String ?? ""))
            try await LiveCallTests.expectNothingOpen(server)
        }
    }

    @Test("a custom scenario that leaves a message: spoken after the beep from the voicemail instruction, then hung up", arguments: TestDatabase.all)
    func leavesMessage(_ database: TestDatabase) async throws {
        // With the deployment's disclosure (the test servers leave it out by default).
        try await TestServer.run(on: database, environment: ["CHORUS_CALL_DISCLOSURE": ""]) { server in
            let token = try await server.register().accessToken
            try await server.buy(token, productID: "speech_assistant_premium_monthly", periodSeconds: 30 * 86_400)
            let invalid = try await server.request(
                .POST, "/mobile/custom-scenarios", token: token,
                json: CreateCustomScenarioRequest(
                    name: "Dentist", persona: "You are Dana from the dental practice, calling about an appointment.", voice: "ballad",
                    voicemail: "shout"))
            #expect(invalid.status == 422, "\(invalid.text)")
            let created = try await server.request(
                .POST, "/mobile/custom-scenarios", token: token,
                json: CreateCustomScenarioRequest(
                    name: "Dentist", persona: "You are Dana from the dental practice, calling about an appointment.", voice: "ballad",
                    voicemail: "leave_message"))
            #expect(created.status == 201, "\(created.text)")
            let scenario = try created.decode(CustomScenarioDTO.self)
            #expect(scenario.voicemail == "leave_message")

            let number = "+14155557104"
            let message = "Hi, this is Dana from the dental practice about your appointment. Please call us back. Goodbye."
            try await Self.configure(
                server, number: number, callee: MachineCallee(behavior: "voicemail"), realtime: RealtimeBehavior(speed: 4, reply_lines: [message]))
            let before = try await server.usage(token)
            let placed = try await server.makeCall(token, to: number, scenario: scenario.id).decode(MakeCallResponse.self)
            let detail = try await LiveCallTests.settled(server, token, sid: placed.callSid)
            #expect(detail.call.endedReason == "voicemail_message")
            // The emulated model says the words quoted in a response's instructions, here the disclosure the message opens
            // with (a real model goes on with the message itself).
            #expect(
                (detail.transcript ?? []).contains { $0.speaker == "assistant" && ($0.text == message || $0.text.contains("AI-generated")) },
                "\(detail.transcript ?? [])")
            // One response, asked for with the voicemail instruction, after the beep; its audio played in full.
            let responses = try await Self.realtimeResponses(server)
            #expect(responses.count == 1 && responses.first?["status"] as? String == "completed", "\(responses)")
            let creates = try await Self.realtimeClientEvents(server).filter { $0["type"] as? String == "response.create" }
            #expect(creates.count == 1)
            let instructions = (creates.first?["response"] as? [String: Any])?["instructions"] as? String
            #expect(instructions?.contains("answering machine") == true, "\(creates)")
            // The message opens with the call's disclosure, like every call.
            #expect(instructions?.contains("AI-generated") == true, "\(creates)")
            let call = try await Self.sandboxCall(server, sid: placed.callSid)
            #expect(call["answered_by"] as? String == "machine_end_beep")
            #expect((call["ai_audio_played_ms"] as? Int ?? 0) > 1_000)
            let stream = try await server.request(.GET, "/sandbox/calls/\(placed.callSid)/media-stream").json
            let events = stream["events"] as? [[String: Any]] ?? []
            let greetingEnded = events.first { $0["kind"] as? String == "callee_line_ended" }?["at_ms"] as? Double ?? .infinity
            let messageStarted = events.first { $0["kind"] as? String == "ai_audio_started" }?["at_ms"] as? Double ?? -1
            #expect(messageStarted > greetingEnded, "the message started at \(messageStarted) ms, the greeting and beep ended at \(greetingEnded) ms")
            // The sandbox's answers match the contract.
            let contract = try SpecSchemaValidator(document: try await server.request(.GET, "/openapi.json").body)
            let streamBody = try await server.request(.GET, "/sandbox/calls/\(placed.callSid)/media-stream").body
            #expect(try contract.validate(json: streamBody, against: "SandboxMediaStreamStats", strictProperties: true).isEmpty)
            let list = try await server.request(.GET, "/sandbox/calls").body
            #expect(try contract.validate(json: list, against: "SandboxCallList", strictProperties: true) == [])
            // A delivered message is a call: charged.
            let after = try await server.usage(token)
            #expect(after.callsMadeToday == before.callsMadeToday + 1, "\(before) → \(after)")
            try await LiveCallTests.expectNothingOpen(server)
        }
    }

    @Test("a person who says hello: detection reports human, the AI speaks after the hello and never over it", arguments: TestDatabase.all)
    func humanUnaffected(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let number = "+14155557105"
            try await Self.configure(
                server, number: number,
                callee: Callee(lines: ["Hello?", "Oh, hi Sam.", "Bye now."], hangup_after_seconds: 9, reply_after_ms: 400, first_line_after_ms: 300),
                realtime: RealtimeBehavior(
                    speed: 4, reply_lines: ["Hi, it's Sam, do you have a minute?", "Great, talk soon."],
                    caller_transcripts: ["Hello?", "Oh, hi Sam.", "Bye now."]))
            let placed = try await server.makeCall(token, to: number).decode(MakeCallResponse.self)
            let detail = try await LiveCallTests.settled(server, token, sid: placed.callSid)
            #expect(detail.call.endedReason == "callee_hangup")
            #expect(try await server.usage(token).trialCallsUsed == 1)
            let call = try await Self.sandboxCall(server, sid: placed.callSid)
            #expect(call["answered_by"] as? String == "human")
            let transcript = detail.transcript ?? []
            #expect(transcript.first?.speaker == "callee" && transcript.first?.text == "Hello?", "\(transcript)")
            #expect(transcript.contains { $0.speaker == "assistant" })
            // The AI's first audio came after the hello ended, within a couple of seconds of it.
            let stream = try await server.request(.GET, "/sandbox/calls/\(placed.callSid)/media-stream").json
            let events = stream["events"] as? [[String: Any]] ?? []
            let helloEnded = try #require(events.first { $0["kind"] as? String == "callee_line_ended" }?["at_ms"] as? Double)
            let aiStarted = try #require(events.first { $0["kind"] as? String == "ai_audio_started" }?["at_ms"] as? Double)
            #expect(aiStarted > helloEnded && aiStarted < helloEnded + 2_500, "hello ended \(helloEnded) ms, AI started \(aiStarted) ms")
            #expect(!(events.contains { $0["kind"] as? String == "callee_line_started" && $0["while_ai_talking"] as? Bool == true && $0["detail"] as? String == "Hello?" }))
            let first = try #require(detail.latency?.firstAudioMs)
            #expect(first > Int(helloEnded))
            // The session answered no turn by itself before the release, and every turn after it.
            let types = try await Self.realtimeClientEvents(server).compactMap { $0["type"] as? String }
            #expect(types.filter { $0 == "session.update" }.count == 2, "\(types)")
            #expect(types.filter { $0 == "response.create" }.count == 1, "\(types)")
        }
    }

    @Test("the detection callback must be signed (403), name a known call (404) and answers 204")
    func callbackSignature() async throws {
        try await TestServer.run(on: .sqlite) { server in
            let token = try await server.register().accessToken
            try await server.setCallee("+14155557106", behavior: "no-answer")
            let placed = try await server.makeCall(token, to: "+14155557106").decode(MakeCallResponse.self)
            let callID = try await server.request(.GET, "/mobile/calls/\(placed.callSid)", token: token).decode(CallHistoryItem.self).id
            let path = "/twilio/machine-detection?call_id=\(callID)"
            let url = server.configuration.publicURL.absoluteString + path
            let params = [("AccountSid", "AC1"), ("AnsweredBy", "machine_end_beep"), ("CallSid", placed.callSid)]
            let form = params.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
            #expect(try await server.request(.POST, path, form: form).status == 403)
            #expect(try await server.request(.POST, path, form: form, headers: [("X-Twilio-Signature", "bm90IGl0")]).status == 403)
            let otherURL = server.configuration.publicURL.absoluteString + "/twilio/machine-detection?call_id=99999"
            let otherSignature = server.app.chorus.twilioSignatures.signature(url: otherURL, parameters: params)
            #expect(
                try await server.request(.POST, "/twilio/machine-detection?call_id=99999", form: form, headers: [("X-Twilio-Signature", otherSignature)])
                    .status == 404)
            // A human while it rings changes nothing (no bridge yet); the call is still charged.
            let human = [("AccountSid", "AC1"), ("AnsweredBy", "human"), ("CallSid", placed.callSid)]
            let signature = server.app.chorus.twilioSignatures.signature(url: url, parameters: human)
            let humanForm = human.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
            #expect(try await server.request(.POST, path, form: humanForm, headers: [("X-Twilio-Signature", signature)]).status == 204)
            #expect(try await server.usage(token).trialCallsUsed == 1)

            // A machine reported where no bridge carries the call (another instance streams it; here: it still rings):
            // this instance settles it — outcome saved, charge given back, the call hung up — and the provider's final
            // status later refunds nothing twice.
            let machine = [("AccountSid", "AC1"), ("AnsweredBy", "machine_end_beep"), ("CallSid", placed.callSid)]
            let machineSignature = server.app.chorus.twilioSignatures.signature(url: url, parameters: machine)
            let machineForm = machine.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
            #expect(try await server.request(.POST, path, form: machineForm, headers: [("X-Twilio-Signature", machineSignature)]).status == 204)
            #expect(try await server.usage(token).trialCallsUsed == 0)
            try await server.eventually(timeout: .seconds(10), "the call is over") {
                let endedBy = try await Self.sandboxCall(server, sid: placed.callSid)["ended_by"] as? String
                let status = try await server.request(.GET, "/mobile/calls/\(placed.callSid)", token: token).json["status"] as? String
                return endedBy == "rest_hangup" && status == "canceled"
            }
            #expect(try await server.usage(token).trialCallsUsed == 0)
            #expect(try await server.request(.POST, path, form: machineForm, headers: [("X-Twilio-Signature", machineSignature)]).status == 204)
            #expect(try await server.usage(token).trialCallsUsed == 0)
        }
    }
}
