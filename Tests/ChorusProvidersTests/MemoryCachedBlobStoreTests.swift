import Foundation
import NIOCore
import Testing

@testable import ChorusProviders

@Suite("MemoryCachedBlobStore")
struct MemoryCachedBlobStoreTests {
    let root: URL
    let base: FileBlobStore

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-cached-blobs-\(UUID().uuidString)/data")
        base = try FileBlobStore(root: root)
    }

    func removeRoot() { try? FileManager.default.removeItem(at: root.deletingLastPathComponent()) }

    func cached(capacity: Int = 1 << 20, maxEntry: Int = 256 * 1024) -> MemoryCachedBlobStore {
        MemoryCachedBlobStore(base: base, capacityBytes: capacity, maxEntryBytes: maxEntry)
    }

    /// The promises of every store hold in front of a file store (the 30 MB file passes through uncached).
    @Test func keepsTheBlobStoreContract() async throws {
        defer { removeRoot() }
        let contract = BlobStoreContract(store: cached(), prefix: "t")
        try await contract.roundTrip()
        try await contract.ranges()
        try await contract.concurrentWriters()
        try await contract.largeFileInBoundedChunks()
    }

    @Test func aReadBlobIsServedFromMemoryWholeOrInRanges() async throws {
        defer { removeRoot() }
        let store = cached()
        let key = try #require(BlobKey(rawValue: "speech/ab/abc.mp3"))
        let payload = BlobStoreContract.bytes(count: 40_000, seed: 7)
        try await store.put(key, data: payload, contentType: "audio/mpeg")
        #expect(store.usage.blobs == 0)
        let first = try #require(try await store.read(key, range: nil))
        #expect(first.inMemory.map { Data($0.readableBytesView) } == payload)
        #expect(store.usage == (1, 40_000))

        // Gone from disk behind the cache's back: still served, from memory.
        try await base.delete(key)
        let again = try #require(try await store.read(key, range: nil))
        #expect(again.inMemory.map { Data($0.readableBytesView) } == payload)
        #expect(try await store.metadata(key) == BlobMetadata(key: key, size: 40_000, contentType: "audio/mpeg"))
        let range = try #require(try await store.read(key, range: 100..<200))
        #expect(range.range == 100..<200)
        #expect(range.inMemory.map { Data($0.readableBytesView) } == payload[100..<200])
        var streamed = Data()
        for try await chunk in range.body { streamed.append(contentsOf: chunk.readableBytesView) }
        #expect(streamed == payload[100..<200])
        await #expect(throws: BlobStoreError.rangeNotSatisfiable(size: 40_000)) { try await store.read(key, range: 40_000..<40_001) }

        // Deleting through the cache forgets it.
        try await store.delete(key)
        #expect(try await store.read(key, range: nil) == nil)
        #expect(store.usage == (0, 0))
    }

    @Test func writingThroughTheCacheReplacesTheKeptCopy() async throws {
        defer { removeRoot() }
        let store = cached()
        let key = try #require(BlobKey(rawValue: "playback/00/one.wav"))
        try await store.put(key, data: Data("old".utf8), contentType: "audio/wav")
        _ = try await store.read(key, range: nil)
        try await store.put(key, data: Data("newer".utf8), contentType: "audio/wav")
        #expect(try await store.data(key) == Data("newer".utf8))
        #expect(store.usage == (1, 5))
    }

    @Test func largeBlobsAreNotKeptAndMemoryStaysWithinCapacity() async throws {
        defer { removeRoot() }
        let store = cached(capacity: 250_000, maxEntry: 100_000)
        let big = try #require(BlobKey(rawValue: "audio/big.wav"))
        try await store.put(big, data: BlobStoreContract.bytes(count: 100_001, seed: 1), contentType: "audio/wav")
        let reader = try #require(try await store.read(big, range: nil))
        #expect(reader.inMemory == nil)
        #expect(store.usage.blobs == 0)

        var keys: [BlobKey] = []
        for index in 0..<4 {
            let key = try #require(BlobKey(rawValue: "speech/\(index).mp3"))
            keys.append(key)
            try await store.put(key, data: BlobStoreContract.bytes(count: 100_000, seed: UInt8(index)), contentType: "audio/mpeg")
        }
        _ = try await store.read(keys[0], range: nil)
        _ = try await store.read(keys[1], range: nil)
        _ = try await store.read(keys[0], range: nil)  // 0 is now more recent than 1
        _ = try await store.read(keys[2], range: nil)  // evicts 1, the least recently used
        #expect(store.usage == (2, 200_000))
        try await base.delete(keys[0])
        try await base.delete(keys[1])
        #expect(try await store.read(keys[0], range: nil) != nil)
        #expect(try await store.read(keys[1], range: nil) == nil)
    }

    @Test func concurrentReadersOfOneBlobAllGetIt() async throws {
        defer { removeRoot() }
        let store = cached()
        let key = try #require(BlobKey(rawValue: "speech/hot.mp3"))
        let payload = BlobStoreContract.bytes(count: 20_000, seed: 9)
        try await store.put(key, data: payload, contentType: "audio/mpeg")
        let results = try await withThrowingTaskGroup(of: Data?.self) { group in
            for _ in 0..<50 { group.addTask { try await store.data(key) } }
            var all: [Data?] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 50 && results.allSatisfy { $0 == payload })
        #expect(store.usage == (1, 20_000))
    }
}
