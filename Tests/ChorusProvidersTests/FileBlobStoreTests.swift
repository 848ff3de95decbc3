import Crypto
import Foundation
import NIOCore
import Testing

@testable import ChorusProviders

/// The behaviour every ``BlobStore`` promises, run against each implementation with keys under `prefix`.
struct BlobStoreContract {
    let store: any BlobStore
    /// A key prefix unique to one test, so tests sharing a store (a bucket) do not see each other's blobs.
    let prefix: String

    func key(_ name: String) throws -> BlobKey {
        try #require(BlobKey(rawValue: "\(prefix)/\(name)"))
    }

    /// Deterministic, non-repeating bytes (a repeating pattern could hide an offset error).
    static func bytes(count: Int, seed: UInt8) -> Data {
        var generator = SplitMix(seed: UInt64(seed) &+ 0x9E37_79B9)
        var data = Data(capacity: count)
        while data.count < count {
            withUnsafeBytes(of: generator.next()) { data.append(contentsOf: $0.prefix(count - data.count)) }
        }
        return data
    }

    func collect(_ reader: BlobReader) async throws -> (data: Data, largestChunk: Int) {
        var data = Data()
        var largest = 0
        for try await chunk in reader.body {
            largest = max(largest, chunk.readableBytes)
            data.append(contentsOf: chunk.readableBytesView)
        }
        return (data, largest)
    }

    func roundTrip() async throws {
        let key = try self.key("messages/a1/recording.m4a")
        let payload = Self.bytes(count: 100_003, seed: 1)
        #expect(try await store.metadata(key) == nil)
        #expect(try await store.read(key, range: nil) == nil)

        let stored = try await store.put(key, data: payload, contentType: "audio/mp4")
        #expect(stored == BlobMetadata(key: key, size: 100_003, contentType: "audio/mp4"))
        #expect(try await store.metadata(key) == stored)
        let reader = try #require(try await store.read(key, range: nil))
        #expect(reader.metadata == stored)
        #expect(reader.range == 0..<100_003)
        #expect(try await collect(reader).data == payload)
        #expect(try await store.data(key) == payload)

        // Replacing: new bytes and new content type.
        let replacement = Self.bytes(count: 17, seed: 2)
        try await store.put(key, data: replacement, contentType: "audio/mpeg")
        #expect(try await store.metadata(key) == BlobMetadata(key: key, size: 17, contentType: "audio/mpeg"))
        #expect(try await store.data(key) == replacement)

        // An empty blob.
        let empty = try self.key("empty.bin")
        try await store.put(empty, data: Data(), contentType: "application/octet-stream")
        #expect(try await store.metadata(empty)?.size == 0)
        #expect(try await store.data(empty) == Data())

        // From a file, which is left in place.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-blob-\(UUID().uuidString).wav")
        defer { try? FileManager.default.removeItem(at: file) }
        let fileBytes = Self.bytes(count: 70_000, seed: 3)
        try fileBytes.write(to: file)
        let fromFile = try self.key("speech/from-file.wav")
        #expect(try await store.put(fromFile, file: file, contentType: "audio/wav").size == 70_000)
        #expect(FileManager.default.fileExists(atPath: file.path))
        #expect(try await store.data(fromFile) == fileBytes)
        #expect(try await store.metadata(fromFile)?.contentType == "audio/wav")

        // Deleting is idempotent.
        try await store.delete(key)
        #expect(try await store.metadata(key) == nil)
        #expect(try await store.read(key, range: nil) == nil)
        try await store.delete(key)
        try await store.delete(try self.key("never/written"))
        try await store.delete(empty)
        try await store.delete(fromFile)
    }

