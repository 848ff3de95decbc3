import ChorusAPI
import Foundation

/// Hearing the AI voices of calls before choosing one. Reached through ``ChorusClient/voices``; the voices
/// themselves are listed by ``CallsClient/voices()``.
///
/// Needs no sign-in: the samples are public, like the catalog.
public struct VoicesClient: Sendable {
    let session: APISession

    /// A short spoken sample of the AI voice `voiceID` (an id of ``CallsClient/voices()``): the voice introducing
    /// itself by name. The server makes it once and then serves it from its storage; play ``VoicePreview/audio`` with
    /// `AVAudioPlayer(data:)`, or stream ``VoicePreview/url`` with `AVPlayer` (it needs no token and supports ranges).
    ///
    /// - Throws: ``ChorusError`` — ``ChorusError/notFound`` for an unknown voice, ``ChorusError/server(status:requestID:)``
    ///   with 503 when the sample cannot be made right now (the request was retried per the client's retry policy).
    public func preview(_ voiceID: String) async throws -> VoicePreview {
        // A voice id is one path segment: no voice has a `/` (or is empty), so such an id is not sent at all.
        guard !voiceID.isEmpty, !voiceID.contains("/") else { throw ChorusError.notFound }
        let request = API.Calls.voicePreview.request(voiceID, authenticated: false)
        let audio = try await session.send(request.request)
        let url = session.baseURL.appendingPathComponent(String(request.request.path.dropFirst()))
        return VoicePreview(voiceID: voiceID, audio: audio, url: url)
    }
}

/// A spoken sample of an AI voice (``VoicesClient/preview(_:)``).
public struct VoicePreview: Sendable, Hashable {
    /// The voice's id.
    public var voiceID: String
    /// The sample: MP3 (`audio/mpeg`), or WAV when the server's speech has no MP3 encoder.
    public var audio: Data
    /// Where the sample is served, for streaming players (no token needed).
    public var url: URL

    public init(voiceID: String, audio: Data, url: URL) {
        self.voiceID = voiceID
        self.audio = audio
        self.url = url
    }
}
