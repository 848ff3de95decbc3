import Foundation
import X509

/// The App Store as the server sees it: StoreKit 2 signed transactions and Server Notifications V2 verified offline by
/// ``AppStoreSignedDataVerifier`` (chain to the configured roots, Apple's OIDs, ES256, bundle, environment, app id),
/// legacy receipts through Apple's verifyReceipt by ``AppStoreReceiptVerifier``.
public struct AppStorePurchaseVerifier: PurchaseVerifier {
    public let signedData: AppStoreSignedDataVerifier
    public let receipts: AppStoreReceiptVerifier

    /// Creates the verifier from its two halves.
    public init(signedData: AppStoreSignedDataVerifier, receipts: AppStoreReceiptVerifier) {
        self.signedData = signedData
        self.receipts = receipts
    }

    public func verifyReceipt(_ receiptData: String, productID: String) async throws -> VerifiedPurchase {
        try await receipts.verify(receiptData: receiptData, productID: productID)
    }

    public func verifySignedTransaction(_ jws: String) async throws -> VerifiedPurchase {
        try await signedData.verifyTransaction(jws)
    }

    public func verifyNotification(_ signedPayload: String) async throws -> VerifiedNotification {
        try await signedData.verifyNotification(signedPayload)
    }
}

extension AppleRootCertificates {
    /// Apple Root CA - G3 followed by the certificates in `extraFiles` (PEM or DER), e.g. a test authority's root.
    ///
    /// - Throws: ``PurchaseVerificationError/malformed(_:)`` naming a file that cannot be read or parsed.
    public static func roots(extraFiles: [String]) throws -> [Certificate] {
        try [appleRootCAG3]
            + extraFiles.map { path in
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw PurchaseVerificationError.malformed("cannot read the certificate file \(path)")
                }
                if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") {
                    do {
                        return try Certificate(pemEncoded: text)
                    } catch {
                        throw PurchaseVerificationError.malformed("\(path) is not a PEM certificate: \(error)")
                    }
                }
                do {
                    return try Certificate(derEncoded: Array(data))
                } catch {
                    throw PurchaseVerificationError.malformed("\(path) is not a DER or PEM certificate: \(error)")
                }
            }
    }
}
