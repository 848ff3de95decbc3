import Foundation
import NIOCore

/// A blob's name in a store: `/`-separated segments of `[A-Za-z0-9._-]`, no empty, `.` or `..` segment, at most
/// 512 characters. The same key works as a relative file path and as an S3 object key.
public struct BlobKey: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String

    public init?(rawValue: String) {
        guard !rawValue.isEmpty, rawValue.utf8.count <= 512 else { return nil }
        for segment in rawValue.split(separator: "/", omittingEmptySubsequences: false) {
            guard !segment.isEmpty, segment != ".", segment != ".." else { return nil }
            guard segment.unicodeScalars.allSatisfy({ Self.allowed.contains($0) }) else { return nil }
        }
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    private static let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
}

/// What a store knows about a blob.
public struct BlobMetadata: Sendable, Equatable {
    public var key: BlobKey
    public var size: Int64
    public var contentType: String

    public init(key: BlobKey, size: Int64, contentType: String) {
        self.key = key
        self.size = size
        self.contentType = contentType
    }
}

/// A blob being read: its metadata and the requested bytes as a stream of buffers (bounded memory).
public struct BlobReader: Sendable {
    public var metadata: BlobMetadata
    /// The byte range being delivered (the whole blob when no range was asked for).
    public var range: Range<Int64>
    public var body: AsyncThrowingStream<ByteBuffer, any Error>
    /// The same bytes when the store already holds them in memory (``MemoryCachedBlobStore``): a server can answer
    /// with them at once instead of streaming.
    public var inMemory: ByteBuffer?

    public init(metadata: BlobMetadata, range: Range<Int64>, body: AsyncThrowingStream<ByteBuffer, any Error>, inMemory: ByteBuffer? = nil) {
        self.metadata = metadata
        self.range = range
        self.body = body
        self.inMemory = inMemory
    }
}

/// Why a store operation failed.
public enum BlobStoreError: Error, Sendable, Equatable {
    /// The requested range starts beyond the blob's end.
    case rangeNotSatisfiable(size: Int64)
    /// The store could not be reached or failed; the operation may succeed later.
    case unavailable(String)
}

/// Where recordings, generated speech and pictures live: the filesystem under the data directory (default) or
/// S3-compatible object storage. Implementations are safe to use concurrently; writes are atomic (a reader sees the
/// old blob or the new one, never a part).
public protocol BlobStore: Sendable {
    /// Stores the content of the local file at `file` under `key` (replacing any blob there). The file is left in
    /// place; the caller deletes it.
    @discardableResult
    func put(_ key: BlobKey, file: URL, contentType: String) async throws -> BlobMetadata
    /// Stores `data` under `key` (replacing any blob there).
    @discardableResult
    func put(_ key: BlobKey, data: Data, contentType: String) async throws -> BlobMetadata
    /// The blob's metadata, or `nil` when there is none.
    func metadata(_ key: BlobKey) async throws -> BlobMetadata?
    /// Reads the blob, or the bytes `range` of it (clamped to its end), or `nil` when there is none.
    /// Throws ``BlobStoreError/rangeNotSatisfiable(size:)`` when the range starts at or past the end.
    func read(_ key: BlobKey, range: Range<Int64>?) async throws -> BlobReader?
    /// Deletes the blob; deleting a missing blob succeeds.
    func delete(_ key: BlobKey) async throws
}

extension BlobStore {
    /// The whole blob in memory (for provider uploads of bounded recordings), or `nil` when there is none.
    public func data(_ key: BlobKey, limit: Int = 64 * 1024 * 1024) async throws -> Data? {
        guard let reader = try await read(key, range: nil) else { return nil }
        var data = Data()
        data.reserveCapacity(Int(min(reader.metadata.size, Int64(limit))))
        for try await buffer in reader.body {
            guard data.count + buffer.readableBytes <= limit else {
                throw BlobStoreError.unavailable("blob \(key) is larger than \(limit) bytes")
            }
            data.append(contentsOf: buffer.readableBytesView)
        }
        return data
    }
}
