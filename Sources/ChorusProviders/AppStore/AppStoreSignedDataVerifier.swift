import Crypto
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Verifies Apple's StoreKit 2 signed data (compact JWS): signed transactions, signed renewal information and App Store
/// Server Notifications V2, the way Apple's `app-store-server-library` (`SignedDataVerifier`, offline mode) does.
///
/// Every JWS goes through these steps, in this order; the first that fails throws a ``PurchaseVerificationError``
/// whose reason names what was wrong:
/// 1. three base64url segments (`.malformed`);
/// 2. a JSON header (`.malformed`);
/// 3. `alg` is exactly `ES256` (an allowlist; `.invalidSignature` otherwise);
/// 4. `x5c` is present and holds exactly 3 standard-base64 DER certificates (`.invalidSignature`; undecodable
///    certificates are `.malformed`);
/// 5. the payload is decoded (`.malformed`) to read `signedDate`;
/// 6. the leaf `x5c[0]` and the intermediate `x5c[1]` are path-validated (swift-certificates `Verifier`,
///    ``RFC5280Policy`` at the validation time) up to the configured root certificates — `x5c[2]` is ignored, the
///    anchor is ours — and ``AppStoreOIDPolicy`` requires a 3-certificate chain, Apple's OID 1.2.840.113635.100.6.2.1
///    on the intermediate and 1.2.840.113635.100.6.11.1 on the leaf (`.invalidSignature`);
/// 7. the ES256 signature over `header.payload` verifies with the leaf's P-256 key (`.invalidSignature`);
/// 8. the semantic checks: `bundleId` (`.wrongBundle`), `appAppleId` of production notifications (`.wrongBundle`) and
///    `environment` (`.wrongEnvironment`).
///
/// **Validation time.** Certificates are validated at the payload's `signedDate` (milliseconds since 1970), as
/// Apple's library does offline: a JWS signed while its leaf was valid stays verifiable after the leaf expires (Apple
/// rotates the leaf about every two years). There is no maximum age and no revocation (OCSP) check. A notification
/// without `signedDate` (Apple's 2022-era format) is validated at the `signedDate` of its nested
/// `data.signedTransactionInfo` (else `data.signedRenewalInfo`), which is re-verified on its own; only when none of
/// these carries one is the chain validated at the current time.
///
/// **Environment.** Payloads signed before Apple added `environment` (2021) have none. With `acceptedEnvironments`
/// set, such a payload is rejected (`.wrongEnvironment`), as Apple's library does. Without a requirement (support-tool
/// mode) renewal information and notifications report `environment: nil`, and a transaction — whose
/// ``VerifiedPurchase/environment`` cannot be `nil` — reports ``AppStoreEnvironment/sandbox``, the conservative
/// reading (nothing takes it for a production purchase); ``verifyDocument(_:)`` shows the payload as signed.
public struct AppStoreSignedDataVerifier: Sendable {
    /// The trusted roots the leaf and intermediate must chain to.
    public let rootCertificates: [Certificate]
    /// The bundle id every transaction and notification must name; `nil` accepts any app.
    public let bundleID: String?
    /// The App Store app id production notifications must name; `nil` skips that check.
    public let appAppleID: Int64?
    /// The environments accepted; `nil` accepts any, including none (old payloads).
    public let acceptedEnvironments: Set<AppStoreEnvironment>?

    /// When certificates are validated: at the payload's `signedDate` (the default) or at a fixed time (tests).
    enum ValidationTime: Sendable {
        /// At the payload's `signedDate`, with the fallbacks described on the type.
        case signedDate
        /// Always at this time.
        case fixed(Date)
    }

    /// When certificates are validated; tests set `.fixed` to show that an expired leaf fails "now".
    var validationTime: ValidationTime = .signedDate

