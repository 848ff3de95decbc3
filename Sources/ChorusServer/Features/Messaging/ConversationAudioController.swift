import ChorusAPI
import ChorusCore
import ChorusProviders
import Crypto
import Foundation
import Vapor

/// Conversation audio (PRD Phase 3, both options):
/// - `POST /conversations/{id}/summary` — a structured summary (overview, decisions, action items, dates, urgent
///   items) through the ``TextGenerator`` with strict structured output, narrated by the narrator voice; cached until a
///   new message arrives or 7 days pass;
/// - `POST /conversations/{id}/playback` — the last messages in their senders' own voices joined into one WAV file
///   with 300 ms between speakers and the speaker timeline.
struct ConversationAudioController: RouteCollection {
    let services: ChorusServices
    var messaging: MessagingServices { services.messaging }

    /// The PRD's message when a summary cannot be produced (Appendix B).
    static let summaryFailedMessage = "Couldn't generate summary right now. Try again in a moment."
    static let summaryLifetime: TimeInterval = 7 * 86_400
    static let summaryMessages = 20...200
    static let playbackMessages = 1...30

    func boot(routes: any RoutesBuilder) throws {
        let routes = routes.grouped(UserAuthenticator(services: services))
        routes.post("conversations", ":conversation_id", "summary", use: summary)
        routes.post("conversations", ":conversation_id", "playback", use: playback)
        routes.get("conversations", ":conversation_id", "summaries", ":summary_id", use: storedSummary)
        routes.get("conversations", ":conversation_id", "digest", use: digest)
        routes.put("conversations", ":conversation_id", "digest", use: setDigest)
    }

    // MARK: Daily digest

    @Sendable
    func digest(_ req: Request) async throws -> Response {
        let user = try req.user
        let conversation = try await conversation(req)
        let subscription = try await req.store.digestSubscription(conversationID: conversation.id, userID: user.id)
        return try req.json(
            DigestSubscriptionDTO(
                schedule: subscription?.schedule ?? "off", timeZone: subscription?.timeZone ?? "UTC", nextDigestAt: subscription?.nextAt))
    }

    @Sendable
    func setDigest(_ req: Request) async throws -> Response {
        let user = try req.user
        let conversation = try await conversation(req)
        let body = try req.decodeJSON(DigestSubscriptionDTO.self)
        var validator = FieldValidator()
        validator.check(["morning", "evening", "off"].contains(body.schedule), "schedule", "Use morning, evening or off")
        let zoneName = body.timeZone ?? "UTC"
        let zone = TimeZone(identifier: zoneName)
        validator.check(zone != nil, "time_zone", "Use an IANA time zone such as America/New_York")
        try validator.throwIfInvalid()
        let now = services.now()
        let next = zone.flatMap { DigestJob.nextRun(after: now, schedule: body.schedule, timeZone: $0) }
        let record = try await req.store.setDigestSubscription(
            conversationID: conversation.id, userID: user.id, schedule: body.schedule, timeZone: zoneName, next: next, now: now)
        return try req.json(DigestSubscriptionDTO(schedule: record.schedule, timeZone: record.timeZone, nextDigestAt: record.nextAt))
    }

    private func conversation(_ req: Request) async throws -> ConversationRecord {
        let user = try req.user
        guard let id = req.parameters.get("conversation_id"), let conversation = try await req.store.conversations(of: user.id, only: id).first
        else { throw APIError.notFound("Conversation not found") }
        return conversation
    }

    // MARK: Summary

    @Sendable
    func summary(_ req: Request) async throws -> Response {
        let user = try req.user
        let conversation = try await conversation(req)
        let body = try req.decodeOptionalJSON(SummaryRequest.self) ?? SummaryRequest()
        let last = body.last ?? 50
        guard Self.summaryMessages.contains(last) else { throw APIError.invalid("last", "Summarise 20 to 200 messages") }
        let messages = try await req.store.recentMessages(
            conversationID: conversation.id, viewer: user.id, since: body.since, limit: body.since == nil ? last : Self.summaryMessages.upperBound
        ).filter { ($0.content ?? $0.transcript) != nil }
        guard let newest = messages.last else { throw APIError.badRequest("There are no messages to summarise") }
        let now = services.now()
        let selection = body.since.map { "since:\($0.epochMillis)" } ?? "last:\(last)"
        if let cached = try await req.store.summary(conversationID: conversation.id, selection: selection, lastSeq: newest.seq),
            now.timeIntervalSince(cached.createdAt) < Self.summaryLifetime
        {
            return try req.json(response(cached, cached: true, now: now))
        }
        let record: SummaryRecord
        do {
            record = try await ConversationSummarizer(services: services).summarize(
                messages, conversationID: conversation.id, selection: selection, requester: user.id, store: req.store, logger: req.logger)
        } catch let error as SummaryFailed {
            req.logger.warning("summary generation failed", metadata: ["error": .string("\(error.underlying)")])
            throw APIError.unavailable(retryAfter: 5, detail: Self.summaryFailedMessage)
        }
        await messaging.fanout.publish(
            RealtimeEventDTO(type: "summary.ready", conversationID: conversation.id, summaryID: record.id), to: [user.id])
        return try req.json(response(record, cached: false, now: now))
    }