    func ranges() async throws {
        let key = try self.key("ranges.bin")
        let payload = Self.bytes(count: 200_000, seed: 4)
        try await store.put(key, data: payload, contentType: "application/octet-stream")

        func read(_ range: Range<Int64>) async throws -> (Range<Int64>, Data) {
            let reader = try #require(try await store.read(key, range: range))
            #expect(reader.metadata.size == 200_000)
            return (reader.range, try await collect(reader).data)
        }
        let first = try await read(0..<10)
        #expect(first.0 == 0..<10)
        #expect(first.1 == payload.prefix(10))
        let last = try await read(199_990..<200_000)
        #expect(last.0 == 199_990..<200_000)
        #expect(last.1 == payload.suffix(10))
        let middle = try await read(65_530..<140_000)
        #expect(middle.0 == 65_530..<140_000)
        #expect(middle.1 == payload.subdata(in: 65_530..<140_000))
        let beyond = try await read(199_000..<500_000)
        #expect(beyond.0 == 199_000..<200_000)
        #expect(beyond.1 == payload.suffix(1_000))
        let lastByte = try await read(199_999..<200_000)
        #expect(lastByte.1 == payload.suffix(1))

        await #expect(throws: BlobStoreError.rangeNotSatisfiable(size: 200_000)) {
            _ = try await store.read(key, range: 200_000..<200_010)
        }
        await #expect(throws: BlobStoreError.rangeNotSatisfiable(size: 200_000)) {
            _ = try await store.read(key, range: 300_000..<300_010)
        }
        #expect(try await store.read(try self.key("missing.bin"), range: 0..<10) == nil)
        try await store.delete(key)
    }

    /// Writers racing on one key leave exactly one writer's complete bytes, with that writer's content type.
    func concurrentWriters() async throws {
        let key = try self.key("contended.bin")
        let writers = 8
        let payloads = (0..<writers).map { Self.bytes(count: 300_000 + $0 * 1_000, seed: UInt8(10 + $0)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, payload) in payloads.enumerated() {
                group.addTask {
                    for _ in 0..<3 {
                        try await store.put(key, data: payload, contentType: "application/x-writer-\(index)")
                    }
                }
            }
            // Readers during the race see a complete blob of some writer.
            group.addTask {
                for _ in 0..<10 {
                    guard let reader = try await store.read(key, range: nil) else { continue }
                    let data = try await collect(reader).data
                    #expect(data.count == reader.metadata.size)
                    #expect(payloads.contains(data))
                }
            }
            try await group.waitForAll()
        }
        let metadata = try #require(try await store.metadata(key))
        let data = try #require(try await store.data(key))
        let winner = try #require(payloads.firstIndex(of: data), "the blob is not one writer's complete bytes")
        #expect(metadata == BlobMetadata(key: key, size: Int64(payloads[winner].count), contentType: "application/x-writer-\(winner)"))
        try await store.delete(key)
    }

    /// A 30 MB file goes in and comes out in chunks of at most 64 KiB.
    func largeFileInBoundedChunks() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-blob-large-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        let size = 30 * 1024 * 1024
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        let handle = try FileHandle(forWritingTo: file)
        var expectedHash = SHA256()
        var written = 0
        var seed: UInt8 = 0
        while written < size {
            let chunk = Self.bytes(count: min(1024 * 1024, size - written), seed: seed)
            try handle.write(contentsOf: chunk)
            expectedHash.update(data: chunk)
            written += chunk.count
            seed &+= 1
        }
        try handle.close()

        let key = try self.key("large/thirty.bin")
        #expect(try await store.put(key, file: file, contentType: "application/octet-stream").size == Int64(size))
        let reader = try #require(try await store.read(key, range: nil))
        var hash = SHA256()
        var total = 0
        var chunks = 0
        for try await chunk in reader.body {
            #expect(chunk.readableBytes <= 64 * 1024)
            chunk.withUnsafeReadableBytes { hash.update(bufferPointer: $0) }
            total += chunk.readableBytes
            chunks += 1
        }
        #expect(total == size)
        #expect(chunks >= size / (64 * 1024))
        #expect(hash.finalize() == expectedHash.finalize())
        try await store.delete(key)
    }

    /// A reader abandoned half-way (the consumer stops iterating) does not disturb later operations.
    func abandonedReader() async throws {
        let key = try self.key("abandoned.bin")
        let payload = Self.bytes(count: 500_000, seed: 30)
        try await store.put(key, data: payload, contentType: "application/octet-stream")
        do {
            let reader = try #require(try await store.read(key, range: nil))
            var iterator = reader.body.makeAsyncIterator()
            let first = try #require(try await iterator.next())
            #expect(first.readableBytes > 0)
        }
        // A consumer whose task is cancelled stops early: the stream ends or throws, it never hangs.
        let cancelled = Task { () -> Int? in
            let reader = try #require(try await store.read(key, range: nil))
            withUnsafeCurrentTask { $0?.cancel() }
            return try? await collect(reader).data.count
        }
        if let delivered = try await cancelled.value {
            #expect(delivered < payload.count)
        }
        #expect(try await store.data(key) == payload)
        try await store.delete(key)
    }
}

