import ChorusProviders
import ChorusSandbox
import Crypto
import Foundation
import Testing
import X509

/// JWS minted by ``AppStoreTestAuthority`` through ``AppStoreSignedDataVerifier``: they verify against the authority's
/// root, and each of Apple's negative cases is rejected with the right error.
@Suite("App Store test authority")
struct AppStoreTestAuthorityTests {
    static let ourBundle = "com.chorus.speechassistant"
    static let appAppleID: Int64 = 42

    static func millis(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    static func json(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    static func transaction(
        id: String = "2000000000000001",
        bundleID: String = ourBundle,
        environment: String? = "Sandbox",
        signedDate: Date = Date()
    ) throws -> Data {
        var payload: [String: Any] = [
            "transactionId": id,
            "originalTransactionId": "2000000000000000",
            "bundleId": bundleID,
            "productId": "com.chorus.pro.monthly",
            "purchaseDate": millis(signedDate) - 1000,
            "originalPurchaseDate": millis(signedDate) - 86_400_000,
            "expiresDate": millis(signedDate) + 30 * 86_400_000,
            "type": "Auto-Renewable Subscription",
            "inAppOwnershipType": "PURCHASED",
            "signedDate": millis(signedDate),
            "appAccountToken": "6F9619FF-8B86-D011-B42D-00C04FC964FF",
            "quantity": 1,
            "storefront": "USA",
        ]
        payload["environment"] = environment
        return try json(payload)
    }

    static func renewalInfo(environment: String = "Sandbox", signedDate: Date = Date()) throws -> Data {
        try json([
            "originalTransactionId": "2000000000000000",
            "productId": "com.chorus.pro.monthly",
            "autoRenewProductId": "com.chorus.pro.yearly",
            "autoRenewStatus": 1,
            "isInBillingRetryPeriod": false,
            "signedDate": millis(signedDate),
            "renewalDate": millis(signedDate) + 30 * 86_400_000,
            "environment": environment,
        ])
    }

    static func notification(
        bundleID: String = ourBundle,
        environment: String = "Sandbox",
        appAppleID: Int64? = AppStoreTestAuthorityTests.appAppleID,
        signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil
    ) throws -> Data {
        var data: [String: Any] = ["bundleId": bundleID, "environment": environment, "status": 1]
        data["appAppleId"] = appAppleID
        data["signedTransactionInfo"] = signedTransactionInfo
        data["signedRenewalInfo"] = signedRenewalInfo
        return try json([
            "notificationType": "DID_RENEW",
            "notificationUUID": UUID().uuidString,
            "signedDate": millis(Date()),
            "version": "2.0",
            "data": data,
        ])
    }

    func verifier(
        _ authority: AppStoreTestAuthority,
        bundleID: String? = ourBundle,
        appAppleID: Int64? = appAppleID,
        environments: Set<AppStoreEnvironment>? = [.sandbox]
    ) -> AppStoreSignedDataVerifier {
        AppStoreSignedDataVerifier(
            rootCertificates: [authority.rootCertificate],
            bundleID: bundleID,
            appAppleID: appAppleID,
            acceptedEnvironments: environments
        )
    }

    static func reason(of body: () async throws -> Void) async -> PurchaseVerificationError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? PurchaseVerificationError
        }
    }

    // MARK: Positive

