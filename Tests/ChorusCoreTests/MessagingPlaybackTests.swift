import Foundation
import Testing

@testable import ChorusCore

/// A tone: `count` samples of a square wave of amplitude `level`.
private func tone(_ count: Int, level: Int16 = 8_000) -> [Int16] { (0..<count).map { $0 / 20 % 2 == 0 ? level : -level } }

/// A hand-written PCM16 WAV (independent of the encoder under test), optionally stereo, with an extra chunk.
private func wav(_ samples: [Int16], rate: Int, channels: Int = 1, extraChunk: Bool = false) -> Data {
    func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
    func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
    let interleaved = samples.flatMap { Array(repeating: $0, count: channels) }
    let data = interleaved.flatMap { le16(Int(UInt16(bitPattern: $0))) }
    let extra = extraChunk ? Array("LIST".utf8) + le32(3) + [1, 2, 3, 0] : []
    let fmt = Array("fmt ".utf8) + le32(16) + le16(1) + le16(channels) + le32(rate) + le32(rate * 2 * channels) + le16(2 * channels) + le16(16)
    let body = Array("WAVE".utf8) + fmt + extra + Array("data".utf8) + le32(data.count) + data
    return Data(Array("RIFF".utf8) + le32(body.count) + body)
}

@Suite("Playback timeline")
struct PlaybackTimelineTests {
    @Test("clips in order, 300 ms between speakers, no pause after the last")
    func layout() {
        let timeline = PlaybackTimeline(clips: [
            PlaybackClip(messageID: "m1", sender: "Sam", durationMs: 2_500), PlaybackClip(messageID: "m2", sender: "Alex", durationMs: 1_000),
            PlaybackClip(messageID: "m3", sender: "Sam", durationMs: 4_200),
        ])
        #expect(
            timeline.entries == [
                PlaybackEntry(messageID: "m1", sender: "Sam", startMs: 0, endMs: 2_500),
                PlaybackEntry(messageID: "m2", sender: "Alex", startMs: 2_800, endMs: 3_800),
                PlaybackEntry(messageID: "m3", sender: "Sam", startMs: 4_100, endMs: 8_300),
            ])
        #expect(timeline.totalMs == 8_300)
    }

    @Test("custom gap, empty input, snake_case wire keys")
    func edges() throws {
        let timeline = PlaybackTimeline(
            clips: [PlaybackClip(messageID: "a", sender: "s", durationMs: 10), PlaybackClip(messageID: "b", sender: "t", durationMs: 10)], gapMs: 0)
        #expect(timeline.entries.map(\.startMs) == [0, 10])
        #expect(PlaybackTimeline(clips: []) == PlaybackTimeline(entries: [], totalMs: 0))
        let json = try #require(String(data: JSONEncoder().encode(timeline.entries[1]), encoding: .utf8))
        for key in ["\"message_id\":\"b\"", "\"sender\":\"t\"", "\"start_ms\":10", "\"end_ms\":20"] { #expect(json.contains(key)) }
    }
}

