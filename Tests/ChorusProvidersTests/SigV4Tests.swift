import Foundation
import Testing

@testable import ChorusProviders

/// The worked examples of "Signature Calculations for the Authorization Header: Transferring Payload in a Single
/// Chunk (AWS Signature Version 4)" in the Amazon S3 API reference.
@Suite("SigV4")
struct SigV4Tests {
    let signer = SigV4(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1")
    /// 20130524T000000Z
    let date = Date(timeIntervalSince1970: 1_369_353_600)
    let host = (name: "Host", value: "examplebucket.s3.amazonaws.com")

    func authorization(for request: SigV4.Request) throws -> String {
        let headers = signer.sign(request, date: date)
        #expect(headers.first { $0.name == "x-amz-date" }?.value == "20130524T000000Z")
        #expect(headers.first { $0.name == "x-amz-content-sha256" }?.value == request.payloadHash)
        return try #require(headers.first { $0.name == "Authorization" }?.value)
    }

    @Test func getObjectExample() throws {
        let request = SigV4.Request(
            method: "GET", path: "/test.txt", headers: [host, (name: "Range", value: "bytes=0-9")],
            payloadHash: SigV4.emptyPayloadHash)
        var withAmzHeaders = request
        withAmzHeaders.headers += [
            (name: "x-amz-content-sha256", value: SigV4.emptyPayloadHash), (name: "x-amz-date", value: "20130524T000000Z"),
        ]
        let canonical = SigV4.canonicalRequest(withAmzHeaders)
        #expect(
            canonical == """
                GET
                /test.txt

                host:examplebucket.s3.amazonaws.com
                range:bytes=0-9
                x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                x-amz-date:20130524T000000Z

                host;range;x-amz-content-sha256;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """)
        #expect(
            signer.stringToSign(canonicalRequest: canonical, timestamp: "20130524T000000Z") == """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
                """)
        #expect(
            try authorization(for: request)
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test func putObjectExample() throws {
        let body = Data("Welcome to Amazon S3.".utf8)
        let hash = SigV4.payloadHash(body)
        #expect(hash == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072")
        let request = SigV4.Request(
            method: "PUT", path: SigV4.encodePath("/test$file.text"),
            headers: [
                host, (name: "Date", value: "Fri, 24 May 2013 00:00:00 GMT"),
                (name: "x-amz-storage-class", value: "REDUCED_REDUNDANCY"),
            ],
            payloadHash: hash)
        #expect(request.path == "/test%24file.text")
        #expect(
            try authorization(for: request)
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
                + "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,"
                + "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")
    }

    @Test func getBucketLifecycleExample() throws {
        let request = SigV4.Request(
            method: "GET", path: "/", query: [(name: "lifecycle", value: "")], headers: [host],
            payloadHash: SigV4.emptyPayloadHash)
        #expect(
            try authorization(for: request).hasSuffix(
                "SignedHeaders=host;x-amz-content-sha256;x-amz-date,"
                    + "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"))
    }

    @Test func listObjectsExampleSortsTheQuery() throws {
        let request = SigV4.Request(
            method: "GET", path: "/", query: [(name: "prefix", value: "J"), (name: "max-keys", value: "2")],
            headers: [host], payloadHash: SigV4.emptyPayloadHash)
        #expect(
            try authorization(for: request).hasSuffix(
                "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"))
    }

    @Test func encoding() {
        #expect(SigV4.encodePath("/bucket/a b/ü~._-") == "/bucket/a%20b/%C3%BC~._-")
        #expect(SigV4.encode("a/b=c&d+e", encodeSlash: true) == "a%2Fb%3Dc%26d%2Be")
        #expect(SigV4.timestamp(Date(timeIntervalSince1970: 1_700_000_000.9)) == "20231114T221320Z")
    }

    @Test func headersAreTrimmedCollapsedAndMerged() {
        let headers = SigV4.canonicalHeaders([
            (name: "X-Custom", value: "  a   b  "), (name: "host", value: "h"), (name: "x-custom", value: "c"),
        ])
        #expect(headers.map(\.name) == ["host", "x-custom"])
        #expect(headers.map(\.value) == ["h", "a b,c"])
    }

    @Test func theSecretNeverAppearsInADescription() {
        #expect(!"\(signer)".contains("wJalrXUtnFEMI"))
        #expect("\(signer)".contains("AKIAIOSFODNN7EXAMPLE"))
    }
}
