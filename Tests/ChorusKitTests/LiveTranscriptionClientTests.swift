import ChorusKit
import ChorusSandbox
import Foundation
import Testing

/// Transcription while recording through the SDK (`VoiceClient.transcribeWhileRecording`) against a real server over
/// loopback: audio sent as it is "recorded" in odd-sized buffers, the transcript growing, then the final transcript
/// and the stored recording; a refused start as ``LiveTranscriptionError``.
@Suite("ChorusKit streaming transcription (live server)")
struct LiveTranscriptionClientTests {
    /// `seconds` of the sandbox voice as 24 kHz PCM16 little-endian.
    static func pcm(seconds: Double) throws -> Data {
        let text = Array(repeating: "Bring the blue umbrella, it will rain at four.", count: 10).joined(separator: " ")
        let samples = try #require(SandboxAudioFiles.pcm16(wav: SandboxAudioFiles.speechWAV(text: text, voice: "kit"))).samples
        var data = Data()
        for sample in samples.prefix(Int(seconds * 24_000)) {
            let value = UInt16(bitPattern: sample)
            data.append(UInt8(value & 0xFF))
            data.append(UInt8(value >> 8))
        }
        return data
    }

    @Test("send as recording, watch the transcript grow, finish with the transcript and the stored recording")
    func transcribesWhileRecording() async throws {
        try await LiveServer.run { server in
            let alice = try await MessagingPerson.register(on: server, name: "Alice", transport: WebSocketKitTransport())
            let live = try await alice.chorus.voice.transcribeWhileRecording(language: "en")
            let partials = Task {
                var seen: [String] = []
                for await text in live.partialTranscripts { seen.append(text) }
                return seen
            }
            let audio = try Self.pcm(seconds: 2)
            // Odd-sized buffers, as a recorder hands them out: whole samples go, the odd byte waits.
            var offset = 0
            while offset < audio.count {
                let end = min(audio.count, offset + 7_001)
                try await live.send(audio.subdata(in: offset..<end))
                offset = end
            }
            let result = try await live.finish()
            #expect(result.live)
            #expect(result.transcript.text == "This is a sandbox transcription of 2.0 seconds of audio.")
            #expect(result.transcript.language == "en")
            #expect(result.recording.format == .wav && abs(result.recording.duration - 2) < 0.01 && result.recording.size == audio.count + 44)
            #expect(result.serverMilliseconds >= result.providerMilliseconds)
            let seen = await partials.value
            #expect(seen.count > 1 && seen.last == result.transcript.text, "\(seen)")

            // The recording is the user's like an upload: its transcript is stored with it.
            let again = try await alice.chorus.voice.transcribe(audioID: result.recording.audioID, language: "en")
            #expect(again.text == result.transcript.text)

            // A refused start: the server's code and message.
            await #expect(throws: LiveTranscriptionError.self) {
                _ = try await alice.chorus.voice.transcribeWhileRecording(language: "english!")
            }
            do {
                _ = try await alice.chorus.voice.transcribeWhileRecording(language: "english!")
            } catch let error as LiveTranscriptionError {
                #expect(error.code == "invalid_message" && error.errorDescription?.contains("ISO-639-1") == true)
            }
        }
    }
}
