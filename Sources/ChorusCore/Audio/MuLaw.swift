import Foundation

/// G.711 μ-law, the telephone audio format of Twilio Media Streams and OpenAI's `audio/pcmu`:
/// 8,000 samples per second, one byte per sample, so one millisecond is 8 bytes and a 20 ms frame 160 bytes.
public enum MuLaw {
    /// Samples per second.
    public static let sampleRate = 8_000
    /// Bytes (samples) per millisecond.
    public static let bytesPerMillisecond = 8
    /// The byte of digital silence.
    public static let silence: UInt8 = 0xFF

    private static let bias: Int32 = 0x84
    private static let clip: Int32 = 32_635

    /// Encodes one 16-bit linear PCM sample.
    public static func encode(_ sample: Int16) -> UInt8 {
        var value = Int32(sample)
        let sign: Int32 = value < 0 ? 0x80 : 0
        if value < 0 { value = -value }
        value = min(value, clip) + bias
        var exponent: Int32 = 7
        var mask: Int32 = 0x4000
        while exponent > 0 && value & mask == 0 {
            exponent -= 1
            mask >>= 1
        }
        let mantissa = (value >> (exponent + 3)) & 0x0F
        return UInt8(truncatingIfNeeded: ~(sign | (exponent << 4) | mantissa))
    }

    /// Decodes one μ-law byte to 16-bit linear PCM.
    public static func decode(_ byte: UInt8) -> Int16 {
        let value = Int32(~byte)
        let sign = value & 0x80
        let exponent = (value >> 4) & 0x07
        let mantissa = value & 0x0F
        let magnitude = (((mantissa << 3) + bias) << exponent) - bias
        return Int16(sign != 0 ? -magnitude : magnitude)
    }

    /// Encodes linear PCM samples.
    public static func encode(_ samples: [Int16]) -> [UInt8] { samples.map { encode($0) } }

    /// Decodes μ-law bytes to linear PCM.
    public static func decode<Bytes: Sequence>(_ bytes: Bytes) -> [Int16] where Bytes.Element == UInt8 { bytes.map { decode($0) } }

    /// The root-mean-square level of μ-law audio, 0 (silence) … 32,767: what an energy-based speech detector compares.
    public static func rms<Bytes: Collection>(_ bytes: Bytes) -> Double where Bytes.Element == UInt8 {
        guard !bytes.isEmpty else { return 0 }
        var sum = 0.0
        for byte in bytes {
            let sample = Double(decode(byte))
            sum += sample * sample
        }
        return (sum / Double(bytes.count)).squareRoot()
    }

    /// Milliseconds of audio in `byteCount` μ-law bytes.
    public static func milliseconds(bytes byteCount: Int) -> Int { byteCount / bytesPerMillisecond }

    /// Milliseconds of audio in a base64 string of μ-law bytes, computed from its length without decoding it.
    public static func milliseconds(base64Length length: Int, padding: Int) -> Int {
        milliseconds(bytes: length / 4 * 3 - padding)
    }
}
