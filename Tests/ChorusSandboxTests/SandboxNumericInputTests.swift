import ChorusProviders
import ChorusSandbox
import Foundation
import Testing

/// The emulators run inside the server's process in the embedded default: a number in a request to them must not trap
/// either (issue 16).
@Suite("Numbers from outside: emulators")
struct SandboxNumericInputTests {
    @Test("a response schema with minimum 1e300 and maximum -1e300 is answered with clamped integers (it trapped)")
    func absurdSchemaBounds() async throws {
        try await withOpenAI { harness in
            let schema = """
                {"type": "object", "properties": {"message_count": {"type": "integer", "minimum": 1e300},
                "floor": {"type": "integer", "maximum": -1e300}, "ratio": {"type": "number", "minimum": 1e300}},
                "required": ["message_count", "floor", "ratio"], "additionalProperties": false}
                """
            let request = TextGenerationRequest(
                model: "gpt-4.1-mini", messages: [ChatMessage(role: .user, content: familyThread)],
                format: StructuredOutputFormat(name: "counts", schemaJSON: schema), maxOutputTokens: 200, temperature: 0, safetyIdentifier: nil)
            let generated = try await harness.generator().generate(request)
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(generated.content.utf8)) as? [String: Any])
            #expect((answer["message_count"] as? NSNumber)?.int64Value == .max, "\(generated.content)")
            #expect((answer["floor"] as? NSNumber)?.int64Value == .min, "\(generated.content)")
            #expect(answer["ratio"] is NSNumber, "\(generated.content)")
        }
    }

    /// An M4A of `boxes`: `ftyp`, then `moov` holding a version-1 `mvhd` with `timescale` and `duration`, or a `moov`
    /// whose 64-bit size is `largeSize`.
    static func m4a(timescale: UInt32 = 1, duration: UInt64 = 1, largeSize: UInt64? = nil) -> Data {
        func be32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        func be64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }
        let ftyp = be32(20) + Array("ftypM4A ".utf8) + be32(0) + Array("M4A ".utf8)
        if let largeSize { return Data(ftyp + be32(1) + Array("moov".utf8) + be64(largeSize) + Array(repeating: 0, count: 12)) }
        let content: [UInt8] = [1, 0, 0, 0] + be64(0) + be64(0) + be32(timescale) + be64(duration)
        let mvhd = be32(UInt32(8 + content.count)) + Array("mvhd".utf8) + content
        return Data(ftyp + be32(UInt32(8 + mvhd.count)) + Array("moov".utf8) + mvhd)
    }

    @Test("transcribing an M4A that claims 2^64 − 1 seconds, or a box of 2^63 − 1 bytes, is a 400 (both trapped)")
    func absurdRecordings() async throws {
        try await withOpenAI { harness in
            for model in ["whisper-1", "gpt-4o-transcribe"] {
                for (name, audio) in [("duration", Self.m4a(duration: .max)), ("box size", Self.m4a(largeSize: UInt64(Int64.max)))] {
                    let error = await #expect(throws: ProviderError.self, "\(model), \(name)") {
                        try await harness.transcriber(model).transcribe(
                            TranscriptionRequest(audio: audio, filename: "message.m4a", contentType: "audio/mp4"))
                    }
                    guard case .rejected(400, _, _)? = error else {
                        Issue.record("\(model), \(name): expected a 400, got \(String(describing: error))")
                        continue
                    }
                }
            }
            // A day is still heard (the longest the emulator takes).
            let day = try await harness.transcriber("whisper-1").transcribe(
                TranscriptionRequest(audio: Self.m4a(timescale: 1, duration: 86_400), filename: "message.m4a", contentType: "audio/mp4"))
            #expect(day.durationSeconds == 86_400)
        }
    }
}
