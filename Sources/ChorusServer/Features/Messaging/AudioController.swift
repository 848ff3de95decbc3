import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import NIOCore
import NIOPosix
import Vapor

/// Recordings of voice messages:
/// - `POST /audio[?long_form=true]` — the raw recording as the body (`Content-Type` `audio/mp4`, `audio/mpeg` or
///   `audio/wav`), streamed to a spool file with bounded memory, inspected (the container decides format and duration,
///   not the client) and stored;
/// - `GET /audio/{id}` — the recording, with `Range` support, for its owner and the members of conversations holding
///   it (bearer token) or anyone with a signed URL from a message's `audio_url`;
/// - `POST /transcriptions` — the transcript of the caller's own recording, with its confidence.
struct AudioController: RouteCollection {
    let services: ChorusServices
    var messaging: MessagingServices { services.messaging }

    /// Media types accepted for uploads and the container each one must really be.
    static let acceptedTypes: [String: AudioFormat] = [
        "audio/mp4": .m4a, "audio/m4a": .m4a, "audio/x-m4a": .m4a, "audio/aac": .m4a, "audio/mpeg": .mp3, "audio/mp3": .mp3,
        "audio/wav": .wav, "audio/x-wav": .wav, "audio/wave": .wav, "audio/vnd.wave": .wav,
    ]

    func boot(routes: any RoutesBuilder) throws {
        let authenticated = routes.grouped(UserAuthenticator(services: services))
        authenticated.on(API.Messaging.uploadAudio, body: .stream, use: upload).userInfo[DeclaredBodyLimitMiddleware.limitKey] =
            services.configuration.voiceMessages.maxUploadBytes
        routes.on(API.Messaging.audio, use: download)
        // The answer carries the provider's time in a Server-Timing header.
        authenticated.onResponse(API.Messaging.transcribe, use: transcribe)
    }

    // MARK: Upload

    @Sendable
    func upload(_ req: Request) async throws -> AudioUploadResponse {
        let user = try req.user
        let settings = services.configuration.voiceMessages
        let profile = try await VoicePrivacy.requireVoiceAllowed(userID: user.id, store: req.store, now: services.now())
        guard let mediaType = req.headers.contentType.map({ "\($0.type)/\($0.subType)".lowercased() }),
            let declared = Self.acceptedTypes[mediaType]
        else {
            throw APIError.detail(.unsupportedMediaType, "Upload the recording as audio/mp4 (m4a/AAC), audio/mpeg (mp3) or audio/wav")
        }
        let longForm = (try? req.query.get(Bool.self, at: "long_form")) ?? false
        let spool = messaging.spoolDirectory.appendingPathComponent("upload-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: spool) }
        let size = try await spoolBody(req, to: spool, limit: settings.maxUploadBytes)
        let record = try await storeSpooled(
            spool, size: size, declared: declared, mediaType: mediaType, longForm: longForm, userID: user.id, profile: profile,
            store: req.store, threadPool: req.application.threadPool, logger: req.logger)
        return Self.dto(record)
    }

    /// Inspects a spooled recording (the container decides format and duration, not the client), checks it against the
    /// limits and stores it: every recording, uploaded (`POST /audio`) or streamed (`GET /audio/stream`), goes through
    /// here. Throws the documented 415/422 ``APIError``s.
    func storeSpooled(
        _ spool: URL, size: Int64, declared: AudioFormat, mediaType: String, longForm: Bool, userID: String,
        profile: MessagingProfileRecord, store: ChorusStore, threadPool: NIOThreadPool, logger: Logger
    ) async throws -> AudioRecord {
        let settings = services.configuration.voiceMessages
        let maxSeconds = longForm ? settings.longFormMaxSeconds : settings.maxSeconds
        guard size > 0 else { throw APIError.detail(.unprocessableEntity, "The recording is empty") }

        let info: AudioInfo
        do {
            info = try await threadPool.runIfActive {
                let source = try FileAudioSource(url: spool)
                return try AudioContainer.inspect(source)
            }
        } catch AudioContainerError.unsupportedFormat {
            throw APIError.detail(.unsupportedMediaType, "The body is not an m4a/AAC, mp3 or wav recording")
        } catch let error as AudioContainerError {
            throw APIError.detail(.unprocessableEntity, "The recording could not be read: \(error)")
        }
        guard info.format == declared else {
            throw APIError.detail(
                .unsupportedMediaType, "The body is \(info.format.rawValue) audio but Content-Type says \(mediaType)")
        }
        guard info.durationSeconds >= 0.1 else { throw APIError.detail(.unprocessableEntity, "The recording holds no audio") }
        guard info.durationSeconds <= maxSeconds + 0.5 else {
            let hint = longForm ? "" : " (long_form=true allows \(Int(settings.longFormMaxSeconds / 60)) minutes for bedtime stories)"
            throw APIError.detail(
                .unprocessableEntity,
                "Recordings are limited to \(Self.describe(seconds: maxSeconds))\(hint); this one is "
                    + "\(Self.describe(seconds: info.durationSeconds))")
        }

        let id = UUID().uuidString.lowercased()
        guard let key = BlobKey(rawValue: "audio/\(id.prefix(2))/\(id).\(info.format.fileExtension)") else {
            throw ChorusStoreError.missingRow("blob key")
        }
        try await messaging.blobs.put(key, file: spool, contentType: info.format.mimeType)
        let now = services.now()
        let record = AudioRecord(
            id: id, ownerID: userID, blobKey: key.rawValue, format: info.format.rawValue, contentType: info.format.mimeType,
            sizeBytes: Int(size), durationMs: Int((info.durationSeconds * 1000).rounded()), longForm: longForm, createdAt: now,
            expiresAt: Self.expiry(now: now, retentionDays: profile.retentionDays), transcript: nil, transcriptConfidence: nil,
            transcriptLabel: nil, transcriptLanguage: nil)
        do {
            try await store.messaging.insertAudio(record)
        } catch {
            try? await messaging.blobs.delete(key)
            throw error
        }
        logger.info(
            "stored a recording",
            metadata: ["audio_id": .string(id), "format": .string(info.format.rawValue), "bytes": .stringConvertible(size)])
        return record
    }

    /// Writes the request body to `file`, refusing more than `limit` bytes with 413. Returns the size.
    private func spoolBody(_ req: Request, to file: URL, limit: Int) async throws -> Int64 {
        let pool = req.application.threadPool
        let path = file.path
        try await pool.runIfActive {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw APIError.detail(.internalServerError, "Could not store the recording")
            }
        }
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        var size: Int64 = 0
        for try await chunk in req.body {
            size += Int64(chunk.readableBytes)
            guard size <= limit else {
                throw APIError.detail(.payloadTooLarge, "Recordings are limited to \(limit / (1024 * 1024)) MB")
            }
            let data = Data(chunk.readableBytesView)
            try await pool.runIfActive { try handle.write(contentsOf: data) }
        }
        return size
    }

