import Foundation

/// One message's spoken audio, as a 16-bit PCM WAV file.
public struct WAVClip: Sendable, Equatable {
    public var messageID: String
    public var sender: String
    public var wav: Data

    public init(messageID: String, sender: String, wav: Data) {
        self.messageID = messageID
        self.sender = sender
        self.wav = wav
    }
}

/// Joined audio and where each message plays in it.
public struct SplicedAudio: Sendable, Equatable {
    /// A 16-bit PCM mono WAV file.
    public var wav: Data
    public var sampleRate: Int
    /// Times computed from sample positions (milliseconds, rounded down).
    public var timeline: PlaybackTimeline
}

/// Why clips could not be joined.
public enum WAVSplicerError: Error, Sendable, Equatable {
    case noClips
    /// A clip is not a 16-bit PCM WAV file of one or two channels.
    case unreadable(messageID: String, reason: String)
}

/// Mono 16-bit PCM samples with their rate.
public struct PCM16Audio: Sendable, Equatable {
    /// Mono samples (stereo input is averaged).
    public var samples: [Int16]
    public var sampleRate: Int

    public init(samples: [Int16], sampleRate: Int) {
        self.samples = samples
        self.sampleRate = sampleRate
    }
}

/// Joins 16-bit PCM WAV clips into one mono WAV with silence between them (multi-voice playback, PRD Option A).
///
/// Clips at different sample rates are resampled linearly to a common rate (by default the highest among them, so
/// nothing is downsampled unless asked); stereo clips are mixed down to mono.
public enum WAVSplicer {
    /// Joins `clips` in order with `gapMs` of silence between consecutive clips.
    public static func splice(
        _ clips: [WAVClip], gapMs: Int = PlaybackTimeline.defaultGapMs, sampleRate: Int? = nil
    ) throws
        -> SplicedAudio
    {
        precondition((sampleRate ?? 1) > 0, "the sample rate must be positive")
        guard !clips.isEmpty else { throw WAVSplicerError.noClips }
        var decoded: [PCM16Audio] = []
        for clip in clips {
            do {
                decoded.append(try decode(clip.wav))
            } catch {
                throw WAVSplicerError.unreadable(messageID: clip.messageID, reason: error.reason)
            }
        }
        let rate = sampleRate ?? decoded.map(\.sampleRate).max() ?? 24_000
        let gap = [Int16](repeating: 0, count: max(0, gapMs) * rate / 1_000)
        let expected = decoded.reduce(0) { total, audio in total + audio.samples.count * rate / audio.sampleRate + gap.count }
        var samples: [Int16] = []
        samples.reserveCapacity(expected)
        var entries: [PlaybackEntry] = []
        for (clip, audio) in zip(clips, decoded) {
            if !entries.isEmpty { samples += gap }
            let start = samples.count
            samples += resample(audio.samples, from: audio.sampleRate, to: rate)
            entries.append(
                PlaybackEntry(
                    messageID: clip.messageID, sender: clip.sender, startMs: milliseconds(start, rate),
                    endMs: milliseconds(samples.count, rate)))
        }
        let timeline = PlaybackTimeline(entries: entries, totalMs: milliseconds(samples.count, rate))
        return SplicedAudio(wav: encode(PCM16Audio(samples: samples, sampleRate: rate)), sampleRate: rate, timeline: timeline)
    }

    struct DecodingFailure: Error {
        var reason: String
    }

    /// The samples of a 16-bit PCM WAV file (mono, or stereo averaged to mono).
    static func decode(_ wav: Data) throws(DecodingFailure) -> PCM16Audio {
        let bytes = [UInt8](wav)
        func fail(_ reason: String) -> DecodingFailure { DecodingFailure(reason: reason) }
        guard bytes.count >= 12, bytes.ascii(0, 4) == "RIFF", bytes.ascii(8, 4) == "WAVE" else { throw fail("not a WAV file") }
        var format: (tag: Int, channels: Int, sampleRate: Int, bits: Int)?
        var offset = 12
        while offset + 8 <= bytes.count {
            let id = bytes.ascii(offset, 4)
            var size = Int(bytes.uint32LE(offset + 4))
            let body = offset + 8
            if id == "fmt " {
                guard size >= 16, body + 16 <= bytes.count else { throw fail("short fmt chunk") }
                var tag = bytes.uint16LE(body)
                if tag == 0xFFFE, size >= 26, body + 26 <= bytes.count { tag = bytes.uint16LE(body + 24) }
                format = (tag, bytes.uint16LE(body + 2), Int(bytes.uint32LE(body + 4)), bytes.uint16LE(body + 14))
            } else if id == "data" {
                guard let format else { throw fail("data before fmt") }
                guard format.tag == 1, format.bits == 16 else { throw fail("not 16-bit PCM") }
                // The rate comes from the provider's file: past 384 kHz, resampling to it would allocate without bound.
                guard (1...2).contains(format.channels), (1...384_000).contains(format.sampleRate) else {
                    throw fail("\(format.channels) channels at \(format.sampleRate) Hz")
                }
                if size == 0xFFFF_FFFF { size = bytes.count - body }
                guard body + size <= bytes.count else { throw fail("truncated data chunk") }
                return PCM16Audio(samples: samples(bytes[body..<body + size], channels: format.channels), sampleRate: format.sampleRate)
            }
            offset = body + size + size % 2
        }
        throw fail("no data chunk")
    }

    /// A mono 16-bit PCM WAV file of `audio`.
    public static func encode(_ audio: PCM16Audio) -> Data {
        func le16(_ value: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)] }
        func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        let dataSize = audio.samples.count * 2
        var bytes: [UInt8] = []
        bytes.reserveCapacity(44 + dataSize)
        bytes += Array("RIFF".utf8) + le32(36 + dataSize) + Array("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(1)
        bytes += le32(audio.sampleRate) + le32(audio.sampleRate * 2) + le16(2) + le16(16) + Array("data".utf8) + le32(dataSize)
        for sample in audio.samples {
            let value = UInt16(bitPattern: sample)
            bytes.append(UInt8(value & 0xFF))
            bytes.append(UInt8(value >> 8))
        }
        return Data(bytes)
    }

    /// `samples` at `source` Hz linearly interpolated to `target` Hz.
    public static func resample(_ samples: [Int16], from source: Int, to target: Int) -> [Int16] {
        guard source != target, !samples.isEmpty, source > 0, target > 0 else { return samples }
        let count = max(1, Int((Double(samples.count) * Double(target) / Double(source)).rounded()))
        let step = Double(source) / Double(target)
        return (0..<count).map { index in
            let position = Double(index) * step
            let lower = min(Int(position), samples.count - 1)
            let upper = min(lower + 1, samples.count - 1)
            let fraction = position - Double(lower)
            let value = Double(samples[lower]) * (1 - fraction) + Double(samples[upper]) * fraction
            return Int16(max(-32_768, min(32_767, value.rounded())))
        }
    }

    private static func samples(_ data: ArraySlice<UInt8>, channels: Int) -> [Int16] {
        let frameSize = 2 * channels
        let frames = data.count / frameSize
        let base = data.startIndex
        return (0..<frames).map { frame in
            var sum = 0
            for channel in 0..<channels {
                let offset = base + frame * frameSize + channel * 2
                sum += Int(Int16(bitPattern: UInt16(data[offset]) | UInt16(data[offset + 1]) << 8))
            }
            return Int16(sum / channels)
        }
    }

    private static func milliseconds(_ samples: Int, _ rate: Int) -> Int { samples * 1_000 / rate }
}
