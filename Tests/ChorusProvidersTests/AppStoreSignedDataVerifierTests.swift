import Foundation
import Testing
import X509

@testable import ChorusProviders

/// Apple-signed App Store JWS (84 public samples, see `Fixtures/AppStore/samples/README.md`) and Apple's real
/// certificates through ``AppStoreSignedDataVerifier``.
///
/// Decisions these tests pin down:
/// - `gopay-sbx-notif-did_renew-20220304t094328` (March 2022) has no top-level `signedDate`: its chain is validated at
///   the `signedDate` of its nested `signedTransactionInfo` (which is then verified on its own); it verifies, and
///   ``VerifiedNotification/signedDate`` is `nil`.
/// - The 2021 Omnimind payloads have no `environment`: they verify when no environment is required (renewal info
///   reports `nil`, a transaction `.sandbox` since ``VerifiedPurchase/environment`` cannot be `nil`) and are rejected
///   with `.wrongEnvironment` when any environment is required — as Apple's library does.
/// - Renewal information names no bundle id, so requiring a bundle id cannot reject it (Apple checks only its
///   environment); it is checked through the notification that carries it.
@Suite("App Store signed data verifier")
struct AppStoreSignedDataVerifierTests {
    static let ourBundle = "com.chorus.speechassistant"

