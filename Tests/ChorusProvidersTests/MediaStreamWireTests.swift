import ChorusProviders
import Foundation
import NIOCore
import Testing

@Suite("Media stream and Realtime wire formats")
struct MediaStreamWireTests {
    private func twilioFrame(_ text: String) -> TwilioMediaStreamFrame? { TwilioMediaStreamFrame.parse(ByteBuffer(string: text)) }
    private func realtimeEvent(_ text: String) -> RealtimeServerEvent? { RealtimeServerEvent.parse(ByteBuffer(string: text)) }

    @Test("Twilio frames: media keeps the payload as a slice, start/mark/stop/dtmf decode, unknown events pass")
    func twilioFrames() throws {
        let payload = String(repeating: "/w", count: 108)
        let media =
            #"{"event":"media","sequenceNumber":"3","media":{"track":"inbound","chunk":"2","timestamp":"20","payload":"\#(payload)"},"streamSid":"MZ1"}"#
        #expect(twilioFrame(media) == .media(payload: ByteBuffer(string: payload), timestamp: 20))
        // A message that does not start at the beginning of its buffer (a slice of a socket's read buffer).
        var shifted = ByteBuffer(string: "{{{" + media)
        shifted.moveReaderIndex(forwardBy: 3)
        #expect(TwilioMediaStreamFrame.parse(shifted) == .media(payload: ByteBuffer(string: payload), timestamp: 20))
        let start = #"""
            {"event":"start","sequenceNumber":"1","start":{"accountSid":"AC1","streamSid":"MZ1","callSid":"CA1","tracks":["inbound"],
            "mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1},"customParameters":{"token":"t\"ok"}},"streamSid":"MZ1"}
            """#
        guard case .start(let info) = twilioFrame(start) else {
            Issue.record("start not parsed")
            return
        }
        #expect(info.streamSid == "MZ1" && info.callSid == "CA1" && info.customParameters["token"] == "t\"ok")
        #expect(info.mediaFormat.sampleRate == 8_000)
        #expect(twilioFrame(#"{"event":"mark","streamSid":"MZ1","mark":{"name":"a7"}}"#) == .mark(name: "a7"))
        #expect(twilioFrame(#"{"event":"stop","stop":{"accountSid":"AC1","callSid":"CA1"}}"#) == .stop)
        #expect(twilioFrame(#"{"event":"dtmf","dtmf":{"track":"inbound_track","digit":"5"}}"#) == .dtmf(digit: "5"))
        #expect(twilioFrame(#"{"event":"connected","protocol":"Call","version":"1.0.0"}"#) == .connected)
        #expect(twilioFrame(#"{"event":"something_new","x":[1,{"y":"z"}]}"#) == .other(event: "something_new"))
        #expect(twilioFrame("not json") == nil)
        #expect(twilioFrame(#"{"event":"media","media":{"track":"inbound"}}"#) == nil)
        #expect(twilioFrame(#"{"event":"media""#) == nil)
        // Payloads are relayed as received: anything but base64 characters (an escape, a space, invalid UTF-8) is refused.
        #expect(twilioFrame(#"{"event":"media","media":{"payload":"AA\u0041"}}"#) == nil)
        #expect(twilioFrame(#"{"event":"media","media":{"payload":"AA AA"}}"#) == nil)
        var invalid = ByteBuffer(string: #"{"event":"media","media":{"payload":"AA"#)
        invalid.writeBytes([0xC3, 0x28])
        invalid.writeString(#""}}"#)
        #expect(TwilioMediaStreamFrame.parse(invalid) == nil)
    }

    @Test("frames we send are the exact JSON Twilio and OpenAI expect")
    func outbound() throws {
        let allocator = ByteBufferAllocator()
        func object(_ buffer: ByteBuffer) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: Any])
        }
        let media = try object(TwilioMediaStreamOutbound.media(streamSid: "MZ1", payload: ByteBuffer(string: "AAEC"), allocator: allocator))
        #expect(media["event"] as? String == "media" && media["streamSid"] as? String == "MZ1")
        // Room for the WebSocket frame header in front, so header and message go out as one piece.
        #expect(TwilioMediaStreamOutbound.mark(streamSid: "MZ1", name: "a1", allocator: allocator).readerIndex == MediaWebSocket.headerRoom)
        #expect(RealtimeClientEvent.append(audio: ByteBuffer(string: "AAEC"), allocator: allocator).readerIndex == MediaWebSocket.headerRoom)
        #expect((media["media"] as? [String: String]) == ["payload": "AAEC"])
        let mark = try object(TwilioMediaStreamOutbound.mark(streamSid: "MZ1", name: "a1", allocator: allocator))
        #expect((mark["mark"] as? [String: String]) == ["name": "a1"])
        #expect(try object(TwilioMediaStreamOutbound.clear(streamSid: "MZ1", allocator: allocator)).count == 2)
        let append = try object(RealtimeClientEvent.append(audio: ByteBuffer(string: "AAEC"), allocator: allocator))
        #expect(append["type"] as? String == "input_audio_buffer.append" && append["audio"] as? String == "AAEC")
        let truncate = try #require(
            try JSONSerialization.jsonObject(with: Data(RealtimeClientEvent.truncate(itemID: "item_1", audioEndMs: 640).utf8)) as? [String: Any])
        #expect(truncate["item_id"] as? String == "item_1" && truncate["audio_end_ms"] as? Int == 640 && truncate["content_index"] as? Int == 0)
        let session = RealtimeSessionConfiguration(model: "gpt-realtime", instructions: "Be \"Sam\".", voice: "marin", transcriptionModel: nil)
        let update = try #require(
            try JSONSerialization.jsonObject(with: Data(RealtimeClientEvent.sessionUpdate(session).utf8)) as? [String: Any])
        let body = try #require(update["session"] as? [String: Any])
        #expect(body["instructions"] as? String == "Be \"Sam\".")
        #expect(body["temperature"] == nil)
        let audio = try #require(body["audio"] as? [String: [String: Any]])
        #expect(audio["input"]?["transcription"] == nil)
        #expect((audio["output"]?["format"] as? [String: String]) == ["type": "audio/pcmu"])
    }

    @Test("Realtime server events: deltas as slices, transcripts with escapes, errors and their recoverability")
    func serverEvents() {
        let delta =
            #"{"type":"response.output_audio.delta","event_id":"e1","response_id":"r1","item_id":"item_9","output_index":0,"content_index":0,"delta":"//79"}"#
        #expect(realtimeEvent(delta) == .audioDelta(itemID: "item_9", delta: ByteBuffer(string: "//79")))
        #expect(
            realtimeEvent(#"{"type":"response.output_audio.delta","item_id":"i","delta":"//7<"}"#)
                == .malformed(type: "response.output_audio.delta", reason: "an audio delta that is not base64"))
        // Speech sessions read deltas without an item id; the bridge ignores them.
        #expect(realtimeEvent(#"{"type":"response.output_audio.delta","delta":"AA=="}"#) == .audioDelta(itemID: nil, delta: ByteBuffer(string: "AA==")))
        #expect(
            realtimeEvent(#"{"type":"response.output_audio_transcript.delta","item_id":"i1","delta":"He "}"#)
                == .assistantTranscriptDelta(itemID: "i1", text: "He "))
        let transcript = #"{"type":"response.output_audio_transcript.done","item_id":"i1","transcript":"He said \"hi\"\n"}"#
        #expect(realtimeEvent(transcript) == .assistantTranscript(itemID: "i1", text: "He said \"hi\"\n"))
        let callee = #"{"type":"conversation.item.input_audio_transcription.completed","item_id":"u1","content_index":0,"transcript":"Héllo"}"#
        #expect(realtimeEvent(callee) == .calleeTranscript(itemID: "u1", text: "Héllo"))
        let benign = #"{"type":"error","event_id":"e2","error":{"type":"invalid_request_error","code":"response_cancel_not_active","message":"x"}}"#
        guard case .error(let recoverable) = realtimeEvent(benign) else {
            Issue.record("error not parsed")
            return
        }
        #expect(recoverable.isRecoverable)
        let fatal = #"{"type":"error","error":{"type":"server_error","code":null,"message":"boom"}}"#
        guard case .error(let serverError) = realtimeEvent(fatal) else {
            Issue.record("error not parsed")
            return
        }
        #expect(!serverError.isRecoverable && serverError.message == "boom")
        #expect(
            realtimeEvent(#"{"type":"response.done","response":{"id":"r","status":"cancelled"}}"#)
                == .responseDone(RealtimeResponseOutcome(status: "cancelled")))
        let failed =
            #"{"type":"response.done","response":{"status":"failed","status_details":{"type":"failed","error":{"type":"server_error","code":"x","message":"m"}},"#
            + #""usage":{"input_tokens":12,"output_tokens":40,"output_token_details":{"audio_tokens":1e400}}}}"#
        #expect(
            realtimeEvent(failed)
                == .responseDone(
                    RealtimeResponseOutcome(
                        status: "failed", error: RealtimeErrorDetail(type: "server_error", code: "x", message: "m"),
                        usage: RealtimeUsage(inputTokens: 12, outputTokens: 40, outputAudioTokens: nil))))
        // The usage of the event reference: text and audio in, the cached part and its split, text and audio out.
        let billed =
            #"{"type":"response.done","response":{"status":"completed","usage":{"total_tokens":1300,"input_tokens":1000,"output_tokens":300,"#
            + #""input_token_details":{"text_tokens":400,"audio_tokens":600,"image_tokens":0,"cached_tokens":500,"#
            + #""cached_tokens_details":{"text_tokens":300,"audio_tokens":200,"image_tokens":0}},"#
            + #""output_token_details":{"text_tokens":60,"audio_tokens":240}}}}"#
        #expect(
            realtimeEvent(billed)
                == .responseDone(
                    RealtimeResponseOutcome(
                        status: "completed",
                        usage: RealtimeUsage(
                            inputTokens: 1_000, outputTokens: 300, inputTextTokens: 400, inputAudioTokens: 600, cachedTokens: 500, cachedTextTokens: 300,
                            cachedAudioTokens: 200, outputTextTokens: 60, outputAudioTokens: 240))))
        // A negative count is dropped like one that does not fit.
        #expect(
            realtimeEvent(#"{"type":"response.done","response":{"usage":{"input_tokens":-1,"output_tokens":3}}}"#)
                == .responseDone(RealtimeResponseOutcome(status: nil, usage: RealtimeUsage(outputTokens: 3))))
        #expect(realtimeEvent(#"{"type":"input_audio_buffer.speech_started","audio_start_ms":100,"item_id":"u"}"#) == .speechStarted)
        #expect(realtimeEvent(#"{"type":"rate_limits.updated","rate_limits":[]}"#) == .other(type: "rate_limits.updated"))
        #expect(realtimeEvent("[]") == nil)
    }

    @Test("the scanner reports nested members with depth and flags escapes")
    func scanner() {
        var text = #" {"a":"x\"y","b":{"c":12,"d":[1,"s",{"e":"f"}],"g":true},"h":"i"} "#
        var seen: [String] = []
        let valid = text.withUTF8 { bytes in
            JSONMemberScanner.scan(bytes, maxDepth: 4) { member in
                seen.append("\(String(decoding: member.key, as: UTF8.self))@\(member.depth)\(member.hasEscapes ? "!" : "")=\(member.string)")
                return true
            }
        }
        #expect(valid)
        #expect(seen == [#"a@1!=x\"y"#, "c@2=12", "e@4=f", "g@2=true", "h@1=i"])
    }

    @Test("the scanner names each member's enclosing object and decodes escapes")
    func scannerContainersAndEscapes() {
        var text = #"{"media":{"payload":"AA=="},"list":[{"name":"in array"}],"mark":{"name":"a\"b\u00e9\ud83d\ude00\/"}}"#
        var seen: [String] = []
        let valid = text.withUTF8 { bytes in
            JSONMemberScanner.scan(bytes, maxDepth: 4) { member in
                seen.append("\(String(decoding: member.container, as: UTF8.self)).\(String(decoding: member.key, as: UTF8.self))=\(member.unescaped)")
                #expect(member.containerIs("media") == (String(decoding: member.container, as: UTF8.self) == "media"))
                return true
            }
        }
        #expect(valid)
        #expect(seen == ["media.payload=AA==", ".name=in array", "mark.name=a\"bé😀/"])
    }

    @Test("the scanner accepts only one whole JSON object, and stops when asked")
    func scannerValidates() {
        func valid(_ text: String) -> Bool {
            var text = text
            return text.withUTF8 { bytes in JSONMemberScanner.scan(bytes) { _ in true } }
        }
        #expect(valid(#" { "a" : [1, -2.5e3, true, false, null, {"b": []}] } "#))
        for broken in [
            #"{"a":"b""#, #"{"a":"b"} x"#, "[]", "", #"{"a":b}"#, #"{"a":"b\q"}"#, #"{"a":"\u12"}"#, "{\"a\":\"\u{01}\"}", #"{"a" "b"}"#,
            #"{"a":1,}"#, #"{a:1}"#, #"{"a":tru}"#,
        ] {
            #expect(!valid(broken), "\(broken)")
        }
        let nested = String(repeating: "[", count: JSONMemberScanner.nestingLimit) + String(repeating: "]", count: JSONMemberScanner.nestingLimit)
        #expect(valid(#"{"a":"# + String(nested.dropFirst().dropLast()) + "}"))
        #expect(!valid(#"{"a":"# + nested + "}"))
        // Stopping early answers valid without reading the rest.
        var text = #"{"first":1,"rest": oops"#
        var visited = 0
        let stopped = text.withUTF8 { bytes in
            JSONMemberScanner.scan(bytes) { _ in
                visited += 1
                return false
            }
        }
        #expect(stopped && visited == 1)
    }
}
