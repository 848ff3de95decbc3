import Foundation

/// One message's audio in a multi-voice playback (PRD Option A).
public struct PlaybackClip: Sendable, Equatable {
    public var messageID: String
    /// Who speaks it, as the timeline should name them (an id or a display name).
    public var sender: String
    public var durationMs: Int

    public init(messageID: String, sender: String, durationMs: Int) {
        self.messageID = messageID
        self.sender = sender
        self.durationMs = durationMs
    }
}

/// Where one message plays in the joined audio.
public struct PlaybackEntry: Sendable, Equatable, Codable {
    public var messageID: String
    public var sender: String
    public var startMs: Int
    public var endMs: Int

    public init(messageID: String, sender: String, startMs: Int, endMs: Int) {
        self.messageID = messageID
        self.sender = sender
        self.startMs = startMs
        self.endMs = endMs
    }

    enum CodingKeys: String, CodingKey {
        case sender
        case messageID = "message_id"
        case startMs = "start_ms"
        case endMs = "end_ms"
    }
}

/// The speaker timeline of a multi-voice playback: clips one after another with a pause between speakers.
public struct PlaybackTimeline: Sendable, Equatable {
    /// The pause between two clips (issue 6: 300 ms between speakers).
    public static let defaultGapMs = 300

    public var entries: [PlaybackEntry]
    /// The length of the whole playback: the end of the last clip (no pause after it).
    public var totalMs: Int

    public init(entries: [PlaybackEntry], totalMs: Int) {
        self.entries = entries
        self.totalMs = totalMs
    }

    /// Lays `clips` out in order, `gapMs` apart. Negative durations and gaps count as zero.
    public init(clips: [PlaybackClip], gapMs: Int = PlaybackTimeline.defaultGapMs) {
        var entries: [PlaybackEntry] = []
        var position = 0
        for clip in clips {
            if !entries.isEmpty { position += max(0, gapMs) }
            let end = position + max(0, clip.durationMs)
            entries.append(PlaybackEntry(messageID: clip.messageID, sender: clip.sender, startMs: position, endMs: end))
            position = end
        }
        self.init(entries: entries, totalMs: position)
    }
}