    /// Creates a verifier.
    ///
    /// - Parameters:
    ///   - rootCertificates: The trusted roots (Apple Root CA - G3 by default; a test authority's root in tests).
    ///   - bundleID: The app's bundle id; `nil` does not check it (support tools).
    ///   - appAppleID: The app's App Store id. When it is given and ``AppStoreEnvironment/production`` is accepted,
    ///     a production notification must carry this `appAppleId`; a notification from another environment that
    ///     carries an `appAppleId` must carry this one too (sandbox `TEST` notifications carry none).
    ///   - acceptedEnvironments: The environments accepted; `nil` does not check it (support tools).
    public init(
        rootCertificates: [Certificate] = [AppleRootCertificates.appleRootCAG3],
        bundleID: String?,
        appAppleID: Int64?,
        acceptedEnvironments: Set<AppStoreEnvironment>?
    ) {
        self.rootCertificates = rootCertificates
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.acceptedEnvironments = acceptedEnvironments
    }

    // MARK: Public entry points

    /// Verifies a signed transaction (`Transaction.jwsRepresentation`, `signedTransactionInfo`).
    public func verifyTransaction(_ jws: String) async throws -> VerifiedPurchase {
        try await checkedTransaction(jws).purchase
    }

    /// Verifies signed subscription renewal information (`signedRenewalInfo`). Renewal information names no bundle
    /// id, so only its environment is checked beyond the signature.
    public func verifyRenewalInfo(_ jws: String) async throws -> VerifiedRenewalInfo {
        try await checkedRenewalInfo(jws).renewalInfo
    }

    /// Verifies an App Store Server Notification V2 `signedPayload`, then its nested `data.signedTransactionInfo` and
    /// `data.signedRenewalInfo`, each with its own chain and signature check and the same requirements; a nested
    /// failure's reason starts with the nested field's name.
    public func verifyNotification(_ signedPayload: String) async throws -> VerifiedNotification {
        try await checkedNotification(signedPayload).notification
    }

    /// Detects what a signed document is (a notification has `notificationType`; a transaction `transactionId`;
    /// renewal information `autoRenewStatus` or `renewalDate` without `transactionId`), verifies it like the matching
    /// `verify…` method, and returns its payload as pretty JSON with nested JWS replaced by their verified payloads.
    public func verifyDocument(_ jws: String) async throws -> AppStoreSignedDocument {
        let parsed = try Self.parse(jws)
        guard let object = try? JSONSerialization.jsonObject(with: parsed.payload) as? [String: Any] else {
            throw PurchaseVerificationError.malformed("the JWS payload is not a JSON object")
        }
        if object["notificationType"] != nil {
            let checked = try await checkedNotification(jws)
            var json = try Self.jsonObject(checked.signed.payloadJSON)
            if var data = json["data"] as? [String: Any] {
                if let transaction = checked.transaction {
                    data["signedTransactionInfo"] = try Self.jsonObject(transaction.payloadJSON)
                }
                if let renewal = checked.renewal {
                    data["signedRenewalInfo"] = try Self.jsonObject(renewal.payloadJSON)
                }
                json["data"] = data
            }
            return AppStoreSignedDocument(
                kind: .notification,
                json: try Self.prettyJSON(json),
                validationTime: checked.signed.validationTime,
                leafCertificate: checked.signed.leaf,
                notification: checked.notification
            )
        }
        if object["transactionId"] != nil {
            let checked = try await checkedTransaction(jws)
            return AppStoreSignedDocument(
                kind: .transaction,
                json: try Self.prettyJSON(Self.jsonObject(checked.signed.payloadJSON)),
                validationTime: checked.signed.validationTime,
                leafCertificate: checked.signed.leaf,
                transaction: checked.purchase
            )
        }
        if object["autoRenewStatus"] != nil || object["renewalDate"] != nil {
            let checked = try await checkedRenewalInfo(jws)
            return AppStoreSignedDocument(
                kind: .renewalInfo,
                json: try Self.prettyJSON(Self.jsonObject(checked.signed.payloadJSON)),
                validationTime: checked.signed.validationTime,
                leafCertificate: checked.signed.leaf,
                renewalInfo: checked.renewalInfo
            )
        }
        throw PurchaseVerificationError.malformed(
            "cannot tell what the signed document is: its payload has no notificationType, transactionId, autoRenewStatus or renewalDate"
        )
    }

    // MARK: Kinds

