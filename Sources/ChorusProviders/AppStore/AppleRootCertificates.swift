import Foundation
import X509

/// Apple's root certificates for App Store signed data, built into the binary.
///
/// App Store JWS (StoreKit 2 transactions, renewal information, App Store Server Notifications V2) are signed by a leaf
/// ("Prod ECC Mac App Store and iTunes Store Receipt Signing") issued by Apple Worldwide Developer Relations CA G6, which
/// chains to Apple Root CA - G3. The root is pinned here rather than taken from the JWS's own `x5c[2]`.
public enum AppleRootCertificates {
    /// Apple Root CA - G3 (`CN=Apple Root CA - G3, OU=Apple Certification Authority, O=Apple Inc., C=US`), P-384,
    /// valid 2014-04-30 to 2039-04-30, SHA-256 fingerprint
    /// `63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179`; from https://www.apple.com/certificateauthority/.
    public static let appleRootCAG3: Certificate = {
        do {
            return try Certificate(derEncoded: Array(appleRootCAG3DER))
        } catch {
            fatalError("The embedded Apple Root CA - G3 certificate does not parse: \(error)")
        }
    }()

    /// The DER encoding of ``appleRootCAG3``.
    public static let appleRootCAG3DER: Data = {
        guard let data = Data(base64Encoded: appleRootCAG3Base64) else {
            fatalError("The embedded Apple Root CA - G3 certificate is not valid base64")
        }
        return data
    }()

    /// Apple Root CA - G3 as standard base64 DER (the file `AppleRootCA-G3.cer`).
    static let appleRootCAG3Base64 = [
        "MIICQzCCAcmgAwIBAgIILcX8iNLFS5UwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwSQXBwbGUgUm9vdCBDQSAtIEczMSYwJAYDVQQL",
        "DB1BcHBsZSBDZXJ0aWZpY2F0aW9uIEF1dGhvcml0eTETMBEGA1UECgwKQXBwbGUgSW5jLjELMAkGA1UEBhMCVVMwHhcNMTQwNDMw",
        "MTgxOTA2WhcNMzkwNDMwMTgxOTA2WjBnMRswGQYDVQQDDBJBcHBsZSBSb290IENBIC0gRzMxJjAkBgNVBAsMHUFwcGxlIENlcnRp",
        "ZmljYXRpb24gQXV0aG9yaXR5MRMwEQYDVQQKDApBcHBsZSBJbmMuMQswCQYDVQQGEwJVUzB2MBAGByqGSM49AgEGBSuBBAAiA2IA",
        "BJjpLz1AcqTtkyJygRMc3RCV8cWjTnHcFBbZDuWmBSp3ZHtfTjjTuxxEtX/1H7YyYl3J6YRbTzBPEVoA/VhYDKX1DyxNB0cTddqX",
        "l5dvMVztK517IDvYuVTZXpmkOlEKMaNCMEAwHQYDVR0OBBYEFLuw3qFYM4iapIqZ3r6966/ayySrMA8GA1UdEwEB/wQFMAMBAf8w",
        "DgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMDA2gAMGUCMQCD6cHEFl4aXTQY2e3v9GwOAEZLuN+yRhHFD/3meoyhpmvOwgPUnPWT",
        "xnS4at+qIxUCMG1mihDK1A3UT82NQz60imOlM27jbdoXt2QfyFMm+YhidDkLF1vLUagM6BgD56KyKA==",
    ].joined()
}
