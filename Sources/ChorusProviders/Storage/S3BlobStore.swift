import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// Blobs as objects in an S3-compatible bucket (AWS S3, MinIO, Ceph RGW, Cloudflare R2, Backblaze B2, moto...),
/// over AsyncHTTPClient with AWS Signature Version 4.
///
/// - **Addressing.** Path style (`<endpoint>/<bucket>/<key>`) by default, which every S3-compatible server accepts;
///   virtual-host style (`<bucket>.<endpoint host>/<key>`) on request.
/// - **Uploads** are `PUT Object` with `Content-Length`, the blob's content type as the object's `Content-Type`, and
///   the real SHA-256 of the body signed as `x-amz-content-sha256` (never `UNSIGNED-PAYLOAD`, so the server verifies
///   the bytes over plain HTTP too). A file is read once to hash it and then streamed from disk in 64 KiB chunks.
/// - **Reads** are one `GET Object` (with `Range: bytes=a-b` for a range); the response body is handed to the
///   ``BlobReader`` as it arrives, in buffers of at most 64 KiB, never collected. The request deadline covers the
///   exchange up to the response head; the body then streams under the HTTP client's read timeout.
/// - **Retries.** Every request is retried by ``ProviderHTTP``'s policy on network failures, 5xx, `SlowDown` and other
///   429/503 answers (a read only until its body starts streaming).
/// - **Errors.** `NoSuchKey` (and a bare 404) is a missing blob; `InvalidRange` becomes
///   ``BlobStoreError/rangeNotSatisfiable(size:)``; failures that may pass (network, 5xx, throttling) become
///   ``BlobStoreError/unavailable(_:)``; refusals an operator must fix (`AccessDenied`, `SignatureDoesNotMatch`,
///   `InvalidAccessKeyId`, `NoSuchBucket`...) are thrown as ``ProviderError/rejected(httpStatus:code:message:)`` with the
///   S3 error code.
///
/// The secret access key is used only to sign; it is never logged and never part of a description.
public struct S3BlobStore: BlobStore {
    /// Where the bucket is and how to sign for it.
    public struct Configuration: Sendable {
        /// How the bucket appears in request URLs.
        public enum Addressing: String, Sendable {
            /// `https://s3.example.com/<bucket>/<key>`.
            case path
            /// `https://<bucket>.s3.example.com/<key>`.
            case virtualHost
        }

        /// The service origin, e.g. `https://s3.eu-central-1.amazonaws.com` or `http://127.0.0.1:9000`. A path in it
        /// is kept as a prefix of every request path.
        public var endpoint: URL
        /// The signing region (`us-east-1` for servers that ignore regions).
        public var region: String
        public var bucket: String
        public var accessKeyID: String
        public var secretAccessKey: String
        public var addressing: Addressing

        public init(
            endpoint: URL, region: String, bucket: String, accessKeyID: String, secretAccessKey: String,
            addressing: Addressing = .path
        ) {
            self.endpoint = endpoint
            self.region = region
            self.bucket = bucket
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
            self.addressing = addressing
        }
    }

    /// The largest buffer ``read(_:range:)`` yields.
    public static let chunkSize = 64 * 1024

    public let bucket: String
    private let signer: SigV4
    private let http: ProviderHTTP
    /// The `Host` header value (with the port when the endpoint names one).
    private let host: String
    /// Prepended to every object key: the endpoint's path, plus `/<bucket>` with path-style addressing.
    private let basePath: String
    private let origin: String
    private let threadPool: NIOThreadPool

