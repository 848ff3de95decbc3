import ChorusAPI
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusServer

/// What Chorus sends to Twilio and OpenAI, checked against schemas extracted from their official OpenAPI specs
/// (`scripts/extract-spec-schemas`, fixtures in `Tests/ChorusTestSupport/Specs`).
@Suite("Provider contracts")
struct ProviderContractTests {
    // MARK: - The validator itself

    /// A `session.update` as the GA Realtime API documents it, for the phone bridge (μ-law both ways).
    static let sessionUpdate = """
        {
          "type": "session.update",
          "event_id": "evt_1",
          "session": {
            "type": "realtime",
            "model": "gpt-realtime",
            "instructions": "You are a friendly assistant.",
            "output_modalities": ["audio"],
            "audio": {
              "input": {
                "format": {"type": "audio/pcmu"},
                "turn_detection": {"type": "server_vad", "threshold": 0.5, "silence_duration_ms": 500},
                "transcription": {"model": "whisper-1"}
              },
              "output": {"format": {"type": "audio/pcmu"}, "voice": "marin", "speed": 1.0}
            },
            "tracing": null,
            "max_output_tokens": "inf"
          }
        }
        """

    @Test("a correct GA session.update passes, also in strict mode")
    func sessionUpdatePasses() throws {
        let validator = try SpecSchemaValidator.openAIRealtime()
        #expect(try validator.validate(json: Data(Self.sessionUpdate.utf8), against: "RealtimeClientEvent") == [])
        #expect(try validator.validate(json: Data(Self.sessionUpdate.utf8), against: "RealtimeClientEvent", strictProperties: true) == [])
        let session = #"{"type": "realtime", "instructions": "Hi", "audio": {"output": {"voice": {"id": "voice_1234"}}}}"#
        #expect(try validator.validate(json: Data(session.utf8), against: "RealtimeSessionCreateRequestGA", strictProperties: true) == [])
    }

