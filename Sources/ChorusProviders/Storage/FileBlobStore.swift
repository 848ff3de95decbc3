import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Blobs as files under a root directory: the embedded default (`./data/blobs`).
///
/// **Layout.** A key is the blob's path relative to the root (`messages/ab/cd.m4a` → `<root>/messages/ab/cd.m4a`).
/// Directories are created with mode 0700, files with 0600. The content type lives in a sidecar JSON file next to
/// the blob, `<name>~meta.json` (`{"content_type":"audio/mp4"}`); a blob without a sidecar reads as
/// `application/octet-stream`. Temporary files are named `.<name>~<uuid>.tmp`. A `~` cannot occur in a ``BlobKey``,
/// so sidecars and temporary files never clash with a blob. A key cannot name both a blob and a folder of blobs
/// (`a` and `a/b`): the filesystem refuses the second, and that put fails with ``BlobStoreError/unavailable(_:)``.
///
/// **Atomicity.** Bytes are written to a temporary file in the blob's directory, flushed to disk (`fsync`) and renamed
/// over the blob, so a reader sees the old blob or the new one, never a part. The sidecar and the blob are renamed
/// under a process-wide lock that readers also hold while they open a blob, so within one process a reader sees the
/// content type and the bytes of the same write. (Processes sharing one root that write the same key at the same time
/// can pair one writer's bytes with the other's content type; bytes are still never mixed.)
///
/// **Memory.** `put(_:file:contentType:)` copies in 64 KiB chunks and ``read(_:range:)`` streams 64 KiB chunks from an
/// open file, so neither holds a blob in memory. Blocking file I/O runs on NIO's thread pool, never on the caller's
/// executor.
///
/// `delete` removes the blob and its sidecar and then every parent directory left empty, up to (not including) the root.
public struct FileBlobStore: BlobStore {
    /// The largest buffer ``read(_:range:)`` yields.
    public static let chunkSize = 64 * 1024

    /// The directory the keys are relative to.
    public let root: URL
    private let rootPath: String
    private let threadPool: NIOThreadPool

    /// Guards the commit of a write (sidecar and blob renames), the opening of a blob with its sidecar, and deletes.
    /// Process-wide, so several stores on one root stay consistent; it is held for a few system calls only.
    private static let commitLock = NIOLock()