    /// When a recording made now expires (starred messages are spared by the retention sweep, not here).
    static func expiry(now: Date, retentionDays: Int) -> Date? {
        switch RetentionPolicy.expiry(sentAt: now, retentionDays: retentionDays, starred: false) {
        case .never: nil
        case .at(let date): date
        }
    }

    static func dto(_ record: AudioRecord) -> AudioUploadResponse {
        AudioUploadResponse(
            audioID: record.id, format: RecordingFormat(rawValue: record.format), contentType: record.contentType, sizeBytes: record.sizeBytes,
            durationSeconds: Double(record.durationMs) / 1000, expiresAt: record.expiresAt)
    }

    static func describe(seconds: Double) -> String {
        let whole = Int(clampingRounded: seconds)  // a container can claim 2^63 seconds: the 422 must not trap
        return whole % 60 == 0 ? "\(whole / 60) minute\(whole == 60 ? "" : "s")" : "\(whole) seconds"
    }

    // MARK: Download

    @Sendable
    func download(_ req: Request) async throws -> Response {
        guard let id = req.parameters.get("audio_id") else { throw APIError.notFound("Recording not found") }
        let now = services.now()
        if let signed = AudioURLSigner.signedQuery(req.url.query) {
            guard messaging.audioURLs.isValid(audioID: id, expires: signed.expires, signature: signed.signature, now: now) else {
                throw APIError.detail(.forbidden, "This audio link is invalid or has expired; fetch the message again for a new one")
            }
        } else {
            let user = try await UserAuthenticator(services: services).authenticate(req)
            guard try await req.store.messaging.canAccessAudio(id: id, userID: user.id) else { throw APIError.notFound("Recording not found") }
        }
        guard let record = try await req.store.messaging.audio(id: id), let key = BlobKey(rawValue: record.blobKey) else {
            throw APIError.notFound("Recording not found")
        }
        return try await Self.serve(key, from: messaging.blobs, request: req)
    }