    /// A stored summary or digest (the `summary_id` of `summary.ready` and `digest.ready`), for members only.
    @Sendable
    func storedSummary(_ req: Request) async throws -> Response {
        let conversation = try await conversation(req)
        guard let id = req.parameters.get("summary_id"), let record = try await req.store.summary(id: id),
            record.conversationID == conversation.id
        else { throw APIError.notFound("Summary not found") }
        return try req.json(response(record, cached: true, now: services.now()))
    }

    private func response(_ record: SummaryRecord, cached: Bool, now: Date) -> SummaryResponse {
        SummaryResponse(
            summaryID: record.id, conversationID: record.conversationID, messageCount: record.messageCount, overview: record.summary.overview,
            decisions: record.summary.decisions,
            actionItems: record.summary.actionItems.map { SummaryActionItemDTO(owner: $0.owner, task: $0.task, due: $0.due) },
            dates: record.summary.dates.map { SummaryDateDTO(date: $0.date, what: $0.what) }, urgentItems: record.summary.urgentItems,
            narration: record.narration, audioURL: record.speechKey.map { services.speechURL(key: $0, now: now) }, generatedAt: record.createdAt,
            cached: cached)
    }

    // MARK: Playback

    @Sendable
    func playback(_ req: Request) async throws -> Response {
        let user = try req.user
        let conversation = try await conversation(req)
        let body = try req.decodeOptionalJSON(PlaybackRequest.self) ?? PlaybackRequest()
        let last = body.last ?? 10
        guard Self.playbackMessages.contains(last) else { throw APIError.invalid("last", "Play 1 to 30 messages") }
        let messages = try await req.store.recentMessages(conversationID: conversation.id, viewer: user.id, since: nil, limit: last)
            .filter { !(($0.content ?? $0.transcript) ?? "").isEmpty }
        guard !messages.isEmpty else { throw APIError.badRequest("There are no messages to play") }
        // Each message in its sender's voice (WAV so the parts can be joined), generated once and cached like any speech.
        var clips: [WAVClip] = []
        var parts: [String] = []
        let voices = VoiceController(services: services)
        for message in messages {
            guard
                var plan = try await voices.speechPlan(
                    text: message.content ?? message.transcript ?? "", speakerID: message.senderID, store: req.store)
            else { continue }
            plan.template.format = .wav
            let (entry, _) = try await messaging.speech.speech(plan, requester: user.id, store: req.store, logger: req.logger)
            guard let key = entry.blobKey.flatMap(BlobKey.init), let audio = try await messaging.blobs.data(key) else {
                throw APIError.unavailable(retryAfter: 5, detail: SpeechService.failureMessage)
            }
            clips.append(WAVClip(messageID: message.id, sender: message.senderName, wav: audio))
            parts.append("\(message.id)=\(entry.key)")
        }
        // The same messages in the same voices make the same file: keyed by its parts, stored once.
        let key = SHA256.hash(data: Data(("playback|" + parts.joined(separator: "|")).utf8)).map { String(format: "%02x", $0) }.joined()
        let spliced: SplicedAudio
        do {
            spliced = try WAVSplicer.splice(clips, gapMs: PlaybackTimeline.defaultGapMs)
        } catch {
            req.logger.error("could not join the playback", metadata: ["error": .string("\(error)")])
            throw APIError.unavailable(retryAfter: 5, detail: SpeechService.failureMessage)
        }
        guard let blob = BlobKey(rawValue: "playback/\(key.prefix(2))/\(key).wav") else { throw APIError.notFound("Conversation not found") }
        let now = services.now()
        if try await req.store.speechCacheEntry(key: key)?.status != "ready" {
            try await messaging.blobs.put(blob, data: spliced.wav, contentType: SpeechAudioFormat.wav.contentType)
            try await req.store.storeSpeech(
                key: key, blobKey: blob.rawValue, contentType: SpeechAudioFormat.wav.contentType, sizeBytes: spliced.wav.count, now: now)
        } else {
            try await req.store.touchSpeech(key: key, now: now)
        }
        return try req.json(
            PlaybackResponse(
                audioURL: services.speechURL(key: key, now: now), durationMs: spliced.timeline.totalMs,
                timeline: spliced.timeline.entries.map {
                    PlaybackEntryDTO(messageID: $0.messageID, sender: $0.sender, startMs: $0.startMs, endMs: $0.endMs)
                }))
    }
}