    @Test func mintedDataVerifies() async throws {
        let authority = try AppStoreTestAuthority.generate()
        let verifier = verifier(authority)
        let signedDate = Date()
        let purchase = try await verifier.verifyTransaction(try authority.sign(payload: Self.transaction(signedDate: signedDate)))
        #expect(purchase.transactionID == "2000000000000001")
        #expect(purchase.originalTransactionID == "2000000000000000")
        #expect(purchase.bundleID == Self.ourBundle)
        #expect(purchase.environment == .sandbox)
        #expect(purchase.signedDate == Date(timeIntervalSince1970: TimeInterval(Self.millis(signedDate)) / 1000))
        #expect(purchase.appAccountToken == UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF"))
        #expect(purchase.productType == "Auto-Renewable Subscription")
        #expect(purchase.ownershipType == "PURCHASED")

        let info = try await verifier.verifyRenewalInfo(try authority.sign(payload: Self.renewalInfo()))
        #expect(info.willAutoRenew == true)
        #expect(info.autoRenewProductID == "com.chorus.pro.yearly")
        #expect(info.environment == .sandbox)

        let signedTransaction = try authority.sign(payload: Self.transaction())
        let signedRenewal = try authority.sign(payload: Self.renewalInfo())
        let notification = try await verifier.verifyNotification(
            try authority.sign(payload: Self.notification(signedTransactionInfo: signedTransaction, signedRenewalInfo: signedRenewal))
        )
        #expect(notification.notificationType == "DID_RENEW")
        #expect(notification.appAppleID == Self.appAppleID)
        #expect(notification.status == 1)
        #expect(notification.transaction?.transactionID == "2000000000000001")
        #expect(notification.renewalInfo?.originalTransactionID == "2000000000000000")

        let document = try await verifier.verifyDocument(
            try authority.sign(payload: Self.notification(signedTransactionInfo: signedTransaction, signedRenewalInfo: signedRenewal))
        )
        #expect(document.kind == .notification)
        #expect(document.leafCertificate == authority.leafCertificate)
        let json = try #require(JSONSerialization.jsonObject(with: document.json) as? [String: Any])
        let data = try #require(json["data"] as? [String: Any])
        #expect((data["signedTransactionInfo"] as? [String: Any])?["transactionId"] as? String == "2000000000000001")
        #expect((data["signedRenewalInfo"] as? [String: Any])?["autoRenewStatus"] as? Int == 1)
    }

    @Test func theChainIsShapedLikeApples() throws {
        let authority = try AppStoreTestAuthority.generate()
        let root = authority.rootCertificate
        let intermediate = authority.intermediateCertificate
        let leaf = authority.leafCertificate
        #expect(root.subject == root.issuer)
        #expect("\(root.subject)".contains("CN=Chorus Sandbox Root CA"))
        #expect(try root.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: nil))
        #expect(try root.extensions.keyUsage?.keyCertSign == true)
        #expect(intermediate.issuer == root.subject)
        #expect(try intermediate.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: 0))
        let intermediateOID = try #require(intermediate.extensions[oid: AppStoreOIDPolicy.intermediateOID])
        #expect(intermediateOID.critical == false)
        #expect(Array(intermediateOID.value) == [0x05, 0x00])
        #expect(leaf.issuer == intermediate.subject)
        #expect(try leaf.extensions.basicConstraints == .notCertificateAuthority)
        #expect(try leaf.extensions.keyUsage?.digitalSignature == true)
        #expect(leaf.extensions[oid: AppStoreOIDPolicy.leafOID]?.critical == false)
        #expect(P256.Signing.PublicKey(leaf.publicKey) != nil)

        let jws = try authority.sign(payload: Data("{}".utf8))
        var headerSegment = jws.split(separator: ".")[0].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        headerSegment += String(repeating: "=", count: (4 - headerSegment.count % 4) % 4)
        let header = try #require(Data(base64Encoded: headerSegment))
        let object = try #require(JSONSerialization.jsonObject(with: header) as? [String: Any])
        #expect(object["alg"] as? String == "ES256")
        #expect((object["x5c"] as? [String])?.count == 3)
    }

    // MARK: Negative