    static let fixtures: URL = {
        guard let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
            fatalError("the test bundle has no Fixtures directory")
        }
        return url.appendingPathComponent("AppStore")
    }()

    /// The names of the 84 sample files.
    static let sampleNames: [String] = {
        let directory = fixtures.appendingPathComponent("samples")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".jws") }.sorted()
    }()

    static func sample(_ name: String) throws -> String {
        let file = fixtures.appendingPathComponent("samples").appendingPathComponent(name.hasSuffix(".jws") ? name : name + ".jws")
        return try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func certificate(_ name: String) throws -> Certificate {
        try Certificate(derEncoded: Array(Data(contentsOf: fixtures.appendingPathComponent(name))))
    }

    static func date(_ iso: String) throws -> Date {
        try Date(iso, strategy: .iso8601)
    }

    /// Support-tool mode: no bundle id, app id or environment required.
    let support = AppStoreSignedDataVerifier(bundleID: nil, appAppleID: nil, acceptedEnvironments: nil)

    enum Kind {
        case notification, transaction, renewalInfo
    }

    static func kind(of name: String) -> Kind {
        if name.contains("-notif-") { return .notification }
        if name.contains("-renewal-") { return .renewalInfo }
        return .transaction
    }

    static func reason(_ error: any Error) -> String {
        switch error as? PurchaseVerificationError {
        case .malformed(let reason), .invalidSignature(let reason), .wrongBundle(let reason), .wrongEnvironment(let reason),
            .unavailable(let reason):
            return reason
        case nil:
            return "\(error)"
        }
    }

    /// The header and payload segments of a JWS, decoded, and a way to re-encode a JWS from changed parts.
    static func parts(_ jws: String) throws -> (header: [String: Any], payload: [String: Any], segments: [Substring]) {
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        let header = try #require(AppStoreSignedDataVerifier.base64URLDecode(segments[0]))
        let payload = try #require(AppStoreSignedDataVerifier.base64URLDecode(segments[1]))
        return (
            try #require(JSONSerialization.jsonObject(with: header) as? [String: Any]),
            try #require(JSONSerialization.jsonObject(with: payload) as? [String: Any]),
            segments
        )
    }

    static func base64URL(_ object: [String: Any]) throws -> String {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// `jws` with its header replaced (the signature no longer matches, but the header checks come first).
    static func withHeader(_ jws: String, _ change: (inout [String: Any]) -> Void) throws -> String {
        var (header, _, segments) = try parts(jws)
        change(&header)
        return try [base64URL(header), String(segments[1]), String(segments[2])].joined(separator: ".")
    }

    // MARK: Every sample

    @Test func thereAre84Samples() {
        #expect(Self.sampleNames.count == 84)
        #expect(Self.sampleNames.filter { Self.kind(of: $0) == .notification }.count == 25)
        #expect(Self.sampleNames.filter { Self.kind(of: $0) == .transaction }.count == 36)
        #expect(Self.sampleNames.filter { Self.kind(of: $0) == .renewalInfo }.count == 23)
    }

    @Test(arguments: sampleNames)
    func everySampleVerifiesWithoutRequirements(name: String) async throws {
        let jws = try Self.sample(name)
        switch Self.kind(of: name) {
        case .notification:
            let notification = try await support.verifyNotification(jws)
            #expect(!notification.notificationUUID.isEmpty)
            let (_, payload, _) = try Self.parts(jws)
            let data = payload["data"] as? [String: Any]
            #expect((notification.transaction != nil) == (data?["signedTransactionInfo"] != nil))
            #expect((notification.renewalInfo != nil) == (data?["signedRenewalInfo"] != nil))
            if let transaction = notification.transaction {
                #expect(transaction.bundleID == notification.bundleID)
            }
        case .transaction:
            let purchase = try await support.verifyTransaction(jws)
            #expect(!purchase.transactionID.isEmpty)
            #expect(purchase.signedDate != nil)
        case .renewalInfo:
            let info = try await support.verifyRenewalInfo(jws)
            #expect(!info.originalTransactionID.isEmpty)
        }
        let document = try await support.verifyDocument(jws)
        switch Self.kind(of: name) {
        case .notification: #expect(document.kind == .notification)
        case .transaction: #expect(document.kind == .transaction)
        case .renewalInfo: #expect(document.kind == .renewalInfo)
        }
    }

    @Test(arguments: sampleNames)
    func everySampleIsRejectedForOurBundle(name: String) async throws {
        let jws = try Self.sample(name)
        let ours = AppStoreSignedDataVerifier(bundleID: Self.ourBundle, appAppleID: nil, acceptedEnvironments: nil)
        switch Self.kind(of: name) {
        case .notification:
            let bundle = try #require(try await support.verifyNotification(jws).bundleID)
            await #expect(throws: PurchaseVerificationError.wrongBundle("bundleId \(bundle) is not \(Self.ourBundle)")) {
                try await ours.verifyNotification(jws)
            }
        case .transaction:
            let bundle = try await support.verifyTransaction(jws).bundleID
            await #expect(throws: PurchaseVerificationError.wrongBundle("bundleId \(bundle) is not \(Self.ourBundle)")) {
                try await ours.verifyTransaction(jws)
            }
            await #expect(throws: PurchaseVerificationError.self) { try await ours.verifyDocument(jws) }
        case .renewalInfo:
            // Renewal information names no bundle id: nothing to reject it on (see the suite's documentation).
            _ = try await ours.verifyRenewalInfo(jws)
        }
    }

    // MARK: Old formats

    @Test func notificationWithoutSignedDateIsValidatedAtItsNestedTransactionsSignedDate() async throws {
        let jws = try Self.sample("gopay-sbx-notif-did_renew-20220304t094328")
        let notification = try await support.verifyNotification(jws)
        #expect(notification.signedDate == nil)
        #expect(notification.notificationType == "DID_RENEW")
        #expect(notification.environment == .sandbox)
        #expect(notification.transaction?.signedDate == AppStoreSignedDataVerifier.date(millis: 1_646_387_008_254))
        #expect(notification.renewalInfo?.signedDate == AppStoreSignedDataVerifier.date(millis: 1_646_387_008_228))
        let document = try await support.verifyDocument(jws)
        #expect(document.validationTime == AppStoreSignedDataVerifier.date(millis: 1_646_387_008_254))
        // Its leaf (L1) expired in 2023: validated "now" it would fail.
        var now = support
        now.validationTime = .fixed(Date())
        await #expect(throws: PurchaseVerificationError.self) { try await now.verifyNotification(jws) }
    }

    @Test func payloadsWithoutEnvironment() async throws {
        let transaction = try Self.sample("omnimind-noenv-txn-20211109t132523")
        let renewal = try Self.sample("omnimind-noenv-renewal-20211109t132523")
        // No requirement: verified; the transaction reports the conservative placeholder .sandbox.
        #expect(try await support.verifyTransaction(transaction).environment == .sandbox)
        #expect(try await support.verifyRenewalInfo(renewal).environment == nil)
        let document = try await support.verifyDocument(transaction)
        let json = try #require(JSONSerialization.jsonObject(with: document.json) as? [String: Any])
        #expect(json["environment"] == nil)
        // Any requirement: rejected.
        let sandboxOnly = AppStoreSignedDataVerifier(bundleID: nil, appAppleID: nil, acceptedEnvironments: [.sandbox])
        await #expect(throws: PurchaseVerificationError.wrongEnvironment("the transaction names no environment (accepted: Sandbox)")) {
            try await sandboxOnly.verifyTransaction(transaction)
        }
        await #expect(throws: PurchaseVerificationError.wrongEnvironment("the renewal info names no environment (accepted: Sandbox)")) {
            try await sandboxOnly.verifyRenewalInfo(renewal)
        }
    }

    // MARK: Semantic checks

    @Test func environmentIsChecked() async throws {
        let productionOnly = AppStoreSignedDataVerifier(bundleID: nil, appAppleID: nil, acceptedEnvironments: [.production])
        let sandboxTransaction = try Self.sample("sessionpro-sbx-txn-20251016t051632")
        await #expect(throws: PurchaseVerificationError.wrongEnvironment("environment Sandbox is not accepted (accepted: Production)")) {
            try await productionOnly.verifyTransaction(sandboxTransaction)
        }
        let productionTransaction = try await productionOnly.verifyTransaction(try Self.sample("gopay-prod-txn-20230628t083832"))
        #expect(productionTransaction.environment == .production)
        #expect(productionTransaction.productType == "Consumable")
        let both = AppStoreSignedDataVerifier(bundleID: nil, appAppleID: nil, acceptedEnvironments: [.production, .sandbox])
        #expect(try await both.verifyTransaction(sandboxTransaction).environment == .sandbox)
        await #expect(throws: PurchaseVerificationError.wrongEnvironment("environment Sandbox is not accepted (accepted: Production)")) {
            try await productionOnly.verifyNotification(try Self.sample("sessionpro-sbx-notif-did_renew-20251001t070838"))
        }
    }

    @Test func productionNotificationsMustNameOurAppAppleID() async throws {
        let jws = try Self.sample("seekcx-prod-notif-test-20241017t034411")
        let right = AppStoreSignedDataVerifier(bundleID: "com.nineton.taller", appAppleID: 6_450_284_872, acceptedEnvironments: [.production])
        let notification = try await right.verifyNotification(jws)
        #expect(notification.notificationType == "TEST")
        #expect(notification.appAppleID == 6_450_284_872)
        #expect(notification.environment == .production)
        let wrong = AppStoreSignedDataVerifier(bundleID: "com.nineton.taller", appAppleID: 1, acceptedEnvironments: [.production])
        await #expect(throws: PurchaseVerificationError.wrongBundle("appAppleId 6450284872 is not 1")) {
            try await wrong.verifyNotification(jws)
        }
        // A sandbox notification that names another appAppleId is rejected too; one that names none is not.
        let sandbox = AppStoreSignedDataVerifier(bundleID: nil, appAppleID: 1, acceptedEnvironments: [.production, .sandbox])
        await #expect(throws: PurchaseVerificationError.wrongBundle("appAppleId 1470168868 is not 1")) {
            try await sandbox.verifyNotification(try Self.sample("sessionpro-sbx-notif-did_renew-20251001t070838"))
        }
        _ = try await sandbox.verifyNotification(try Self.sample("sessionpro-sbx-notif-test-20250905t012432"))
    }

    @Test func notificationFieldsAndNestedData() async throws {
        let jws = try Self.sample("rickyzhf-sbx-notif-refund-20250206t072007")
        let notification = try await support.verifyNotification(jws)
        #expect(notification.notificationType == "REFUND")
        #expect(notification.bundleID == "com.cynet.xingqi")
        #expect(notification.appAppleID == 1_659_344_089)
        let transaction = try #require(notification.transaction)
        #expect(transaction.revocationDate != nil)
        #expect(transaction.revocationReason != nil)
        #expect(transaction == (try await support.verifyTransaction(try Self.sample("rickyzhf-sbx-txn-20250206t072007"))))

        let document = try await support.verifyDocument(jws)
        let json = try #require(JSONSerialization.jsonObject(with: document.json) as? [String: Any])
        let data = try #require(json["data"] as? [String: Any])
        let nested = try #require(data["signedTransactionInfo"] as? [String: Any])
        #expect(nested["transactionId"] as? String == transaction.transactionID)
        #expect(String(decoding: document.json, as: UTF8.self).contains("\n  \""))
    }

    // MARK: Certificate chain

    @Test func apples3CertificateChainIsValidOnlyInsideTheLeafsValidity() async throws {
        let leaf = try Self.certificate("AppleReceiptSigning-leaf.cer")  // L3: 2025-09-19T19:44:51Z to 2027-10-13T17:47:23Z
        let intermediate = try Self.certificate("AppleWWDRCA-G6.cer")
        #expect(try Self.certificate("AppleRootCA-G3.cer") == AppleRootCertificates.appleRootCAG3)
        try await support.validateChain(leaf: leaf, intermediate: intermediate, at: try Self.date("2026-01-01T00:00:00Z"))
        for outside in ["2025-09-01T00:00:00Z", "2027-10-14T00:00:00Z"] {
            let leafWindow = "is valid from 2025-09-19T19:44:51Z to 2027-10-13T17:47:23Z"
            do {
                try await support.validateChain(leaf: leaf, intermediate: intermediate, at: try Self.date(outside))
                Issue.record("the chain validated at \(outside)")
            } catch let error as PurchaseVerificationError {
                guard case .invalidSignature(let reason) = error else {
                    Issue.record("unexpected \(error)")
                    continue
                }
                #expect(reason.hasPrefix("certificate chain is not valid at \(outside): the leaf certificate ("))
                #expect(reason.hasSuffix(leafWindow))
            }
        }
        // The leaf as its own intermediate, the root as intermediate: no chain.
        await #expect(throws: PurchaseVerificationError.self) {
            try await support.validateChain(leaf: leaf, intermediate: leaf, at: try Self.date("2026-01-01T00:00:00Z"))
        }
    }

    @Test func aSamplesX5CChainIsValidOnlyInsideItsLeafsValidity() async throws {
        // The x5c of a 2023 sample: leaf L1, valid 2021-08-25T02:50:34Z to 2023-09-24T02:50:33Z.
        let (header, _, _) = try Self.parts(try Self.sample("goiap-sbx-renewal-20230523t061938"))
        let x5c = try #require(header["x5c"] as? [String])
        let leaf = try Certificate(derEncoded: Array(try #require(Data(base64Encoded: x5c[0]))))
        let intermediate = try Certificate(derEncoded: Array(try #require(Data(base64Encoded: x5c[1]))))
        #expect(intermediate == (try Self.certificate("AppleWWDRCA-G6.cer")))
        try await support.validateChain(leaf: leaf, intermediate: intermediate, at: try Self.date("2023-05-23T06:19:38Z"))
        let expected = PurchaseVerificationError.invalidSignature(
            "certificate chain is not valid at 2023-10-01T00:00:00Z: the leaf certificate (CN=Prod ECC Mac App Store and iTunes Store "
                + "Receipt Signing, OU=Apple Worldwide Developer Relations, O=Apple Inc., C=US) is valid from 2021-08-25T02:50:34Z to "
                + "2023-09-24T02:50:33Z"
        )
        await #expect(throws: expected) {
            try await support.validateChain(leaf: leaf, intermediate: intermediate, at: try Self.date("2023-10-01T00:00:00Z"))
        }
    }

    @Test func expiredLeafSamplesVerifyOnlyAtTheirSignedDate() async throws {
        // L1 (expired 2023-09-24) and L2 (expired 2025-10-11).
        for name in ["goiap-sbx-renewal-20230523t061938", "seekcx-prod-notif-test-20241017t034411", "mingos-sbx-txn-20250210t042932"] {
            let jws = try Self.sample(name)
            _ = try await support.verifyDocument(jws)
            var now = support
            now.validationTime = .fixed(Date())
            do {
                _ = try await now.verifyDocument(jws)
                Issue.record("\(name) verified now with an expired leaf")
            } catch let error as PurchaseVerificationError {
                guard case .invalidSignature(let reason) = error else {
                    Issue.record("unexpected \(error)")
                    continue
                }
                #expect(reason.hasPrefix("certificate chain is not valid at "))
                #expect(reason.contains("the leaf certificate (CN=Prod ECC Mac App Store and iTunes Store Receipt Signing"))
            }
        }
    }

    @Test func swappedIntermediateIsRejected() async throws {
        let jws = try Self.sample("sessionpro-sbx-txn-20251016t051632")
        let signedAt = "2025-10-16T05:16:32Z"
        let leafAsIntermediate = try Self.withHeader(jws) { header in
            var x5c = header["x5c"] as! [String]
            x5c[1] = x5c[0]
            header["x5c"] = x5c
        }
        do {
            _ = try await support.verifyTransaction(leafAsIntermediate)
            Issue.record("verified with the leaf as intermediate")
        } catch let error as PurchaseVerificationError {
            guard case .invalidSignature(let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(reason.hasPrefix("certificate chain is not valid at \(signedAt): x5c[1] (CN=Prod ECC Mac App Store"))
            #expect(reason.contains("is not the issuer of the leaf (issued by CN=Apple Worldwide Developer Relations Certification Authority"))
        }
        let rootAsIntermediate = try Self.withHeader(jws) { header in
            var x5c = header["x5c"] as! [String]
            x5c[1] = x5c[2]
            header["x5c"] = x5c
        }
        await #expect(throws: PurchaseVerificationError.self) { try await support.verifyTransaction(rootAsIntermediate) }
    }

    @Test func theChainMustHaveThreeCertificatesUpToTheConfiguredRoot() async throws {
        // Trusting Apple's intermediate as a root builds the 2-certificate chain leaf → WWDR G6: rejected.
        let intermediateAsRoot = AppStoreSignedDataVerifier(
            rootCertificates: [try Self.certificate("AppleWWDRCA-G6.cer")],
            bundleID: nil,
            appAppleID: nil,
            acceptedEnvironments: nil
        )
        let jws = try Self.sample("sessionpro-sbx-txn-20251016t051632")
        await #expect(
            throws: PurchaseVerificationError.invalidSignature(
                "the certificate chain must be leaf, intermediate and root (3 certificates), found 2"
            )
        ) {
            try await intermediateAsRoot.verifyTransaction(jws)
        }
        // x5c[2] is ignored: replacing it with anything changes nothing.
        let otherThird = try Self.withHeader(jws) { header in
            var x5c = header["x5c"] as! [String]
            x5c[2] = x5c[0]
            header["x5c"] = x5c
        }
        // (the header changed, so the signature no longer verifies — but only after the chain passed)
        await #expect(throws: PurchaseVerificationError.invalidSignature("the ES256 signature does not verify with the leaf certificate's key")) {
            try await support.verifyTransaction(otherThird)
        }
    }

    // MARK: Header and signature

    @Test func tamperedPayloadIsRejected() async throws {
        let jws = try Self.sample("sessionpro-sbx-txn-20251016t051632")
        var (_, payload, segments) = try Self.parts(jws)
        payload["bundleId"] = Self.ourBundle
        let tampered = [String(segments[0]), try Self.base64URL(payload), String(segments[2])].joined(separator: ".")
        await #expect(throws: PurchaseVerificationError.invalidSignature("the ES256 signature does not verify with the leaf certificate's key")) {
            try await support.verifyTransaction(tampered)
        }
        let ours = AppStoreSignedDataVerifier(bundleID: Self.ourBundle, appAppleID: nil, acceptedEnvironments: nil)
        await #expect(throws: PurchaseVerificationError.invalidSignature("the ES256 signature does not verify with the leaf certificate's key")) {
            try await ours.verifyTransaction(tampered)
        }
        let shortSignature = [String(segments[0]), String(segments[1]), String(segments[2].dropLast(4))].joined(separator: ".")
        await #expect(throws: PurchaseVerificationError.invalidSignature("the ES256 signature must be 64 bytes (r||s), found 61")) {
            try await support.verifyTransaction(shortSignature)
        }
    }

    @Test func headerChecks() async throws {
        let jws = try Self.sample("sessionpro-sbx-txn-20251016t051632")
        for alg in ["HS256", "none", "RS256", "ES384"] {
            let other = try Self.withHeader(jws) { $0["alg"] = alg }
            await #expect(throws: PurchaseVerificationError.invalidSignature("alg must be ES256, found \(alg)")) {
                try await support.verifyTransaction(other)
            }
        }
        let noAlg = try Self.withHeader(jws) { $0["alg"] = nil }
        await #expect(throws: PurchaseVerificationError.invalidSignature("alg must be ES256, found no alg")) {
            try await support.verifyTransaction(noAlg)
        }
        let noX5C = try Self.withHeader(jws) { $0["x5c"] = nil }
        await #expect(throws: PurchaseVerificationError.invalidSignature("the JWS header has no x5c certificate chain")) {
            try await support.verifyTransaction(noX5C)
        }
        let twoCertificates = try Self.withHeader(jws) { $0["x5c"] = Array(($0["x5c"] as! [String]).prefix(2)) }
        await #expect(throws: PurchaseVerificationError.invalidSignature("x5c must hold exactly 3 certificates, found 2")) {
            try await support.verifyTransaction(twoCertificates)
        }
        let garbledCertificate = try Self.withHeader(jws) { header in
            var x5c = header["x5c"] as! [String]
            x5c[0] = "not base64!"
            header["x5c"] = x5c
        }
        await #expect(throws: PurchaseVerificationError.malformed("x5c[0] is not standard base64")) {
            try await support.verifyTransaction(garbledCertificate)
        }
    }

    @Test func formatChecks() async throws {
        await #expect(throws: PurchaseVerificationError.malformed("a JWS must have 3 base64url segments separated by '.', found 1")) {
            try await support.verifyTransaction("not a jws")
        }
        await #expect(throws: PurchaseVerificationError.malformed("a JWS must have 3 base64url segments separated by '.', found 4")) {
            try await support.verifyTransaction("a.b.c.d")
        }
        await #expect(throws: PurchaseVerificationError.malformed("the JWS header is not base64url")) {
            try await support.verifyTransaction("a+b.c.d")
        }
        await #expect(
            throws: PurchaseVerificationError.malformed("the JWS header is not a JSON object with a string alg and a string array x5c")
        ) {
            try await support.verifyTransaction("bm90IGpzb24.e30.AA")
        }
        let jws = try Self.sample("sessionpro-sbx-txn-20251016t051632")
        let segments = jws.split(separator: ".")
        await #expect(
            throws: PurchaseVerificationError.malformed(
                "cannot tell what the signed document is: its payload has no notificationType, transactionId, autoRenewStatus or renewalDate")
        ) {
            try await support.verifyDocument("\(segments[0]).e30.\(segments[2])")
        }
        let notANumber = PurchaseVerificationError.malformed("the transaction payload does not decode: signedDate: signedDate is not a number")
        await #expect(throws: notANumber) {
            try await support.verifyTransaction("\(segments[0]).\(try Self.base64URL(["signedDate": "soon"])).\(segments[2])")
        }
    }
}
