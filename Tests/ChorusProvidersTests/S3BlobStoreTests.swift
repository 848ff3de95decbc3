import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing

@testable import ChorusProviders

/// A local S3-compatible server (moto) with signature checking on, a user allowed `s3:*`, and a bucket.
///
/// `./scripts/test` starts moto and exports `CHORUS_TEST_S3_URL`. Without it (`swift test` run directly), the first
/// S3 test starts `moto_server` from `PATH` itself, or fails saying how to get one: these tests are never skipped.
struct S3TestServer: Sendable {
    let endpoint: URL
    let accessKeyID: String
    let secretAccessKey: String
    let bucket: String

    static let shared = Task<S3TestServer, any Error> { try await start() }

    static let logger = Logger(label: "chorus.tests.s3")

    /// Generous retries: moto's server has a race on concurrent PUTs of one key (a 500, "I/O operation on closed
    /// file"), which the store's retries of 5xx absorb as they would a real server's transient failure.
    static let retry = ProviderHTTP.RetryPolicy(maxAttempts: 8, baseDelay: .milliseconds(20), maxDelay: .seconds(1))

    func store(secret: String? = nil, accessKeyID: String? = nil, bucket: String? = nil) throws -> S3BlobStore {
        try S3BlobStore(
            configuration: .init(
                endpoint: endpoint, region: "us-east-1", bucket: bucket ?? self.bucket, accessKeyID: accessKeyID ?? self.accessKeyID,
                secretAccessKey: secret ?? secretAccessKey),
            httpClient: .shared, retry: Self.retry, logger: Self.logger)
    }

    private static func start() async throws -> S3TestServer {
        let endpoint: URL
        if let configured = ProcessInfo.processInfo.environment["CHORUS_TEST_S3_URL"], !configured.isEmpty {
            endpoint = try #require(URL(string: configured), "CHORUS_TEST_S3_URL is not a URL: \(configured)")
        } else {
            endpoint = try await MotoProcess.launch()
        }
        try await waitUntilServing(endpoint)

        // Signature checking off while an IAM user and its key are made, then on for everything after.
        try await resetAuthentication(endpoint, allowedUnsignedActions: "inf")
        let user = "chorus-test-\(UUID().uuidString.prefix(8).lowercased())"
        try await iam(endpoint, ["Action": "CreateUser", "UserName": user])
        let key = try await iam(endpoint, ["Action": "CreateAccessKey", "UserName": user])
        let policy = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#
        try await iam(endpoint, ["Action": "PutUserPolicy", "UserName": user, "PolicyName": "s3-all", "PolicyDocument": policy])
        try await resetAuthentication(endpoint, allowedUnsignedActions: "0")

        let server = S3TestServer(
            endpoint: endpoint,
            accessKeyID: try #require(S3BlobStore.xmlElement("AccessKeyId", in: key), "moto made no access key"),
            secretAccessKey: try #require(S3BlobStore.xmlElement("SecretAccessKey", in: key), "moto made no secret"),
            bucket: "chorus-test-\(UUID().uuidString.prefix(12).lowercased())")
        // A signed PUT Bucket, checked by the server.
        try await server.store().createBucketIfMissing()
        return server
    }

