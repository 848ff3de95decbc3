import ChorusProviders
import Foundation

/// The outside services Chorus works with, one field per role.
///
/// ``ChorusServices/live(_:configuration:embedded:options:)`` builds the live set (the configured accounts, otherwise
/// the embedded emulators) and hands it to ``ChorusApp/Options/overrideProviders``,
/// where a test may replace any field with an in-process fake. These are the bare clients: the server meters, times
/// and records what goes through them on top.
public struct ProviderSet: Sendable {
    /// Places and ends calls (Twilio, or the Twilio emulator).
    public var telephony: any Telephony
    /// The number calls are placed from.
    public var callerID: String
    /// Checks the `X-Twilio-Signature` of the telephony provider's webhooks.
    public var webhookSignatures: TwilioRequestValidator
    /// Opens the calls' realtime voice sessions (OpenAI Realtime).
    public var realtime: any RealtimeConnector
    /// Verifies App Store purchases.
    public var purchases: any PurchaseVerifier
    /// Transcribes voice messages.
    public var transcriber: any Transcriber
    /// Writes text: message summaries and digests, stories.
    public var text: any TextGenerator
    /// Draws the stories' pictures.
    public var images: any ImageGenerator
    /// Speaks in the voice messages' speech model.
    public var messageSpeech: any SpeechSynthesizer
    /// Speaks in the stories' speech model.
    public var storySpeech: any SpeechSynthesizer
    /// Speaks in cloned voices (ElevenLabs).
    public var clonedSpeech: any SpeechSynthesizer
    /// Clones voices (ElevenLabs).
    public var cloner: any VoiceCloner
    /// Screens stories and custom personas (the moderation model).
    public var moderator: any ContentModerator
    /// Keeps audio and pictures.
    public var blobs: any BlobStore
    /// OpenAI's model list, for the model lifecycle check.
    public var models: OpenAIModelCatalog
    /// Which provider serves each role, as `/health` reports them (`"telephony": "twilio"` or `"sandbox"`, ...).
    public var names: [String: String]
    /// The provider usage records name for OpenAI's work (`openai`, or `sandbox-openai` for the emulator).
    public var openAIName: String
    /// The provider usage records name for ElevenLabs' work (`elevenlabs` or `sandbox-elevenlabs`).
    public var elevenLabsName: String
}
