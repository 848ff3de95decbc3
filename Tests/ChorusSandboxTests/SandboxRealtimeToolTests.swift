import Foundation
import Testing

@testable import ChorusSandbox

/// The Realtime emulator's function tools (issue 17): declared in `session.tools`, validated like the API, called
/// (`function_call` item and argument events) when what the person said matches a tool's described purpose, answered
/// with a `function_call_output` item and the next `response.create`.
@Suite("Realtime emulator: function tools and verbatim instructions")
struct SandboxRealtimeToolTests {
    static let tool =
        #"{"type":"function","name":"opt_out","description":"Call when they do not want calls. Examples: \"stop calling me\", \"no me llames más\".","parameters":{"type":"object","properties":{}}}"#

    static func session(toolChoice: String = "auto") -> String {
        #"{"type":"realtime","tools":["# + tool + #"],"tool_choice":""# + toolChoice
            + #"","audio":{"input":{"format":{"type":"audio/pcmu"},"turn_detection":null},"output":{"format":{"type":"audio/pcmu"}}}}"#
    }

    static func say(_ text: String) -> String {
        #"{"type":"conversation.item.create","item":{"type":"message","role":"user","content":[{"type":"input_text","text":"# + "\""
            + text + "\"}]}}"
    }

    @Test func aMatchingUtteranceCallsTheToolAndItsOutputLeadsToSpeech() async throws {
        try await withRealtime { harness in
            let client = try await harness.connectConfigured(Self.session())
            client.send(Self.say("Please, STOP calling me!"))
            _ = try await client.next("conversation.item.done")
            client.send(#"{"type":"response.create"}"#)
            let done = try await client.next("response.function_call_arguments.done")
            #expect(done["name"] as? String == "opt_out" && done["arguments"] as? String == "{}")
            let callID = try #require(done["call_id"] as? String)
            let response = try #require(try await client.next("response.done")["response"] as? [String: Any])
            let output = try #require((response["output"] as? [[String: Any]])?.first)
            #expect(output["type"] as? String == "function_call" && output["call_id"] as? String == callID && output["status"] as? String == "completed")
            #expect(client.events("response.output_audio.delta").isEmpty)

            // The output goes back; the next response speaks (the last item is no longer the person's words).
            client.send(#"{"type":"conversation.item.create","item":{"type":"function_call_output","call_id":""# + callID + #"","output":"{}"}}"#)
            _ = try await client.next("conversation.item.done")
            client.send(#"{"type":"response.create","response":{"instructions":"Say goodbye."}}"#)
            let spoken = try await client.next("response.output_audio_transcript.done")
            #expect(spoken["transcript"] as? String == "Hello there, this is a short test.")
            _ = try await client.next("response.done")
            expectSpecShapes(client.events)
            let record = try #require(harness.realtime.sessions().first)
            #expect(record.functionCalls == ["opt_out"])
            try await client.close()
        }
    }

    @Test func anythingElseIsAnsweredAndToolChoiceNoneNeverCalls() async throws {
        try await withRealtime { harness in
            let client = try await harness.connectConfigured(Self.session())
            client.send(Self.say("What a lovely day, please go on."))
            _ = try await client.next("conversation.item.done")
            client.send(#"{"type":"response.create"}"#)
            _ = try await client.next("response.done")
            #expect(client.events("response.function_call_arguments.done").isEmpty)
            try await client.close()

            let none = try await harness.connectConfigured(Self.session(toolChoice: "none"))
            none.send(Self.say("no me llames más"))
            _ = try await none.next("conversation.item.done")
            none.send(#"{"type":"response.create"}"#)
            _ = try await none.next("response.done")
            #expect(none.events("response.function_call_arguments.done").isEmpty)
            try await none.close()
        }
    }

    @Test func instructionsAskingForExactWordsAreSaidWordForWord() async throws {
        try await withRealtime { harness in
            let client = try await harness.connectConfigured(Self.session())
            client.send(
                #"{"type":"response.create","response":{"instructions":"Say exactly the words between « », nothing else: «This is an AI-generated call.»"}}"#)
            let spoken = try await client.next("response.output_audio_transcript.done")
            #expect(spoken["transcript"] as? String == "This is an AI-generated call.")
            // The next ordinary response still gets the first reply line.
            _ = try await client.next("response.done")
            client.send(#"{"type":"response.create"}"#)
            #expect(try await client.next("response.output_audio_transcript.done")["transcript"] as? String == "Hello there, this is a short test.")
            try await client.close()
        }
    }

    @Test func toolsAreValidatedLikeTheAPI() async throws {
        try await withRealtime { harness in
            let client = try await harness.connect()
            _ = try await client.next("session.created")
            let cases: [(String, String)] = [
                (#"{"type":"realtime","tools":{}}"#, "session.tools"),
                (#"{"type":"realtime","tools":[{"type":"function"}]}"#, "session.tools[0].name"),
                (#"{"type":"realtime","tools":[{"type":"web_search"}]}"#, "session.tools[0].type"),
                (#"{"type":"realtime","tools":[{"type":"function","name":"f","parameters":"x"}]}"#, "session.tools[0].parameters"),
            ]
            for (update, param) in cases {
                client.send(#"{"type":"session.update","session":"# + update + "}")
                let error = try #require(try await client.next("error")["error"] as? [String: Any])
                #expect(error["param"] as? String == param, "\(update)")
            }
            try await client.close()
        }
    }
}
