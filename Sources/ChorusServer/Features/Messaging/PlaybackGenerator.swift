import ChorusAPI
import ChorusCore
import ChorusProviders
import Crypto
import Foundation
import Logging

/// A conversation playback as it is made: each message's clip in its sender's voice, then the clips joined. Stored as
/// JSON in `playbacks` (``PlaybackStore``): the speech keys, not the signed URLs, which are signed when answered.
struct PlaybackState: Sendable, Codable {
    struct Clip: Sendable, Codable {
        var messageID: String
        var sender: String
        var state = "pending"
        var durationMs: Int?
        /// The clip's speech cache key (its audio URL is signed when answered).
        var speechKey: String?
        var cached: Bool?
        var error: String?

        enum CodingKeys: String, CodingKey {
            case messageID = "message_id"
            case sender, state
            case durationMs = "duration_ms"
            case speechKey = "speech_key"
            case cached, error
        }
    }

    var id: String
    var conversationID: String
    var userID: String
    var status = "generating"
    var clips: [Clip]
    /// The joined file's cache key and timeline, once every clip is made and at least one is ready.
    var joinedKey: String?
    var timeline: PlaybackTimeline?

    var isFinished: Bool { status != "generating" }

    enum CodingKeys: String, CodingKey {
        case id
        case conversationID = "conversation_id"
        case userID = "user_id"
        case status, clips
        case joinedKey = "joined_key"
        case timeline
        case totalMs = "total_ms"
    }

    init(id: String, conversationID: String, userID: String, clips: [Clip]) {
        self.id = id
        self.conversationID = conversationID
        self.userID = userID
        self.clips = clips
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        conversationID = try container.decode(String.self, forKey: .conversationID)
        userID = try container.decode(String.self, forKey: .userID)
        status = try container.decode(String.self, forKey: .status)
        clips = try container.decode([Clip].self, forKey: .clips)
        joinedKey = try container.decodeIfPresent(String.self, forKey: .joinedKey)
        if let entries = try container.decodeIfPresent([PlaybackEntry].self, forKey: .timeline) {
            timeline = PlaybackTimeline(entries: entries, totalMs: try container.decode(Int.self, forKey: .totalMs))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(conversationID, forKey: .conversationID)
        try container.encode(userID, forKey: .userID)
        try container.encode(status, forKey: .status)
        try container.encode(clips, forKey: .clips)
        try container.encodeIfPresent(joinedKey, forKey: .joinedKey)
        try container.encodeIfPresent(timeline?.entries, forKey: .timeline)
        try container.encodeIfPresent(timeline?.totalMs, forKey: .totalMs)
    }

    func response(services: ChorusServices, now: Date) -> PlaybackResponse {
        PlaybackResponse(
            playbackID: id, conversationID: conversationID, status: status,
            audioURL: joinedKey.map { services.speechURL(key: $0, now: now) }, durationMs: timeline?.totalMs,
            timeline: timeline?.entries.map { PlaybackEntryDTO(messageID: $0.messageID, sender: $0.sender, startMs: $0.startMs, endMs: $0.endMs) }
                ?? [],
            clips: clips.enumerated().map { index, clip in
                PlaybackClipDTO(
                    position: index + 1, messageID: clip.messageID, sender: clip.sender, state: clip.state, durationMs: clip.durationMs,
                    audioURL: clip.speechKey.map { services.speechURL(key: $0, now: now) }, cached: clip.cached, error: clip.error)
            },
            fallback: status == "failed"
                ? PlaybackFallbackDTO(
                    message: PlaybackGenerator.fallbackMessage, summaryPath: API.Messaging.summary.path(conversationID)) : nil)
    }
}

/// Makes a playback: every message's clip in its sender's voice, at most `CHORUS_VOICE_PLAYBACK_CONCURRENCY` at a
/// time (clips in the speech cache cost no provider call), each reported as it becomes ready or fails; then the ready
/// clips joined in message order, 300 ms apart, into one WAV file stored once per set of clips.
struct PlaybackGenerator {
    /// What a playback that could not be produced offers instead.
    static let fallbackMessage = "Couldn't play the conversation right now. Listen to the summary instead."

    let services: ChorusServices
    var messaging: MessagingServices { services.messaging }

    /// One clip made or failed.
    struct ClipOutcome: Sendable {
        var index: Int
        var wav: Data?
        var speechKey: String?
        var durationMs: Int?
        var cached = false
        var error: String?
    }

    /// A new playback of `messages` (oldest first), stored with its clips pending (version 0).
    func start(_ messages: [MessageRecord], conversationID: String, userID: String, store: ChorusStore) async throws -> PlaybackState {
        let state = PlaybackState(
            id: UUID().uuidString.lowercased(), conversationID: conversationID, userID: userID,
            clips: messages.map { PlaybackState.Clip(messageID: $0.id, sender: $0.senderName) })
        try await store.playbacks.insert(state, now: services.now())
        return state
    }

