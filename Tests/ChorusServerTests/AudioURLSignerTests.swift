import Foundation
import Testing

@testable import ChorusServer

@Suite("Signed audio URLs")
struct AudioURLSignerTests {
    let signer = AudioURLSigner(secret: "test-secret", lifetime: 900)
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("a URL's own query validates until it expires; another id, a changed digit or a late clock do not")
    func roundTrip() throws {
        let query = signer.query(id: "speech:abc", now: now)
        let signed = try #require(AudioURLSigner.signedQuery(query))
        #expect(signed.signature.count == 64 && signed.signature.allSatisfy(\.isHexDigit) && signed.signature == signed.signature.lowercased())
        #expect(signer.isValid(audioID: "speech:abc", expires: signed.expires, signature: signed.signature, now: now))
        #expect(!signer.isValid(audioID: "speech:abd", expires: signed.expires, signature: signed.signature, now: now))
        #expect(!signer.isValid(audioID: "speech:abc", expires: signed.expires + 60, signature: signed.signature, now: now))
        let tampered = String(signed.signature.dropLast()) + (signed.signature.hasSuffix("0") ? "1" : "0")
        #expect(!signer.isValid(audioID: "speech:abc", expires: signed.expires, signature: tampered, now: now))
        #expect(!signer.isValid(audioID: "speech:abc", expires: signed.expires, signature: signed.signature, now: now.addingTimeInterval(1_000)))
        // Another server secret signs differently.
        let other = AudioURLSigner(secret: "other", lifetime: 900)
        #expect(!other.isValid(audioID: "speech:abc", expires: signed.expires, signature: signed.signature, now: now))
    }

    @Test(
        "the query is read without decoding: first of each member, order free, no signature → nil",
        arguments: [
            ("expires=120&signature=ab12", 120, "ab12"),
            ("signature=ab12&expires=120", 120, "ab12"),
            ("x=1&signature=ab12&signature=ff&expires=abc", 0, "ab12"),
            ("signature=&expires=5", 5, ""),
        ] as [(String, Int64, String)])
    func parsing(query: String, expires: Int64, signature: String) throws {
        let parsed = try #require(AudioURLSigner.signedQuery(query))
        #expect(parsed.expires == expires && parsed.signature == signature)
    }

    @Test func noSignature() {
        #expect(AudioURLSigner.signedQuery(nil) == nil)
        #expect(AudioURLSigner.signedQuery("expires=120") == nil)
        #expect(AudioURLSigner.signedQuery("signature") == nil)
    }
}