    /// Streams a blob with `Range` support: 200 with the whole blob, 206 with `Content-Range` for one range, 416 for an
    /// unsatisfiable one. Multiple ranges are answered with the whole blob (allowed by RFC 9110). With an `etag` (a
    /// quoted strong entity tag naming this blob's content), the answers carry it and an `If-None-Match` naming it (or
    /// `*`) is answered 304 before any range is looked at (RFC 9110 §13.2.2).
    static func serve(
        _ key: BlobKey, from blobs: any BlobStore, request: Request, etag: String? = nil, cacheControl: String = "private, max-age=300"
    ) async throws -> Response {
        if let etag, let condition = request.headers.first(name: .ifNoneMatch), Self.matches(ifNoneMatch: condition, etag: etag) {
            var headers = HTTPHeaders()
            headers.replaceOrAdd(name: .eTag, value: etag)
            headers.replaceOrAdd(name: .cacheControl, value: cacheControl)
            return Response(status: .notModified, headers: headers)
        }
        var requested: Range<Int64>?
        var partial = false
        if let header = request.headers.first(name: .range) {
            guard let metadata = try await blobs.metadata(key) else { throw APIError.notFound("Recording not found") }
            switch ByteRange.parse(header, size: metadata.size) {
            case .none: break
            case .unsatisfiable:
                var headers = HTTPHeaders()
                headers.replaceOrAdd(name: .contentRange, value: "bytes */\(metadata.size)")
                if let etag { headers.replaceOrAdd(name: .eTag, value: etag) }
                return Response(status: .rangeNotSatisfiable, headers: headers)
            case .range(let range):
                requested = range
                partial = true
            }
        }
        let reader: BlobReader
        do {
            guard let found = try await blobs.read(key, range: requested) else { throw APIError.notFound("Recording not found") }
            reader = found
        } catch BlobStoreError.rangeNotSatisfiable(let size) {
            var headers = HTTPHeaders()
            headers.replaceOrAdd(name: .contentRange, value: "bytes */\(size)")
            if let etag { headers.replaceOrAdd(name: .eTag, value: etag) }
            return Response(status: .rangeNotSatisfiable, headers: headers)
        }
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: reader.metadata.contentType)
        headers.replaceOrAdd(name: .acceptRanges, value: "bytes")
        headers.replaceOrAdd(name: .cacheControl, value: cacheControl)
        if let etag { headers.replaceOrAdd(name: .eTag, value: etag) }
        if partial {
            headers.replaceOrAdd(
                name: .contentRange, value: "bytes \(reader.range.lowerBound)-\(reader.range.upperBound - 1)/\(reader.metadata.size)")
        }
        if let bytes = reader.inMemory {
            return Response(status: partial ? .partialContent : .ok, headers: headers, body: .init(buffer: bytes))
        }
        let count = Int(reader.range.count)
        let body = reader.body
        return Response(
            status: partial ? .partialContent : .ok, headers: headers,
            body: .init(
                asyncStream: { writer in
                    do {
                        for try await buffer in body { try await writer.write(.buffer(buffer)) }
                        try await writer.write(.end)
                    } catch {
                        try await writer.write(.error(error))
                    }
                }, count: count))
    }

    /// Whether an `If-None-Match` value names `etag`: `*`, or a comma-separated list of entity tags compared weakly
    /// (a `W/` prefix on either side is ignored, RFC 9110 §8.8.3.2).
    static func matches(ifNoneMatch header: String, etag: String) -> Bool {
        func opaque(_ tag: Substring) -> Substring {
            let trimmed = tag.trimmingCharacters(in: .whitespaces)[...]
            return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
        }
        if header.trimmingCharacters(in: .whitespaces) == "*" { return true }
        let wanted = opaque(etag[...])
        return header.split(separator: ",").contains { opaque($0) == wanted }
    }

    // MARK: Transcription

    @Sendable
    func transcribe(_ req: Request) async throws -> Response {
        let user = try req.user
        let body = try req.body(of: API.Messaging.transcribe)
        _ = try await VoicePrivacy.requireVoiceAllowed(userID: user.id, store: req.store, now: services.now())
        guard let record = try await req.store.messaging.audio(id: body.audioID), record.ownerID == user.id else {
            throw APIError.notFound("Recording not found")
        }
        if let language = body.language, !(2...3).contains(language.count) || !language.allSatisfy(\.isLetter) {
            throw APIError.invalid("language", "Use an ISO-639-1 code such as en")
        }
        let (result, provider) = try await VoiceTranscription(services: services).transcribe(
            record, language: body.language, store: req.store, logger: req.logger)
        let response = try req.json(result)
        // How long the speech provider took, so clients and benchmarks can tell its time from the server's.
        let milliseconds = Double(provider.components.seconds) * 1_000 + Double(provider.components.attoseconds) / 1e15
        response.headers.replaceOrAdd(name: "Server-Timing", value: String(format: "provider;dur=%.1f", milliseconds))
        return response
    }
}

/// Reads a spooled recording for ``AudioContainer`` (blocking reads; run on the thread pool).
final class FileAudioSource: AudioByteSource {
    private let handle: FileHandle
    let size: Int64

    init(url: URL) throws {
        handle = try FileHandle(forReadingFrom: url)
        size = Int64(try handle.seekToEnd())
    }

    func read(offset: Int64, count: Int) throws -> [UInt8] {
        try handle.seek(toOffset: UInt64(offset))
        return [UInt8](try handle.read(upToCount: count) ?? Data())
    }

    deinit {
        try? handle.close()
    }
}