    /// Creates a store for one bucket.
    ///
    /// - Parameters:
    ///   - timeout: The deadline of each request up to its response head.
    ///   - retry: Retries of transient failures.
    ///   - threadPool: Where local files are read for uploads.
    /// - Throws: ``BlobStoreError/unavailable(_:)`` when the endpoint has no scheme or host.
    public init(
        configuration: Configuration, httpClient: HTTPClient, timeout: TimeAmount = .seconds(30),
        retry: ProviderHTTP.RetryPolicy = ProviderHTTP.RetryPolicy(), threadPool: NIOThreadPool = .singleton,
        observer: (any ProviderCallObserver)? = nil, logger: Logger
    ) throws {
        guard let scheme = configuration.endpoint.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let endpointHost = configuration.endpoint.host, !endpointHost.isEmpty
        else {
            throw BlobStoreError.unavailable("the S3 endpoint \(configuration.endpoint.absoluteString) is not an http(s) URL")
        }
        var host = endpointHost
        if configuration.addressing == .virtualHost { host = "\(configuration.bucket).\(host)" }
        if let port = configuration.endpoint.port { host += ":\(port)" }
        var basePath = configuration.endpoint.path
        while basePath.hasSuffix("/") { basePath.removeLast() }
        if configuration.addressing == .path { basePath += "/" + configuration.bucket }
        self.bucket = configuration.bucket
        self.host = host
        self.basePath = SigV4.encodePath(basePath)
        self.origin = "\(scheme)://\(host)"
        self.signer = SigV4(
            accessKeyID: configuration.accessKeyID, secretAccessKey: configuration.secretAccessKey, region: configuration.region)
        self.http = ProviderHTTP(provider: "s3", client: httpClient, timeout: timeout, retry: retry, observer: observer, logger: logger)
        self.threadPool = threadPool
    }

    // MARK: - BlobStore

    /// Uploads the file: hashes it once, then streams it from disk with its length.
    @discardableResult
    public func put(_ key: BlobKey, file: URL, contentType: String) async throws -> BlobMetadata {
        let path = file.path
        let digest = try await threadPool.runIfActive { try Self.sha256(ofFileAt: path) }
        let threadPool = self.threadPool
        try await send(
            operation: "put", method: .PUT, key: key,
            headers: [("Content-Type", contentType), ("Content-Length", String(digest.size))], payloadHash: digest.hash
        ) {
            let file = try FileBlobStore.chunks(ofFileAt: path, threadPool: threadPool)
            guard file.size == digest.size else {
                throw BlobStoreError.unavailable("\(path) changed size while being stored as \(key)")
            }
            return .stream(file.body, length: .known(file.size))
        }
        return BlobMetadata(key: key, size: digest.size, contentType: contentType)
    }

    /// Uploads `data` in one request.
    @discardableResult
    public func put(_ key: BlobKey, data: Data, contentType: String) async throws -> BlobMetadata {
        let buffer = ByteBuffer(data: data)
        try await send(
            operation: "put", method: .PUT, key: key,
            headers: [("Content-Type", contentType), ("Content-Length", String(data.count))],
            payloadHash: SigV4.payloadHash(data)
        ) { .bytes(buffer) }
        return BlobMetadata(key: key, size: Int64(data.count), contentType: contentType)
    }

    /// `HEAD Object`.
    public func metadata(_ key: BlobKey) async throws -> BlobMetadata? {
        do {
            let response = try await send(operation: "head", method: .HEAD, key: key)
            // The size is the store's answer: a negative one would make every range computed from it invalid.
            guard let length = response.headers.first(name: "content-length").flatMap(Int64.init), length >= 0 else {
                throw BlobStoreError.unavailable("S3 answered HEAD \(key) without Content-Length")
            }
            return BlobMetadata(key: key, size: length, contentType: Self.contentType(response.headers))
        } catch S3Failure.notFound {
            return nil
        }
    }

    /// `GET Object`, streamed.
    public func read(_ key: BlobKey, range: Range<Int64>?) async throws -> BlobReader? {
        var rangeHeader: String?
        if let range {
            let lower = max(0, range.lowerBound)
            guard range.upperBound > lower else {
                // An empty range cannot be expressed as `bytes=a-b`; only the size decides between nothing and 416.
                guard let metadata = try await metadata(key) else { return nil }
                guard lower < metadata.size else { throw BlobStoreError.rangeNotSatisfiable(size: metadata.size) }
                return BlobReader(metadata: metadata, range: lower..<lower, body: AsyncThrowingStream { nil })
            }
            rangeHeader = "bytes=\(lower)-\(range.upperBound - 1)"
        }
        let response: HTTPClientResponse
        do {
            response = try await stream(key, range: rangeHeader)
        } catch S3Failure.notFound {
            return nil
        }
        let contentType = Self.contentType(response.headers)
        let length = response.headers.first(name: "content-length").flatMap(Int64.init)
        let delivered: Range<Int64>
        let size: Int64
        switch (rangeHeader, response.status) {
        case (nil, .ok):
            guard let length, length >= 0 else { throw BlobStoreError.unavailable("S3 answered GET \(key) without Content-Length") }
            size = length
            delivered = 0..<length
        case (.some, .partialContent):
            guard let contentRange = response.headers.first(name: "content-range").flatMap(Self.parseContentRange) else {
                throw BlobStoreError.unavailable("S3 answered a range of \(key) without a valid Content-Range")
            }
            size = contentRange.size
            delivered = contentRange.range
        default:
            throw BlobStoreError.unavailable("S3 answered GET \(key) (range \(rangeHeader ?? "none")) with \(response.status.code)")
        }
        let body = ResponseChunks(response.body, expected: delivered.upperBound - delivered.lowerBound, key: key)
        return BlobReader(
            metadata: BlobMetadata(key: key, size: size, contentType: contentType), range: delivered,
            body: AsyncThrowingStream { try await body.next() })
    }

