import ChorusAPI
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A size-bounded cache of audio on disk — recordings of voice messages and generated speech — for offline playback.
///
/// ```swift
/// let cache = try AudioCache(directory: caches.appendingPathComponent("Audio"), byteLimit: 200 * 1024 * 1024)
/// let file = try await cache.playableURL(for: message)  // downloaded once, from disk afterwards
/// player = try AVAudioPlayer(contentsOf: file)
/// ```
///
/// Entries are files under `directory`, found again by a new cache on the same directory (after a relaunch). When
/// the files add up to more than `byteLimit`, the least recently used ones are deleted — reading or storing an entry
/// counts as a use. The entry just stored is never evicted by its own store, so one recording larger than the whole
/// limit is still kept until the next store.
///
/// Keys are any strings: a message's ``Message/audioID`` for recordings (what ``playableURL(for:)`` uses), or your own
/// key for other audio (e.g. generated speech, keyed by message and voice). The cache is an actor: call it from
/// anywhere; concurrent requests for one recording download it once.
public actor AudioCache {
    private struct Item {
        var fileName: String
        var size: Int
        /// Order of use: higher is more recent.
        var lastUse: UInt64
    }

    /// The directory the cache keeps its files in.
    public nonisolated let directory: URL
    /// The most bytes the cached files may add up to, beyond the entry just stored.
    public nonisolated let byteLimit: Int
    private let transport: any HTTPTransport
    private var items: [String: Item] = [:]
    private var clock: UInt64 = 0
    private var downloads: [String: Task<URL, any Error>] = [:]

    private var filesDirectory: URL { directory.appendingPathComponent("files", isDirectory: true) }
    private var indexURL: URL { directory.appendingPathComponent("index.json") }

    /// Opens the cache kept in `directory`, creating it if needed, with the entries a previous cache left there
    /// (trimmed to `byteLimit` if it was larger).
    ///
    /// - Parameters:
    ///   - directory: a directory of its own; inside the Caches directory the system may purge it when storage runs
    ///     low, which the cache tolerates.
    ///   - byteLimit: the most bytes to keep.
    ///   - transport: how recordings are downloaded; the default uses `URLSession.shared`.
    /// - Throws: the file system's error when the directory cannot be created or listed.
    public init(directory: URL, byteLimit: Int, transport: any HTTPTransport = URLSessionTransport()) throws {
        self.directory = directory
        self.byteLimit = max(0, byteLimit)
        self.transport = transport
        let manager = FileManager.default
        let files = directory.appendingPathComponent("files", isDirectory: true)
        try manager.createDirectory(at: files, withIntermediateDirectories: true)

        // The index names each entry's file; sizes and the order of use come from the files themselves (a use
        // touches the file), so the index is only written when entries come and go.
        let index = (try? JSONDecoder().decode([String: String].self, from: Data(contentsOf: directory.appendingPathComponent("index.json"))))
        var found: [(key: String, item: Item, used: Date)] = []
        for (key, fileName) in index ?? [:] {
            let path = files.appendingPathComponent(fileName).path
            guard let attributes = try? manager.attributesOfItem(atPath: path), let size = (attributes[.size] as? NSNumber)?.intValue
            else { continue }
            found.append((key, Item(fileName: fileName, size: size, lastUse: 0), attributes[.modificationDate] as? Date ?? .distantPast))
        }
        found.sort { ($0.used, $0.key) < ($1.used, $1.key) }
        for (tick, entry) in found.enumerated() {
            items[entry.key] = Item(fileName: entry.item.fileName, size: entry.item.size, lastUse: UInt64(tick + 1))
        }
        clock = UInt64(found.count)
        let known = Set(items.values.map(\.fileName))
        for file in try manager.contentsOfDirectory(atPath: files.path) where !known.contains(file) {
            try? manager.removeItem(at: files.appendingPathComponent(file))
        }
        for key in Self.evictable(items, limit: self.byteLimit, keeping: nil) {
            if let item = items.removeValue(forKey: key) { try? manager.removeItem(at: files.appendingPathComponent(item.fileName)) }
        }
        try Self.write(index: items, to: directory.appendingPathComponent("index.json"))
    }

    /// The bytes the cached files add up to.
    public var totalBytes: Int { items.values.reduce(0) { $0 + $1.size } }

    /// The keys of the cached entries, least recently used first.
    public var keys: [String] { items.sorted { $0.value.lastUse < $1.value.lastUse }.map(\.key) }

    /// Whether an entry is cached (without counting as a use).
    public func contains(_ key: String) -> Bool { items[key] != nil }

    // MARK: Reading

    /// The cached file of an entry, or `nil`; counts as a use.
    public func fileURL(for key: String) -> URL? {
        guard var item = items[key] else { return nil }
        let file = filesDirectory.appendingPathComponent(item.fileName)
        guard FileManager.default.fileExists(atPath: file.path) else {
            forget(key)  // purged by the system
            return nil
        }
        clock += 1
        item.lastUse = clock
        items[key] = item
        try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: file.path)
        return file
    }

    /// The cached bytes of an entry, or `nil`; counts as a use.
    public func data(for key: String) -> Data? {
        guard let file = fileURL(for: key) else { return nil }
        guard let data = try? Data(contentsOf: file) else {
            forget(key)
            return nil
        }
        return data
    }

    // MARK: Storing

    /// Stores audio under `key` (replacing an entry with that key), then evicts the least recently used entries while
    /// the cache holds more than ``byteLimit``.
    ///
    /// - Parameters:
    ///   - data: the audio.
    ///   - key: the entry's key.
    ///   - fileExtension: the extension of the file (`m4a`, `mp3`, `wav`): players such as `AVAudioPlayer` use it to
    ///     tell the format.
    /// - Returns: the cached file.
    /// - Throws: the file system's error when the file cannot be written.
    @discardableResult
    public func store(_ data: Data, for key: String, fileExtension: String) throws -> URL {
        try add(for: key, fileExtension: fileExtension) { try data.write(to: $0, options: .atomic) }
    }

    /// Stores a copy of an audio file under `key`, e.g. the user's own recording, so it plays without a download.
    ///
    /// - Parameters:
    ///   - file: the audio file; its extension is kept.
    ///   - key: the entry's key.
    /// - Returns: the cached file.
    /// - Throws: the file system's error when the file cannot be copied.
    @discardableResult
    public func store(contentsOf file: URL, for key: String) throws -> URL {
        try add(for: key, fileExtension: file.pathExtension) { try FileManager.default.copyItem(at: file, to: $0) }
    }

    private func add(for key: String, fileExtension: String, write: (URL) throws -> Void) throws -> URL {
        let safeExtension = fileExtension.filter { $0.isLetter || $0.isNumber }.prefix(8)
        let fileName = UUID().uuidString.lowercased() + (safeExtension.isEmpty ? "" : ".\(safeExtension)")
        let file = filesDirectory.appendingPathComponent(fileName)
        try write(file)
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
        if let old = items[key] {
            try? FileManager.default.removeItem(at: filesDirectory.appendingPathComponent(old.fileName))
        }
        clock += 1
        items[key] = Item(fileName: fileName, size: size, lastUse: clock)
        try evict(keeping: key)
        return file
    }

    /// Deletes an entry; there being none is not an error.
    public func remove(_ key: String) {
        guard let item = items[key] else { return }
        try? FileManager.default.removeItem(at: filesDirectory.appendingPathComponent(item.fileName))
        forget(key)
    }

    /// Deletes every entry.
    public func removeAll() {
        for key in Array(items.keys) { remove(key) }
    }

    // MARK: Playback

    /// A local file of a message's recording, to play offline: downloaded through the message's signed
    /// ``Message/audioURL`` the first time (no access token needed), served from disk afterwards. Keyed by
    /// ``Message/audioID``, so a later copy of the message with a fresh signed URL finds the same file.
    ///
    /// - Throws: ``ChorusError/notFound`` when the message has no recording (or its recording is gone from the
    ///   server); ``ChorusError/api(status:detail:)`` (403) when the signed URL has expired — fetch the message again
    ///   for a fresh one; ``ChorusError/network(_:)`` when it is not cached and cannot be downloaded.
    public func playableURL(for message: Message) async throws -> URL {
        guard let url = message.audioURL, let audioID = message.audioID else { throw ChorusError.notFound }
        return try await playableURL(for: url, key: audioID)
    }

    /// A local file of the audio at `url`, downloaded the first time and served from disk under `key` afterwards.
    /// Concurrent calls for one key download it once.
    ///
    /// - Parameters:
    ///   - url: where to download the audio from, without credentials (a signed URL).
    ///   - key: the entry's key.
    /// - Throws: ``ChorusError`` for a refused download (see ``playableURL(for:)``).
    public func playableURL(for url: URL, key: String) async throws -> URL {
        if let cached = fileURL(for: key) { return cached }
        if let running = downloads[key] { return try await running.value }
        let task = Task { try await self.download(url, key: key) }
        downloads[key] = task
        defer { downloads[key] = nil }
        return try await task.value
    }

    private func download(_ url: URL, key: String) async throws -> URL {
        let (data, response): (Data, HTTPURLResponse)
        do {
            (data, response) = try await transport.send(URLRequest(url: url))
        } catch {
            throw ChorusError.network(error)
        }
        guard (200..<300).contains(response.statusCode) else {
            throw ChorusError.from(status: response.statusCode, body: data, response: response)
        }
        return try store(data, for: key, fileExtension: Self.fileExtension(contentType: response.header("Content-Type"), url: url))
    }

    /// The file extension for a downloaded recording: from its media type, else from its URL, else `audio`.
    static func fileExtension(contentType: String?, url: URL) -> String {
        let mediaType = contentType?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        switch mediaType {
        case "audio/mp4", "audio/m4a", "audio/x-m4a", "audio/aac": return "m4a"
        case "audio/mpeg", "audio/mp3": return "mp3"
        case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave": return "wav"
        case "audio/ogg", "audio/opus": return "ogg"
        default: return url.pathExtension.isEmpty ? "audio" : url.pathExtension
        }
    }

    // MARK: Bookkeeping

    private func forget(_ key: String) {
        items[key] = nil
        try? saveIndex()
    }

    /// Deletes the least recently used entries, other than `kept`, while the cache is over its limit; saves the index.
    private func evict(keeping kept: String?) throws {
        for key in Self.evictable(items, limit: byteLimit, keeping: kept) {
            if let item = items.removeValue(forKey: key) {
                try? FileManager.default.removeItem(at: filesDirectory.appendingPathComponent(item.fileName))
            }
        }
        try saveIndex()
    }

    /// The keys to evict, least recently used first, for `items` to fit in `limit` bytes; `kept` is never among them.
    private static func evictable(_ items: [String: Item], limit: Int, keeping kept: String?) -> [String] {
        var total = items.values.reduce(0) { $0 + $1.size }
        var victims: [String] = []
        for (key, item) in items.sorted(by: { $0.value.lastUse < $1.value.lastUse }) where total > limit && key != kept {
            victims.append(key)
            total -= item.size
        }
        return victims
    }

    private func saveIndex() throws {
        try Self.write(index: items, to: indexURL)
    }

    private static func write(index items: [String: Item], to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try encoder.encode(items.mapValues(\.fileName)).write(to: url, options: .atomic)
    }
}
