import ChorusAPI
import ChorusProviders
import ChorusSandbox
import Foundation
import Testing

@testable import ChorusServer

/// Providers replaced in process through `ChorusApp.Options.overrideProviders` (Support/Fakes.swift): what the server
/// does with a provider's answer, or its failure, without an emulator in between.
@Suite("In-process provider fakes")
struct InProcessProviderTests {
    /// Uploads `wav` as `person`'s recording and asks for its transcript.
    static func transcribe(_ server: TestServer, _ person: MessagingTests.Person, _ wav: Data) async throws -> TestServer.Reply {
        let upload = try await server.request(.POST, "/audio", token: person.token, body: wav, headers: [("Content-Type", "audio/wav")])
        #expect(upload.status == 201, "\(upload.text)")
        let audioID = try upload.decode(AudioUploadResponse.self).audioID
        return try await server.request(.POST, "/transcriptions", token: person.token, json: TranscriptionRequestDTO(audioID: audioID, language: "en"))
    }

    @Test("the transcriber's text is the transcript: the recording reaches it as stored, with the language asked for")
    func transcriptFromTheProvider() async throws {
        let transcriber = FakeTranscriber(text: "Pick up Emma from soccer at five, please.")
        try await TestServer.run(on: .sqlite, options: ChorusApp.Options.testing().fake(\.transcriber, transcriber)) { server in
            let mom = try await MessagingTests.person(server, name: "mom")
            let wav = SandboxAudioFiles.speechWAV(text: "anything at all", voice: "alice")
            let reply = try await Self.transcribe(server, mom, wav)
            #expect(reply.status == 200, "\(reply.text)")
            let transcript = try reply.decode(TranscriptionResponse.self)
            #expect(transcript.transcript == "Pick up Emma from soccer at five, please." && transcript.language == "en")
            let asked = try #require(transcriber.requests.first)
            #expect(transcriber.requests.count == 1)
            #expect(asked.audio == wav && asked.contentType == "audio/wav" && asked.filename == "recording.wav" && asked.language == "en")
        }
    }

    @Test("a transcriber that fails: 503 with the PRD's text and Retry-After, and asking again asks the provider again")
    func failingTranscriber() async throws {
        let transcriber = FakeTranscriber(failure: .unavailable("the provider is down"))
        try await TestServer.run(on: .sqlite, options: ChorusApp.Options.testing().fake(\.transcriber, transcriber)) { server in
            let mom = try await MessagingTests.person(server, name: "mom")
            let wav = SandboxAudioFiles.speechWAV(text: "anything at all", voice: "alice")
            let reply = try await Self.transcribe(server, mom, wav)
            #expect(reply.status == 503, "\(reply.text)")
            #expect(reply.detail == "Couldn't transcribe audio. Please try again in a quieter environment.")
            #expect(reply.headers.first(name: "Retry-After") == "5")
            _ = try await Self.transcribe(server, mom, wav)
            #expect(transcriber.requests.count == 2)
        }
    }
}