    /// Makes the clips of `state` and joins them; with `announce` (streamed), each change is stored as a snapshot and
    /// sent to the user as a `playback.progress` event; the finished playback is always stored. Never throws: failures
    /// are reported per clip, and `failed` offers the summary.
    func run(
        _ state: PlaybackState, messages: [MessageRecord], store: ChorusStore, logger: Logger, announce: Bool
    ) async -> PlaybackState {
        // This task's state is authoritative; each stored snapshot carries a higher version than the one before.
        var version = 0
        let bound = max(1, services.configuration.voiceMessages.playbackConcurrency)
        var current = state
        var wavs = [Data?](repeating: nil, count: messages.count)
        await withTaskGroup(of: ClipOutcome.self) { group in
            var next = 0
            while next < min(bound, messages.count) {
                let index = next
                group.addTask { await self.clip(index, messages[index], requester: state.userID, store: store, logger: logger) }
                next += 1
            }
            while let outcome = await group.next() {
                wavs[outcome.index] = outcome.wav
                current.clips[outcome.index].apply(outcome)
                if announce {
                    version += 1
                    await save(current, version: version, store: store, logger: logger)
                    await publish(current)
                }
                if next < messages.count {
                    let index = next
                    group.addTask { await self.clip(index, messages[index], requester: state.userID, store: store, logger: logger) }
                    next += 1
                }
            }
        }
        current = await join(current, wavs: wavs, store: store, logger: logger)
        await save(current, version: version + 1, store: store, logger: logger)
        if announce { await publish(current) }
        return current
    }

    /// Stores a snapshot; a failed write is logged (the events and the answer still carry the state).
    private func save(_ state: PlaybackState, version: Int, store: ChorusStore, logger: Logger) async {
        do {
            try await store.playbacks.update(state, version: version, now: services.now())
        } catch {
            logger.warning(
                "could not store the playback state", metadata: ["playback_id": .string(state.id), "error": .string("\(error)")])
        }
    }

    private func publish(_ state: PlaybackState) async {
        await messaging.fanout.publish(
            RealtimeEventDTO(
                type: "playback.progress", conversationID: state.conversationID, playback: state.response(services: services, now: services.now())),
            to: [state.userID])
    }

    /// One message's clip: its speech as WAV (from the cache or generated), or why it could not be made.
    private func clip(_ index: Int, _ message: MessageRecord, requester: String, store: ChorusStore, logger: Logger) async -> ClipOutcome {
        var outcome = ClipOutcome(index: index)
        do {
            guard
                var plan = try await VoiceController(services: services).speechPlan(
                    text: message.content ?? message.transcript ?? "", speakerID: message.senderID, store: store)
            else {
                outcome.error = "The sender's voice is not available."
                return outcome
            }
            // WAV, so the clips can be joined.
            plan.template.format = .wav
            let (entry, cached) = try await messaging.speech.speech(plan, requester: requester, store: store, logger: logger)
            guard let key = entry.blobKey.flatMap(BlobKey.init), let audio = try await messaging.blobs.data(key) else {
                outcome.error = SpeechService.failureMessage
                return outcome
            }
            // Its length, and a check that it is WAV that can be joined.
            let alone = try WAVSplicer.splice([WAVClip(messageID: message.id, sender: message.senderName, wav: audio)], gapMs: 0)
            outcome.wav = audio
            outcome.speechKey = entry.key
            outcome.durationMs = alone.timeline.totalMs
            outcome.cached = cached
        } catch let error as APIError {
            outcome.error = Self.message(of: error)
        } catch {
            logger.warning("playback clip failed", metadata: ["message_id": .string(message.id), "error": .string("\(error)")])
            outcome.error = SpeechService.failureMessage
        }
        return outcome
    }

    /// The reason answered for a refused or failed clip (a daily limit, a spent budget, the provider down).
    static func message(of error: APIError) -> String {
        switch error {
        case .detail(_, let detail), .unavailable(_, let detail), .limitReached(_, let detail): detail
        default: SpeechService.failureMessage
        }
    }

    /// The ready clips joined in order and stored once per set of clips; `failed` when none is ready or they cannot
    /// be joined.
    private func join(_ state: PlaybackState, wavs: [Data?], store: ChorusStore, logger: Logger) async -> PlaybackState {
        var state = state
        var clips: [WAVClip] = []
        var parts: [String] = []
        for (index, clip) in state.clips.enumerated() {
            guard clip.state == "ready", let wav = wavs[index], let key = clip.speechKey else { continue }
            clips.append(WAVClip(messageID: clip.messageID, sender: clip.sender, wav: wav))
            parts.append("\(clip.messageID)=\(key)")
        }
        guard !clips.isEmpty else {
            state.status = "failed"
            return state
        }
        do {
            let spliced = try WAVSplicer.splice(clips, gapMs: PlaybackTimeline.defaultGapMs)
            // The same messages in the same voices make the same file: keyed by its parts, stored once.
            let key = SHA256.hash(data: Data(("playback|" + parts.joined(separator: "|")).utf8)).map { String(format: "%02x", $0) }.joined()
            guard let blob = BlobKey(rawValue: "playback/\(key.prefix(2))/\(key).wav") else {
                throw ProviderError.invalidResponse("bad playback key")
            }
            let now = services.now()
            if try await store.voices.speechCacheEntry(key: key)?.status != "ready" {
                try await messaging.blobs.put(blob, data: spliced.wav, contentType: SpeechAudioFormat.wav.contentType)
                try await store.voices.storeSpeech(
                    key: key, blobKey: blob.rawValue, contentType: SpeechAudioFormat.wav.contentType, sizeBytes: spliced.wav.count, now: now)
            } else {
                try await store.voices.touchSpeech(key: key, now: now)
            }
            state.joinedKey = key
            state.timeline = spliced.timeline
            state.status = clips.count == state.clips.count ? "ready" : "partial"
        } catch {
            logger.error("could not join the playback", metadata: ["error": .string("\(error)")])
            state.status = "failed"
        }
        return state
    }
}

extension PlaybackState.Clip {
    fileprivate mutating func apply(_ outcome: PlaybackGenerator.ClipOutcome) {
        state = outcome.error == nil ? "ready" : "failed"
        durationMs = outcome.durationMs
        speechKey = outcome.speechKey
        cached = outcome.error == nil ? outcome.cached : nil
        error = outcome.error
    }
}