    @Test("session.temperature is caught in strict mode, with its path")
    func unknownSessionKey() throws {
        let validator = try SpecSchemaValidator.openAIRealtime()
        let event = #"{"type": "session.update", "session": {"type": "realtime", "instructions": "Hi", "temperature": 0.8}}"#
        // The published schema leaves additionalProperties open, so only strict mode sees it.
        #expect(try validator.validate(json: Data(event.utf8), against: "RealtimeClientEvent") == [])
        let problems = try validator.validate(json: Data(event.utf8), against: "RealtimeClientEvent", strictProperties: true)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.hasPrefix("$.session.temperature: unknown property") == true, "\(problems)")
    }

    @Test("conversation.item.truncate without audio_end_ms is refused")
    func truncateWithoutEnd() throws {
        let validator = try SpecSchemaValidator.openAIRealtime()
        let valid = #"{"type": "conversation.item.truncate", "item_id": "item_1", "content_index": 0, "audio_end_ms": 1500}"#
        #expect(try validator.validate(json: Data(valid.utf8), against: "RealtimeClientEvent", strictProperties: true) == [])
        let missing = #"{"type": "conversation.item.truncate", "item_id": "item_1", "content_index": 0}"#
        let problems = try validator.validate(json: Data(missing.utf8), against: "RealtimeClientEvent")
        #expect(problems == ["$.audio_end_ms: missing required property"])
        let fractional = #"{"type": "conversation.item.truncate", "item_id": "item_1", "content_index": 0, "audio_end_ms": 1.5}"#
        #expect(
            try validator.validate(json: Data(fractional.utf8), against: "RealtimeClientEvent").first?.hasPrefix("$.audio_end_ms: expected integer")
                == true)
    }

    @Test("wrong enum values, unknown event types and out-of-range numbers are refused")
    func wrongValues() throws {
        let validator = try SpecSchemaValidator.openAIRealtime()
        let badFormat = #"{"type": "session.update", "session": {"type": "realtime", "audio": {"input": {"format": {"type": "audio/mulaw"}}}}}"#
        let formatProblems = try validator.validate(json: Data(badFormat.utf8), against: "RealtimeClientEvent")
        #expect(formatProblems.contains { $0.hasPrefix("$.session.audio.input.format") && $0.contains("audio/pcmu") }, "\(formatProblems)")

        let badModality = #"{"type": "session.update", "session": {"type": "realtime", "output_modalities": ["speech"]}}"#
        let modalityProblems = try validator.validate(json: Data(badModality.utf8), against: "RealtimeClientEvent")
        #expect(modalityProblems == [#"$.session.output_modalities[0]: "speech" is not one of ["text", "audio"]"#])

        let tooFast = #"{"type": "session.update", "session": {"type": "realtime", "audio": {"output": {"speed": 3}}}}"#
        #expect(
            try validator.validate(json: Data(tooFast.utf8), against: "RealtimeClientEvent") == [
                "$.session.audio.output.speed: 3 is above the maximum 1.5"
            ])

        let unknownEvent = #"{"type": "session.create", "session": {}}"#
        let eventProblems = try validator.validate(json: Data(unknownEvent.utf8), against: "RealtimeClientEvent")
        #expect(eventProblems.count == 1 && eventProblems[0].hasPrefix("$: matches none of the 11 alternatives of anyOf"), "\(eventProblems)")

        let append = #"{"type": "input_audio_buffer.append", "audio": 42}"#
        #expect(
            try validator.validate(json: Data(append.utf8), against: "RealtimeClientEvent") == [
                "$.audio: expected string, got integer 42"
            ])
        #expect(throws: SpecSchemaValidatorError.self) { try validator.validate(json: Data("{}".utf8), against: "NoSuchSchema") }
    }

    @Test("CreateCall forms: required, unknown, repeated and typed parameters")
    func createCallForms() throws {
        let validator = try SpecSchemaValidator.twilioCalls()
        let valid: [(String, String)] = [
            ("To", "+14155550100"), ("From", "+15005550006"), ("Url", "https://chorus.example/twilio/voice?call_id=1"),
            ("Method", "POST"), ("StatusCallback", "https://chorus.example/call-end-webhook?call_id=1"),
            ("StatusCallbackMethod", "POST"), ("StatusCallbackEvent", "initiated"), ("StatusCallbackEvent", "answered"),
            ("TimeLimit", "60"), ("Timeout", "30"), ("Record", "false"),
        ]
        #expect(try validator.validateForm(valid, operation: "CreateCall") == [])

        let withoutTo = valid.filter { $0.0 != "To" }
        #expect(try validator.validateForm(withoutTo, operation: "CreateCall") == ["To: missing required parameter"])

        let unknown = try validator.validateForm(valid + [("Temperature", "0.8")], operation: "CreateCall")
        #expect(unknown == ["Temperature: unknown parameter (CreateCall does not define it)"])
        let misspelt = try validator.validateForm(valid + [("timeLimit", "60")], operation: "CreateCall")
        #expect(misspelt.first?.contains("did you mean TimeLimit?") == true, "\(misspelt)")

        let answered = valid.filter { $0.0 != "StatusCallbackEvent" } + [("StatusCallbackEvent", "answered")]
        #expect(try validator.validateForm(answered, operation: "CreateCall") == [])
        let bogus = try validator.validateForm(valid + [("StatusCallbackEvent", "bogus")], operation: "CreateCall")
        #expect(bogus == [#"StatusCallbackEvent[2]: `bogus` is not one of ["initiated", "ringing", "answered", "completed"]"#])

        let typed = try validator.validateForm(
            withoutTo + [("To", "+1"), ("To", "+2"), ("TimeLimit", "sixty"), ("Record", "yes"), ("FallbackUrl", "not a url"), ("Method", "PUT")],
            operation: "CreateCall"
        )
        #expect(typed.contains("To: given 2 times but it is not an array parameter"), "\(typed)")
        #expect(typed.contains("TimeLimit: given 2 times but it is not an array parameter"), "\(typed)")
        #expect(typed.contains("TimeLimit: expected an integer, got `sixty`"), "\(typed)")
        #expect(typed.contains("Record: expected `true` or `false`, got `yes`"), "\(typed)")
        #expect(typed.contains("FallbackUrl: expected an absolute URL, got `not a url`"), "\(typed)")
        #expect(typed.contains(#"Method: `PUT` is not one of ["GET", "POST"]"#), "\(typed)")

        let noInstructions = valid.filter { $0.0 != "Url" }
        #expect(
            try validator.validateForm(noInstructions, operation: "CreateCall") == [
                "Url|Twiml|ApplicationSid: exactly one of these parameters is required, none given"
            ])
        let both = try validator.validateForm(valid + [("Twiml", "<Response/>")], operation: "CreateCall")
        #expect(both == ["Url|Twiml: these parameters are mutually exclusive"])
    }

    @Test("UpdateCall forms and call paths")
    func updateCallForms() throws {
        let validator = try SpecSchemaValidator.twilioCalls()
        #expect(try validator.validateForm([("Status", "completed")], operation: "UpdateCall") == [])
        #expect(
            try validator.validateForm([("Status", "hangup")], operation: "UpdateCall") == [
                #"Status: `hangup` is not one of ["canceled", "completed"]"#
            ])
        #expect(throws: SpecSchemaValidatorError.self) { try validator.validateForm([], operation: "DeleteCall") }

        let account = "AC" + String(repeating: "0a", count: 16)
        let call = "CA" + String(repeating: "1b", count: 16)
        #expect(try validator.validatePath("/sandbox/2010-04-01/Accounts/\(account)/Calls/\(call).json", operation: "UpdateCall") == [])
        #expect(try validator.validatePath("/2010-04-01/Accounts/\(account)/Calls.json", operation: "CreateCall") == [])
        let badSid = try validator.validatePath("/2010-04-01/Accounts/\(account)/Calls/CA123.json", operation: "UpdateCall")
        #expect(badSid.contains("{Sid}: 5 characters, at least 34 required"), "\(badSid)")
        let decoded = SpecSchemaValidator.decodeForm("To=%2B1415&Url=https%3A%2F%2Fx.test%2Fa%3Fb%3D1&A=b+c")
        #expect(decoded.map(\.0) == ["To", "Url", "A"] && decoded.map(\.1) == ["+1415", "https://x.test/a?b=1", "b c"])
    }

    // MARK: - Real traffic

    @Test("the CreateCall and UpdateCall requests Chorus sends match Twilio's spec", arguments: TestDatabase.all)
    func twilioTraffic(_ database: TestDatabase) async throws {
        let validator = try SpecSchemaValidator.twilioCalls()
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            try await server.setCallee("+14155550901", behavior: "answer", talkSeconds: 30)
            let call = try await server.makeCall(token, to: "+14155550901")
            #expect(call.status == 200, "make-call: \(call.text)")
            let placed = try call.decode(MakeCallResponse.self)

            let create = try #require(try await twilioRequests(server).first { $0.path.hasSuffix("/Calls.json") && $0.method == "POST" })
            #expect((create.contentType ?? "").hasPrefix("application/x-www-form-urlencoded"))
            let createForm = SpecSchemaValidator.decodeForm(create.body ?? "")
            #expect(createForm.contains { $0.0 == "To" && $0.1 == "+14155550901" })
            #expect(try validator.validateForm(createForm, operation: "CreateCall") == [], "CreateCall form: \(createForm)")
            #expect(try validator.validatePath(create.path, operation: "CreateCall") == [])

            // Chorus hangs up through its telephony provider (the same TwilioRESTClient the server placed the call with),
            // once the media stream is connected, so the bridge's outcome is part of the call record `waitForEnd` waits for.
            // (Hung up between answer and stream start, an answered call has no bridge outcome at all.)
            try await server.eventually("the callee answers and the media stream connects") {
                let calls = try await server.request(.GET, "/sandbox/calls").json["calls"] as? [[String: Any]] ?? []
                let sandboxCall = calls.first { $0["sid"] as? String == placed.callSid }
                return (sandboxCall?["media_frames_received"] as? Int ?? 0) > 0
            }
            try await server.app.chorus.telephony.hangUp(callSid: placed.callSid)
            let update = try #require(
                try await twilioRequests(server).first { $0.method == "POST" && $0.path.hasSuffix("/Calls/\(placed.callSid).json") })
            #expect(update.responseStatus == 200)
            let updateForm = SpecSchemaValidator.decodeForm(update.body ?? "")
            #expect(updateForm.map(\.0) == ["Status"] && updateForm.first?.1 == "completed")
            #expect(try validator.validateForm(updateForm, operation: "UpdateCall") == [], "UpdateCall form: \(updateForm)")
            #expect(try validator.validatePath(update.path, operation: "UpdateCall") == [])

            let ended = try await server.waitForEnd(token, sid: placed.callSid)
            #expect(ended.status == "completed")
        }
    }

    /// One request in the sandbox's log.
    struct RecordedRequest: Decodable {
        var method: String
        var path: String
        var contentType: String?
        var body: String?
        var responseStatus: Int

        enum CodingKeys: String, CodingKey {
            case method
            case path
            case contentType = "content_type"
            case body
            case responseStatus = "response_status"
        }
    }

    private func twilioRequests(_ server: TestServer) async throws -> [RecordedRequest] {
        struct Log: Decodable { var requests: [RecordedRequest] }
        let reply = try await server.request(.GET, "/sandbox/requests")
        #expect(reply.status == 200, "sandbox requests: \(reply.text)")
        return try JSONDecoder().decode(Log.self, from: reply.body).requests.filter { $0.path.contains("/2010-04-01/Accounts/") }
    }
}