    /// A verified transaction with its verified JWS.
    func checkedTransaction(_ jws: String) async throws -> (purchase: VerifiedPurchase, signed: VerifiedJWS<AppStoreTransactionPayload>) {
        let signed = try await verifySignedData(jws, as: AppStoreTransactionPayload.self)
        let payload = signed.payload
        try checkBundle(payload.bundleId, what: "transaction")
        let environment = try checkEnvironment(payload.environment, what: "transaction")
        func required<T>(_ value: T?, _ name: String) throws -> T {
            guard let value else { throw PurchaseVerificationError.malformed("the transaction payload has no \(name)") }
            return value
        }
        let purchase = VerifiedPurchase(
            productID: try required(payload.productId, "productId"),
            transactionID: try required(payload.transactionId, "transactionId"),
            originalTransactionID: try required(payload.originalTransactionId, "originalTransactionId"),
            purchaseDate: Self.date(millis: try required(payload.purchaseDate, "purchaseDate")),
            expiresDate: payload.expiresDate.map(Self.date(millis:)),
            environment: environment ?? .sandbox,
            bundleID: try required(payload.bundleId, "bundleId"),
            signedDate: payload.signedDate.map(Self.date(millis:)),
            appAccountToken: payload.appAccountToken.flatMap(UUID.init(uuidString:)),
            revocationDate: payload.revocationDate.map(Self.date(millis:)),
            revocationReason: payload.revocationReason,
            ownershipType: payload.inAppOwnershipType,
            productType: payload.type,
            quantity: payload.quantity ?? 1
        )
        return (purchase, signed)
    }

    /// Verified renewal information with its verified JWS.
    func checkedRenewalInfo(
        _ jws: String
    ) async throws -> (renewalInfo: VerifiedRenewalInfo, signed: VerifiedJWS<AppStoreRenewalInfoPayload>) {
        let signed = try await verifySignedData(jws, as: AppStoreRenewalInfoPayload.self)
        let payload = signed.payload
        let environment = try checkEnvironment(payload.environment, what: "renewal info")
        guard let originalTransactionID = payload.originalTransactionId else {
            throw PurchaseVerificationError.malformed("the renewal info payload has no originalTransactionId")
        }
        let info = VerifiedRenewalInfo(
            originalTransactionID: originalTransactionID,
            productID: payload.productId,
            autoRenewProductID: payload.autoRenewProductId,
            willAutoRenew: payload.autoRenewStatus.map { $0 == 1 },
            isInBillingRetryPeriod: payload.isInBillingRetryPeriod,
            gracePeriodExpiresDate: payload.gracePeriodExpiresDate.map(Self.date(millis:)),
            expirationIntent: payload.expirationIntent,
            signedDate: payload.signedDate.map(Self.date(millis:)),
            environment: environment
        )
        return (info, signed)
    }

    /// A verified notification with its verified JWS and those of its nested transaction and renewal information.
    func checkedNotification(
        _ signedPayload: String
    ) async throws -> (
        notification: VerifiedNotification,
        signed: VerifiedJWS<AppStoreNotificationPayload>,
        transaction: VerifiedJWS<AppStoreTransactionPayload>?,
        renewal: VerifiedJWS<AppStoreRenewalInfoPayload>?
    ) {
        let signed = try await verifySignedData(signedPayload, as: AppStoreNotificationPayload.self) { payload in
            // 2022-era notifications have no signedDate: use the nested transaction's (else renewal info's).
            Self.unverifiedSignedDate(of: payload.data?.signedTransactionInfo)
                ?? Self.unverifiedSignedDate(of: payload.data?.signedRenewalInfo)
        }
        let payload = signed.payload
        let identity = payload.appIdentity
        try checkBundle(identity.bundleId, what: "notification")
        let environment = try checkEnvironment(identity.environment, what: "notification")
        if let appAppleID, acceptedEnvironments?.contains(.production) ?? true {
            if environment == .production || identity.appAppleId != nil, identity.appAppleId != appAppleID {
                guard let found = identity.appAppleId else {
                    throw PurchaseVerificationError.wrongBundle("the notification names no appAppleId, \(appAppleID) is required")
                }
                throw PurchaseVerificationError.wrongBundle("appAppleId \(found) is not \(appAppleID)")
            }
        }
        guard let notificationType = payload.notificationType else {
            throw PurchaseVerificationError.malformed("the notification payload has no notificationType")
        }
        guard let notificationUUID = payload.notificationUUID else {
            throw PurchaseVerificationError.malformed("the notification payload has no notificationUUID")
        }

        var transaction: (purchase: VerifiedPurchase, signed: VerifiedJWS<AppStoreTransactionPayload>)?
        if let nested = payload.data?.signedTransactionInfo {
            transaction = try await Self.nested("data.signedTransactionInfo") { try await checkedTransaction(nested) }
        }
        var renewal: (renewalInfo: VerifiedRenewalInfo, signed: VerifiedJWS<AppStoreRenewalInfoPayload>)?
        if let nested = payload.data?.signedRenewalInfo {
            renewal = try await Self.nested("data.signedRenewalInfo") { try await checkedRenewalInfo(nested) }
        }
        let notification = VerifiedNotification(
            notificationUUID: notificationUUID,
            notificationType: notificationType,
            subtype: payload.subtype,
            signedDate: payload.signedDate.map(Self.date(millis:)),
            environment: environment,
            bundleID: identity.bundleId,
            appAppleID: identity.appAppleId,
            status: payload.data?.status,
            transaction: transaction?.purchase,
            renewalInfo: renewal?.renewalInfo
        )
        return (notification, signed, transaction?.signed, renewal?.signed)
    }