    private static func waitUntilServing(_ endpoint: URL) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            do {
                let response = try await HTTPClient.shared.execute(
                    HTTPClientRequest(url: endpoint.appendingPathComponent("moto-api/").absoluteString), timeout: .seconds(5))
                _ = try await response.body.collect(upTo: 1 << 20)
                return
            } catch {
                guard ContinuousClock.now < deadline else {
                    throw S3TestServerError("no S3 server answers at \(endpoint) (\(error)); run ./scripts/test, which starts one")
                }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    private static func resetAuthentication(_ endpoint: URL, allowedUnsignedActions: String) async throws {
        var request = HTTPClientRequest(url: endpoint.appendingPathComponent("moto-api/reset-auth").absoluteString)
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: allowedUnsignedActions))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else {
            throw S3TestServerError("\(endpoint) is not moto (reset-auth answered \(response.status.code))")
        }
    }

    /// One IAM query-API call (signed with a throwaway key, which moto accepts while authentication is off).
    @discardableResult
    private static func iam(_ endpoint: URL, _ parameters: [String: String]) async throws -> Data {
        var all = parameters
        all["Version"] = "2010-05-08"
        let form = all.sorted { $0.key < $1.key }
            .map { "\(SigV4.encode($0.key, encodeSlash: true))=\(SigV4.encode($0.value, encodeSlash: true))" }
            .joined(separator: "&")
        let body = Data(form.utf8)
        let host = endpoint.port.map { "\(endpoint.host ?? "127.0.0.1"):\($0)" } ?? (endpoint.host ?? "127.0.0.1")
        let headers: [(name: String, value: String)] = [
            (name: "Host", value: host), (name: "Content-Type", value: "application/x-www-form-urlencoded"),
        ]
        let signer = SigV4(accessKeyID: "AKIASETUP0000000000", secretAccessKey: "setup", region: "us-east-1", service: "iam")
        let signature = signer.sign(.init(method: "POST", path: "/", headers: headers, payloadHash: SigV4.payloadHash(body)), date: Date())
        var request = HTTPClientRequest(url: endpoint.absoluteString)
        request.method = .POST
        for header in headers + signature { request.headers.add(name: header.name, value: header.value) }
        request.body = .bytes(ByteBuffer(data: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let answer = Data(try await response.body.collect(upTo: 1 << 20).readableBytesView)
        guard response.status == .ok else {
            throw S3TestServerError("IAM \(parameters["Action"] ?? "") answered \(response.status.code): \(String(decoding: answer, as: UTF8.self))")
        }
        return answer
    }
}

struct S3TestServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `moto_server` started by the tests themselves (when `CHORUS_TEST_S3_URL` is unset), through a shell that watches
/// this test process and stops moto within a second of its end, however it ends.
enum MotoProcess {
    static func launch() async throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        guard
            let moto = path.split(separator: ":").map({ "\($0)/moto_server" })
                .first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else {
            throw S3TestServerError(
                "The S3 tests need a local S3 server: run ./scripts/test (it installs and starts moto), "
                    + "or set CHORUS_TEST_S3_URL, or put moto_server on PATH (pip install 'moto[server]')")
        }
        let port = try await freePort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c",
            // SIGKILL: a child of this process inherits its blocked signal mask, SIGTERM included.
            #""$1" -H 127.0.0.1 -p "$2" >/dev/null 2>&1 & m=$!; trap 'kill -KILL $m 2>/dev/null' EXIT; "#
                + #"while kill -0 "$3" 2>/dev/null; do sleep 1; done"#,
            "moto-watchdog", moto, String(port), String(ProcessInfo.processInfo.processIdentifier),
        ]
        // Its own standard streams: `swift test` reads this process's output until every writer has closed it, and
        // reaps this process only then, so a watchdog holding the pipe would wait forever for a zombie.
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return try #require(URL(string: "http://127.0.0.1:\(port)"))
    }

    private static func freePort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(channel.localAddress?.port)
        try await channel.close()
        return port
    }
}

@Suite("S3BlobStore against a local S3 server")
struct S3BlobStoreTests {
    func contract() async throws -> BlobStoreContract {
        let server = try await S3TestServer.shared.value
        return BlobStoreContract(store: try server.store(), prefix: "t-\(UUID().uuidString.lowercased())")
    }

    @Test func roundTrip() async throws { try await contract().roundTrip() }
    @Test func ranges() async throws { try await contract().ranges() }
    @Test func concurrentWritersLeaveOneCompleteBlob() async throws { try await contract().concurrentWriters() }
    @Test func largeFileStreamsInBoundedChunks() async throws { try await contract().largeFileInBoundedChunks() }
    @Test func abandonedReaders() async throws { try await contract().abandonedReader() }

