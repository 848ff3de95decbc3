import ChorusProviders
import Foundation
import JWTKit

/// Verifies what ``SandboxAppStore`` signs: HS256 JWS transactions and notifications, and its
/// base64 JSON receipt stand-in.
///
/// It checks the signature with the shared key, that the algorithm is HS256, that the bundle id is the
/// expected one, and that the environment is accepted.
public struct SandboxPurchaseVerifier: PurchaseVerifier {
    private let signingKey: String
    private let bundleID: String
    private let acceptedEnvironments: Set<AppStoreEnvironment>

    /// Creates a verifier.
    ///
    /// - Parameters:
    ///   - signingKey: The HS256 secret shared with ``SandboxAppStore``.
    ///   - bundleID: The only bundle id accepted.
    ///   - acceptedEnvironments: The environments accepted (the sandbox signs `Sandbox` by default).
    public init(
        signingKey: String,
        bundleID: String,
        acceptedEnvironments: Set<AppStoreEnvironment> = [.sandbox, .xcode]
    ) {
        self.signingKey = signingKey
        self.bundleID = bundleID
        self.acceptedEnvironments = acceptedEnvironments
    }

    /// Decodes the receipt stand-in, verifies every transaction in it and returns the latest purchase of `productID`.
    public func verifyReceipt(_ receiptData: String, productID: String) async throws -> VerifiedPurchase {
        let trimmed = receiptData.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let data = Data(base64Encoded: trimmed),
            let receipt = try? JSONDecoder().decode(ReceiptBody.self, from: data)
        else {
            throw PurchaseVerificationError.malformed("The receipt is not valid base64-encoded receipt data.")
        }
        var latest: VerifiedPurchase?
        for jws in receipt.signedTransactions {
            let purchase = try await verifySignedTransaction(jws)
            guard purchase.productID == productID else { continue }
            if latest.map({ purchase.purchaseDate > $0.purchaseDate }) ?? true {
                latest = purchase
            }
        }
        guard let latest else {
            throw PurchaseVerificationError.malformed("The receipt contains no purchase of \(productID).")
        }
        return latest
    }

    /// Verifies a signed transaction and returns its purchase.
    public func verifySignedTransaction(_ jws: String) async throws -> VerifiedPurchase {
        let payload = try await verify(jws, as: TransactionPayload.self)
        let environment = try checkEnvironment(payload.environment)
        try checkBundle(payload.bundleId)
        return VerifiedPurchase(
            productID: payload.productId,
            transactionID: payload.transactionId,
            originalTransactionID: payload.originalTransactionId,
            purchaseDate: AppStoreMillis.date(payload.purchaseDate),
            expiresDate: payload.expiresDate.map(AppStoreMillis.date),
            environment: environment,
            bundleID: payload.bundleId
        )
    }

    /// Verifies a notification's `signedPayload`, and the transaction inside it when there is one.
    public func verifyNotification(_ signedPayload: String) async throws -> VerifiedNotification {
        let payload = try await verify(signedPayload, as: NotificationPayload.self)
        var transaction: VerifiedPurchase?
        if let data = payload.data {
            _ = try checkEnvironment(data.environment)
            try checkBundle(data.bundleId)
            if let signed = data.signedTransactionInfo {
                transaction = try await verifySignedTransaction(signed)
            }
        }
        return VerifiedNotification(
            notificationUUID: payload.notificationUUID,
            notificationType: payload.notificationType,
            subtype: payload.subtype,
            signedDate: AppStoreMillis.date(payload.signedDate),
            transaction: transaction
        )
    }

    private func verify<Payload: JWTPayload>(_ jws: String, as type: Payload.Type) async throws -> Payload {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Self.base64URLDecode(parts[0]),
            let header = try? JSONDecoder().decode(Header.self, from: headerData)
        else {
            throw PurchaseVerificationError.malformed("Not a compact JWS.")
        }
        guard header.alg == "HS256" else {
            throw PurchaseVerificationError.invalidSignature("Unexpected JWS algorithm \(header.alg ?? "none").")
        }
        let keys = await JWTKeyCollection().add(hmac: AppStoreSigningKey.hmacKey(signingKey), digestAlgorithm: .sha256)
        do {
            return try await keys.verify(jws, as: Payload.self)
        } catch let error as JWTError {
            switch error.errorType {
            case .signatureVerificationFailed, .unknownKID, .missingKIDHeader, .unsupportedAlgorithm, .noKeyProvided:
                throw PurchaseVerificationError.invalidSignature("The JWS signature does not verify.")
            default:
                throw PurchaseVerificationError.malformed("The JWS could not be decoded: \(error.errorType).")
            }
        } catch {
            throw PurchaseVerificationError.malformed("The JWS payload could not be decoded.")
        }
    }

    private func checkEnvironment(_ raw: String) throws -> AppStoreEnvironment {
        guard let environment = AppStoreEnvironment(rawValue: raw), acceptedEnvironments.contains(environment) else {
            throw PurchaseVerificationError.wrongEnvironment("Environment \(raw) is not accepted.")
        }
        return environment
    }

    private func checkBundle(_ candidate: String) throws {
        guard candidate == bundleID else {
            throw PurchaseVerificationError.wrongBundle("Bundle \(candidate) is not \(bundleID).")
        }
    }

    private static func base64URLDecode(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    private struct Header: Decodable {
        let alg: String?

        enum CodingKeys: String, CodingKey {
            case alg
        }
    }
}
