import ChorusCore
import ChorusProviders
import Foundation

extension ChorusConfiguration {
    /// How App Store purchases and notifications are verified.
    public struct AppStoreSettings: Sendable, Equatable {
        /// The app's bundle id: every transaction and notification must name it.
        public var bundleID: String
        /// The app's numeric App Store id (`appAppleId`); production notifications must name it.
        public var appAppleID: Int64?
        /// The App Store environment the server serves (`Production` or `Sandbox`).
        public var environment: AppStoreEnvironment
        /// Whether a production server also accepts sandbox purchases (App Review and TestFlight buy in the sandbox).
        public var acceptsSandboxInProduction: Bool
        /// The app's shared secret for verifyReceipt (legacy receipts).
        public var sharedSecret: String?
        /// Certificates (DER or PEM files) trusted as extra roots besides Apple Root CA - G3: testing only.
        public var extraRootCertificatePaths: [String]
        /// verifyReceipt's production and sandbox URLs; `nil` means the local emulator under /sandbox.
        public var verifyReceiptURL: URL?
        public var verifyReceiptSandboxURL: URL?

        /// Apple's verifyReceipt URLs are the defaults once a shared secret is set; without one, the local emulator.
        static func load(from reader: inout EnvironmentReader, production: Bool) -> AppStoreSettings {
            let sharedSecret = reader.string("CHORUS_APPLE_SHARED_SECRET")
            let appleDefaultURLs = sharedSecret != nil
            return AppStoreSettings(
                bundleID: reader.string("CHORUS_APPLE_BUNDLE_ID") ?? "com.chorus.speechassistant",
                appAppleID: reader.value("CHORUS_APPLE_APP_ID", default: Int64?.none, accepts: "the app's numeric App Store id (a positive whole number)") {
                    Int64($0).flatMap { $0 > 0 ? $0 : nil }
                },
                environment: reader.value("CHORUS_APPLE_ENVIRONMENT", default: production ? AppStoreEnvironment.production : .sandbox, accepts: "production or sandbox") {
                    switch $0.lowercased() {
                    case "production": .production
                    case "sandbox": .sandbox
                    default: nil
                    }
                },
                acceptsSandboxInProduction: reader.flag("CHORUS_APPLE_ACCEPT_SANDBOX", default: true),
                sharedSecret: sharedSecret,
                extraRootCertificatePaths: reader.list("CHORUS_APPLE_EXTRA_ROOTS"),
                verifyReceiptURL: reader.value(
                    "CHORUS_APPLE_VERIFY_RECEIPT_URL", default: appleDefaultURLs ? URL(string: "https://buy.itunes.apple.com/verifyReceipt") : nil,
                    parse: EnvironmentReader.httpURLs),
                verifyReceiptSandboxURL: reader.value(
                    "CHORUS_APPLE_VERIFY_RECEIPT_SANDBOX_URL",
                    default: appleDefaultURLs ? URL(string: "https://sandbox.itunes.apple.com/verifyReceipt") : nil, parse: EnvironmentReader.httpURLs)
            )
        }

        /// The environments whose signed data and receipts are accepted.
        public var acceptedEnvironments: Set<AppStoreEnvironment> {
            environment == .production && acceptsSandboxInProduction ? [.production, .sandbox] : [environment]
        }
    }
}