    @Test func aWrongSecretIsRejected() async throws {
        let server = try await S3TestServer.shared.value
        let store = try server.store(secret: "not-the-secret")
        let key = try #require(BlobKey(rawValue: "t-wrong-secret/blob.bin"))
        await #expect {
            try await store.put(key, data: Data("x".utf8), contentType: "application/octet-stream")
        } throws: { error in
            guard case ProviderError.rejected(403, "SignatureDoesNotMatch", _) = error else { return false }
            return true
        }
        await #expect {
            _ = try await store.read(key, range: nil)
        } throws: { error in
            guard case ProviderError.rejected(403, "SignatureDoesNotMatch", _) = error else { return false }
            return true
        }
        // HEAD answers carry no body: the status alone says it.
        await #expect {
            _ = try await store.metadata(key)
        } throws: { error in
            guard case ProviderError.rejected(403, _, _) = error else { return false }
            return true
        }
        // The right secret still works, and the refused upload stored nothing.
        #expect(try await server.store().metadata(key) == nil)
    }

    @Test func anUnknownAccessKeyIsRejected() async throws {
        let server = try await S3TestServer.shared.value
        let store = try server.store(accessKeyID: "AKIANOTAKEY000000000")
        await #expect {
            try await store.put(try #require(BlobKey(rawValue: "t-unknown-key")), data: Data(), contentType: "text/plain")
        } throws: { error in
            guard case ProviderError.rejected(403, "InvalidAccessKeyId", _) = error else { return false }
            return true
        }
    }

    @Test func aMissingBucketIsRejectedNotEmpty() async throws {
        let server = try await S3TestServer.shared.value
        let store = try server.store(bucket: "chorus-no-such-bucket")
        let key = try #require(BlobKey(rawValue: "t-missing-bucket/blob"))
        await #expect {
            _ = try await store.read(key, range: nil)
        } throws: { error in
            guard case ProviderError.rejected(404, "NoSuchBucket", _) = error else { return false }
            return true
        }
        await #expect {
            try await store.put(key, data: Data("x".utf8), contentType: "text/plain")
        } throws: { error in
            guard case ProviderError.rejected(404, "NoSuchBucket", _) = error else { return false }
            return true
        }
    }

    @Test func creatingAnExistingBucketSucceeds() async throws {
        let server = try await S3TestServer.shared.value
        try await server.store().createBucketIfMissing()
    }

    @Test func theSecretIsNeverDescribed() async throws {
        let server = try await S3TestServer.shared.value
        let store = try server.store()
        #expect(!"\(store)".contains(server.secretAccessKey))
        #expect("\(store)".contains(server.bucket))
    }
}

@Suite("S3 wire details")
struct S3WireTests {
    @Test func errorDocumentsMapToProviderErrors() {
        func body(_ code: String, _ message: String) -> Data {
            Data(
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <Error><Code>\(code)</Code><Message>\(message)</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>
                """.utf8)
        }
        #expect(
            S3BlobStore.providerError(status: 403, body: body("AccessDenied", "Access Denied"))
                == .rejected(httpStatus: 403, code: "AccessDenied", message: "Access Denied"))
        #expect(
            S3BlobStore.providerError(status: 403, body: body("SignatureDoesNotMatch", "a &amp; b"))
                == .rejected(httpStatus: 403, code: "SignatureDoesNotMatch", message: "a & b"))
        #expect(S3BlobStore.providerError(status: 503, body: body("SlowDown", "Reduce your request rate.")).isTransient)
        #expect(S3BlobStore.providerError(status: 500, body: body("InternalError", "oops")) == .unavailable("S3 InternalError: oops"))
        #expect(S3BlobStore.providerError(status: 502, body: Data()) == .unavailable("S3 502: S3 answered 502"))
        #expect(
            S3BlobStore.providerError(status: 403, body: Data()) == .rejected(httpStatus: 403, code: nil, message: "S3 answered 403"))
    }

    @Test func contentRanges() {
        #expect(S3BlobStore.parseContentRange("bytes 0-9/200")?.range == 0..<10)
        #expect(S3BlobStore.parseContentRange("bytes 0-9/200")?.size == 200)
        #expect(S3BlobStore.parseContentRange("bytes 199-199/200")?.range == 199..<200)
        #expect(S3BlobStore.parseContentRange("bytes */200") == nil)
        #expect(S3BlobStore.parseContentRange("bytes 10-9/200") == nil)
        #expect(S3BlobStore.parseContentRange("bytes 0-200/200") == nil)
    }

    @Test func endpointsMustBeHTTP() {
        #expect(throws: BlobStoreError.self) {
            try S3BlobStore(
                configuration: .init(
                    endpoint: URL(fileURLWithPath: "/tmp"), region: "us-east-1", bucket: "b", accessKeyID: "a", secretAccessKey: "s"),
                httpClient: .shared, logger: Logger(label: "test"))
        }
    }
}
