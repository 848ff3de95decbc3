import Foundation
import Testing

@testable import ChorusCore

/// ElevenLabs' `pcm_<rate>` output wrapped in a WAV header by Chorus.
@Suite("PCM to WAV header")
struct PCMWAVTests {
    @Test func headerDescribesTheSamples() throws {
        // One second of 24 kHz mono: 48,000 bytes.
        let samples: [Int16] = (0..<24_000).map { Int16(truncatingIfNeeded: $0 * 7) }
        var pcm = Data()
        for sample in samples { withUnsafeBytes(of: sample.littleEndian) { pcm.append(contentsOf: $0) } }
        let wav = try PCMWAV.wrap(pcm16LittleEndian: pcm, sampleRate: 24_000)
        #expect(wav.count == PCMWAV.headerSize + 48_000)
        #expect(Array(wav.prefix(4)) == Array("RIFF".utf8) && Array(wav[8..<16]) == Array("WAVEfmt ".utf8))
        #expect(wav[4..<8].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self).littleEndian } == 36 + 48_000)
        #expect(wav[28..<32].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self).littleEndian } == 48_000)  // byte rate
        #expect(wav[40..<44].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self).littleEndian } == 48_000)  // data size
        let info = try AudioContainer.inspect(wav)
        #expect(info.format == .wav && info.sampleRate == 24_000 && info.channels == 1 && info.durationSeconds == 1)
        let decoded = try WAVSplicer.decode(wav)
        #expect(decoded.samples == samples && decoded.sampleRate == 24_000)
        // Stereo at 44.1 kHz: block align 4, byte rate 176,400.
        let stereo = try PCMWAV.wrap(pcm16LittleEndian: Data(count: 16), sampleRate: 44_100, channels: 2)
        #expect(stereo[32..<34].withUnsafeBytes { $0.loadUnaligned(as: UInt16.self).littleEndian } == 4)
        #expect(stereo[28..<32].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self).littleEndian } == 176_400)
        // Empty audio is a valid (silent) file.
        #expect(try PCMWAV.wrap(pcm16LittleEndian: Data(), sampleRate: 16_000).count == PCMWAV.headerSize)
    }

    /// A header written before its audio (a spooled stream) and rewritten once the size is known.
    @Test func headerAloneForAudioWrittenAfterIt() throws {
        let placeholder = try PCMWAV.header(dataByteCount: 0, sampleRate: 24_000)
        #expect(placeholder.count == PCMWAV.headerSize)
        #expect(placeholder[40..<44].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self).littleEndian } == 0)
        let pcm = Data(count: 4_800)
        #expect(try PCMWAV.header(dataByteCount: pcm.count, sampleRate: 24_000) + pcm == PCMWAV.wrap(pcm16LittleEndian: pcm, sampleRate: 24_000))
        // The largest data chunk a RIFF size holds, and one frame more.
        let largest = Int(UInt32.max) - (PCMWAV.headerSize - 8) - 1
        #expect(try PCMWAV.header(dataByteCount: largest - largest % 2, sampleRate: 24_000).count == PCMWAV.headerSize)
        #expect(throws: PCMWAVError.tooLarge(byteCount: Int(UInt32.max) + 1)) {
            try PCMWAV.header(dataByteCount: Int(UInt32.max) + 1, sampleRate: 24_000)
        }
        #expect(throws: PCMWAVError.partialFrame(byteCount: -2)) { try PCMWAV.header(dataByteCount: -2, sampleRate: 24_000) }
    }

    @Test func refusesWhatAHeaderCannotHold() {
        #expect(throws: PCMWAVError.partialFrame(byteCount: 3)) { try PCMWAV.wrap(pcm16LittleEndian: Data(count: 3), sampleRate: 24_000) }
        #expect(throws: PCMWAVError.partialFrame(byteCount: 6)) {
            try PCMWAV.wrap(pcm16LittleEndian: Data(count: 6), sampleRate: 24_000, channels: 2)
        }
        #expect(throws: PCMWAVError.invalidFormat(sampleRate: 0, channels: 1)) { try PCMWAV.wrap(pcm16LittleEndian: Data(), sampleRate: 0) }
        #expect(throws: PCMWAVError.invalidFormat(sampleRate: -8_000, channels: 1)) {
            try PCMWAV.wrap(pcm16LittleEndian: Data(), sampleRate: -8_000)
        }
        #expect(throws: PCMWAVError.invalidFormat(sampleRate: Int.max, channels: 1)) {
            try PCMWAV.wrap(pcm16LittleEndian: Data(), sampleRate: Int.max)
        }
        // A byte rate beyond UInt32: 2^31 Hz × 2 channels × 2 bytes.
        #expect(throws: PCMWAVError.invalidFormat(sampleRate: 1 << 31, channels: 2)) {
            try PCMWAV.wrap(pcm16LittleEndian: Data(), sampleRate: 1 << 31, channels: 2)
        }
        #expect(throws: PCMWAVError.invalidFormat(sampleRate: 24_000, channels: 0)) {
            try PCMWAV.wrap(pcm16LittleEndian: Data(), sampleRate: 24_000, channels: 0)
        }
    }
}