    /// `DELETE Object`; S3 answers 204 whether or not the object existed, and a 404 counts as deleted too.
    public func delete(_ key: BlobKey) async throws {
        do {
            try await send(operation: "delete", method: .DELETE, key: key)
        } catch S3Failure.notFound {
            return
        }
    }

    /// Creates the bucket (`PUT Bucket`, with a location constraint outside `us-east-1`); a bucket the account already
    /// owns counts as created. For setup tools and tests: the server expects the bucket to exist.
    public func createBucketIfMissing() async throws {
        let body: ByteBuffer
        if signer.region == "us-east-1" {
            body = ByteBuffer()
        } else {
            body = ByteBuffer(
                string: "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                    + "<LocationConstraint>\(signer.region)</LocationConstraint></CreateBucketConfiguration>")
        }
        do {
            try await send(
                operation: "create-bucket", method: .PUT, path: bucketPath, headers: [("Content-Length", String(body.readableBytes))],
                payloadHash: SigV4.payloadHash(Data(body.readableBytesView))
            ) { .bytes(body) }
        } catch ProviderError.rejected(_, "BucketAlreadyOwnedByYou", _) {
            return
        }
    }

    // MARK: - Requests

    /// Why a request failed before it became a public error: a missing object is an answer, not a failure.
    private enum S3Failure: Error {
        case notFound
    }

    private var bucketPath: String { basePath.isEmpty ? "/" : basePath }

    private func objectPath(_ key: BlobKey) -> String { basePath + "/" + SigV4.encodePath(key.rawValue) }

    /// Sends one signed request through ``ProviderHTTP`` (retries, collected response) and maps its failure.
    @discardableResult
    private func send(
        operation: String, method: HTTPMethod, key: BlobKey, headers: [(String, String)] = [],
        payloadHash: String = SigV4.emptyPayloadHash, body: @escaping @Sendable () throws -> HTTPClientRequest.Body? = { nil }
    ) async throws -> ProviderHTTP.Response {
        try await send(
            operation: operation, method: method, path: objectPath(key), headers: headers, payloadHash: payloadHash, body: body)
    }

    @discardableResult
    private func send(
        operation: String, method: HTTPMethod, path: String, headers: [(String, String)] = [],
        payloadHash: String = SigV4.emptyPayloadHash, body: @escaping @Sendable () throws -> HTTPClientRequest.Body? = { nil }
    ) async throws -> ProviderHTTP.Response {
        do {
            return try await http.execute(operation: operation) {
                var request = signedRequest(method: method, path: path, headers: headers, payloadHash: payloadHash)
                request.body = try body()
                return request
            } mapError: { response in
                Self.providerError(status: response.status, body: response.data)
            }
        } catch let error as ProviderError {
            throw Self.storeError(error, method: method)
        }
    }

    /// A GET whose 2xx body is left streaming; failures before the body are retried like ``ProviderHTTP`` does.
    private func stream(_ key: BlobKey, range: String?) async throws -> HTTPClientResponse {
        var headers: [(String, String)] = []
        if let range { headers.append(("Range", range)) }
        let policy = http.retry
        var attempt = 1
        while true {
            let (failure, wait): (ProviderError, Duration?)
            switch try await attemptGET(key, headers: headers, attempt: attempt) {
            case .streaming(let response): return response
            case .failed(let error, let retryAfter): (failure, wait) = (error, retryAfter)
            }
            guard failure.isTransient, attempt < policy.maxAttempts else { throw Self.storeError(failure, method: .GET) }
            if let wait, wait > policy.maxDelay { throw Self.storeError(failure, method: .GET) }
            try await Task.sleep(for: min(max(wait ?? .zero, ProviderHTTP.backoff(attempt: attempt, policy: policy)), policy.maxDelay))
            attempt += 1
        }
    }

    private enum GETOutcome {
        case streaming(HTTPClientResponse)
        /// A failure that may pass (a final one is thrown), with the server's `Retry-After`.
        case failed(ProviderError, retryAfter: Duration?)
    }

    private func attemptGET(_ key: BlobKey, headers: [(String, String)], attempt: Int) async throws -> GETOutcome {
        let response: HTTPClientResponse
        let started = ContinuousClock.now
        do {
            let request = signedRequest(method: .GET, path: objectPath(key), headers: headers, payloadHash: SigV4.emptyPayloadHash)
            response = try await ProviderTracing.exchange(
                tracer: http.observer?.tracer, provider: http.provider, operation: "get", request: request, status: { Int($0.status.code) }
            ) { try await http.client.execute($0, timeout: http.timeout, logger: http.logger) }
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            http.observe("get", failure: ProviderCallFailure.timeout, since: started)
            return .failed(.unavailable("s3 timed out"), retryAfter: nil)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            http.observe("get", failure: ProviderCallFailure.unreachable, since: started)
            http.logger.warning(
                "provider request failed", metadata: ["provider": "s3", "operation": "get", "attempt": "\(attempt)", "error": "\(error)"])
            return .failed(.unavailable("s3 could not be reached: \(error)"), retryAfter: nil)
        }
        http.observe("get", failure: ProviderCallFailure.status(Int(response.status.code)), since: started)
        if response.status.code < 300 { return .streaming(response) }
        let body = Data(try await response.body.collect(upTo: 64 * 1024).readableBytesView)
        let status = Int(response.status.code)
        if status == 416 {
            throw BlobStoreError.rangeNotSatisfiable(size: try await rangeErrorSize(key, headers: response.headers, body: body))
        }
        http.logger.warning(
            "provider request failed",
            metadata: [
                "provider": "s3", "operation": "get", "status": "\(status)", "attempt": "\(attempt)",
                "provider_request_id": "\(response.headers.first(name: "x-amz-request-id") ?? "-")",
            ])
        let failure = Self.providerError(status: status, body: body)
        guard failure.isTransient else { throw Self.storeError(failure, method: .GET) }
        return .failed(failure, retryAfter: ProviderHTTP.retryAfter(response.headers))
    }

    /// The object size for a 416: from `Content-Range: bytes */<size>`, the error's `ActualObjectSize`, or a HEAD.
    private func rangeErrorSize(_ key: BlobKey, headers: HTTPHeaders, body: Data) async throws -> Int64 {
        if let header = headers.first(name: "content-range"), header.hasPrefix("bytes */"),
            let size = Int64(header.dropFirst("bytes */".count)), size >= 0
        {
            return size
        }
        if let size = Self.xmlElement("ActualObjectSize", in: body).flatMap(Int64.init), size >= 0 { return size }
        guard let metadata = try await metadata(key) else { throw S3Failure.notFound }
        return metadata.size
    }

    private func signedRequest(method: HTTPMethod, path: String, headers: [(String, String)], payloadHash: String) -> HTTPClientRequest {
        var signed: [(name: String, value: String)] = [(name: "Host", value: host)]
        signed += headers.map { (name: $0.0, value: $0.1) }
        let authorization = signer.sign(SigV4.Request(method: method.rawValue, path: path, headers: signed, payloadHash: payloadHash), date: Date())
        var request = HTTPClientRequest(url: origin + path)
        request.method = method
        for header in signed + authorization {
            request.headers.add(name: header.name, value: header.value)
        }
        return request
    }

    // MARK: - Error mapping

    /// An S3 error answer (`<Error><Code>…</Code><Message>…</Message></Error>`, or no body for HEAD) as a provider error.
    static func providerError(status: Int, body: Data) -> ProviderError {
        let code = xmlElement("Code", in: body)
        let message = xmlElement("Message", in: body) ?? "S3 answered \(status)"
        switch (status, code) {
        case (_, "SlowDown"), (429, _), (503, _):
            return .rateLimited(retryAfter: nil, message: message)
        case (500..., _), (408, _), (_, "RequestTimeout"), (_, "InternalError"):
            return .unavailable("S3 \(code ?? String(status)): \(message)")
        default:
            return .rejected(httpStatus: status, code: code, message: message)
        }
    }

    /// The public error for a provider error: a missing object is ``S3Failure/notFound``, transient failures become
    /// ``BlobStoreError/unavailable(_:)``, refusals stay ``ProviderError/rejected(httpStatus:code:message:)``.
    private static func storeError(_ error: ProviderError, method: HTTPMethod) -> any Error {
        switch error {
        case .rejected(404, nil, _), .rejected(_, "NoSuchKey", _):
            return S3Failure.notFound
        case .rejected, .quotaExceeded:
            return error
        case .rateLimited(_, let message):
            return BlobStoreError.unavailable("S3 is throttling \(method.rawValue) requests: \(message)")
        case .unavailable(let message), .invalidResponse(let message):
            return BlobStoreError.unavailable(message)
        }
    }

    /// The text of the first `<name>` element, unescaped; enough for S3's flat error documents.
    static func xmlElement(_ name: String, in body: Data) -> String? {
        guard let text = String(data: body, encoding: .utf8),
            let start = text.range(of: "<\(name)>"),
            let end = text.range(of: "</\(name)>", range: start.upperBound..<text.endIndex)
        else { return nil }
        return String(text[start.upperBound..<end.lowerBound])
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    // MARK: - Helpers

    private static func contentType(_ headers: HTTPHeaders) -> String {
        headers.first(name: "content-type") ?? FileBlobStore.defaultContentType
    }

    /// `bytes <first>-<last>/<size>` → the half-open range and the size.
    static func parseContentRange(_ header: String) -> (range: Range<Int64>, size: Int64)? {
        guard header.hasPrefix("bytes ") else { return nil }
        let parts = header.dropFirst("bytes ".count).split(separator: "/")
        guard parts.count == 2, let size = Int64(parts[1]) else { return nil }
        let bounds = parts[0].split(separator: "-")
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first <= last, last < size else {
            return nil
        }
        return (first..<(last + 1), size)
    }

    /// The hex SHA-256 and size of a local file, read in 64 KiB chunks.
    private static func sha256(ofFileAt path: String) throws -> (hash: String, size: Int64) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw BlobStoreError.unavailable("cannot open \(path) to upload it")
        }
        defer { try? handle.close() }
        var hasher = SHA256()
        var size: Int64 = 0
        do {
            while let chunk = try handle.read(upToCount: chunkSize), !chunk.isEmpty {
                hasher.update(data: chunk)
                size += Int64(chunk.count)
            }
        } catch {
            throw BlobStoreError.unavailable("cannot read \(path) to upload it: \(error)")
        }
        return (SigV4.hex(hasher.finalize()), size)
    }
}

