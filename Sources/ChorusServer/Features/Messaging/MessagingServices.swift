import ChorusAPI
import ChorusCore
import ChorusProviders
import Crypto
import Foundation

/// The dependencies of the voice-message features.
struct MessagingServices: Sendable {
    /// Recordings and generated audio.
    let blobs: any BlobStore
    /// Speech to text; not metered by a wrapper, so the provider's own time can be measured (``VoiceTranscription``
    /// meters each call itself through ``meter``).
    let transcriber: any Transcriber
    /// Meters the feature's provider calls that are not wrapped (transcriptions).
    let meter: UsageMeter
    /// Where uploads are spooled before they are inspected and stored.
    let spoolDirectory: URL
    let hub: RealtimeHub
    let fanout: any RealtimeFanout
    let audioURLs: AudioURLSigner
    /// Voice cloning (ElevenLabs or its sandbox) and speech in cloned voices.
    let cloner: any VoiceCloner
    let clonedSpeech: any SpeechSynthesizer
    /// The cloning provider's name, stored with each voice (`elevenlabs`).
    let cloneProvider: String
    /// Speech in default voices and narration (OpenAI or its sandbox).
    let defaultSpeech: any SpeechSynthesizer
    let speech: SpeechService
    /// Summaries (OpenAI chat completions or its sandbox).
    let textGenerator: any TextGenerator
}

/// Short-lived signed URLs for recordings: `/audio/{id}?expires=<unix seconds>&signature=<hex HMAC-SHA256>`, so a
/// player (AVPlayer, `<audio>`) can fetch and seek without the bearer token. The key is derived from the server's
/// token secret, so every instance accepts the URLs of the others.
struct AudioURLSigner: Sendable {
    private let key: SymmetricKey
    let lifetime: TimeInterval

    init(secret: String, lifetime: TimeInterval) {
        key = SymmetricKey(data: SHA256.hash(data: Data(("chorus-audio-url|" + secret).utf8)))
        self.lifetime = lifetime
    }

    /// The path and query of a URL valid until `now + lifetime` (rounded up to the minute so responses cache well).
    func path(audioID: String, now: Date) -> String {
        "/audio/\(audioID)?" + query(id: audioID, now: now)
    }

    /// `expires=…&signature=…` for the resource `id`.
    func query(id: String, now: Date) -> String {
        let expires = (Int64(now.timeIntervalSince1970 + lifetime) / 60 + 1) * 60
        return "expires=\(expires)&signature=\(signature(audioID: id, expires: expires))"
    }

    /// Whether the signature is the server's for this recording and has not expired.
    func isValid(audioID: String, expires: Int64, signature: String, now: Date) -> Bool {
        guard expires >= Int64(now.timeIntervalSince1970) else { return false }
        let expected = self.signature(audioID: audioID, expires: expires)
        return ConstantTime.equals(expected, signature)
    }

    /// The `expires` and `signature` members of a URL's query (the first of each), read without decoding the whole
    /// query: signed audio is the hottest path of the server. `nil` when the query has no signature.
    static func signedQuery(_ query: String?) -> (expires: Int64, signature: String)? {
        guard let query else { return nil }
        var expires: Int64 = 0
        var signature: String?
        for pair in query.utf8.split(separator: UInt8(ascii: "&")) {
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let name = pair[pair.startIndex..<equals]
            let value = pair[pair.index(after: equals)...]
            if signature == nil, name.elementsEqual("signature".utf8) {
                signature = String(decoding: value, as: UTF8.self)
            } else if expires == 0, name.elementsEqual("expires".utf8) {
                expires = Int64(String(decoding: value, as: UTF8.self)) ?? 0
            }
        }
        return signature.map { (expires, $0) }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private func signature(audioID: String, expires: Int64) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data("\(audioID)|\(expires)".utf8), using: key)
        var hex = [UInt8]()
        hex.reserveCapacity(64)
        for byte in code {
            hex.append(Self.hexDigits[Int(byte >> 4)])
            hex.append(Self.hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