    /// Runs a nested verification, prefixing its failure reason with the nested field's name.
    private static func nested<T>(_ field: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PurchaseVerificationError {
            switch error {
            case .malformed(let reason): throw PurchaseVerificationError.malformed("\(field): \(reason)")
            case .invalidSignature(let reason): throw PurchaseVerificationError.invalidSignature("\(field): \(reason)")
            case .wrongBundle(let reason): throw PurchaseVerificationError.wrongBundle("\(field): \(reason)")
            case .wrongEnvironment(let reason): throw PurchaseVerificationError.wrongEnvironment("\(field): \(reason)")
            case .unavailable(let reason): throw PurchaseVerificationError.unavailable("\(field): \(reason)")
            }
        }
    }

    // MARK: Semantic checks

    private func checkBundle(_ bundleId: String?, what: String) throws {
        guard let bundleID else { return }
        guard let bundleId else {
            throw PurchaseVerificationError.wrongBundle("the \(what) names no bundleId, \(bundleID) is required")
        }
        guard bundleId == bundleID else {
            throw PurchaseVerificationError.wrongBundle("bundleId \(bundleId) is not \(bundleID)")
        }
    }

    /// The payload's environment; `nil` when it names none (or an unknown one) and no environment is required.
    private func checkEnvironment(_ raw: String?, what: String) throws -> AppStoreEnvironment? {
        let environment = raw.flatMap(AppStoreEnvironment.init(rawValue:))
        guard let acceptedEnvironments else { return environment }
        let accepted = acceptedEnvironments.map(\.rawValue).sorted().joined(separator: ", ")
        guard let raw else {
            throw PurchaseVerificationError.wrongEnvironment("the \(what) names no environment (accepted: \(accepted))")
        }
        guard let environment, acceptedEnvironments.contains(environment) else {
            throw PurchaseVerificationError.wrongEnvironment("environment \(raw) is not accepted (accepted: \(accepted))")
        }
        return environment
    }

    // MARK: JWS verification

    /// A JWS split into its segments, with its header and payload decoded.
    struct ParsedJWS {
        /// `header.payload`, the signed bytes.
        var signingInput: Data
        /// The decoded header.
        var header: Header
        /// The decoded payload bytes (JSON).
        var payload: Data
        /// The third segment, still base64url.
        var signatureSegment: Substring
    }

    /// The JWS header fields that matter.
    struct Header: Decodable {
        var alg: String?
        var x5c: [String]?
    }

    /// A JWS whose chain and signature verified, with its decoded payload.
    struct VerifiedJWS<Payload: Sendable>: Sendable {
        /// The decoded payload.
        var payload: Payload
        /// The payload's JSON as signed.
        var payloadJSON: Data
        /// When the certificate chain was validated.
        var validationTime: Date
        /// The leaf certificate that signed it.
        var leaf: Certificate
    }