    /// Creates the store, creating `root` (mode 0700, with its parents) when it does not exist.
    ///
    /// - Parameters:
    ///   - root: The directory holding the blobs.
    ///   - threadPool: Where the blocking file I/O runs.
    /// - Throws: ``BlobStoreError/unavailable(_:)`` when the directory cannot be created.
    public init(root: URL, threadPool: NIOThreadPool = .singleton) throws {
        let path = root.standardizedFileURL.path
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw BlobStoreError.unavailable("cannot create the blob directory \(path): \(error)")
        }
        self.root = URL(fileURLWithPath: path, isDirectory: true)
        self.rootPath = path
        self.threadPool = threadPool
    }

    /// Copies the file at `file` into the store under `key` in 64 KiB chunks.
    @discardableResult
    public func put(_ key: BlobKey, file: URL, contentType: String) async throws -> BlobMetadata {
        let sourcePath = file.path
        return try await blocking {
            let source = open(sourcePath, O_RDONLY | O_CLOEXEC)
            guard source >= 0 else { throw Self.failure("cannot open \(sourcePath) to store as \(key)") }
            defer { close(source) }
            return try self.commit(key, contentType: contentType) { target in
                var buffer = [UInt8](repeating: 0, count: Self.chunkSize)
                var total: Int64 = 0
                while true {
                    let count = try buffer.withUnsafeMutableBytes { raw in
                        try Self.retryingInterrupts("read \(sourcePath)") { readSystemCall(source, raw.baseAddress, raw.count) }
                    }
                    if count == 0 { return total }
                    try buffer.withUnsafeBytes { raw in
                        try Self.writeAll(target, UnsafeRawBufferPointer(rebasing: raw[0..<count]), key: key)
                    }
                    total += Int64(count)
                }
            }
        }
    }

    /// Writes `data` into the store under `key`.
    @discardableResult
    public func put(_ key: BlobKey, data: Data, contentType: String) async throws -> BlobMetadata {
        try await blocking {
            try self.commit(key, contentType: contentType) { target in
                try data.withUnsafeBytes { try Self.writeAll(target, $0, key: key) }
                return Int64(data.count)
            }
        }
    }

    /// The blob's size and content type, or `nil` when there is no blob under `key`.
    public func metadata(_ key: BlobKey) async throws -> BlobMetadata? {
        try await blocking {
            try Self.commitLock.withLock {
                var info = stat()
                guard stat(self.path(of: key), &info) == 0 else {
                    if errno == ENOENT || errno == ENOTDIR { return nil }
                    throw Self.failure("cannot stat \(key)")
                }
                guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
                return BlobMetadata(key: key, size: Int64(info.st_size), contentType: try self.contentType(of: key))
            }
        }
    }

    /// Streams the blob (or `range` of it, clamped to its end) in chunks of at most ``chunkSize`` bytes from a file
    /// opened before this returns: a write that replaces the blob meanwhile does not change what this reader delivers.
    /// The file is closed when the stream ends, fails, is cancelled or is dropped.
    public func read(_ key: BlobKey, range: Range<Int64>?) async throws -> BlobReader? {
        let opened: (descriptor: Int32, metadata: BlobMetadata)? = try await blocking {
            try Self.commitLock.withLock {
                let descriptor = open(self.path(of: key), O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else {
                    if errno == ENOENT || errno == ENOTDIR { return nil }
                    throw Self.failure("cannot open \(key)")
                }
                var info = stat()
                guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                    close(descriptor)
                    return nil
                }
                do {
                    let metadata = BlobMetadata(key: key, size: Int64(info.st_size), contentType: try self.contentType(of: key))
                    return (descriptor, metadata)
                } catch {
                    close(descriptor)
                    throw error
                }
            }
        }
        guard let opened else { return nil }
        let size = opened.metadata.size
        let bytes: Range<Int64>
        if let range {
            let lower = max(0, range.lowerBound)
            guard lower < size else {
                close(opened.descriptor)
                throw BlobStoreError.rangeNotSatisfiable(size: size)
            }
            bytes = lower..<min(max(lower, range.upperBound), size)
        } else {
            bytes = 0..<size
        }
        let source = FileChunkSource(descriptor: opened.descriptor, range: bytes, name: key.rawValue, threadPool: threadPool)
        let body = AsyncThrowingStream<ByteBuffer, any Error> { try await source.next() }
        return BlobReader(metadata: opened.metadata, range: bytes, body: body)
    }

    /// Deletes the blob and its sidecar, then the parent directories left empty (up to the root). Deleting a missing
    /// blob succeeds.
    public func delete(_ key: BlobKey) async throws {
        try await blocking {
            let path = self.path(of: key)
            try Self.commitLock.withLock {
                for file in [path, Self.sidecarPath(of: path)] where unlink(file) != 0 {
                    guard errno == ENOENT || errno == ENOTDIR else { throw Self.failure("cannot delete \(key)") }
                }
            }
            var directory = (path as NSString).deletingLastPathComponent
            while directory.count > self.rootPath.count, directory.hasPrefix(self.rootPath + "/") {
                guard rmdir(directory) == 0 else { break }
                directory = (directory as NSString).deletingLastPathComponent
            }
        }
    }

    // MARK: - Writing

    /// Writes a blob through a temporary file: `fill` writes the bytes and returns their count; the file is flushed
    /// and renamed over the blob together with its sidecar. Retries when a concurrent delete removes the (empty)
    /// directory between its creation and the creation of the temporary files.
    private func commit(_ key: BlobKey, contentType: String, fill: (Int32) throws -> Int64) throws -> BlobMetadata {
        let path = path(of: key)
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let sidecar = try JSONEncoder().encode(Sidecar(contentType: contentType))
        var attempt = 1
        while true {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw BlobStoreError.unavailable("cannot create the directory of \(key): \(error)")
            }
            let token = UUID().uuidString
            let blobTemporary = directory + "/.\(name)~\(token).tmp"
            let sidecarTemporary = directory + "/.\(name)~\(token)~meta.tmp"
            let blob = open(blobTemporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if blob < 0 {
                if errno == ENOENT, attempt < 5 {
                    attempt += 1
                    continue
                }
                throw Self.failure("cannot create a temporary file for \(key)")
            }
            do {
                let size: Int64
                do {
                    defer { close(blob) }
                    size = try fill(blob)
                    guard fsync(blob) == 0 else { throw Self.failure("cannot flush \(key)") }
                }
                try Self.writeFile(sidecarTemporary, contents: sidecar, key: key)
                try Self.commitLock.withLock {
                    guard rename(sidecarTemporary, Self.sidecarPath(of: path)) == 0 else {
                        throw Self.failure("cannot store the content type of \(key)")
                    }
                    guard rename(blobTemporary, path) == 0 else { throw Self.failure("cannot store \(key)") }
                }
                Self.flushDirectory(directory)
                return BlobMetadata(key: key, size: size, contentType: contentType)
            } catch {
                unlink(blobTemporary)
                unlink(sidecarTemporary)
                throw error
            }
        }
    }

    private static func writeFile(_ path: String, contents: Data, key: BlobKey) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create a temporary file for \(key)") }
        defer { close(descriptor) }
        try contents.withUnsafeBytes { try writeAll(descriptor, $0, key: key) }
        guard fsync(descriptor) == 0 else { throw failure("cannot flush \(key)") }
    }

    private static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, key: BlobKey) throws {
        var offset = 0
        while offset < bytes.count {
            let written = try retryingInterrupts("write \(key)") {
                write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            }
            offset += written
        }
    }

    /// Makes the renames in `directory` durable; best effort (some filesystems refuse to sync a directory).
    private static func flushDirectory(_ directory: String) {
        let descriptor = open(directory, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    // MARK: - Reading

    /// Opens the local file at `path` for streaming in chunks of at most ``chunkSize`` bytes (the S3 store uploads
    /// files through it). Throws ``BlobStoreError/unavailable(_:)`` when the
    /// file cannot be opened.
    static func chunks(ofFileAt path: String, threadPool: NIOThreadPool) throws -> (size: Int64, body: AsyncThrowingStream<ByteBuffer, any Error>) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("cannot open \(path)") }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw BlobStoreError.unavailable("\(path) is not a regular file")
        }
        let size = Int64(info.st_size)
        let source = FileChunkSource(descriptor: descriptor, range: 0..<size, name: path, threadPool: threadPool)
        return (size, AsyncThrowingStream { try await source.next() })
    }

    private func contentType(of key: BlobKey) throws -> String {
        let sidecar = Self.sidecarPath(of: path(of: key))
        guard let data = FileManager.default.contents(atPath: sidecar) else { return Self.defaultContentType }
        do {
            return try JSONDecoder().decode(Sidecar.self, from: data).contentType
        } catch {
            throw BlobStoreError.unavailable("unreadable content type of \(key): \(error)")
        }
    }

    // MARK: - Helpers

    static let defaultContentType = "application/octet-stream"

    private func path(of key: BlobKey) -> String { rootPath + "/" + key.rawValue }

    private static func sidecarPath(of blobPath: String) -> String { blobPath + "~meta.json" }

    private func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        do {
            return try await threadPool.runIfActive(body)
        } catch let error as BlobStoreError {
            throw error
        } catch let error as NIOThreadPoolError.ThreadPoolInactive {
            throw BlobStoreError.unavailable("the file I/O thread pool is stopped: \(error)")
        }
    }

    static func failure(_ what: String) -> BlobStoreError {
        BlobStoreError.unavailable("\(what): \(String(cString: strerror(errno)))")
    }

    /// Runs a read or write system call, repeating it when a signal interrupts it.
    static func retryingInterrupts(_ what: @autoclosure () -> String, _ call: () -> Int) throws -> Int {
        while true {
            let result = call()
            if result >= 0 { return result }
            if errno != EINTR { throw failure("cannot \(what())") }
        }
    }

    private struct Sidecar: Codable {
        var contentType: String

        enum CodingKeys: String, CodingKey {
            case contentType = "content_type"
        }
    }
}

