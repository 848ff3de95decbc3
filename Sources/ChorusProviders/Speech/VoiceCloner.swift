import Foundation

/// A recording used to clone a voice.
public struct VoiceSample: Sendable, Equatable {
    public var audio: Data
    /// A file name with the right extension (`sample.m4a`).
    public var filename: String
    public var contentType: String

    public init(audio: Data, filename: String, contentType: String) {
        self.audio = audio
        self.filename = filename
        self.contentType = contentType
    }
}

/// What to clone.
public struct VoiceCloneRequest: Sendable, Equatable {
    /// The provider-side name (never the user's real name: an opaque label such as `chorus-<account-hash>`).
    public var name: String
    public var samples: [VoiceSample]
    /// Ask the provider to remove background noise from the samples.
    public var removeBackgroundNoise: Bool

    public init(name: String, samples: [VoiceSample], removeBackgroundNoise: Bool = true) {
        self.name = name
        self.samples = samples
        self.removeBackgroundNoise = removeBackgroundNoise
    }
}

/// A voice the provider created.
public struct ClonedVoice: Sendable, Equatable {
    /// The provider's voice id; stays on the server.
    public var voiceID: String
    /// The provider wants the account holder to verify the voice before use.
    public var requiresVerification: Bool

    public init(voiceID: String, requiresVerification: Bool) {
        self.voiceID = voiceID
        self.requiresVerification = requiresVerification
    }
}

/// Instant voice cloning (ElevenLabs `POST /v1/voices/add`, `DELETE /v1/voices/{voice_id}`, or a sandbox twin).
public protocol VoiceCloner: Sendable {
    /// Creates a voice from the samples. Throws ``ProviderError``.
    func cloneVoice(_ request: VoiceCloneRequest) async throws -> ClonedVoice
    /// Deletes a voice; a voice the provider no longer knows counts as deleted. Throws ``ProviderError``.
    func deleteVoice(id: String) async throws
}