    /// Steps 1–2: three base64url segments and a JSON header.
    static func parse(_ jws: String) throws -> ParsedJWS {
        let compact = jws.trimmingCharacters(in: .whitespacesAndNewlines)
        let segments = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            throw PurchaseVerificationError.malformed("a JWS must have 3 base64url segments separated by '.', found \(segments.count)")
        }
        guard let headerData = base64URLDecode(segments[0]) else {
            throw PurchaseVerificationError.malformed("the JWS header is not base64url")
        }
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: headerData)
        } catch {
            throw PurchaseVerificationError.malformed("the JWS header is not a JSON object with a string alg and a string array x5c")
        }
        guard let payload = base64URLDecode(segments[1]) else {
            throw PurchaseVerificationError.malformed("the JWS payload is not base64url")
        }
        return ParsedJWS(
            signingInput: Data("\(segments[0]).\(segments[1])".utf8),
            header: header,
            payload: payload,
            signatureSegment: segments[2]
        )
    }

    /// Steps 1–7 for one JWS: format, header, `alg`, `x5c`, payload, chain at the validation time, signature.
    ///
    /// - Parameter fallbackSignedDate: For a payload without `signedDate`, the time (ms) to validate at instead.
    func verifySignedData<Payload: AppStoreSignedPayload>(
        _ jws: String,
        as type: Payload.Type,
        fallbackSignedDate: (Payload) -> Int64? = { _ in nil }
    ) async throws -> VerifiedJWS<Payload> {
        let parsed = try Self.parse(jws)
        guard parsed.header.alg == "ES256" else {
            throw PurchaseVerificationError.invalidSignature("alg must be ES256, found \(parsed.header.alg ?? "no alg")")
        }
        guard let x5c = parsed.header.x5c else {
            throw PurchaseVerificationError.invalidSignature("the JWS header has no x5c certificate chain")
        }
        guard x5c.count == 3 else {
            throw PurchaseVerificationError.invalidSignature("x5c must hold exactly 3 certificates, found \(x5c.count)")
        }
        let leaf = try Self.certificate(x5c[0], index: 0)
        let intermediate = try Self.certificate(x5c[1], index: 1)

        let payload: Payload
        do {
            payload = try JSONDecoder().decode(Payload.self, from: parsed.payload)
        } catch {
            throw PurchaseVerificationError.malformed("the \(Payload.kindDescription) payload does not decode: \(Self.describe(error))")
        }

        let time: Date
        switch validationTime {
        case .fixed(let fixed):
            time = fixed
        case .signedDate:
            time = (payload.signedDate ?? fallbackSignedDate(payload)).map(Self.date(millis:)) ?? Date()
        }
        try await validateChain(leaf: leaf, intermediate: intermediate, at: time)

        guard let signatureBytes = Self.base64URLDecode(parsed.signatureSegment) else {
            throw PurchaseVerificationError.malformed("the JWS signature is not base64url")
        }
        guard let key = P256.Signing.PublicKey(leaf.publicKey) else {
            throw PurchaseVerificationError.invalidSignature("the leaf certificate's key is not a P-256 key")
        }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes) else {
            throw PurchaseVerificationError.invalidSignature(
                "the ES256 signature must be 64 bytes (r||s), found \(signatureBytes.count)"
            )
        }
        guard key.isValidSignature(signature, for: parsed.signingInput) else {
            throw PurchaseVerificationError.invalidSignature("the ES256 signature does not verify with the leaf certificate's key")
        }
        return VerifiedJWS(payload: payload, payloadJSON: parsed.payload, validationTime: time, leaf: leaf)
    }

    /// Step 6: path-validates `leaf` through `intermediate` to one of ``rootCertificates`` at `time`, with
    /// ``RFC5280Policy`` and ``AppStoreOIDPolicy``.
    func validateChain(leaf: Certificate, intermediate: Certificate, at time: Date) async throws {
        var verifier = Verifier(rootCertificates: CertificateStore(rootCertificates)) {
            RFC5280Policy(fixedExpiryValidationTime: time)
            AppStoreOIDPolicy()
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        guard case .couldNotValidate(let failures) = result else { return }
        throw PurchaseVerificationError.invalidSignature(explain(failures, leaf: leaf, intermediate: intermediate, at: time))
    }

    /// Why the verifier rejected the chain, in words. The decision was the verifier's; this only describes it.
    private func explain(
        _ failures: [CertificateValidationResult.PolicyFailure],
        leaf: Certificate,
        intermediate: Certificate,
        at time: Date
    ) -> String {
        let reasons = failures.map(\.policyFailureReason.description)
        // A chain that passed RFC 5280 but not Apple's requirements: say which requirement.
        if let appleReason = reasons.first(where: AppStoreOIDPolicy.isFailureReason) {
            return appleReason
        }
        let prefix = "certificate chain is not valid at \(time.formatted(.iso8601)): "
        if failures.isEmpty {
            // No candidate chain reached a root.
            if leaf.issuer != intermediate.subject {
                return prefix + "x5c[1] (\(Self.name(intermediate.subject))) is not the issuer of the leaf (issued by \(Self.name(leaf.issuer)))"
            }
            if !intermediate.publicKey.isValidSignature(leaf.signature, for: leaf) {
                return prefix + "x5c[1] (\(Self.name(intermediate.subject))) did not sign the leaf"
            }
            if !rootCertificates.contains(where: { $0.subject == intermediate.issuer }) {
                return prefix + "the intermediate's issuer (\(Self.name(intermediate.issuer))) is not a trusted root"
            }
            return prefix + "no trusted root signed the intermediate (\(Self.name(intermediate.subject)))"
        }
        let chain = failures.first.map { Array($0.chain) } ?? [leaf, intermediate]
        for (index, certificate) in chain.enumerated() {
            let role = index == 0 ? "leaf" : index == chain.count - 1 ? "root" : "intermediate"
            let window = "\(certificate.notValidBefore.formatted(.iso8601)) to \(certificate.notValidAfter.formatted(.iso8601))"
            if time < certificate.notValidBefore || time > certificate.notValidAfter {
                return prefix + "the \(role) certificate (\(Self.name(certificate.subject))) is valid from \(window)"
            }
        }
        return prefix + reasons.joined(separator: "; ")
    }

    // MARK: Helpers

    /// A distinguished name in certificate order, e.g. `CN=Apple Root CA - G3, OU=Apple Certification Authority,
    /// O=Apple Inc., C=US` (swift-certificates' description is in RFC 4514 order, country first).
    static func name(_ name: DistinguishedName) -> String {
        name.map { String(describing: $0) }.joined(separator: ", ")
    }

    /// Decodes `x5c[index]` (standard base64 DER).
    private static func certificate(_ base64: String, index: Int) throws -> Certificate {
        guard let der = Data(base64Encoded: base64) else {
            throw PurchaseVerificationError.malformed("x5c[\(index)] is not standard base64")
        }
        do {
            return try Certificate(derEncoded: Array(der))
        } catch {
            throw PurchaseVerificationError.malformed("x5c[\(index)] is not a DER X.509 certificate")
        }
    }

    /// `signedDate` (ms) of a JWS's payload, read without verifying it.
    static func unverifiedSignedDate(of jws: String?) -> Int64? {
        guard let jws, let parsed = try? parse(jws) else { return nil }
        return (try? JSONDecoder().decode(AppStoreSignedDateOnly.self, from: parsed.payload))?.signedDate
    }

    /// Decodes unpadded base64url; `nil` for any character outside the base64url alphabet.
    static func base64URLDecode(_ text: Substring) -> Data? {
        let allowed = text.utf8.allSatisfy { byte in
            (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D
                || byte == 0x5F
        }
        guard allowed else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    /// A date from Apple's milliseconds since 1970, clamped to ``representableMillis`` (the payload is signed, but a
    /// date past the year 9999 is no date: it could not be stored or formatted, and cycles computed from it overflow).
    static func date(millis: Int64) -> Date {
        Date(timeIntervalSince1970: TimeInterval(min(max(millis, representableMillis.lowerBound), representableMillis.upperBound)) / 1000)
    }

    /// 0001-01-01T00:00:00Z through 9999-12-31T23:59:59.999Z in milliseconds since 1970: the dates the contract's
    /// ISO-8601 form can carry.
    static let representableMillis: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.keyNotFound(_, let context), DecodingError.dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        default:
            return "\(error)"
        }
    }

    private static func jsonObject(_ data: Data) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw PurchaseVerificationError.malformed("the JWS payload is not a JSON object")
        }
        return object
    }

    private static func prettyJSON(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    }
}

