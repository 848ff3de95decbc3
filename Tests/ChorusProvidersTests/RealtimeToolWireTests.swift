import ChorusProviders
import Foundation
import NIOCore
import Testing

@Suite("Realtime function tools on the wire (issue 17)")
struct RealtimeToolWireTests {
    private func realtimeEvent(_ text: String) -> RealtimeServerEvent? { RealtimeServerEvent.parse(ByteBuffer(string: text)) }

    private func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test("the session declares its function tools with tool_choice auto; without tools neither member is sent")
    func sessionTools() throws {
        var session = RealtimeSessionConfiguration(
            model: "gpt-realtime", instructions: "x", voice: "marin", transcriptionModel: nil, respondsToTurns: false,
            tools: [RealtimeFunctionTool(name: "opt_out", description: "Call when they say stop.")])
        let update = try object(RealtimeClientEvent.sessionUpdate(session))
        let body = try #require(update["session"] as? [String: Any])
        let tools = try #require(body["tools"] as? [[String: Any]])
        #expect(tools.count == 1)
        #expect(tools[0]["type"] as? String == "function" && tools[0]["name"] as? String == "opt_out")
        let parameters = try #require(tools[0]["parameters"] as? [String: Any])
        #expect(parameters["type"] as? String == "object" && (parameters["properties"] as? [String: Any])?.isEmpty == true)
        #expect(body["tool_choice"] as? String == "auto")
        // While the model does not answer turns, speech does not interrupt its response either.
        let detection = try #require(((body["audio"] as? [String: Any])?["input"] as? [String: Any])?["turn_detection"] as? [String: Any])
        #expect(detection["create_response"] as? Bool == false && detection["interrupt_response"] as? Bool == false)

        session.tools = []
        let plain = try #require(try object(RealtimeClientEvent.sessionUpdate(session))["session"] as? [String: Any])
        #expect(plain["tools"] == nil && plain["tool_choice"] == nil)
    }

    @Test("function_call_output, and turning the model's own answers off again")
    func clientEvents() throws {
        let output = try object(RealtimeClientEvent.functionCallOutput(callID: "call_1", output: #"{"opted_out":true}"#))
        #expect(output["type"] as? String == "conversation.item.create")
        let item = try #require(output["item"] as? [String: Any])
        #expect(item["type"] as? String == "function_call_output" && item["call_id"] as? String == "call_1")
        #expect(item["output"] as? String == #"{"opted_out":true}"#)

        let session = RealtimeSessionConfiguration(model: "m", instructions: "x", voice: "marin", transcriptionModel: nil)
        let off = try object(RealtimeClientEvent.disableTurnResponses(session))
        let detection = try #require(
            (((off["session"] as? [String: Any])?["audio"] as? [String: Any])?["input"] as? [String: Any])?["turn_detection"] as? [String: Any])
        #expect(detection["create_response"] as? Bool == false && detection["interrupt_response"] as? Bool == false)
    }

    @Test("response.function_call_arguments.done and response.created are read; a call without its id is ignored")
    func serverEvents() {
        let done =
            #"{"type":"response.function_call_arguments.done","event_id":"e","response_id":"r","item_id":"fc","output_index":0,"call_id":"call_9","name":"opt_out","arguments":"{}"}"#
        #expect(realtimeEvent(done) == .functionCall(callID: "call_9", name: "opt_out", arguments: "{}"))
        let missing = #"{"type":"response.function_call_arguments.done","item_id":"fc","name":"opt_out"}"#
        #expect(realtimeEvent(missing) == .other(type: "response.function_call_arguments.done"))
        #expect(realtimeEvent(#"{"type":"response.created","response":{"id":"r"}}"#) == .responseCreated)
    }
}