    @Test func rejectedAgainstApplesRoot() async throws {
        let authority = try AppStoreTestAuthority.generate()
        let apple = AppStoreSignedDataVerifier(bundleID: Self.ourBundle, appAppleID: nil, acceptedEnvironments: [.sandbox])
        let error = await Self.reason { _ = try await apple.verifyTransaction(try authority.sign(payload: Self.transaction())) }
        guard case .invalidSignature(let reason) = error else {
            Issue.record("expected invalidSignature, got \(String(describing: error))")
            return
        }
        #expect(reason.hasPrefix("certificate chain is not valid at "))
        #expect(
            reason.hasSuffix(
                "the intermediate's issuer (CN=Chorus Sandbox Root CA, OU=Chorus Sandbox Certification Authority, O=Chorus Sandbox, C=US) is not a trusted root"
            ))
        // Another authority's root is no better.
        let other = try AppStoreTestAuthority.generate()
        let otherError = await Self.reason { _ = try await verifier(other).verifyTransaction(try authority.sign(payload: Self.transaction())) }
        guard case .invalidSignature(let otherReason) = otherError else {
            Issue.record("expected invalidSignature, got \(String(describing: otherError))")
            return
        }
        #expect(
            otherReason.hasSuffix(
                "no trusted root signed the intermediate (CN=Chorus Sandbox App Store Intermediate CA, OU=G1, O=Chorus Sandbox, C=US)"))
    }

    @Test func missingAppleOIDsAreRejected() async throws {
        let noIntermediateOID = try AppStoreTestAuthority.generate(options: .init(intermediateHasAppleOID: false))
        await #expect(
            throws: PurchaseVerificationError.invalidSignature("the intermediate certificate lacks Apple's OID 1.2.840.113635.100.6.2.1")
        ) {
            try await verifier(noIntermediateOID).verifyTransaction(try noIntermediateOID.sign(payload: Self.transaction()))
        }
        let noLeafOID = try AppStoreTestAuthority.generate(options: .init(leafHasAppleOID: false))
        await #expect(throws: PurchaseVerificationError.invalidSignature("the leaf certificate lacks Apple's OID 1.2.840.113635.100.6.11.1")) {
            try await verifier(noLeafOID).verifyTransaction(try noLeafOID.sign(payload: Self.transaction()))
        }
    }

    @Test func leafValidityIsCheckedAtSignedDate() async throws {
        let notBefore = try Date("2020-01-01T00:00:00Z", strategy: .iso8601)
        let notAfter = try Date("2021-01-01T00:00:00Z", strategy: .iso8601)
        let authority = try AppStoreTestAuthority.generate(options: .init(leafNotValidBefore: notBefore, leafNotValidAfter: notAfter))
        // Signed while the leaf was valid: still verifies today.
        let old = try Date("2020-06-01T12:00:00Z", strategy: .iso8601)
        let purchase = try await verifier(authority).verifyTransaction(try authority.sign(payload: Self.transaction(signedDate: old)))
        #expect(purchase.signedDate == old)
        // Signed after it expired: rejected.
        let late = try Date("2022-03-04T05:06:07Z", strategy: .iso8601)
        let error = await Self.reason {
            _ = try await verifier(authority).verifyTransaction(try authority.sign(payload: Self.transaction(signedDate: late)))
        }
        guard case .invalidSignature(let reason) = error else {
            Issue.record("expected invalidSignature, got \(String(describing: error))")
            return
        }
        #expect(
            reason == "certificate chain is not valid at 2022-03-04T05:06:07Z: the leaf certificate "
                + "(CN=Chorus Sandbox App Store Signing, OU=Chorus Sandbox, O=Chorus Sandbox, C=US) is valid from 2020-01-01T00:00:00Z to 2021-01-01T00:00:00Z"
        )
    }

    @Test func semanticChecks() async throws {
        let authority = try AppStoreTestAuthority.generate()
        let verifier = verifier(authority, environments: [.sandbox])
        await #expect(throws: PurchaseVerificationError.wrongBundle("bundleId com.other.app is not com.chorus.speechassistant")) {
            try await verifier.verifyTransaction(try authority.sign(payload: Self.transaction(bundleID: "com.other.app")))
        }
        await #expect(throws: PurchaseVerificationError.wrongEnvironment("environment Production is not accepted (accepted: Sandbox)")) {
            try await verifier.verifyTransaction(try authority.sign(payload: Self.transaction(environment: "Production")))
        }
        await #expect(throws: PurchaseVerificationError.wrongEnvironment("the transaction names no environment (accepted: Sandbox)")) {
            try await verifier.verifyTransaction(try authority.sign(payload: Self.transaction(environment: nil)))
        }
        await #expect(throws: PurchaseVerificationError.wrongEnvironment("environment Production is not accepted (accepted: Sandbox)")) {
            try await verifier.verifyRenewalInfo(try authority.sign(payload: Self.renewalInfo(environment: "Production")))
        }
        await #expect(throws: PurchaseVerificationError.wrongBundle("bundleId com.other.app is not com.chorus.speechassistant")) {
            try await verifier.verifyNotification(try authority.sign(payload: Self.notification(bundleID: "com.other.app")))
        }
    }

    @Test func productionNotificationsMustNameOurApp() async throws {
        let authority = try AppStoreTestAuthority.generate()
        let production = verifier(authority, environments: [.production, .sandbox])
        _ = try await production.verifyNotification(try authority.sign(payload: Self.notification(environment: "Production")))
        await #expect(throws: PurchaseVerificationError.wrongBundle("appAppleId 7 is not 42")) {
            try await production.verifyNotification(try authority.sign(payload: Self.notification(environment: "Production", appAppleID: 7)))
        }
        await #expect(throws: PurchaseVerificationError.wrongBundle("the notification names no appAppleId, 42 is required")) {
            try await production.verifyNotification(try authority.sign(payload: Self.notification(environment: "Production", appAppleID: nil)))
        }
        // Sandbox notifications may omit it (TEST notifications do).
        _ = try await production.verifyNotification(try authority.sign(payload: Self.notification(environment: "Sandbox", appAppleID: nil)))
        // Without .production accepted, the app id is not required.
        let sandboxOnly = verifier(authority, environments: [.sandbox])
        _ = try await sandboxOnly.verifyNotification(try authority.sign(payload: Self.notification(appAppleID: 7)))
    }

    @Test func nestedDataIsVerifiedOnItsOwn() async throws {
        let authority = try AppStoreTestAuthority.generate()
        let verifier = verifier(authority)
        let otherApp = try authority.sign(payload: Self.transaction(bundleID: "com.other.app"))
        await #expect(
            throws: PurchaseVerificationError.wrongBundle("data.signedTransactionInfo: bundleId com.other.app is not com.chorus.speechassistant")
        ) {
            try await verifier.verifyNotification(try authority.sign(payload: Self.notification(signedTransactionInfo: otherApp)))
        }
        // A nested transaction signed by another authority fails on its own chain.
        let stranger = try AppStoreTestAuthority.generate()
        let foreign = try stranger.sign(payload: Self.transaction())
        let error = await Self.reason {
            _ = try await verifier.verifyNotification(try authority.sign(payload: Self.notification(signedTransactionInfo: foreign)))
        }
        guard case .invalidSignature(let reason) = error else {
            Issue.record("expected invalidSignature, got \(String(describing: error))")
            return
        }
        #expect(reason.hasPrefix("data.signedTransactionInfo: certificate chain is not valid at "))
        let badRenewal = try authority.sign(payload: Self.renewalInfo(), header: .init(alg: "ES256", x5c: nil))
        await #expect(throws: PurchaseVerificationError.invalidSignature("data.signedRenewalInfo: the JWS header has no x5c certificate chain")) {
            try await verifier.verifyNotification(try authority.sign(payload: Self.notification(signedRenewalInfo: badRenewal)))
        }
    }

    @Test func headerVariantsAreRejected() async throws {
        let authority = try AppStoreTestAuthority.generate()
        let verifier = verifier(authority)
        let payload = try Self.transaction()
        let leaf = authority.leafCertificate
        let intermediate = authority.intermediateCertificate
        let root = authority.rootCertificate
        let cases: [(AppStoreTestAuthority.Header, PurchaseVerificationError)] = [
            (.init(alg: "HS256", x5c: [leaf, intermediate, root]), .invalidSignature("alg must be ES256, found HS256")),
            (.init(alg: "none", x5c: [leaf, intermediate, root]), .invalidSignature("alg must be ES256, found none")),
            (.init(alg: nil, x5c: [leaf, intermediate, root]), .invalidSignature("alg must be ES256, found no alg")),
            (.init(alg: "ES256", x5c: nil), .invalidSignature("the JWS header has no x5c certificate chain")),
            (.init(alg: "ES256", x5c: [leaf, intermediate]), .invalidSignature("x5c must hold exactly 3 certificates, found 2")),
            (.init(alg: "ES256", x5c: [leaf, intermediate, root, root]), .invalidSignature("x5c must hold exactly 3 certificates, found 4")),
        ]
        for (header, expected) in cases {
            await #expect(throws: expected) { try await verifier.verifyTransaction(try authority.sign(payload: payload, header: header)) }
        }
        // The leaf as intermediate: no chain.
        let swapped = await Self.reason {
            _ = try await verifier.verifyTransaction(try authority.sign(payload: payload, header: .init(alg: "ES256", x5c: [leaf, leaf, root])))
        }
        guard case .invalidSignature(let reason) = swapped else {
            Issue.record("expected invalidSignature, got \(String(describing: swapped))")
            return
        }
        #expect(reason.contains("x5c[1] (CN=Chorus Sandbox App Store Signing"))
        #expect(reason.contains("is not the issuer of the leaf"))
        // Signed by a leaf other than x5c[0]: the chain is fine, the signature is not.
        let other = try AppStoreTestAuthority.generate()
        await #expect(throws: PurchaseVerificationError.invalidSignature("the ES256 signature does not verify with the leaf certificate's key")) {
            try await verifier.verifyTransaction(try other.sign(payload: payload, header: authority.standardHeader))
        }
    }

    // MARK: Persistence

    @Test func loadOrCreateSharesOneAuthority() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("appstore-ca-\(UUID().uuidString)")
            .appendingPathComponent("nested")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let first = try AppStoreTestAuthority.loadOrCreate(directory: directory)
        let second = try AppStoreTestAuthority.loadOrCreate(directory: directory)
        #expect(first.rootCertificate == second.rootCertificate)
        #expect(first.intermediateCertificate == second.intermediateCertificate)
        #expect(first.leafCertificate == second.leafCertificate)
        // What one signs the other's root verifies.
        let jws = try first.sign(payload: Self.transaction())
        _ = try await verifier(second).verifyTransaction(jws)
        _ = try await verifier(first).verifyTransaction(try second.sign(payload: Self.transaction()))

        let keyFile = directory.appendingPathComponent(AppStoreTestAuthority.authorityFileName)
        let attributes = try FileManager.default.attributesOfItem(atPath: keyFile.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let contents = try String(contentsOf: keyFile, encoding: .utf8)
        #expect(contents.components(separatedBy: "-----BEGIN PRIVATE KEY-----").count == 4)
        #expect(contents.components(separatedBy: "-----BEGIN CERTIFICATE-----").count == 4)
        let rootPEM = try String(contentsOf: directory.appendingPathComponent(AppStoreTestAuthority.rootCertificateFileName), encoding: .utf8)
        #expect(try Certificate(pemEncoded: rootPEM) == first.rootCertificate)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty)
    }

    @Test func concurrentCreationAgreesOnOneAuthority() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("appstore-ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let roots = try await withThrowingTaskGroup(of: Certificate.self) { group in
            for _ in 0..<8 {
                group.addTask { try AppStoreTestAuthority.loadOrCreate(directory: directory).rootCertificate }
            }
            return try await group.reduce(into: [Certificate]()) { $0.append($1) }
        }
        #expect(Set(roots).count == 1)
    }
}