/// A verified signed document of any kind, for support tools (``AppStoreSignedDataVerifier/verifyDocument(_:)``).
public struct AppStoreSignedDocument: Sendable {
    /// What a signed document is.
    public enum Kind: String, Sendable {
        /// An App Store Server Notification V2 `signedPayload`.
        case notification
        /// A signed transaction.
        case transaction
        /// Signed subscription renewal information.
        case renewalInfo
    }

    /// What the document is.
    public let kind: Kind
    /// The payload as pretty-printed JSON (sorted keys), nested JWS replaced by their verified payloads.
    public let json: Data
    /// When the certificate chain was validated (the payload's `signedDate`, see ``AppStoreSignedDataVerifier``).
    public let validationTime: Date
    /// The leaf certificate that signed the document.
    public let leafCertificate: Certificate
    /// The verified notification, when ``kind`` is ``Kind/notification``.
    public let notification: VerifiedNotification?
    /// The verified transaction, when ``kind`` is ``Kind/transaction``.
    public let transaction: VerifiedPurchase?
    /// The verified renewal information, when ``kind`` is ``Kind/renewalInfo``.
    public let renewalInfo: VerifiedRenewalInfo?

    /// Creates a verified document from its parts.
    public init(
        kind: Kind,
        json: Data,
        validationTime: Date,
        leafCertificate: Certificate,
        notification: VerifiedNotification? = nil,
        transaction: VerifiedPurchase? = nil,
        renewalInfo: VerifiedRenewalInfo? = nil
    ) {
        self.kind = kind
        self.json = json
        self.validationTime = validationTime
        self.leafCertificate = leafCertificate
        self.notification = notification
        self.transaction = transaction
        self.renewalInfo = renewalInfo
    }
}