@Suite("WAV splicer")
struct WAVSplicerTests {
    @Test("two mono clips at one rate: samples in order, 300 ms of silence between, timeline in ms")
    func sameRate() throws {
        let first = tone(24_000)
        let second = tone(12_000, level: -3_000)
        let spliced = try WAVSplicer.splice([
            WAVClip(messageID: "m1", sender: "Sam", wav: wav(first, rate: 24_000)),
            WAVClip(messageID: "m2", sender: "Alex", wav: wav(second, rate: 24_000, extraChunk: true)),
        ])
        #expect(spliced.sampleRate == 24_000)
        let audio = try WAVSplicer.decode(spliced.wav)
        #expect(audio.sampleRate == 24_000)
        #expect(audio.samples == first + [Int16](repeating: 0, count: 7_200) + second)
        #expect(
            spliced.timeline.entries == [
                PlaybackEntry(messageID: "m1", sender: "Sam", startMs: 0, endMs: 1_000),
                PlaybackEntry(messageID: "m2", sender: "Alex", startMs: 1_300, endMs: 1_800),
            ])
        #expect(spliced.timeline.totalMs == 1_800)
        // The output is a WAV that the container reader measures the same way.
        #expect(try AudioContainer.inspect(spliced.wav) == AudioInfo(format: .wav, durationSeconds: 1.8, sampleRate: 24_000, channels: 1))
    }

    @Test("different rates are resampled to the highest; stereo is mixed to mono")
    func mixedRates() throws {
        let low = [Int16](repeating: 1_000, count: 8_000)  // 1 s at 8 kHz
        let stereo = tone(16_000)  // 1 s at 16 kHz, both channels equal
        let spliced = try WAVSplicer.splice(
            [
                WAVClip(messageID: "a", sender: "x", wav: wav(low, rate: 8_000)),
                WAVClip(messageID: "b", sender: "y", wav: wav(stereo, rate: 16_000, channels: 2)),
            ], gapMs: 500)
        #expect(spliced.sampleRate == 16_000)
        let audio = try WAVSplicer.decode(spliced.wav)
        #expect(audio.samples.count == 16_000 + 8_000 + 16_000)
        #expect(audio.samples.prefix(16_000).allSatisfy { $0 == 1_000 })
        #expect(Array(audio.samples.suffix(16_000)) == stereo)
        #expect(spliced.timeline.entries.map { [$0.startMs, $0.endMs] } == [[0, 1_000], [1_500, 2_500]])
    }

    @Test("an explicit target rate downsamples; linear interpolation between samples")
    func resampling() throws {
        #expect(WAVSplicer.resample([0, 100, 200, 300], from: 8_000, to: 16_000) == [0, 50, 100, 150, 200, 250, 300, 300])
        #expect(WAVSplicer.resample([0, 100, 200, 300], from: 16_000, to: 8_000) == [0, 200])
        #expect(WAVSplicer.resample([5, 6], from: 8_000, to: 8_000) == [5, 6])
        let spliced = try WAVSplicer.splice([WAVClip(messageID: "a", sender: "x", wav: wav(tone(48_000), rate: 48_000))], sampleRate: 24_000)
        #expect(try WAVSplicer.decode(spliced.wav).samples.count == 24_000)
        #expect(spliced.timeline.totalMs == 1_000)
    }

    @Test("clips that are not 16-bit PCM WAV are refused by message id")
    func unreadable() throws {
        #expect(throws: WAVSplicerError.noClips) { try WAVSplicer.splice([]) }
        let mp3 = WAVClip(messageID: "m9", sender: "x", wav: Data([0xFF, 0xFB, 0x90, 0x00] + [UInt8](repeating: 0, count: 100)))
        #expect(throws: WAVSplicerError.unreadable(messageID: "m9", reason: "not a WAV file")) { try WAVSplicer.splice([mp3]) }
        var eightBit = [UInt8](wav(tone(100), rate: 8_000))
        eightBit[34] = 8  // bits per sample
        #expect(throws: WAVSplicerError.unreadable(messageID: "m1", reason: "not 16-bit PCM")) {
            try WAVSplicer.splice([WAVClip(messageID: "m1", sender: "x", wav: Data(eightBit))])
        }
        let truncated = wav(tone(1_000), rate: 8_000).prefix(500)
        #expect(throws: WAVSplicerError.unreadable(messageID: "m2", reason: "truncated data chunk")) {
            try WAVSplicer.splice([WAVClip(messageID: "m2", sender: "x", wav: Data(truncated))])
        }
    }

    @Test("encode then decode round-trips samples")
    func roundTrip() throws {
        let audio = PCM16Audio(samples: [Int16.min, -1, 0, 1, Int16.max], sampleRate: 22_050)
        #expect(try WAVSplicer.decode(WAVSplicer.encode(audio)) == audio)
    }
}
