import Foundation
import Testing

@testable import ChorusCore

@Suite("MP3 joining")
struct MP3JoinerTests {
    /// MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, stereo, no padding: 417-byte frames of 1,152 samples.
    static let header: [UInt8] = [0xFF, 0xFB, 0x90, 0x00]
    static let frameLength = 417

    static func frame(fill: UInt8) -> [UInt8] {
        header + [UInt8](repeating: fill, count: frameLength - 4)
    }

    /// A Xing summary frame saying `frames` audio frames follow.
    static func xing(frames: UInt32) -> [UInt8] {
        var bytes = header + [UInt8](repeating: 0, count: frameLength - 4)
        let at = 4 + 32
        bytes.replaceSubrange(at..<(at + 4), with: Array("Xing".utf8))
        bytes.replaceSubrange((at + 4)..<(at + 8), with: [0, 0, 0, 1])
        bytes.replaceSubrange((at + 8)..<(at + 12), with: withUnsafeBytes(of: frames.bigEndian, Array.init))
        return bytes
    }

    static func id3(_ text: String) -> [UInt8] {
        let body = Array(text.utf8)
        let size = body.count
        return Array("ID3".utf8) + [4, 0, 0] + [UInt8(size >> 21 & 0x7F), UInt8(size >> 14 & 0x7F), UInt8(size >> 7 & 0x7F), UInt8(size & 0x7F)]
            + body
    }

    static func mp3(frames: Int, fill: UInt8, tagged: Bool = true, summary: Bool = true, trailer: Bool = true) -> Data {
        var bytes: [UInt8] = tagged ? id3("TXXX text of part \(fill)") : []
        if summary { bytes += xing(frames: UInt32(frames)) }
        for _ in 0..<frames { bytes += frame(fill: fill) }
        if trailer { bytes += Array("TAG".utf8) + [UInt8](repeating: 0x20, count: 125) }
        return Data(bytes)
    }

    @Test("one file's frames: tags and the summary frame are dropped, the duration is exact")
    func framesOfOneFile() throws {
        let frames = try MP3Joiner.frames(of: Self.mp3(frames: 38, fill: 1))
        #expect(frames.frameCount == 38)
        #expect(frames.bytes.count == 38 * Self.frameLength)
        #expect(frames.sampleRate == 44_100 && frames.channels == 2)
        #expect(abs(frames.durationSeconds - 38 * 1_152 / 44_100.0) < 1e-9)
        #expect(frames.bytes.first == 0xFF && frames.bytes.last == 1)
        // Plain frames are taken as they are.
        #expect(try MP3Joiner.frames(of: Self.mp3(frames: 5, fill: 2, tagged: false, summary: false, trailer: false)).frameCount == 5)
    }

    @Test("joined parts are one stream whose duration is the sum of the parts', readable as one MP3")
    func joinParts() throws {
        let parts = try [Self.mp3(frames: 100, fill: 1), Self.mp3(frames: 60, fill: 2), Self.mp3(frames: 7, fill: 3)].map(MP3Joiner.frames)
        let joined = try MP3Joiner.join(parts)
        #expect(joined.frameCount == 167)
        #expect(abs(joined.durationSeconds - parts.map(\.durationSeconds).reduce(0, +)) < 1e-9)
        let info = try AudioContainer.inspect(joined.bytes)
        #expect(info.format == .mp3)
        #expect(abs(info.durationSeconds - joined.durationSeconds) < 1e-9)
        // In order: part 1's bytes, then 2's, then 3's.
        #expect(joined.bytes[Self.frameLength * 99 + 4] == 1 && joined.bytes[Self.frameLength * 100 + 4] == 2)
        #expect(joined.bytes[Self.frameLength * 160 + 4] == 3)
    }

    @Test("parts of different formats, no parts and non-MP3 data are refused")
    func refusals() throws {
        var mono = Self.mp3(frames: 3, fill: 9, tagged: false, summary: false, trailer: false)
        for offset in stride(from: 3, to: mono.count, by: Self.frameLength) { mono[offset] = 0xC0 }  // channel mode: mono
        let parts = [try MP3Joiner.frames(of: Self.mp3(frames: 3, fill: 1)), try MP3Joiner.frames(of: mono)]
        #expect(parts[1].channels == 1)
        #expect(throws: MP3JoinError.formatMismatch) { try MP3Joiner.join(parts) }
        #expect(throws: MP3JoinError.noParts) { try MP3Joiner.join([]) }
        #expect(throws: AudioContainerError.unsupportedFormat) { try MP3Joiner.frames(of: Data("RIFF....WAVEfmt ".utf8)) }
        let cut = Self.mp3(frames: 4, fill: 1, tagged: false, summary: false, trailer: false).dropLast(100)
        #expect(throws: AudioContainerError.self) { try MP3Joiner.frames(of: Data(cut)) }
    }
}