extension S3BlobStore: CustomStringConvertible {
    /// The endpoint and bucket; never the credentials.
    public var description: String { "S3BlobStore(\(origin)\(bucketPath))" }
}

/// A streaming response body re-cut into buffers of at most ``S3BlobStore/chunkSize`` bytes, checked against the
/// length the response announced. Iterated by one consumer at a time, like the body it wraps.
private final class ResponseChunks: @unchecked Sendable {
    private var iterator: HTTPClientResponse.Body.AsyncIterator
    private var pending: ByteBuffer?
    private var remaining: Int64
    private let key: BlobKey

    init(_ body: HTTPClientResponse.Body, expected: Int64, key: BlobKey) {
        self.iterator = body.makeAsyncIterator()
        self.remaining = expected
        self.key = key
    }

    func next() async throws -> ByteBuffer? {
        if pending == nil || pending?.readableBytes == 0 {
            pending = try await iterator.next()
        }
        guard var buffer = pending else {
            guard remaining == 0 else { throw BlobStoreError.unavailable("S3 ended \(key) \(remaining) bytes early") }
            return nil
        }
        let count = min(buffer.readableBytes, S3BlobStore.chunkSize)
        guard Int64(count) <= remaining, let chunk = buffer.readSlice(length: count) else {
            throw BlobStoreError.unavailable("S3 sent more of \(key) than announced")
        }
        pending = buffer
        remaining -= Int64(count)
        return chunk
    }
}