/// SplitMix64: a tiny deterministic generator for test payloads.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite("FileBlobStore")
struct FileBlobStoreTests {
    let root: URL
    let store: FileBlobStore

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-blobs-\(UUID().uuidString)/data")
        store = try FileBlobStore(root: root)
    }

    var contract: BlobStoreContract { BlobStoreContract(store: store, prefix: "t") }

    func removeRoot() { try? FileManager.default.removeItem(at: root.deletingLastPathComponent()) }

    @Test func roundTrip() async throws {
        defer { removeRoot() }
        try await contract.roundTrip()
    }
    @Test func ranges() async throws {
        defer { removeRoot() }
        try await contract.ranges()
    }
    @Test func concurrentWritersLeaveOneCompleteBlob() async throws {
        defer { removeRoot() }
        try await contract.concurrentWriters()
    }
    @Test func largeFileStreamsInBoundedChunks() async throws {
        defer { removeRoot() }
        try await contract.largeFileInBoundedChunks()
    }
    @Test func abandonedReaders() async throws {
        defer { removeRoot() }
        try await contract.abandonedReader()
    }

    @Test func layoutOnDisk() async throws {
        defer { removeRoot() }
        let attributes = try FileManager.default.attributesOfItem(atPath: root.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)

        let key = try #require(BlobKey(rawValue: "messages/ab/cd/voice.m4a"))
        try await store.put(key, data: Data("hello".utf8), contentType: "audio/mp4")
        let file = root.appendingPathComponent("messages/ab/cd/voice.m4a")
        #expect(FileManager.default.contents(atPath: file.path) == Data("hello".utf8))
        let sidecar = try #require(FileManager.default.contents(atPath: file.path + "~meta.json"))
        let decoded = try JSONSerialization.jsonObject(with: sidecar) as? [String: String]
        #expect(decoded == ["content_type": "audio/mp4"])
        let fileAttributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((fileAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let directoryAttributes = try FileManager.default.attributesOfItem(atPath: file.deletingLastPathComponent().path)
        #expect((directoryAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        // No temporary file is left behind.
        let names = try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path).sorted()
        #expect(names == ["voice.m4a", "voice.m4a~meta.json"])

        // A sibling keeps its directory alive; the last delete removes the empty directories up to the root.
        let sibling = try #require(BlobKey(rawValue: "messages/ab/other.mp3"))
        try await store.put(sibling, data: Data("x".utf8), contentType: "audio/mpeg")
        try await store.delete(key)
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("messages/ab/cd").path))
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("messages/ab").path))
        try await store.delete(sibling)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).isEmpty)
        #expect(FileManager.default.fileExists(atPath: root.path))
    }

    @Test func blobWithoutSidecarIsOctetStream() async throws {
        defer { removeRoot() }
        try Data("raw".utf8).write(to: root.appendingPathComponent("dropped-in.bin"))
        let key = try #require(BlobKey(rawValue: "dropped-in.bin"))
        #expect(try await store.metadata(key) == BlobMetadata(key: key, size: 3, contentType: "application/octet-stream"))
    }

    @Test func aFolderOfBlobsIsNotABlob() async throws {
        defer { removeRoot() }
        try await store.put(try #require(BlobKey(rawValue: "folder/inner.bin")), data: Data([1]), contentType: "x/y")
        let folder = try #require(BlobKey(rawValue: "folder"))
        #expect(try await store.metadata(folder) == nil)
        #expect(try await store.read(folder, range: nil) == nil)
        await #expect(throws: BlobStoreError.self) {
            try await store.put(folder, data: Data([2]), contentType: "x/y")
        }
    }

    @Test(arguments: [
        "", "/", "/leading", "trailing/", "a//b", ".", "..", "a/../b", "a/./b", "space here", "tilde~meta.json",
        "percent%2F", "back\\slash", "é", String(repeating: "a", count: 513),
    ])
    func invalidKeysAreRejected(_ raw: String) {
        #expect(BlobKey(rawValue: raw) == nil)
    }

    @Test(arguments: ["a", "messages/ab/cd.m4a", ".hidden", "a-b_c.d/e", String(repeating: "a", count: 512)])
    func validKeysAreAccepted(_ raw: String) {
        #expect(BlobKey(rawValue: raw)?.rawValue == raw)
    }
}
