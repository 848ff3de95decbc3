import ChorusCore
import Foundation

/// Speech audio for the simulated callee and the simulated AI: 8 kHz μ-law, the telephone format.
///
/// With `espeak-ng` on the `PATH` the text is really spoken (and resampled to 8 kHz); otherwise a deterministic
/// voice-like signal stands in: a glottal pulse train at a speaking pitch shaped into syllables and words, loud enough
/// for an energy-based speech detector and ~14 characters per second long, like speech.
public enum SandboxSpeech {
    /// Whether `espeak-ng` is available (checked once).
    public static let hasSpeechSynthesizer: Bool = findExecutable("espeak-ng") != nil

    /// `text` as 8 kHz μ-law speech; `voice` varies the pitch of the synthetic signal.
    public static func speak(_ text: String, voice: Int = 0, preferSynthesizer: Bool = true) -> [UInt8] {
        if preferSynthesizer, let spoken = espeak(text) { return spoken }
        return synthetic(text, voice: voice)
    }

    /// The deterministic voice-like signal for `text` (no external program).
    public static func synthetic(_ text: String, voice: Int = 0) -> [UInt8] {
        let rate = Double(MuLaw.sampleRate)
        let words = text.split(whereSeparator: { $0.isWhitespace })
        var samples: [Int16] = []
        let pitch = 110.0 + Double((voice % 5 + 5) % 5) * 25
        var phase = 0.0
        for (index, word) in words.enumerated() {
            let syllables = max(1, word.count / 3)
            for syllable in 0..<syllables {
                let length = Int(rate * (0.16 + 0.02 * Double((index + syllable) % 3)))
                let f0 = pitch * (1 + 0.08 * sin(Double(index * 3 + syllable)))
                for n in 0..<length {
                    let envelope = sin(Double.pi * Double(n) / Double(length))
                    phase += f0 / rate
                    if phase >= 1 { phase -= 1 }
                    // A pulse-like waveform (decaying harmonics) sounds voiced and carries energy in the speech band.
                    var value = 0.0
                    for harmonic in 1...6 { value += sin(2 * .pi * phase * Double(harmonic)) / Double(harmonic) }
                    samples.append(Int16(max(-32_000, min(32_000, value * envelope * 9_000))))
                }
            }
            // A short pause between words, a longer one after punctuation.
            let pause = word.last.map { ".,!?;:".contains($0) } == true ? 0.25 : 0.06
            samples.append(contentsOf: repeatElement(0, count: Int(rate * pause)))
        }
        return MuLaw.encode(samples)
    }

    private static func espeak(_ text: String) -> [UInt8]? {
        guard let executable = findExecutable("espeak-ng") else { return nil }
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--stdout", "-s", "165", text]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let pcm = WAV.pcm16(data) else { return nil }
        return MuLaw.encode(WAV.resample(pcm.samples, from: pcm.sampleRate, to: MuLaw.sampleRate))
    }

    private static func findExecutable(_ name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}

/// The little of WAV that reading `espeak-ng --stdout` needs.
enum WAV {
    /// The 16-bit mono PCM samples of a RIFF/WAVE file, or `nil` for anything else.
    static func pcm16(_ data: Data) -> (samples: [Int16], sampleRate: Int)? {
        let bytes = [UInt8](data)
        guard bytes.count > 44, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else { return nil }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        var offset = 12
        var sampleRate = 0
        var bits = 0
        var channels = 0
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            // espeak-ng writes 0xFFFFFFFF as the data size when streaming to a pipe.
            var size = u32(offset + 4)
            let body = offset + 8
            if id == "fmt " {
                channels = u16(body + 2)
                sampleRate = u32(body + 4)
                bits = u16(body + 14)
            } else if id == "data" {
                guard bits == 16, channels == 1, sampleRate > 0 else { return nil }
                size = min(size, bytes.count - body)
                var samples = [Int16](repeating: 0, count: size / 2)
                for index in samples.indices { samples[index] = Int16(bitPattern: UInt16(u16(body + index * 2))) }
                return (samples, sampleRate)
            }
            offset = body + size + (size & 1)
        }
        return nil
    }

    /// Linear-interpolation resampling (enough for telephone-band test speech).
    static func resample(_ samples: [Int16], from source: Int, to target: Int) -> [Int16] {
        guard source != target, !samples.isEmpty else { return samples }
        let count = samples.count * target / source
        let step = Double(source) / Double(target)
        return (0..<count).map { index in
            let position = Double(index) * step
            let base = Int(position)
            let next = min(base + 1, samples.count - 1)
            let fraction = position - Double(base)
            return Int16(Double(samples[base]) * (1 - fraction) + Double(samples[next]) * fraction)
        }
    }
}
