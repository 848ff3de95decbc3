import ChorusCore
import ChorusProviders
import Foundation

// The outside services' accounts (each absent → its in-process sandbox), object storage and provider prices.
extension ChorusConfiguration {
    /// Twilio account used for live calls. Absent → the in-process Twilio sandbox.
    public struct TwilioAccount: Sendable {
        public var accountSID: String
        public var authToken: String
        public var fromNumber: String
        public var apiBaseURL: URL

        /// The account when its three keys are set; a problem when only some are.
        static func load(from reader: inout EnvironmentReader) -> TwilioAccount? {
            let sid = reader.string("CHORUS_TWILIO_ACCOUNT_SID")
            let token = reader.string("CHORUS_TWILIO_AUTH_TOKEN")
            let from = reader.string("CHORUS_TWILIO_FROM_NUMBER")
            let apiBase = reader.value(
                "CHORUS_TWILIO_API_BASE_URL", default: URL(string: "https://api.twilio.com")!, parse: EnvironmentReader.httpURLs)
            guard sid != nil || token != nil || from != nil else { return nil }
            guard let sid, let token, let from else {
                reader.problems.append(
                    "CHORUS_TWILIO_ACCOUNT_SID, CHORUS_TWILIO_AUTH_TOKEN and CHORUS_TWILIO_FROM_NUMBER must be set together"
                )
                return nil
            }
            return TwilioAccount(accountSID: sid, authToken: token, fromNumber: from, apiBaseURL: apiBase)
        }
    }

    /// The OpenAI account used for the calls' realtime voice. Absent → the in-process OpenAI Realtime sandbox.
    public struct OpenAIAccount: Sendable {
        public var apiKey: String
        public var baseURL: URL

        static func load(from reader: inout EnvironmentReader) -> OpenAIAccount? {
            let base = reader.value("CHORUS_OPENAI_BASE_URL", default: URL?.none, parse: EnvironmentReader.baseURLs)
            // A base URL without a key points the bridge at another Realtime-compatible server (e.g. `chorus sandbox`).
            let key = reader.string("CHORUS_OPENAI_API_KEY")
            guard key != nil || base != nil else { return nil }
            return OpenAIAccount(apiKey: key ?? "", baseURL: base ?? URL(string: "https://api.openai.com/v1")!)
        }
    }

    /// The ElevenLabs account used for cloned voices. Absent → the in-process ElevenLabs sandbox.
    public struct ElevenLabsAccount: Sendable {
        public var apiKey: String
        public var baseURL: URL

        static func load(from reader: inout EnvironmentReader) -> ElevenLabsAccount? {
            let key = reader.string("CHORUS_ELEVENLABS_API_KEY")
            let base = reader.value("CHORUS_ELEVENLABS_BASE_URL", default: URL?.none, parse: EnvironmentReader.baseURLs)
            guard key != nil || base != nil else { return nil }
            return ElevenLabsAccount(apiKey: key ?? "", baseURL: base ?? URL(string: "https://api.elevenlabs.io")!)
        }
    }

    /// S3-compatible object storage when its four keys are set; a problem when only some are.
    static func loadObjectStorage(from reader: inout EnvironmentReader) -> S3BlobStore.Configuration? {
        let endpoint = reader.value("CHORUS_S3_ENDPOINT", default: URL?.none, parse: EnvironmentReader.httpURLs)
        let bucket = reader.string("CHORUS_S3_BUCKET")
        let keyID = reader.string("CHORUS_S3_ACCESS_KEY_ID")
        let secret = reader.string("CHORUS_S3_SECRET_ACCESS_KEY")
        guard endpoint != nil || bucket != nil || keyID != nil || secret != nil else { return nil }
        guard let endpoint, let bucket, let keyID, let secret else {
            reader.problems.append(
                "CHORUS_S3_ENDPOINT, CHORUS_S3_BUCKET, CHORUS_S3_ACCESS_KEY_ID and CHORUS_S3_SECRET_ACCESS_KEY must be set together")
            return nil
        }
        return S3BlobStore.Configuration(
            endpoint: endpoint, region: reader.string("CHORUS_S3_REGION") ?? "us-east-1", bucket: bucket, accessKeyID: keyID,
            secretAccessKey: secret,
            addressing: reader.choice("CHORUS_S3_ADDRESSING", default: .path, among: [.path, .virtualHost]))
    }

    /// The standard provider prices with `CHORUS_PRICE_TABLE_FILE`'s overrides.
    static func loadPrices(from reader: inout EnvironmentReader, workingDirectory: URL) -> PriceTable {
        guard let path = reader.string("CHORUS_PRICE_TABLE_FILE") else { return .standard }
        let file = EnvironmentReader.file(path, in: workingDirectory)
        do {
            return PriceTable.standard.applying(try PriceTable.Overrides.decode(json: try Data(contentsOf: file)))
        } catch {
            reader.problems.append("CHORUS_PRICE_TABLE_FILE \(file.path) cannot be used: \(error) (see docs/configuration.md).")
            return .standard
        }
    }
}
