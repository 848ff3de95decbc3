import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// Keeps small, often-read blobs (generated speech, playbacks) in memory in front of another store, so serving one
/// is a dictionary lookup instead of a file open or an S3 request.
///
/// Blobs up to ``maxEntryBytes`` are kept after their first whole read, least recently used first out once
/// ``capacityBytes`` is reached; ranges of a kept blob are cut from memory. Writes and deletions through this store
/// drop the kept copy (and a read that overlapped one keeps nothing). Chorus's keys are never rewritten with other content (recordings have unique ids, generated
/// audio is named by a hash of what it says), so a copy kept by one instance cannot go stale when another instance
/// writes; callers check their database row (which a deletion removes) before reading, so a blob deleted elsewhere is
/// not served either.
public final class MemoryCachedBlobStore: BlobStore {
    public let base: any BlobStore
    /// The largest blob kept in memory.
    public let maxEntryBytes: Int
    /// The most bytes kept in memory in all.
    public let capacityBytes: Int

    private struct Entry {
        var metadata: BlobMetadata
        var bytes: ByteBuffer
        var lastUse: UInt64
    }

    private struct State {
        var entries: [BlobKey: Entry] = [:]
        var bytes = 0
        var tick: UInt64 = 0
        /// Counts writes and deletions: a read that overlapped one does not keep what it read (it may be the old blob).
        var writes: UInt64 = 0
    }

    private let state = NIOLockedValueBox(State())

    public init(base: any BlobStore, capacityBytes: Int, maxEntryBytes: Int = 1 << 20) {
        self.base = base
        self.capacityBytes = capacityBytes
        self.maxEntryBytes = min(maxEntryBytes, capacityBytes)
    }

    /// How many blobs and bytes are kept now.
    public var usage: (blobs: Int, bytes: Int) {
        state.withLockedValue { ($0.entries.count, $0.bytes) }
    }

    @discardableResult
    public func put(_ key: BlobKey, file: URL, contentType: String) async throws -> BlobMetadata {
        forget(key)
        defer { forget(key) }
        return try await base.put(key, file: file, contentType: contentType)
    }

    @discardableResult
    public func put(_ key: BlobKey, data: Data, contentType: String) async throws -> BlobMetadata {
        forget(key)
        defer { forget(key) }
        return try await base.put(key, data: data, contentType: contentType)
    }

    public func metadata(_ key: BlobKey) async throws -> BlobMetadata? {
        if let kept = lookup(key) { return kept.metadata }
        return try await base.metadata(key)
    }

    public func read(_ key: BlobKey, range: Range<Int64>?) async throws -> BlobReader? {
        if let kept = lookup(key) { return try Self.reader(kept.metadata, kept.bytes, range: range) }
        guard range == nil else { return try await base.read(key, range: range) }
        let writes = state.withLockedValue { $0.writes }
        guard let reader = try await base.read(key, range: nil) else { return nil }
        guard reader.metadata.size <= Int64(maxEntryBytes) else { return reader }
        var bytes = ByteBuffer()
        bytes.reserveCapacity(Int(reader.metadata.size))
        for try await var buffer in reader.body { bytes.writeBuffer(&buffer) }
        keep(key, metadata: reader.metadata, bytes: bytes, ifNoWritesSince: writes)
        return try Self.reader(reader.metadata, bytes, range: nil)
    }

    public func delete(_ key: BlobKey) async throws {
        forget(key)
        try await base.delete(key)
    }

    // MARK: Memory

    private func lookup(_ key: BlobKey) -> (metadata: BlobMetadata, bytes: ByteBuffer)? {
        state.withLockedValue { state in
            guard var entry = state.entries[key] else { return nil }
            state.tick &+= 1
            entry.lastUse = state.tick
            state.entries[key] = entry
            return (entry.metadata, entry.bytes)
        }
    }

    private func keep(_ key: BlobKey, metadata: BlobMetadata, bytes: ByteBuffer, ifNoWritesSince writes: UInt64) {
        guard bytes.readableBytes <= maxEntryBytes else { return }
        state.withLockedValue { state in
            guard state.writes == writes else { return }
            if let old = state.entries.removeValue(forKey: key) { state.bytes -= old.bytes.readableBytes }
            while state.bytes + bytes.readableBytes > capacityBytes,
                let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })
            {
                state.bytes -= oldest.value.bytes.readableBytes
                state.entries.removeValue(forKey: oldest.key)
            }
            state.tick &+= 1
            state.entries[key] = Entry(metadata: metadata, bytes: bytes, lastUse: state.tick)
            state.bytes += bytes.readableBytes
        }
    }

    private func forget(_ key: BlobKey) {
        state.withLockedValue { state in
            state.writes &+= 1
            if let old = state.entries.removeValue(forKey: key) { state.bytes -= old.bytes.readableBytes }
        }
    }

    private static func reader(_ metadata: BlobMetadata, _ bytes: ByteBuffer, range: Range<Int64>?) throws -> BlobReader {
        let size = Int64(bytes.readableBytes)
        var served = 0..<size
        if let range {
            guard range.lowerBound < size else { throw BlobStoreError.rangeNotSatisfiable(size: size) }
            served = range.lowerBound..<min(range.upperBound, size)
        }
        let slice = bytes.getSlice(at: bytes.readerIndex + Int(served.lowerBound), length: Int(served.count)) ?? ByteBuffer()
        return BlobReader(
            metadata: metadata, range: served,
            body: AsyncThrowingStream {
                $0.yield(slice); $0.finish()
            }, inMemory: slice)
    }
}
