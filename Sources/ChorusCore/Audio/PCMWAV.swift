import Foundation

/// Why raw PCM could not be put in a WAV file.
public enum PCMWAVError: Error, Sendable, Equatable {
    /// 16-bit PCM has two bytes per sample (per channel); the byte count is not a whole number of frames.
    case partialFrame(byteCount: Int)
    /// The sample rate or channel count is outside what a WAV header holds (1…`UInt32.max` Hz, 1…`UInt16.max`
    /// channels, a byte rate within `UInt32`).
    case invalidFormat(sampleRate: Int, channels: Int)
    /// The audio is larger than a RIFF file can describe (4 GiB).
    case tooLarge(byteCount: Int)
}

/// Raw little-endian 16-bit PCM (ElevenLabs' `pcm_<rate>` output) in a RIFF/WAVE file: a 44-byte header written in
/// front of the bytes, with every size computed with overflow checks.
public enum PCMWAV {
    /// The header's length in bytes.
    public static let headerSize = 44

    /// `pcm` (16-bit signed little-endian, interleaved `channels`) at `sampleRate` Hz as a WAV file.
    public static func wrap(pcm16LittleEndian pcm: Data, sampleRate: Int, channels: Int = 1) throws -> Data {
        try header(dataByteCount: pcm.count, sampleRate: sampleRate, channels: channels) + pcm
    }

    /// The 44-byte header of a WAV file whose `data` chunk holds `dataByteCount` bytes of 16-bit PCM (`channels`
    /// interleaved, `sampleRate` Hz): for audio written after its header, e.g. spooled to a file and the header
    /// rewritten at the end.
    public static func header(dataByteCount: Int, sampleRate: Int, channels: Int = 1) throws -> Data {
        guard sampleRate > 0, sampleRate <= Int(UInt32.max), channels > 0, channels <= Int(UInt16.max) else {
            throw PCMWAVError.invalidFormat(sampleRate: sampleRate, channels: channels)
        }
        let (blockAlign, blockOverflow) = channels.multipliedReportingOverflow(by: 2)
        guard !blockOverflow, blockAlign <= Int(UInt16.max) else { throw PCMWAVError.invalidFormat(sampleRate: sampleRate, channels: channels) }
        let (byteRate, rateOverflow) = sampleRate.multipliedReportingOverflow(by: blockAlign)
        guard !rateOverflow, byteRate <= Int(UInt32.max) else { throw PCMWAVError.invalidFormat(sampleRate: sampleRate, channels: channels) }
        guard dataByteCount >= 0, dataByteCount % blockAlign == 0 else { throw PCMWAVError.partialFrame(byteCount: dataByteCount) }
        let (riffSize, sizeOverflow) = dataByteCount.addingReportingOverflow(headerSize - 8)
        guard !sizeOverflow, riffSize <= Int(UInt32.max) else { throw PCMWAVError.tooLarge(byteCount: dataByteCount) }

        var header = Data(capacity: headerSize)
        func ascii(_ text: String) { header.append(contentsOf: Array(text.utf8)) }
        func le16(_ value: Int) { withUnsafeBytes(of: UInt16(value).littleEndian) { header.append(contentsOf: $0) } }
        func le32(_ value: Int) { withUnsafeBytes(of: UInt32(value).littleEndian) { header.append(contentsOf: $0) } }
        ascii("RIFF")
        le32(riffSize)
        ascii("WAVE")
        ascii("fmt ")
        le32(16)
        le16(1)  // PCM
        le16(channels)
        le32(sampleRate)
        le32(byteRate)
        le16(blockAlign)
        le16(16)
        ascii("data")
        le32(dataByteCount)
        return header
    }
}