/// `read(2)`, named apart from ``FileBlobStore/read(_:range:)``.
private func readSystemCall(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// Reads one open file's range in chunks, on demand (one chunk per `next()`), and closes the file at the end of the
/// range, on failure, on cancellation or when dropped.
private final class FileChunkSource: Sendable {
    private struct State {
        var descriptor: Int32?
        var offset: Int64
    }

    private let state: NIOLockedValueBox<State>
    private let end: Int64
    /// The key or path, for error messages.
    private let name: String
    private let threadPool: NIOThreadPool

    init(descriptor: Int32, range: Range<Int64>, name: String, threadPool: NIOThreadPool) {
        self.state = NIOLockedValueBox(State(descriptor: descriptor, offset: range.lowerBound))
        self.end = range.upperBound
        self.name = name
        self.threadPool = threadPool
    }

    deinit { release() }

    /// The next chunk, or `nil` after the last one.
    func next() async throws -> ByteBuffer? {
        guard !Task.isCancelled else {
            release()
            throw CancellationError()
        }
        do {
            let buffer = try await threadPool.runIfActive { try self.readChunk() }
            if buffer == nil { release() }
            return buffer
        } catch {
            release()
            throw error
        }
    }

    private func readChunk() throws -> ByteBuffer? {
        try state.withLockedValue { state -> ByteBuffer? in
            guard let descriptor = state.descriptor, state.offset < end else { return nil }
            let wanted = Int(min(Int64(FileBlobStore.chunkSize), end - state.offset))
            var buffer = ByteBufferAllocator().buffer(capacity: wanted)
            let offset = state.offset
            let count = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { raw in
                try FileBlobStore.retryingInterrupts("read \(name)") {
                    pread(descriptor, raw.baseAddress, wanted, off_t(offset))
                }
            }
            guard count > 0 else {
                throw BlobStoreError.unavailable("\(name) ended \(end - offset) bytes early (truncated meanwhile?)")
            }
            state.offset += Int64(count)
            return buffer
        }
    }

    private func release() {
        state.withLockedValue { state in
            if let descriptor = state.descriptor {
                _ = close(descriptor)
                state.descriptor = nil
            }
        }
    }
}
