import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Logging
import NIOConcurrencyHelpers
import Vapor

/// One piece of speech to produce: its text, who speaks it, and what it costs.
struct SpeechPlan: Sendable {
    var text: String
    var synthesizer: any SpeechSynthesizer
    /// The request for every part (its `text` is replaced per part).
    var template: SpeechRequest
    /// `cloned` or `default`.
    var voiceKind: String
    /// The account whose cloned voice speaks (erasing that account's voice data erases this speech).
    var voiceOwnerID: String?
    var provider: String

    var key: SpeechCacheKey {
        var settings: [String: SpeechSettingValue] = [:]
        if let stability = template.stability { settings["stability"] = .number(stability) }
        if let similarity = template.similarityBoost { settings["similarity_boost"] = .number(similarity) }
        if let instructions = template.instructions { settings["instructions"] = .text(instructions) }
        return SpeechCacheKey(
            text: text, provider: provider, voiceID: template.voiceID, model: template.model, format: template.format.rawValue,
            settings: settings)
    }
}

/// Generated speech, produced once per (text, voice, model, settings) and kept in blob storage.
///
/// Concurrent requests for the same speech make one provider call: requests in this process join one task, and
/// across instances one request claims the cache row (`speech_cache`, a compare-and-set lease) while the others
/// wait for it. A generation is charged to the requesting user's daily allowance before the provider is called (a
/// generation with no requester, such as a voice preview, is the operator's cost and charges no user), and each
/// provider call is reserved against the voice budgets and the user's daily operations by the metered
/// synthesizer (``UsageMeter``); both are given back if it fails.
final class SpeechService: Sendable {
    /// The PRD's message when speech cannot be produced (Appendix B).
    static let failureMessage = "Audio unavailable. You can still read the message."
    /// How long a generation may hold its claim before another instance may take over.
    static let claimLifetime: TimeInterval = 120

    private let flights = SingleFlight<String, SpeechCacheEntry>()
    let blobs: any BlobStore
    let settings: ChorusConfiguration.VoiceMessageSettings
    let clock: @Sendable () -> Date

    init(blobs: any BlobStore, settings: ChorusConfiguration.VoiceMessageSettings, clock: @escaping @Sendable () -> Date) {
        self.blobs = blobs
        self.settings = settings
        self.clock = clock
    }

    /// Ready cache rows recently served, so a popular speech is not looked up in the database on every play. A row
    /// deleted on another instance (erasure, expiry) is noticed within ``servedEntryLifetime``; on this instance the
    /// deleted blob is gone at once.
    private let servedEntries = NIOLockedValueBox<[String: (entry: SpeechCacheEntry, until: ContinuousClock.Instant)]>([:])
    static let servedEntryLifetime: Duration = .seconds(5)

    /// The ready cache row of `key` for serving its audio, from memory when it was read in the last few seconds.
    func servedEntry(key: String, store: ChorusStore) async throws -> SpeechCacheEntry? {
        let now = ContinuousClock.now
        if let cached = servedEntries.withLockedValue({ $0[key] }), cached.until > now { return cached.entry }
        guard let entry = try await store.voices.speechCacheEntry(key: key, fromReadPool: true), entry.status == "ready" else {
            servedEntries.withLockedValue { _ = $0.removeValue(forKey: key) }
            return nil
        }
        servedEntries.withLockedValue { entries in
            // Bounded: expired rows are dropped whenever the table grows large.
            if entries.count >= 10_000 { entries = entries.filter { $0.value.until > now } }
            if entries.count < 10_000 { entries[key] = (entry, now + Self.servedEntryLifetime) }
        }
        return entry
    }

    /// The speech of `plan`, generating it if needed; `cached` is true when nothing was generated for this request.
    /// `requester` is charged one generation of the day; `nil` charges nobody (the operator's cost, still metered).
    func speech(
        _ plan: SpeechPlan, requester: String?, store: ChorusStore, logger: Logger
    ) async throws -> (
        entry: SpeechCacheEntry, cached: Bool
    ) {
        let key = plan.key.hexDigest
        if let entry = try await store.voices.speechCacheEntry(key: key), entry.status == "ready" {
            try await store.voices.touchSpeech(key: key, now: clock())
            return (entry, true)
        }
        let entry = try await flights.run(key) { [self] in
            try await self.generateOnce(plan, key: key, requester: requester, store: store, logger: logger)
        }
        return (entry, false)
    }

