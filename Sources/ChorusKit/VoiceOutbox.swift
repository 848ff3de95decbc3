import ChorusAPI
import Foundation

/// Voice messages recorded while offline (or on a weak connection), kept on disk and sent when the network is back.
///
/// ```swift
/// let outbox = try VoiceOutbox(directory: appSupport.appendingPathComponent("Outbox"), client: chorus)
/// try await outbox.enqueue(recording: recorder.url, conversationID: conversation.id, transcript: reviewed)
/// // When the network returns (NWPathMonitor), at launch, and after signing in:
/// let report = await outbox.flush()
/// ```
///
/// Each entry is saved in `directory` — a JSON manifest and a copy of the recording — so it survives the app being
/// killed: a new outbox on the same directory finds it. ``flush()`` sends the entries in the order they were
/// enqueued. For each one it uploads the recording once (the recording's id is saved in the manifest, so a later
/// flush does not upload it again), then sends the message with the entry's ``Entry/clientMessageID``, the same on
/// every attempt: when an answer is lost and the send is repeated, the server returns the message it already created,
/// so the message never appears twice.
///
/// - A sent entry is removed, with its copy of the recording.
/// - A failure worth retrying — no network, a 5xx, a 429, no session — leaves it ``Entry/State-swift.enum/pending``
///   for the next flush and ends this one (the entries after it would meet the same failure).
/// - A refusal that a retry cannot change — a 4xx such as a recording too long, voice features turned off, or the
///   conversation gone — moves it to ``Entry/State-swift.enum/failed(_:)`` with the server's explanation: show it,
///   then ``retry(_:)`` or ``discard(_:)`` it.
///
/// The outbox is an actor: call it from anywhere. One flush runs at a time; a flush requested while one is running
/// joins it and gets its report. Use one outbox per directory.
public actor VoiceOutbox {
    /// A voice message waiting to be sent.
    public struct Entry: Sendable, Hashable, Identifiable, Codable {
        /// Where an entry stands.
        public enum State: Sendable, Hashable, Codable {
            /// Waiting for the next ``VoiceOutbox/flush()``.
            case pending
            /// Refused for a reason a retry cannot change; ``VoiceOutbox/flush()`` skips it until ``VoiceOutbox/retry(_:)``.
            case failed(Failure)
        }

        /// Why an entry was refused.
        public struct Failure: Sendable, Hashable, Codable {
            /// The HTTP status of the refusal (e.g. 413, 422, 403); `nil` for a local problem such as a recording file
            /// that can no longer be read.
            public var status: Int?
            /// The explanation, fit to show the user.
            public var message: String
        }

        /// The id the message is sent with, the same on every attempt; also the entry's ``id``.
        public let clientMessageID: String
        /// The conversation to send to.
        public let conversationID: String
        /// The transcript as the sender reviewed it.
        public let transcript: String?
        /// Recording and transcript (``Message/SendMode-swift.enum/both``) or the recording only.
        public let mode: Message.SendMode
        /// Flag it urgent or not; `nil` lets the server decide.
        public let urgent: Bool?
        /// The recording's format.
        public let format: RecordingFormat
        /// Whether the recording may last up to 5 minutes.
        public let longForm: Bool
        /// When it was enqueued.
        public let enqueuedAt: Date
        /// The uploaded recording's id, once uploaded: later attempts send it instead of uploading again.
        public internal(set) var audioID: String?
        /// Pending or failed.
        public internal(set) var state: State
        /// How many flushes tried to send it.
        public internal(set) var attempts: Int
        /// What went wrong on the last attempt that left it pending (e.g. no network), fit to show the user.
        public internal(set) var lastError: String?
        /// The copy of the recording, a file name inside the outbox's `recordings` directory.
        let recordingFileName: String

        /// The entry's id: ``clientMessageID``.
        public var id: String { clientMessageID }

        /// Whether the recording is uploaded (only the message remains to be sent).
        public var isUploaded: Bool { audioID != nil }

        /// Whether ``VoiceOutbox/flush()`` will try to send it.
        public var isPending: Bool {
            if case .pending = state { return true }
            return false
        }
    }

    /// What a ``VoiceOutbox/flush()`` did.
    public struct FlushReport: Sendable, Hashable {
        /// The messages sent by this flush, in order (each as the server stored it).
        public var sent: [Message]
        /// The entries still waiting, for the next flush.
        public var pending: [Entry]
        /// The entries refused for good (by this flush or earlier ones).
        public var failed: [Entry]
    }

    /// The directory the outbox keeps its manifest and recordings in.
    public nonisolated let directory: URL
    private let messages: MessagesClient
    private let voice: VoiceClient
    private var queue: [Entry]
    private var running: Task<FlushReport, Never>?

    private var manifestURL: URL { directory.appendingPathComponent("manifest.json") }
    private var recordingsDirectory: URL { directory.appendingPathComponent("recordings", isDirectory: true) }

    /// Opens the outbox kept in `directory`, creating it if needed, with the entries a previous outbox left there.
    ///
    /// - Parameters:
    ///   - directory: a directory of its own (e.g. inside Application Support, which is backed up and not purged).
    ///   - client: the client that uploads and sends.
    /// - Throws: the file system's error when the directory cannot be created, or the manifest cannot be read or
    ///   decoded.
    public init(directory: URL, client: ChorusClient) throws {
        self.directory = directory
        messages = client.messages
        voice = client.voice
        let manager = FileManager.default
        let recordings = directory.appendingPathComponent("recordings", isDirectory: true)
        try manager.createDirectory(at: recordings, withIntermediateDirectories: true)
        let manifest = directory.appendingPathComponent("manifest.json")
        queue = manager.fileExists(atPath: manifest.path) ? try Self.decoder().decode(Manifest.self, from: Data(contentsOf: manifest)).entries : []
        // A recording copied by an enqueue interrupted before its manifest was saved belongs to no entry.
        let known = Set(queue.map(\.recordingFileName))
        for file in try manager.contentsOfDirectory(atPath: recordings.path) where !known.contains(file) {
            try? manager.removeItem(at: recordings.appendingPathComponent(file))
        }
    }

    /// Every entry, pending and failed, in the order they were enqueued.
    public var entries: [Entry] { queue }

    // MARK: Enqueueing

    /// Adds a recording file to the outbox; the file is copied, so the app may delete its own.
    ///
    /// - Parameters:
    ///   - recording: an m4a, mp3 or wav file.
    ///   - format: its format; `nil` reads it from the file extension.
    ///   - conversationID: the conversation to send to.
    ///   - transcript: the reviewed transcript (ignored for ``Message/SendMode-swift.enum/audio``).
    ///   - mode: ``Message/SendMode-swift.enum/both`` or ``Message/SendMode-swift.enum/audio``.
    ///   - urgent: flag it urgent or not; `nil` lets the server decide.
    ///   - longForm: allow up to 5 minutes.
    ///   - clientMessageID: the id to send it with; a new UUID by default.
    /// - Returns: the new entry, pending.
    /// - Throws: ``ChorusError/validation(_:)`` for an unknown format or a `clientMessageID` already in the outbox
    ///   or not 1–64 characters; the file system's error when the recording cannot be copied.
    @discardableResult
    public func enqueue(
        recording: URL, format: RecordingFormat? = nil, conversationID: String, transcript: String? = nil, mode: Message.SendMode = .both,
        urgent: Bool? = nil, longForm: Bool = false, clientMessageID: String = UUID().uuidString.lowercased()
    ) throws -> Entry {
        guard let format = format ?? RecordingFormat(fileExtension: recording.pathExtension) else {
            throw ChorusError.validation([
                FieldError(field: "format", message: "Name the format of \(recording.lastPathComponent): m4a, mp3 or wav")
            ])
        }
        return try add(
            format: format, conversationID: conversationID, transcript: transcript, mode: mode, urgent: urgent, longForm: longForm,
            clientMessageID: clientMessageID
        ) { try FileManager.default.copyItem(at: recording, to: $0) }
    }

    /// Adds a recording held in memory to the outbox.
    ///
    /// - Parameters:
    ///   - recording: the recording's bytes.
    ///   - format: their format.
    ///   - conversationID: the conversation to send to.
    ///   - transcript: the reviewed transcript.
    ///   - mode: ``Message/SendMode-swift.enum/both`` or ``Message/SendMode-swift.enum/audio``.
    ///   - urgent: flag it urgent or not; `nil` lets the server decide.
    ///   - longForm: allow up to 5 minutes.
    ///   - clientMessageID: the id to send it with; a new UUID by default.
    /// - Returns: the new entry, pending.
    /// - Throws: like ``enqueue(recording:format:conversationID:transcript:mode:urgent:longForm:clientMessageID:)``.
    @discardableResult
    public func enqueue(
        recording: Data, format: RecordingFormat, conversationID: String, transcript: String? = nil, mode: Message.SendMode = .both,
        urgent: Bool? = nil, longForm: Bool = false, clientMessageID: String = UUID().uuidString.lowercased()
    ) throws -> Entry {
        try add(
            format: format, conversationID: conversationID, transcript: transcript, mode: mode, urgent: urgent, longForm: longForm,
            clientMessageID: clientMessageID
        ) { try recording.write(to: $0, options: .atomic) }
    }

    private func add(
        format: RecordingFormat, conversationID: String, transcript: String?, mode: Message.SendMode, urgent: Bool?, longForm: Bool,
        clientMessageID: String, writeRecording: (URL) throws -> Void
    ) throws -> Entry {
        guard (1...64).contains(clientMessageID.count) else {
            throw ChorusError.validation([FieldError(field: "client_message_id", message: "Use 1 to 64 characters (a UUID)")])
        }
        guard !queue.contains(where: { $0.clientMessageID == clientMessageID }) else {
            throw ChorusError.validation([FieldError(field: "client_message_id", message: "This message is already in the outbox")])
        }
        let fileName = "\(UUID().uuidString.lowercased()).\(format.fileExtension)"
        let file = recordingsDirectory.appendingPathComponent(fileName)
        try writeRecording(file)
        let entry = Entry(
            clientMessageID: clientMessageID, conversationID: conversationID, transcript: transcript, mode: mode, urgent: urgent,
            format: format, longForm: longForm, enqueuedAt: Date(), audioID: nil, state: .pending, attempts: 0, lastError: nil,
            recordingFileName: fileName)
        queue.append(entry)
        do {
            try save()
        } catch {
            queue.removeLast()
            try? FileManager.default.removeItem(at: file)
            throw error
        }
        return entry
    }

    // MARK: Managing entries

    /// Makes a failed entry pending again, for the next ``flush()`` (e.g. after the user turned voice features back
    /// on). Does nothing for a pending entry.
    ///
    /// - Throws: ``ChorusError/notFound`` when no entry has this id; the file system's error when the manifest
    ///   cannot be saved.
    public func retry(_ clientMessageID: String) throws {
        guard let index = queue.firstIndex(where: { $0.clientMessageID == clientMessageID }) else { throw ChorusError.notFound }
        guard !queue[index].isPending else { return }
        queue[index].state = .pending
        try save()
    }

    /// Removes an entry without sending it, with its copy of the recording.
    ///
    /// - Throws: ``ChorusError/notFound`` when no entry has this id; the file system's error when the manifest
    ///   cannot be saved.
    public func discard(_ clientMessageID: String) throws {
        guard let index = queue.firstIndex(where: { $0.clientMessageID == clientMessageID }) else { throw ChorusError.notFound }
        let entry = queue.remove(at: index)
        try save()
        try? FileManager.default.removeItem(at: recordingsDirectory.appendingPathComponent(entry.recordingFileName))
    }

    // MARK: Sending

    /// Sends the pending entries, oldest first, stopping at the first failure worth retrying later.
    ///
    /// Entries enqueued while the flush runs are sent by it too. Never throws: what happened to each entry is in the
    /// report and in ``entries``.
    @discardableResult
    public func flush() async -> FlushReport {
        if let running { return await running.value }
        let task = Task { await self.sendPending() }
        running = task
        defer { running = nil }
        return await task.value
    }

    private func sendPending() async -> FlushReport {
        var sent: [Message] = []
        var tried: Set<String> = []
        while !Task.isCancelled, let entry = queue.first(where: { $0.isPending && !tried.contains($0.clientMessageID) }) {
            tried.insert(entry.clientMessageID)
            update(entry.clientMessageID) { $0.attempts += 1 }
            do {
                let message = try await deliver(entry)
                sent.append(message)
                queue.removeAll { $0.clientMessageID == entry.clientMessageID }
                // Should the manifest keep the entry, a restarted outbox sends it again under the same client
                // message id, and the server answers with this message: no duplicate either way.
                try? save()
                try? FileManager.default.removeItem(at: recordingsDirectory.appendingPathComponent(entry.recordingFileName))
            } catch {
                if let failure = Self.permanentFailure(error) {
                    update(entry.clientMessageID) { $0.state = .failed(failure) }
                } else {
                    update(entry.clientMessageID) { $0.lastError = error.localizedDescription }
                    break
                }
            }
        }
        return FlushReport(sent: sent, pending: queue.filter(\.isPending), failed: queue.filter { !$0.isPending })
    }

    /// Uploads the entry's recording unless an earlier attempt did, then sends the message.
    private func deliver(_ entry: Entry) async throws -> Message {
        if let audioID = entry.audioID {
            do {
                return try await send(entry, audioID: audioID)
            } catch ChorusError.validation(let errors) where errors.contains(where: { $0.field == "audio_id" }) {
                // The recording uploaded by an earlier flush is gone from the server (expired): upload it again.
                update(entry.clientMessageID) { $0.audioID = nil }
            }
        }
        let file = recordingsDirectory.appendingPathComponent(entry.recordingFileName)
        let recording = try await voice.upload(file: file, format: entry.format, longForm: entry.longForm)
        // Saved before sending: if the send fails, the next flush sends this recording instead of uploading it again.
        update(entry.clientMessageID) { $0.audioID = recording.audioID }
        return try await send(entry, audioID: recording.audioID)
    }

    private func send(_ entry: Entry, audioID: String) async throws -> Message {
        try await messages.sendVoice(
            audioID: audioID, transcript: entry.transcript, mode: entry.mode, to: entry.conversationID, urgent: entry.urgent,
            clientMessageID: entry.clientMessageID)
    }

    /// Changes an entry (if it is still in the outbox) and saves the manifest. A manifest that cannot be saved leaves
    /// the change in memory: at worst a restarted outbox uploads a recording again, or retries a failed entry.
    private func update(_ clientMessageID: String, _ change: (inout Entry) -> Void) {
        guard let index = queue.firstIndex(where: { $0.clientMessageID == clientMessageID }) else { return }
        change(&queue[index])
        try? save()
    }

    /// The failure to record when `error` is a refusal a retry cannot change; `nil` when the entry should wait for
    /// the next flush (no network, server errors, rate limits, no session, cancellation).
    static func permanentFailure(_ error: any Error) -> Entry.Failure? {
        guard let chorusError = error as? ChorusError else {
            if error is CancellationError { return nil }
            return Entry.Failure(status: nil, message: "The recording could not be read: \(error.localizedDescription)")
        }
        let message = chorusError.errorDescription ?? "\(chorusError)"
        switch chorusError {
        case .network, .server, .rateLimited, .signedOut, .unauthorized, .tokenExpired, .decoding:
            return nil
        case .paymentRequired:
            return Entry.Failure(status: 402, message: message)
        case .validation, .refused:
            return Entry.Failure(status: 422, message: message)
        case .notFound:
            return Entry.Failure(status: 404, message: message)
        case .api(let status, let detail):
            return Entry.Failure(status: status, message: detail)
        }
    }

    // MARK: Manifest

    private struct Manifest: Codable {
        var version = 1
        var entries: [Entry]
    }

    private func save() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        try encoder.encode(Manifest(entries: queue)).write(to: manifestURL, options: .atomic)
    }

    private static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
