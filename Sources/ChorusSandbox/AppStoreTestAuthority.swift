import ChorusProviders
import Crypto
import Foundation
import SwiftASN1
import X509

/// A local certificate authority shaped like Apple's App Store signing chain, for signing StoreKit 2 style JWS that
/// ``AppStoreSignedDataVerifier`` verifies when given ``rootCertificate`` as its root.
///
/// - Root "Chorus Sandbox Root CA": P-384, self-signed, CA, keyCertSign + cRLSign (like Apple Root CA - G3).
/// - Intermediate "Chorus Sandbox App Store Intermediate CA": P-384, CA with pathLen 0, carrying Apple's intermediate
///   marker extension OID 1.2.840.113635.100.6.2.1 (value ASN.1 NULL, non-critical), like Apple WWDR CA G6.
/// - Leaf "Chorus Sandbox App Store Signing": P-256, not a CA, digitalSignature, carrying Apple's receipt-signing
///   marker OID 1.2.840.113635.100.6.11.1 (value ASN.1 NULL, non-critical); it signs the JWS (ES256).
///
/// ``Options`` builds broken variants for negative tests (an OID missing, a leaf validity window in the past).
public struct AppStoreTestAuthority: Sendable {
    /// How to build an authority; the defaults give a chain that verifies now and for years.
    public struct Options: Sendable {
        /// Whether the intermediate carries Apple's OID 1.2.840.113635.100.6.2.1.
        public var intermediateHasAppleOID: Bool
        /// Whether the leaf carries Apple's OID 1.2.840.113635.100.6.11.1.
        public var leafHasAppleOID: Bool
        /// When the leaf becomes valid; `nil` is one day before generation.
        public var leafNotValidBefore: Date?
        /// When the leaf stops being valid; `nil` is ten years after generation.
        public var leafNotValidAfter: Date?
        /// The root's common name.
        public var rootCommonName: String

        /// Creates options; the defaults build a chain shaped exactly like Apple's.
        public init(
            intermediateHasAppleOID: Bool = true,
            leafHasAppleOID: Bool = true,
            leafNotValidBefore: Date? = nil,
            leafNotValidAfter: Date? = nil,
            rootCommonName: String = "Chorus Sandbox Root CA"
        ) {
            self.intermediateHasAppleOID = intermediateHasAppleOID
            self.leafHasAppleOID = leafHasAppleOID
            self.leafNotValidBefore = leafNotValidBefore
            self.leafNotValidAfter = leafNotValidAfter
            self.rootCommonName = rootCommonName
        }
    }

    /// A JWS header to sign with; ``standardHeader`` is what Apple sends, tests change it to build negative cases.
    public struct Header: Sendable {
        /// The `alg` member; `nil` omits it.
        public var alg: String?
        /// The certificates of the `x5c` member, in order (standard base64 DER); `nil` omits it.
        public var x5c: [Certificate]?

        /// Creates a header.
        public init(alg: String?, x5c: [Certificate]?) {
            self.alg = alg
            self.x5c = x5c
        }
    }

    /// The file in ``loadOrCreate(directory:)``'s directory holding the three private keys and the three certificates
    /// (PEM; root, intermediate, leaf keys, then root, intermediate, leaf certificates), mode 0600.
    public static let authorityFileName = "appstore-test-ca.pem"
    /// The file in ``loadOrCreate(directory:)``'s directory holding only the root certificate (PEM), for pinning.
    public static let rootCertificateFileName = "appstore-test-ca-root.pem"

    /// The self-signed root; give it to ``AppStoreSignedDataVerifier/init(rootCertificates:bundleID:appAppleID:acceptedEnvironments:)``.
    public let rootCertificate: Certificate
    /// The intermediate, issued by the root (`x5c[1]`).
    public let intermediateCertificate: Certificate
    /// The signing leaf, issued by the intermediate (`x5c[0]`).
    public let leafCertificate: Certificate
    private let rootKey: P384.Signing.PrivateKey
    private let intermediateKey: P384.Signing.PrivateKey
    private let leafKey: P256.Signing.PrivateKey

    /// The header Apple's signed data carries: `{"alg":"ES256","x5c":[leaf, intermediate, root]}`.
    public var standardHeader: Header {
        Header(alg: "ES256", x5c: [leafCertificate, intermediateCertificate, rootCertificate])
    }