    private func generateOnce(
        _ plan: SpeechPlan, key: String, requester: String?, store: ChorusStore, logger: Logger
    ) async throws
        -> SpeechCacheEntry
    {
        let deadline = clock().addingTimeInterval(Self.claimLifetime)
        while true {
            if let entry = try await store.voices.speechCacheEntry(key: key), entry.status == "ready" { return entry }
            let now = clock()
            if try await store.voices.claimSpeech(
                key: key, voiceOwnerID: plan.voiceOwnerID, now: now, until: now.addingTimeInterval(Self.claimLifetime))
            {
                return try await generate(plan, key: key, requester: requester, store: store, logger: logger)
            }
            // Another instance is generating it.
            guard clock() < deadline else { throw APIError.unavailable(retryAfter: 5, detail: Self.failureMessage) }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    private func generate(
        _ plan: SpeechPlan, key: String, requester: String?, store: ChorusStore, logger: Logger
    ) async throws
        -> SpeechCacheEntry
    {
        let now = clock()
        let usageKey = VoiceUsagePolicy.dailyGenerationsKey(at: now)
        if let requester,
            !(try await store.voices.chargeVoiceUsage(userID: requester, key: usageKey, limit: settings.dailyGenerationsPerUser))
        {
            try await store.voices.abandonSpeech(key: key)
            throw APIError.detail(.tooManyRequests, VoiceUsagePolicy.dailyLimitMessage(limit: settings.dailyGenerationsPerUser))
        }
        do {
            // The format the synthesizer returned, which may differ from the one asked for (Realtime speech without
            // libmp3lame answers WAV): the file's name and media type follow the audio.
            let (audio, format) = try await MeteringContext.with(userID: requester) { try await synthesize(plan) }
            guard let blobKey = BlobKey(rawValue: "speech/\(key.prefix(2))/\(key).\(format.rawValue)") else {
                throw ProviderError.invalidResponse("bad speech key")
            }
            try await blobs.put(blobKey, data: audio, contentType: format.contentType)
            try await store.voices.completeSpeech(key: key, blobKey: blobKey.rawValue, contentType: format.contentType, sizeBytes: audio.count)
            logger.info(
                "generated speech",
                metadata: ["provider": .string(plan.provider), "characters": .stringConvertible(TextChunker.length(plan.text))])
            return SpeechCacheEntry(
                key: key, status: "ready", blobKey: blobKey.rawValue, contentType: format.contentType, sizeBytes: audio.count)
        } catch {
            if let requester { try? await store.voices.refundVoiceUsage(userID: requester, key: usageKey) }
            try? await store.voices.abandonSpeech(key: key)
            // A spent budget or daily limit is answered as such (503 or 429 with Retry-After).
            if let refused = error as? APIError { throw refused }
            logger.warning("speech generation failed", metadata: ["provider": .string(plan.provider), "error": .string("\(error)")])
            throw APIError.unavailable(retryAfter: 5, detail: Self.failureMessage)
        }
    }

    /// Speaks the text in parts no longer than the provider accepts, joined into one file in the format the
    /// synthesizer returned (MP3 parts by ``MP3Joiner``, which drops each part's tags and summary frame; WAV parts by
    /// ``WAVSplicer``).
    func synthesize(_ plan: SpeechPlan) async throws -> (audio: Data, format: SpeechAudioFormat) {
        let parts = TextChunker(maxCharacters: plan.synthesizer.maxInputCharacters).split(plan.text)
        var audio: [Data] = []
        var formats: Set<SpeechAudioFormat> = []
        for part in parts {
            var request = plan.template
            request.text = part
            let speech = try await plan.synthesizer.synthesize(request)
            audio.append(speech.audio)
            formats.insert(speech.format)
        }
        guard let format = formats.first, formats.count == 1 else {
            throw ProviderError.invalidResponse("the parts of one speech came back in different formats: \(formats.map(\.rawValue).sorted())")
        }
        guard audio.count > 1 else { return (audio[0], format) }
        if format == .wav {
            let clips = audio.enumerated().map { WAVClip(messageID: String($0.offset), sender: plan.voiceKind, wav: $0.element) }
            return (try WAVSplicer.splice(clips, gapMs: 0).wav, .wav)
        }
        return (try MP3Joiner.join(audio.map(MP3Joiner.frames)).bytes, .mp3)
    }
}

/// Runs one task per key at a time; callers with the same key while it runs share its result.
actor SingleFlight<Key: Hashable & Sendable, Value: Sendable> {
    private var running: [Key: Task<Value, any Error>] = [:]

    func run(_ key: Key, _ operation: @escaping @Sendable () async throws -> Value) async throws -> Value {
        if let task = running[key] { return try await task.value }
        let task = Task { try await operation() }
        running[key] = task
        defer { running[key] = nil }
        return try await task.value
    }
}