/// Apple's requirements on an App Store signing chain, as a swift-certificates ``VerifierPolicy`` (the equivalent of
/// `AppStoreOIDPolicy` in Apple's library): exactly 3 certificates (leaf, intermediate, root), the intermediate
/// carries the extension OID 1.2.840.113635.100.6.2.1 and the leaf 1.2.840.113635.100.6.11.1.
public struct AppStoreOIDPolicy: VerifierPolicy, Sendable {
    /// Apple Worldwide Developer Relations intermediate marker OID.
    public static let intermediateOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    /// App Store receipt-signing leaf marker OID.
    public static let leafOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]

    /// The intermediate lacks ``intermediateOID``.
    static let missingIntermediateOID = "the intermediate certificate lacks Apple's OID 1.2.840.113635.100.6.2.1"
    /// The leaf lacks ``leafOID``.
    static let missingLeafOID = "the leaf certificate lacks Apple's OID 1.2.840.113635.100.6.11.1"
    /// The prefix of the wrong-length reason.
    static let wrongLengthPrefix = "the certificate chain must be leaf, intermediate and root (3 certificates), found "

    /// Whether `reason` is one this policy produces.
    static func isFailureReason(_ reason: String) -> Bool {
        reason == missingIntermediateOID || reason == missingLeafOID || reason.hasPrefix(wrongLengthPrefix)
    }

    /// The Apple OIDs are not critical extensions, so this policy handles none.
    public let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []

    /// Creates the policy.
    public init() {}

    /// Checks the chain's length and Apple's OIDs.
    public func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        let certificates = Array(chain)
        guard certificates.count == 3 else {
            return .failsToMeetPolicy(reason: Self.wrongLengthPrefix + "\(certificates.count)")
        }
        guard certificates[1].extensions[oid: Self.intermediateOID] != nil else {
            return .failsToMeetPolicy(reason: Self.missingIntermediateOID)
        }
        guard certificates[0].extensions[oid: Self.leafOID] != nil else {
            return .failsToMeetPolicy(reason: Self.missingLeafOID)
        }
        return .meetsPolicy
    }
}
