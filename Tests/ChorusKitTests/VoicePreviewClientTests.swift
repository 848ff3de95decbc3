import ChorusKit
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``VoicesClient/preview(_:)`` against a real server over loopback.
@Suite("ChorusKit VoicePreview (live server)")
struct VoicePreviewClientTests {
    @Test("a signed-out client hears every catalog voice's sample; the URL streams the same audio; unknown voices are notFound")
    func previews() async throws {
        try await LiveServer.run { server in
            let chorus = server.client()
            #expect(await !chorus.auth.isSignedIn)
            // The voices are listed by a signed-in client; the previews are fetched by a signed-out one.
            let lister = server.client()
            try await lister.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            let voices = try await lister.calls.voices()
            #expect(voices.count >= 8)

            let preview = try await chorus.voices.preview("marin")
            #expect(preview.voiceID == "marin" && preview.audio.count > 1_000)
            #expect(preview.url.path == "/mobile/voices/marin/preview")
            let (streamed, response) = try await URLSession.shared.data(from: preview.url)
            #expect((response as? HTTPURLResponse)?.statusCode == 200 && streamed == preview.audio)
            // Served from storage the second time: the same bytes.
            #expect(try await chorus.voices.preview("marin").audio == preview.audio)

            for voice in voices where voice.id != "marin" {
                #expect(try await chorus.voices.preview(voice.id).audio.count > 1_000, "\(voice.id)")
            }

            for unknown in ["nobody", "two words", "a/b", ""] {
                do {
                    _ = try await chorus.voices.preview(unknown)
                    Issue.record("the unknown voice \(unknown) was previewed")
                } catch ChorusError.notFound {
                    // Expected.
                }
            }
        }
    }
}