    // MARK: Creating

    /// Generates a new authority in memory.
    public static func generate(options: Options = .init()) throws -> AppStoreTestAuthority {
        let now = Date()
        let day: TimeInterval = 86_400
        // Valid from well before today, so tests and sandboxes running on a clock set in the past still verify.
        let leafNotBefore = options.leafNotValidBefore ?? now.addingTimeInterval(-5 * 365 * day)
        let leafNotAfter = options.leafNotValidAfter ?? now.addingTimeInterval(10 * 365 * day)
        // The CAs' windows contain the leaf's, so a leaf window in the past makes only the leaf invalid.
        let caNotBefore = min(leafNotBefore, now).addingTimeInterval(-day)
        let caNotAfter = max(leafNotAfter, now).addingTimeInterval(20 * 365 * day)

        let rootKey = P384.Signing.PrivateKey()
        let intermediateKey = P384.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootPublic = Certificate.PublicKey(rootKey.publicKey)
        let intermediatePublic = Certificate.PublicKey(intermediateKey.publicKey)
        let leafPublic = Certificate.PublicKey(leafKey.publicKey)

        let rootName = try DistinguishedName {
            CommonName(options.rootCommonName)
            OrganizationalUnitName("Chorus Sandbox Certification Authority")
            OrganizationName("Chorus Sandbox")
            CountryName("US")
        }
        let intermediateName = try DistinguishedName {
            CommonName("Chorus Sandbox App Store Intermediate CA")
            OrganizationalUnitName("G1")
            OrganizationName("Chorus Sandbox")
            CountryName("US")
        }
        let leafName = try DistinguishedName {
            CommonName("Chorus Sandbox App Store Signing")
            OrganizationalUnitName("Chorus Sandbox")
            OrganizationName("Chorus Sandbox")
            CountryName("US")
        }

        let root = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: rootPublic,
            notValidBefore: caNotBefore,
            notValidAfter: caNotAfter,
            issuer: rootName,
            subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: rootPublic)
            },
            issuerPrivateKey: .init(rootKey)
        )
        let intermediate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: intermediatePublic,
            notValidBefore: caNotBefore,
            notValidAfter: caNotAfter,
            issuer: rootName,
            subject: intermediateName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: intermediatePublic)
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: rootPublic).keyIdentifier)
                if options.intermediateHasAppleOID {
                    Certificate.Extension(oid: AppStoreOIDPolicy.intermediateOID, critical: false, value: asn1Null)
                }
            },
            issuerPrivateKey: .init(rootKey)
        )
        let leaf = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: leafPublic,
            notValidBefore: leafNotBefore,
            notValidAfter: leafNotAfter,
            issuer: intermediateName,
            subject: leafName,
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                SubjectKeyIdentifier(hash: leafPublic)
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: intermediatePublic).keyIdentifier)
                if options.leafHasAppleOID {
                    Certificate.Extension(oid: AppStoreOIDPolicy.leafOID, critical: false, value: asn1Null)
                }
            },
            issuerPrivateKey: .init(intermediateKey)
        )
        return AppStoreTestAuthority(
            rootCertificate: root,
            intermediateCertificate: intermediate,
            leafCertificate: leaf,
            rootKey: rootKey,
            intermediateKey: intermediateKey,
            leafKey: leafKey
        )
    }

    /// The DER of ASN.1 NULL, the value of Apple's marker extensions.
    private static let asn1Null: ArraySlice<UInt8> = [0x05, 0x00]

    /// Loads the authority stored in `directory`, or generates one and stores it there, so that a server and a CLI
    /// using the same data directory share one CA.
    ///
    /// The keys and certificates are kept together in ``authorityFileName`` (mode 0600), written to a temporary file
    /// and hard-linked into place, so two processes creating it at once agree on one authority (the loser loads the
    /// winner's). The root certificate is also written to ``rootCertificateFileName``.
    public static func loadOrCreate(directory: URL) throws -> AppStoreTestAuthority {
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent(authorityFileName)
        if fileManager.fileExists(atPath: file.path) {
            return try load(from: file)
        }
        let authority = try generate()
        let temporary = directory.appendingPathComponent(".\(authorityFileName).\(UUID().uuidString)")
        guard fileManager.createFile(atPath: temporary.path, contents: Data(try authority.pemBundle().utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw AppStoreTestAuthorityError("cannot write \(temporary.path)")
        }
        defer { try? fileManager.removeItem(at: temporary) }
        let stored: AppStoreTestAuthority
        do {
            try fileManager.linkItem(at: temporary, to: file)
            stored = authority
        } catch {
            // Another process stored one first (or linking failed): use what is there.
            guard fileManager.fileExists(atPath: file.path) else { throw error }
            stored = try load(from: file)
        }
        let rootPEM = try stored.rootCertificate.serializeAsPEM().pemString + "\n"
        try Data(rootPEM.utf8).write(to: directory.appendingPathComponent(rootCertificateFileName), options: .atomic)
        return stored
    }

    /// Reads an authority written by ``loadOrCreate(directory:)``, checking that each key matches its certificate.
    private static func load(from file: URL) throws -> AppStoreTestAuthority {
        let documents = try PEMDocument.parseMultiple(pemString: String(decoding: try Data(contentsOf: file), as: UTF8.self))
        guard documents.count == 6 else {
            throw AppStoreTestAuthorityError("\(file.path) must hold 3 keys and 3 certificates, found \(documents.count) PEM blocks")
        }
        let rootKey = try P384.Signing.PrivateKey(pemRepresentation: documents[0].pemString)
        let intermediateKey = try P384.Signing.PrivateKey(pemRepresentation: documents[1].pemString)
        let leafKey = try P256.Signing.PrivateKey(pemRepresentation: documents[2].pemString)
        let root = try Certificate(pemDocument: documents[3])
        let intermediate = try Certificate(pemDocument: documents[4])
        let leaf = try Certificate(pemDocument: documents[5])
        guard root.publicKey == Certificate.PublicKey(rootKey.publicKey),
            intermediate.publicKey == Certificate.PublicKey(intermediateKey.publicKey),
            leaf.publicKey == Certificate.PublicKey(leafKey.publicKey)
        else {
            throw AppStoreTestAuthorityError("the keys in \(file.path) do not match its certificates")
        }
        return AppStoreTestAuthority(
            rootCertificate: root,
            intermediateCertificate: intermediate,
            leafCertificate: leaf,
            rootKey: rootKey,
            intermediateKey: intermediateKey,
            leafKey: leafKey
        )
    }

    /// The keys then the certificates, PEM.
    private func pemBundle() throws -> String {
        let blocks = [
            rootKey.pemRepresentation,
            intermediateKey.pemRepresentation,
            leafKey.pemRepresentation,
            try rootCertificate.serializeAsPEM().pemString,
            try intermediateCertificate.serializeAsPEM().pemString,
            try leafCertificate.serializeAsPEM().pemString,
        ]
        return blocks.joined(separator: "\n") + "\n"
    }

    // MARK: Signing

    /// Signs `payload` (JSON) as a compact JWS with ``standardHeader``: `{"alg":"ES256","x5c":[leaf, intermediate,
    /// root]}`, base64url segments and a raw r||s ES256 signature by the leaf key.
    public func sign(payload: Data) throws -> String {
        try sign(payload: payload, header: standardHeader)
    }

    /// Signs `payload` with the leaf key (ES256, whatever `header.alg` says) under `header`, for negative tests: a
    /// 2-certificate `x5c`, no `x5c`, another `alg`, a swapped intermediate.
    public func sign(payload: Data, header: Header) throws -> String {
        var members: [String: Any] = [:]
        if let alg = header.alg {
            members["alg"] = alg
        }
        if let x5c = header.x5c {
            members["x5c"] = try x5c.map { certificate -> String in
                var serializer = DER.Serializer()
                try serializer.serialize(certificate)
                return Data(serializer.serializedBytes).base64EncodedString()
            }
        }
        let headerJSON = try JSONSerialization.data(withJSONObject: members, options: [.sortedKeys])
        let signingInput = Self.base64URL(headerJSON) + "." + Self.base64URL(payload)
        let signature = try leafKey.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Self.base64URL(signature.rawRepresentation)
    }

    /// Unpadded base64url.
    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// Why ``AppStoreTestAuthority/loadOrCreate(directory:)`` could not load or store an authority.
public struct AppStoreTestAuthorityError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public let description: String

    /// Creates an error with its description.
    public init(_ description: String) {
        self.description = description
    }
}
