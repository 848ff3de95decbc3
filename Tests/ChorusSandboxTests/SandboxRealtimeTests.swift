import AsyncHTTPClient
import ChorusCore
import ChorusSandbox
import Foundation
import NIOConcurrencyHelpers
import NIOWebSocket
import Testing
import Vapor

/// The Realtime emulator mounted through ``SandboxServices`` on a ``SandboxServer`` (loopback, ephemeral port).
final class RealtimeHarness: Sendable {
    static let apiKey = "sk-sandbox-realtime-0123456789abcdef"

    let services: SandboxServices
    let server: SandboxServer
    let baseURL: URL

    private init(services: SandboxServices, server: SandboxServer, baseURL: URL) {
        self.services = services
        self.server = server
        self.baseURL = baseURL
    }

    var realtime: SandboxRealtime { services.realtime }

    static func start(recordsMessages: Bool = true, behavior: SandboxRealtime.Behavior = .testing) async throws -> RealtimeHarness {
        let realtime = SandboxRealtime(apiKey: apiKey, recordsMessages: recordsMessages, behavior: behavior)
        let services = SandboxServices(
            twilio: SandboxTwilio(accountSID: "AC1", authToken: "sandbox-token-for-realtime-tests", httpClient: .shared),
            appStore: try SandboxAppStore.ephemeral(bundleID: "app.chorus"),
            realtime: realtime
        )
        let server = SandboxServer(services: services)
        try await server.start()
        return RealtimeHarness(services: services, server: server, baseURL: try #require(server.baseURL))
    }

    func shutdown() async throws {
        try await server.shutdown()
    }

    var socketURL: String {
        "ws://127.0.0.1:\(baseURL.port ?? 0)/openai/v1/realtime?model=gpt-realtime"
    }

    func connect(key: String? = RealtimeHarness.apiKey, url: String? = nil) async throws -> RealtimeTestClient {
        try await RealtimeTestClient.connect(to: url ?? socketURL, key: key)
    }

    /// Connects and configures the session (`audio/pcmu` both ways), waiting for `session.updated`.
    func connectConfigured(_ session: String = RealtimeHarness.pcmuSession) async throws -> RealtimeTestClient {
        let client = try await connect()
        _ = try await client.next("session.created")
        client.send(#"{"type":"session.update","event_id":"evt_setup","session":\#(session)}"#)
        _ = try await client.next("session.updated")
        return client
    }

    static let pcmuSession =
        #"{"type":"realtime","audio":{"input":{"format":{"type":"audio/pcmu"},"turn_detection":{"type":"server_vad"}},"output":{"format":{"type":"audio/pcmu"},"voice":"alloy"}}}"#
    static let manualSession =
        #"{"type":"realtime","audio":{"input":{"format":{"type":"audio/pcmu"},"turn_detection":null},"output":{"format":{"type":"audio/pcmu"}}}}"#
}

extension SandboxRealtime.Behavior {
    /// Fast: 10× real time after 20 ms, short lines.
    static var testing: SandboxRealtime.Behavior {
        SandboxRealtime.Behavior(
            firstAudioDelayMs: 20, speed: 10, chunkMs: 100,
            replyLines: ["Hello there, this is a short test.", "Thank you, that is all."])
    }
}

func withRealtime(
    recordsMessages: Bool = true, behavior: SandboxRealtime.Behavior = .testing, _ body: (RealtimeHarness) async throws -> Void
) async throws {
    let harness = try await RealtimeHarness.start(recordsMessages: recordsMessages, behavior: behavior)
    do {
        try await body(harness)
    } catch {
        try? await harness.shutdown()
        throw error
    }
    try await harness.shutdown()
}

/// A WebSocketKit client collecting every server event.
final class RealtimeTestClient: Sendable {
    let socket: WebSocket
    private let received: NIOLockedValueBox<[String]>
    private let cursor = NIOLockedValueBox(0)

    private init(socket: WebSocket, received: NIOLockedValueBox<[String]>) {
        self.socket = socket
        self.received = received
    }

    static func connect(to url: String, key: String?) async throws -> RealtimeTestClient {
        let received = NIOLockedValueBox<[String]>([])
        let group = MultiThreadedEventLoopGroup.singleton
        let upgraded = group.any().makePromise(of: WebSocket.self)
        var headers = HTTPHeaders()
        if let key { headers.bearerAuthorization = BearerAuthorization(token: key) }
        // WebSocketKit's connect with an explicit query: Vapor's async `connect(to:)` drops the URL's query (`?model=`).
        let components = try #require(URLComponents(string: url))
        let connected = WebSocket.connect(
            scheme: components.scheme ?? "ws", host: components.host ?? "127.0.0.1", port: components.port ?? 80,
            path: components.path, query: components.query, headers: headers, on: group
        ) { socket in
            socket.onText { _, text in received.withLockedValue { $0.append(text) } }
            upgraded.succeed(socket)
        }
        connected.whenFailure { upgraded.fail($0) }
        try await connected.get()
        return RealtimeTestClient(socket: try await upgraded.futureResult.get(), received: received)
    }

    func send(_ text: String) {
        socket.send(text)
    }

    /// Every event received so far, parsed.
    var events: [[String: Any]] {
        received.withLockedValue { $0 }.map(Self.parse)
    }

    func events(_ type: String) -> [[String: Any]] {
        events.filter { $0["type"] as? String == type }
    }

    /// The next event of `type` after those already returned by `next` (waits up to 5 s).
    func next(_ type: String, timeout: Duration = .seconds(5)) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let texts = received.withLockedValue { $0 }
            let start = cursor.withLockedValue { $0 }
            // The emulator writes compact JSON, so a substring test finds candidates without parsing every event.
            let marker = "\"type\":\"\(type)\""
            if let index = texts.indices.dropFirst(start).first(where: {
                texts[$0].contains(marker) && Self.parse(texts[$0])["type"] as? String == type
            }) {
                cursor.withLockedValue { $0 = index + 1 }
                return Self.parse(texts[index])
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("timed out waiting for \(type); received \(events.compactMap { $0["type"] as? String })")
        throw RealtimeTestError.timeout(type)
    }

    /// Waits until the socket is closed (up to 5 s).
    func waitForClose() async throws {
        try await socket.onClose.get()
    }

    func close() async throws {
        try await socket.close(code: .normalClosure).get()
    }

    static func parse(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }
}

enum RealtimeTestError: Error {
    case timeout(String)
}

/// Required members of the server events the emulator sends (`RealtimeServerEvent` members of the OpenAI spec).
let requiredEventMembers: [String: [String]] = [
    "response.function_call_arguments.delta": ["event_id", "response_id", "item_id", "output_index", "call_id", "delta"],
    "response.function_call_arguments.done": ["event_id", "response_id", "item_id", "output_index", "call_id", "name", "arguments"],
    "conversation.item.deleted": ["event_id", "item_id"],
    "conversation.item.input_audio_transcription.completed": ["event_id", "item_id", "content_index", "transcript", "usage"],
    "conversation.item.retrieved": ["event_id", "item"],
    "conversation.item.truncated": ["event_id", "item_id", "content_index", "audio_end_ms"],
    "error": ["event_id", "error"],
    "input_audio_buffer.cleared": ["event_id"],
    "input_audio_buffer.committed": ["event_id", "item_id"],
    "input_audio_buffer.speech_started": ["event_id", "audio_start_ms", "item_id"],
    "input_audio_buffer.speech_stopped": ["event_id", "audio_end_ms", "item_id"],
    "response.output_audio.delta": ["event_id", "response_id", "item_id", "output_index", "content_index", "delta"],
    "response.output_audio.done": ["event_id", "response_id", "item_id", "output_index", "content_index"],
    "response.output_audio_transcript.delta": ["event_id", "response_id", "item_id", "output_index", "content_index", "delta"],
    "response.output_audio_transcript.done": ["event_id", "response_id", "item_id", "output_index", "content_index", "transcript"],
    "response.content_part.added": ["event_id", "response_id", "item_id", "output_index", "content_index", "part"],
    "response.content_part.done": ["event_id", "response_id", "item_id", "output_index", "content_index", "part"],
    "response.created": ["event_id", "response"],
    "response.done": ["event_id", "response"],
    "response.output_item.added": ["event_id", "response_id", "output_index", "item"],
    "response.output_item.done": ["event_id", "response_id", "output_index", "item"],
    "response.output_text.delta": ["event_id", "response_id", "item_id", "output_index", "content_index", "delta"],
    "response.output_text.done": ["event_id", "response_id", "item_id", "output_index", "content_index", "text"],
    "session.created": ["event_id", "session"],
    "session.updated": ["event_id", "session"],
    "conversation.item.added": ["event_id", "item"],
    "conversation.item.done": ["event_id", "item"],
]

/// Checks every event against its spec member (known type, required members, `event_…` ids, unique ids).
func expectSpecShapes(_ events: [[String: Any]], sourceLocation: SourceLocation = #_sourceLocation) {
    var ids = Set<String>()
    for event in events {
        let type = event["type"] as? String ?? "?"
        guard let required = requiredEventMembers[type] else {
            Issue.record("unexpected event type \(type)", sourceLocation: sourceLocation)
            continue
        }
        for member in required where event[member] == nil {
            Issue.record("\(type) lacks \(member)", sourceLocation: sourceLocation)
        }
        let id = event["event_id"] as? String ?? ""
        #expect(id.hasPrefix("event_"), sourceLocation: sourceLocation)
        #expect(ids.insert(id).inserted, "duplicate event_id \(id)", sourceLocation: sourceLocation)
    }
}

/// `audio` as `input_audio_buffer.append` events of 20 ms (160 μ-law bytes) each.
func appendEvents(_ audio: [UInt8]) -> [String] {
    stride(from: 0, to: audio.count, by: 160).map { start in
        let frame = Data(audio[start..<min(start + 160, audio.count)]).base64EncodedString()
        return #"{"type":"input_audio_buffer.append","audio":"\#(frame)"}"#
    }
}

func silence(ms: Int) -> [UInt8] {
    [UInt8](repeating: MuLaw.silence, count: ms * MuLaw.bytesPerMillisecond)
}

func decodedAudio(_ deltas: [[String: Any]]) -> [UInt8] {
    deltas.flatMap { [UInt8](Data(base64Encoded: $0["delta"] as? String ?? "") ?? Data()) }
}

@Suite("Sandbox OpenAI Realtime", .serialized)
struct SandboxRealtimeTests {
    @Test func upgradeNeedsTheKeyAModelAndAnOpenEmulator() async throws {
        try await withRealtime { harness in
            await #expect(throws: (any Error).self) { _ = try await harness.connect(key: nil) }
            await #expect(throws: (any Error).self) { _ = try await harness.connect(key: "sk-wrong-key-000000000000") }
            #expect(harness.realtime.sessions().isEmpty)

            // The refusals are plain HTTP answers with OpenAI's error body, before any upgrade.
            let base = "http://127.0.0.1:\(harness.baseURL.port ?? 0)/openai/v1/realtime"
            var request = HTTPClientRequest(url: base + "?model=gpt-realtime")
            request.headers.add(name: "Authorization", value: "Bearer sk-wrong-key-000000000000")
            var response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            #expect(response.status == .unauthorized)
            var body = try await response.body.collect(upTo: 1 << 16)
            let error = try #require(RealtimeTestClient.parse(String(buffer: body))["error"] as? [String: Any])
            #expect(error["code"] as? String == "invalid_api_key")
            #expect(error["type"] as? String == "invalid_request_error")
            #expect((error["message"] as? String)?.contains("0000") == true)

            request = HTTPClientRequest(url: base)
            request.headers.add(name: "Authorization", value: "Bearer \(RealtimeHarness.apiKey)")
            response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            #expect(response.status == .badRequest)
            body = try await response.body.collect(upTo: 1 << 16)
            #expect((RealtimeTestClient.parse(String(buffer: body))["error"] as? [String: Any])?["param"] as? String == "model")

            var rejecting = SandboxRealtime.Behavior.testing
            rejecting.rejectConnections = true
            harness.realtime.setBehavior(rejecting)
            await #expect(throws: (any Error).self) { _ = try await harness.connect() }
            request = HTTPClientRequest(url: base + "?model=gpt-realtime")
            request.headers.add(name: "Authorization", value: "Bearer \(RealtimeHarness.apiKey)")
            response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            #expect(response.status == .serviceUnavailable)

            harness.realtime.resetBehavior()
            let client = try await harness.connect()
            _ = try await client.next("session.created")
            #expect(harness.realtime.openSessionCount == 1)
            try await client.close()
        }
    }

    @Test func sessionCreatedCarriesTheGADefaultsAndUpdatesMerge() async throws {
        try await withRealtime { harness in
            let client = try await harness.connect()
            let created = try await client.next("session.created")
            let session = try #require(created["session"] as? [String: Any])
            #expect(session["type"] as? String == "realtime")
            #expect(session["object"] as? String == "realtime.session")
            #expect((session["id"] as? String)?.hasPrefix("sess_") == true)
            #expect(session["model"] as? String == "gpt-realtime")
            #expect(session["output_modalities"] as? [String] == ["audio"])
            let audio = try #require(session["audio"] as? [String: Any])
            let input = try #require(audio["input"] as? [String: Any])
            let output = try #require(audio["output"] as? [String: Any])
            #expect((input["format"] as? [String: Any])?["type"] as? String == "audio/pcm")
            #expect((input["format"] as? [String: Any])?["rate"] as? Int == 24_000)
            let vad = try #require(input["turn_detection"] as? [String: Any])
            #expect(vad["type"] as? String == "server_vad")
            #expect(vad["threshold"] as? Double == 0.5)
            #expect(vad["prefix_padding_ms"] as? Int == 300)
            #expect(vad["silence_duration_ms"] as? Int == 500)
            #expect(vad["create_response"] as? Bool == true)
            #expect(vad["interrupt_response"] as? Bool == true)
            #expect(output["voice"] as? String == "alloy")
            #expect((output["format"] as? [String: Any])?["type"] as? String == "audio/pcm")
            #expect((output["format"] as? [String: Any])?["rate"] as? Int == 24_000)

            client.send(
                #"{"type":"session.update","session":{"type":"realtime","instructions":"Be brief.","audio":{"input":{"format":{"type":"audio/pcmu"},"transcription":{"model":"whisper-1"},"turn_detection":{"type":"server_vad","silence_duration_ms":300}},"output":{"format":{"type":"audio/pcmu"},"voice":"marin"}}}}"#
            )
            let updated = try #require(try await client.next("session.updated")["session"] as? [String: Any])
            #expect(updated["id"] as? String == session["id"] as? String)
            #expect(updated["instructions"] as? String == "Be brief.")
            let updatedAudio = try #require(updated["audio"] as? [String: Any])
            let updatedInput = try #require(updatedAudio["input"] as? [String: Any])
            #expect((updatedInput["format"] as? [String: Any])?["type"] as? String == "audio/pcmu")
            #expect((updatedInput["format"] as? [String: Any])?["rate"] == nil)
            #expect((updatedInput["transcription"] as? [String: Any])?["model"] as? String == "whisper-1")
            let updatedVAD = try #require(updatedInput["turn_detection"] as? [String: Any])
            #expect(updatedVAD["silence_duration_ms"] as? Int == 300)
            #expect(updatedVAD["threshold"] as? Double == 0.5)
            #expect(updatedVAD["prefix_padding_ms"] as? Int == 300)
            #expect((updatedAudio["output"] as? [String: Any])?["voice"] as? String == "marin")

            let record = try #require(harness.realtime.sessions().first)
            #expect(record.id == session["id"] as? String)
            #expect(record.voice == "marin")
            #expect(record.inputAudioFormat == "audio/pcmu")
            #expect(record.transcription)
            #expect(record.instructions == "Be brief.")
            #expect(record.eventsReceived == ["session.update": 1])
            expectSpecShapes(client.events)
            try await client.close()
        }
    }

    @Test func sessionUpdateIsValidatedLikeOpenAI() async throws {
        try await withRealtime { harness in
            let client = try await harness.connect()
            _ = try await client.next("session.created")
            let cases: [(update: String, code: String, param: String?)] = [
                (#"{"type":"realtime","temperature":0.8}"#, "unknown_parameter", "session.temperature"),
                (#"{"instructions":"Hi"}"#, "missing_required_parameter", "session.type"),
                (#"{"type":"realtime","audio":{"input":{"format":{"type":"audio/wav"}}}}"#, "invalid_value", "session.audio.input.format.type"),
                (#"{"type":"realtime","audio":{"output":{"voice":"nova"}}}"#, "invalid_value", "session.audio.output.voice"),
                (
                    #"{"type":"realtime","audio":{"input":{"turn_detection":{"type":"server_vad","threshold":2}}}}"#, "invalid_value",
                    "session.audio.input.turn_detection.threshold"
                ),
                (#"{"type":"realtime","instructions":42}"#, "invalid_type", "session.instructions"),
            ]
            for (index, testCase) in cases.enumerated() {
                client.send(#"{"type":"session.update","event_id":"evt_\#(index)","session":\#(testCase.update)}"#)
                let error = try #require(try await client.next("error")["error"] as? [String: Any])
                #expect(error["type"] as? String == "invalid_request_error")
                #expect(error["code"] as? String == testCase.code, "\(testCase.update)")
                #expect(error["param"] as? String == testCase.param, "\(testCase.update)")
                #expect(error["event_id"] as? String == "evt_\(index)")
            }
            #expect(client.events("session.updated").isEmpty)

            // Invalid JSON and unknown events are errors too; the session stays open and usable.
            client.send("{not json")
            #expect((try await client.next("error")["error"] as? [String: Any])?["code"] as? String == "invalid_json")
            client.send(#"{"type":"session.magic","event_id":"evt_magic"}"#)
            let unknown = try #require(try await client.next("error")["error"] as? [String: Any])
            #expect(unknown["code"] as? String == "invalid_value")
            #expect(unknown["event_id"] as? String == "evt_magic")
            client.send(#"{"type":"session.update","session":\#(RealtimeHarness.pcmuSession)}"#)
            _ = try await client.next("session.updated")

            let record = try #require(harness.realtime.sessions().first)
            #expect(record.errors.map(\.code) == cases.map(\.code) + ["invalid_json", "invalid_value"])
            #expect(record.eventsReceived["session.update"] == cases.count + 1)
            #expect(record.eventsReceived["invalid"] == 1)
            expectSpecShapes(client.events)
            try await client.close()
        }
    }

    @Test func serverVADFindsTheCallersTurnAndTranscribesIt() async throws {
        var behavior = SandboxRealtime.Behavior.testing
        behavior.callerTranscripts = ["I would like to book a table."]
        try await withRealtime(behavior: behavior) { harness in
            let client = try await harness.connectConfigured(
                #"{"type":"realtime","audio":{"input":{"format":{"type":"audio/pcmu"},"transcription":{"model":"whisper-1"},"turn_detection":{"type":"server_vad","create_response":false}}}}"#
            )
            let speech = SandboxSpeech.synthetic("I would like to book a table for two tonight please", voice: 1)
            let speechMs = MuLaw.milliseconds(bytes: speech.count)
            for event in appendEvents(silence(ms: 600) + speech + silence(ms: 800)) { client.send(event) }

            let started = try await client.next("input_audio_buffer.speech_started")
            let startMs = try #require(started["audio_start_ms"] as? Int)
            #expect((280...340).contains(startMs), "speech at 600 ms minus 300 ms of padding, got \(startMs)")
            let itemID = try #require(started["item_id"] as? String)
            let stopped = try await client.next("input_audio_buffer.speech_stopped")
            let endMs = try #require(stopped["audio_end_ms"] as? Int)
            #expect(abs(endMs - (600 + speechMs + 500)) <= 60, "end of speech plus 500 ms of silence, got \(endMs)")
            #expect(stopped["item_id"] as? String == itemID)
            #expect(try await client.next("input_audio_buffer.committed")["item_id"] as? String == itemID)
            let added = try #require(try await client.next("conversation.item.added")["item"] as? [String: Any])
            #expect(added["id"] as? String == itemID)
            #expect(added["role"] as? String == "user")
            _ = try await client.next("conversation.item.done")
            let transcription = try await client.next("conversation.item.input_audio_transcription.completed")
            #expect(transcription["transcript"] as? String == "I would like to book a table.")
            #expect(transcription["item_id"] as? String == itemID)
            #expect(transcription["content_index"] as? Int == 0)

            // create_response false: no response follows the turn.
            try await Task.sleep(for: .milliseconds(100))
            #expect(client.events("response.created").isEmpty)
            #expect(client.events("input_audio_buffer.speech_started").count == 1)
            let record = try #require(harness.realtime.sessions().first)
            #expect(record.speechTurns.count == 1)
            #expect(record.speechTurns.first?.itemID == itemID)
            #expect(record.speechTurns.first?.audioStartMs == startMs)
            #expect(record.speechTurns.first?.audioEndMs == endMs)
            #expect(record.speechTurns.first?.committed == true)
            #expect(record.speechTurns.first?.transcript == "I would like to book a table.")
            #expect(record.inputAudioMs == (600 * 8 + speech.count + 800 * 8) / 8)
            expectSpecShapes(client.events)
            try await client.close()
        }
    }

    @Test func theAISpeaksFirstThenAnswersTheCallersTurn() async throws {
        try await withRealtime { harness in
            let client = try await harness.connectConfigured()
            client.send(#"{"type":"response.create"}"#)
            let first = try #require(try await client.next("response.done")["response"] as? [String: Any])
            #expect(first["status"] as? String == "completed")

            // The voice is fixed once the model has spoken.
            client.send(#"{"type":"session.update","event_id":"evt_voice","session":{"type":"realtime","audio":{"output":{"voice":"cedar"}}}}"#)
            let refusal = try #require(try await client.next("error")["error"] as? [String: Any])
            #expect(refusal["code"] as? String == "cannot_update_voice")
            #expect(refusal["event_id"] as? String == "evt_voice")

            for event in appendEvents(silence(ms: 200) + SandboxSpeech.synthetic("yes I have a minute", voice: 3) + silence(ms: 700)) {
                client.send(event)
            }
            let stopped = try await client.next("input_audio_buffer.speech_stopped")
            let committed = try await client.next("input_audio_buffer.committed")
            #expect(committed["item_id"] as? String == stopped["item_id"] as? String)
            #expect(committed["previous_item_id"] as? String == (first["output"] as? [[String: Any]])?.first?["id"] as? String)
            let second = try #require(try await client.next("response.done")["response"] as? [String: Any])
            #expect(second["status"] as? String == "completed")
            let transcript = (second["output"] as? [[String: Any]])?.first.flatMap { ($0["content"] as? [[String: Any]])?.first }
            #expect(transcript?["transcript"] as? String == "Thank you, that is all.")
            let responses = try #require(harness.realtime.sessions().first?.responses)
            #expect(responses.map(\.trigger) == ["client", "turn_detection"])
            #expect(responses.map(\.text) == SandboxRealtime.Behavior.testing.replyLines)
            #expect(client.events("conversation.item.input_audio_transcription.completed").isEmpty)
            expectSpecShapes(client.events)
            try await client.close()
        }
    }

    @Test func textResponsesAndClientItems() async throws {
        try await withRealtime { harness in
            let client = try await harness.connectConfigured(
                #"{"type":"realtime","output_modalities":["text"],"audio":{"input":{"turn_detection":null}}}"#)
            client.send(
                #"{"type":"conversation.item.create","item":{"id":"item_greet","type":"message","role":"user","content":[{"type":"input_text","text":"Greet the caller."}]}}"#
            )
            let added = try #require(try await client.next("conversation.item.added")["item"] as? [String: Any])
            #expect(added["id"] as? String == "item_greet")
            #expect(added["status"] as? String == "completed")
            _ = try await client.next("conversation.item.done")

            client.send(#"{"type":"response.create","response":{"metadata":{"purpose":"greeting"}}}"#)
            let done = try #require(try await client.next("response.done")["response"] as? [String: Any])
            #expect(done["output_modalities"] as? [String] == ["text"])
            #expect((done["metadata"] as? [String: Any])?["purpose"] as? String == "greeting")
            let text = client.events("response.output_text.delta").compactMap { $0["delta"] as? String }.joined()
            #expect(text == "Hello there, this is a short test.")
            #expect(client.events("response.output_text.done").first?["text"] as? String == text)
            #expect(client.events("response.output_audio.delta").isEmpty)

            client.send(#"{"type":"conversation.item.delete","item_id":"item_greet"}"#)
            #expect(try await client.next("conversation.item.deleted")["item_id"] as? String == "item_greet")
            client.send(#"{"type":"conversation.item.retrieve","item_id":"item_greet"}"#)
            #expect((try await client.next("error")["error"] as? [String: Any])?["param"] as? String == "item_id")
            expectSpecShapes(client.events)
            try await client.close()
        }
    }

    @Test func aLawInputIsDetectedToo() async throws {
        try await withRealtime { harness in
            let client = try await harness.connectConfigured(
                #"{"type":"realtime","audio":{"input":{"format":{"type":"audio/pcma"},"turn_detection":{"type":"server_vad","create_response":false,"prefix_padding_ms":0}}}}"#
            )
            let speech = MuLaw.decode(SandboxSpeech.synthetic("hello can you hear me", voice: 0)).map(aLaw)
            for event in appendEvents([UInt8](repeating: aLaw(0), count: 3_200) + speech + [UInt8](repeating: aLaw(0), count: 6_400)) {
                client.send(event)
            }
            let started = try await client.next("input_audio_buffer.speech_started")
            #expect(started["audio_start_ms"] as? Int == 400)
            _ = try await client.next("input_audio_buffer.committed")
            try await client.close()
        }
    }

    @Test func silenceAndLowNoiseNeverTrigger() async throws {
        try await withRealtime { harness in
            let client = try await harness.connectConfigured()
            var generator = SeededGenerator(seed: 7)
            let noise = MuLaw.encode((0..<24_000).map { _ in Int16.random(in: -250...250, using: &generator) })
            #expect(MuLaw.rms(noise) < SandboxRealtime.vadLevel(threshold: 0.5) / 2)
            for event in appendEvents(silence(ms: 2_000) + noise) { client.send(event) }
            client.send(#"{"type":"input_audio_buffer.commit"}"#)
            _ = try await client.next("input_audio_buffer.committed")
            #expect(client.events("input_audio_buffer.speech_started").isEmpty)
            #expect(client.events("response.created").isEmpty)
            let record = try #require(harness.realtime.sessions().first)
            #expect(record.inputAudioMs == 5_000)
            #expect(record.eventsReceived["input_audio_buffer.append"] == 250)

            // A committed empty buffer is refused, and clear answers cleared.
            client.send(#"{"type":"input_audio_buffer.commit","event_id":"evt_empty"}"#)
            let error = try #require(try await client.next("error")["error"] as? [String: Any])
            #expect(error["code"] as? String == "input_audio_buffer_commit_empty")
            client.send(#"{"type":"input_audio_buffer.clear"}"#)
            _ = try await client.next("input_audio_buffer.cleared")
            try await client.close()
        }
    }

    @Test func responseStreamsTheReplyLineAsPacedAudio() async throws {
        try await withRealtime { harness in
            let client = try await harness.connectConfigured(RealtimeHarness.manualSession)
            let line = "Hello there, this is a short test."
            let began = ContinuousClock.now
            client.send(#"{"type":"response.create","event_id":"evt_first"}"#)
            client.send(#"{"type":"response.create","event_id":"evt_second"}"#)
            let refusal = try #require(try await client.next("error")["error"] as? [String: Any])
            #expect(refusal["code"] as? String == "conversation_already_has_active_response")
            #expect(refusal["event_id"] as? String == "evt_second")

            let done = try await client.next("response.done")
            let elapsed = ContinuousClock.now - began
            let response = try #require(done["response"] as? [String: Any])
            #expect(response["status"] as? String == "completed")
            let output = try #require((response["output"] as? [[String: Any]])?.first)
            #expect(((output["content"] as? [[String: Any]])?.first)?["transcript"] as? String == line)
            let usage = try #require(response["usage"] as? [String: Any])
            #expect((usage["output_tokens"] as? Int ?? 0) > 0)

            let expected = SandboxRealtime.speechAudio(for: line, voice: "alloy")
            let deltas = client.events("response.output_audio.delta")
            #expect(decodedAudio(deltas) == expected)
            #expect(deltas.count == (expected.count + 799) / 800, "100 ms per delta")
            #expect(deltas.allSatisfy { $0["response_id"] as? String == response["id"] as? String })
            #expect(deltas.allSatisfy { $0["item_id"] as? String == output["id"] as? String })
            let transcript = client.events("response.output_audio_transcript.delta").compactMap { $0["delta"] as? String }.joined()
            #expect(transcript == line)
            #expect(client.events("response.output_audio_transcript.done").first?["transcript"] as? String == line)
            // 10× real time after a 20 ms delay.
            let audioMs = MuLaw.milliseconds(bytes: expected.count)
            #expect(elapsed >= .milliseconds(audioMs / 10 - 100))
            #expect(elapsed < .milliseconds(audioMs / 10 + 2_000))

            let order = client.events.compactMap { $0["type"] as? String }.filter { !$0.hasSuffix(".delta") && $0 != "error" }
            #expect(
                order.suffix(11) == [
                    "session.updated", "response.created", "response.output_item.added", "conversation.item.added",
                    "response.content_part.added", "response.output_audio.done", "response.output_audio_transcript.done",
                    "response.content_part.done", "response.output_item.done", "conversation.item.done", "response.done",
                ])
            let record = try #require(harness.realtime.sessions().first?.responses.first)
            #expect(record.status == "completed")
            #expect(record.generatedMs == audioMs)
            #expect(record.lineMs == audioMs)
            #expect(record.deltas == deltas.count)
            #expect(record.trigger == "client")
            expectSpecShapes(client.events)
            try await client.close()
        }
    }

    @Test func pcmOutputIsUpsampledTo24kHz() async throws {
        try await withRealtime { harness in
            let client = try await harness.connectConfigured(
                #"{"type":"realtime","audio":{"input":{"turn_detection":null},"output":{"voice":"coral"}}}"#)
            client.send(#"{"type":"response.create"}"#)
            _ = try await client.next("response.done")
            let muLaw = SandboxRealtime.speechAudio(for: "Hello there, this is a short test.", voice: "coral")
            let pcm = decodedAudio(client.events("response.output_audio.delta"))
            #expect(pcm.count == muLaw.count * 3 * 2)
            let first = MuLaw.decode(muLaw[100])
            let sample = Int16(bitPattern: UInt16(pcm[600]) | UInt16(pcm[601]) << 8)
            #expect(sample == first)
            try await client.close()
        }
    }

    @Test func truncateIsCheckedAgainstTheGeneratedAudio() async throws {
        try await withRealtime { harness in
            let client = try await harness.connectConfigured(RealtimeHarness.manualSession)
            client.send(#"{"type":"response.create"}"#)
            let done = try await client.next("response.done")
            let item = try #require(((done["response"] as? [String: Any])?["output"] as? [[String: Any]])?.first)
            let itemID = try #require(item["id"] as? String)
            let generated = MuLaw.milliseconds(bytes: decodedAudio(client.events("response.output_audio.delta")).count)

            client.send(
                #"{"type":"conversation.item.truncate","event_id":"evt_long","item_id":"\#(itemID)","content_index":0,"audio_end_ms":\#(generated + 500)}"#
            )
            let error = try #require(try await client.next("error")["error"] as? [String: Any])
            #expect(error["type"] as? String == "invalid_request_error")
            #expect(error["code"] as? String == "invalid_value")
            #expect(error["param"] as? String == "audio_end_ms")
            #expect(error["event_id"] as? String == "evt_long")
            #expect((error["message"] as? String)?.contains("already shorter than \(generated + 500)ms") == true)

            client.send(#"{"type":"conversation.item.truncate","item_id":"item_nope","content_index":0,"audio_end_ms":10}"#)
            #expect((try await client.next("error")["error"] as? [String: Any])?["param"] as? String == "item_id")

            let cut = generated / 2
            client.send(#"{"type":"conversation.item.truncate","item_id":"\#(itemID)","content_index":0,"audio_end_ms":\#(cut)}"#)
            let truncated = try await client.next("conversation.item.truncated")
            #expect(truncated["item_id"] as? String == itemID)
            #expect(truncated["audio_end_ms"] as? Int == cut)
            #expect(truncated["content_index"] as? Int == 0)

            client.send(#"{"type":"conversation.item.retrieve","item_id":"\#(itemID)"}"#)
            let retrieved = try #require(try await client.next("conversation.item.retrieved")["item"] as? [String: Any])
            let kept = try #require((retrieved["content"] as? [[String: Any]])?.first?["transcript"] as? String)
            #expect(!kept.isEmpty && kept.count < "Hello there, this is a short test.".count)
            #expect("Hello there, this is a short test.".hasPrefix(kept))

            let record = try #require(harness.realtime.sessions().first)
            #expect(record.truncations.map(\.audioEndMs) == [generated + 500, 10, cut])
            #expect(record.truncations.map(\.accepted) == [false, false, true])
            #expect(record.truncations.map(\.generatedMs) == [generated, nil, generated])
            #expect(record.responses.first?.transcript == kept)
            expectSpecShapes(client.events)
            try await client.close()
        }
    }

    @Test func bargeInCancelsTheActiveResponse() async throws {
        var behavior = SandboxRealtime.Behavior.testing
        behavior.speed = 1
        behavior.replyLines = ["This reply is deliberately long so that the caller has plenty of time to interrupt it midway."]
        try await withRealtime(behavior: behavior) { harness in
            let client = try await harness.connectConfigured()
            client.send(#"{"type":"response.create"}"#)
            _ = try await client.next("response.output_audio.delta")
            for event in appendEvents(SandboxSpeech.synthetic("wait a second", voice: 2)) { client.send(event) }
            let started = try await client.next("input_audio_buffer.speech_started")
            let done = try await client.next("response.done")
            let response = try #require(done["response"] as? [String: Any])
            #expect(response["status"] as? String == "cancelled")
            #expect((response["status_details"] as? [String: Any])?["reason"] as? String == "turn_detected")
            let item = try #require((response["output"] as? [[String: Any]])?.first)
            #expect(item["status"] as? String == "incomplete")
            let types = client.events.compactMap { $0["type"] as? String }
            let startedIndex = try #require(types.firstIndex(of: "input_audio_buffer.speech_started"))
            let doneIndex = try #require(types.firstIndex(of: "response.done"))
            #expect(startedIndex < doneIndex)
            #expect(started["item_id"] as? String != item["id"] as? String)

            let deltasAtCancel = client.events("response.output_audio.delta").count
            try await Task.sleep(for: .milliseconds(300))
            #expect(client.events("response.output_audio.delta").count == deltasAtCancel)
            let record = try #require(harness.realtime.sessions().first?.responses.first)
            #expect(record.status == "cancelled")
            #expect(record.reason == "turn_detected")
            #expect(record.generatedMs < record.lineMs)
            #expect(record.generatedMs == deltasAtCancel * 100)
            expectSpecShapes(client.events)
            try await client.close()
        }
    }

    @Test func responseCancelNeedsAnActiveResponse() async throws {
        var behavior = SandboxRealtime.Behavior.testing
        behavior.speed = 1
        try await withRealtime(behavior: behavior) { harness in
            let client = try await harness.connectConfigured(RealtimeHarness.manualSession)
            client.send(#"{"type":"response.cancel","event_id":"evt_cancel"}"#)
            let error = try #require(try await client.next("error")["error"] as? [String: Any])
            #expect(error["code"] as? String == "response_cancel_not_active")
            #expect(error["event_id"] as? String == "evt_cancel")

            client.send(#"{"type":"response.create"}"#)
            _ = try await client.next("response.created")
            client.send(#"{"type":"response.cancel"}"#)
            let done = try #require(try await client.next("response.done")["response"] as? [String: Any])
            #expect(done["status"] as? String == "cancelled")
            #expect((done["status_details"] as? [String: Any])?["reason"] as? String == "client_cancelled")
            #expect(harness.realtime.sessions().first?.responses.first?.reason == "client_cancelled")
            try await client.close()
        }
    }

    @Test(arguments: [SandboxRealtime.Failure.error, .close])
    func failAfterClosesTheSocketWith1011(failure: SandboxRealtime.Failure) async throws {
        var behavior = SandboxRealtime.Behavior.testing
        behavior.failAfterMs = 150
        behavior.failure = failure
        try await withRealtime(behavior: behavior) { harness in
            let client = try await harness.connect()
            _ = try await client.next("session.created")
            try await client.waitForClose()
            #expect(client.socket.closeCode == .unexpectedServerError)
            let errors = client.events("error").compactMap { $0["error"] as? [String: Any] }
            #expect(errors.map { $0["type"] as? String } == (failure == .error ? ["server_error"] : []))
            let deadline = ContinuousClock.now + .seconds(5)
            while harness.realtime.openSessionCount > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            let record = try #require(harness.realtime.sessions().first)
            #expect(record.injectedFailure == failure.rawValue)
            #expect(record.closeCode == 1011)
            #expect(!record.isOpen)
        }
    }

    @Test func receivedMessagesAreRecordedUnlessSwitchedOff() async throws {
        try await withRealtime { harness in
            let client = try await harness.connectConfigured()
            for event in appendEvents(silence(ms: 100)) { client.send(event) }
            client.send(#"{"type":"input_audio_buffer.commit"}"#)
            _ = try await client.next("input_audio_buffer.committed")
            let sessionID = try #require(harness.realtime.sessions().first?.id)
            let entries = harness.services.recorder.requests()
            let messages = entries.filter { $0.method == "WS" }
            #expect(messages.count == 7)
            #expect(messages.allSatisfy { $0.path == "/openai/v1/realtime" && $0.headers["x-sandbox-connection"] == sessionID })
            #expect(messages.first?.body?.contains("session.update") == true)
            let upgrade = try #require(entries.first { $0.method == "GET" })
            #expect(upgrade.path == "/openai/v1/realtime")
            #expect(upgrade.headers["authorization"] == "[REDACTED]")
            #expect(!entries.contains { ($0.body ?? "").contains(RealtimeHarness.apiKey) })
            try await client.close()
        }
        try await withRealtime(recordsMessages: false) { harness in
            let client = try await harness.connectConfigured()
            for event in appendEvents(silence(ms: 100)) { client.send(event) }
            client.send(#"{"type":"input_audio_buffer.commit"}"#)
            _ = try await client.next("input_audio_buffer.committed")
            #expect(harness.services.recorder.requests().filter { $0.method == "WS" }.isEmpty)
            #expect(harness.realtime.sessions().first?.eventsReceived["input_audio_buffer.append"] == 5)
            try await client.close()
        }
    }

    @Test func controlRoutesSetTheBehaviorAndListSessions() async throws {
        try await withRealtime { harness in
            let base = harness.baseURL.absoluteString + "/openai/realtime"
            var request = HTTPClientRequest(url: base + "/behavior")
            request.method = .PUT
            request.body = .bytes(ByteBuffer(string: #"{"reply_lines":["Custom line."],"speed":12,"fail_after_ms":5000}"#))
            var response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            #expect(response.status == .ok)
            let behavior = harness.realtime.behavior
            #expect(behavior.replyLines == ["Custom line."])
            #expect(behavior.speed == 12)
            #expect(behavior.failAfterMs == 5_000)
            #expect(behavior.chunkMs == 100)
            #expect(behavior.firstAudioDelayMs == 250)

            request.body = .bytes(ByteBuffer(string: #"{"speed":0}"#))
            response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            #expect(response.status == .badRequest)
            #expect(harness.realtime.behavior.speed == 12)

            let client = try await harness.connectConfigured()
            client.send(#"{"type":"input_audio_buffer.clear"}"#)
            _ = try await client.next("input_audio_buffer.cleared")
            response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + "/sessions"), timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 1 << 20)
            let sessions = try #require(RealtimeTestClient.parse(String(buffer: body))["sessions"] as? [[String: Any]])
            #expect(sessions.count == 1)
            #expect(sessions.first?["events_received"] as? [String: Int] == ["session.update": 1, "input_audio_buffer.clear": 1])
            #expect(sessions.first?["model"] as? String == "gpt-realtime")
            #expect(sessions.first?["input_audio_format"] as? String == "audio/pcmu")
            try await client.close()
        }
    }

    @Test func sessionsEndWithTheirSocketAndAtShutdown() async throws {
        var behavior = SandboxRealtime.Behavior.testing
        behavior.speed = 1
        try await withRealtime(behavior: behavior) { harness in
            let first = try await harness.connectConfigured(RealtimeHarness.manualSession)
            let second = try await harness.connectConfigured(RealtimeHarness.manualSession)
            first.send(#"{"type":"response.create"}"#)
            second.send(#"{"type":"response.create"}"#)
            _ = try await first.next("response.output_audio.delta")
            _ = try await second.next("response.output_audio.delta")
            #expect(harness.realtime.openSessionCount == 2)

            try await first.close()
            let deadline = ContinuousClock.now + .seconds(5)
            while harness.realtime.openSessionCount > 1, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(harness.realtime.openSessionCount == 1)
            let closed = try #require(harness.realtime.sessions().first)
            #expect(closed.responses.first?.status == "cancelled")
            #expect(closed.responses.first?.reason == "connection_closed")
            #expect(closed.closeCode == 1000)

            harness.realtime.shutdown()
            try await second.waitForClose()
            #expect(second.socket.closeCode == .goingAway)
            while harness.realtime.openSessionCount > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(harness.realtime.openSessionCount == 0)
            #expect(harness.realtime.sessions().allSatisfy { !$0.isOpen })
        }
    }
}

/// G.711 A-law encoding of one sample (ITU-T reference algorithm), to feed `audio/pcma` sessions.
func aLaw(_ sample: Int16) -> UInt8 {
    var value = Int(sample) >> 3
    let mask: Int
    if value >= 0 {
        mask = 0xD5
    } else {
        mask = 0x55
        value = -value - 1
    }
    let ends = [0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF]
    guard let segment = ends.firstIndex(where: { value <= $0 }) else { return UInt8(0x7F ^ mask) }
    let mantissa = segment < 2 ? (value >> 1) & 0x0F : (value >> segment) & 0x0F
    return UInt8((segment << 4 | mantissa) ^ mask)
}

/// A deterministic generator for test noise.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
