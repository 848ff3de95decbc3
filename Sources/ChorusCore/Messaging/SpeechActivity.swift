import Foundation

/// What a recording's own samples say about the speech in it, for ``TranscriptQuality`` when the model reports no
/// certainty (`gpt-transcribe`): whether anything is audible, how far speech stands above the background, how many
/// syllables were spoken and whether speech runs into the end of the file (the speaker was cut off).
///
/// Measured on 10 ms frames of 16-bit PCM: the background is the 10th percentile of the frame levels, speech the 95th;
/// a frame is voiced when it is above both the silence level and twice the background (+6 dB); a syllable is a rise of
/// the level by ``syllableRiseDecibels`` in voiced frames followed by a fall by as much (the energy-envelope nuclei
/// count used for speech-rate estimation); speech in the last 150 ms means the speaker was cut off. Only WAV recordings can be measured: Chorus decodes no AAC or MP3.
public struct SpeechActivity: Sendable, Equatable {
    /// The recording's length.
    public var seconds: Double
    /// Frames holding speech (above the silence level and 6 dB above the background).
    public var voicedSeconds: Double
    /// The 95th-percentile frame level over the 10th (the background), in dB; 0 for silence.
    public var signalToNoiseDecibels: Double
    /// Energy peaks in the voiced frames: about one per spoken syllable.
    public var syllables: Int
    /// Speech reaches into the last ``endWindowSeconds``: the recording stopped while someone was speaking (people
    /// stop a recording a few hundred milliseconds after their last word at the earliest).
    public var endsInSpeech: Bool
    /// Nothing in the recording reaches the silence level.
    public var isSilent: Bool

    public init(
        seconds: Double, voicedSeconds: Double, signalToNoiseDecibels: Double, syllables: Int, endsInSpeech: Bool, isSilent: Bool
    ) {
        self.seconds = seconds
        self.voicedSeconds = voicedSeconds
        self.signalToNoiseDecibels = signalToNoiseDecibels
        self.syllables = syllables
        self.endsInSpeech = endsInSpeech
        self.isSilent = isSilent
    }

    /// The frame length.
    public static let frameSeconds = 0.01
    /// RMS level (of 32,767) below which a frame is silence: about −50 dBFS.
    public static let silenceLevel = 104.0
    /// How far a frame must stand above the background to be voiced (a factor of 2 in amplitude).
    public static let voicedAboveBackgroundDecibels = 6.0
    /// The rise and fall of the level that make one syllable nucleus.
    public static let syllableRiseDecibels = 4.0
    /// The end of the recording in which any voiced frame means ``endsInSpeech``.
    public static let endWindowSeconds = 0.15

    /// The activity of a 16-bit PCM WAV file (mono, or stereo averaged); `nil` for anything else.
    public static func measure(wav: Data) -> SpeechActivity? {
        guard let audio = try? WAVSplicer.decode(wav) else { return nil }
        return measure(samples: audio.samples, sampleRate: audio.sampleRate)
    }

    /// The activity of mono samples at `sampleRate` (1 … 384,000 Hz; anything else measures as an empty recording).
    public static func measure(samples: [Int16], sampleRate: Int) -> SpeechActivity {
        guard (1...384_000).contains(sampleRate) else {
            return SpeechActivity(seconds: 0, voicedSeconds: 0, signalToNoiseDecibels: 0, syllables: 0, endsInSpeech: false, isSilent: true)
        }
        let frameLength = max(1, Int((Double(sampleRate) * frameSeconds).rounded()))
        var levels: [Double] = []
        levels.reserveCapacity(samples.count / frameLength + 1)
        var start = 0
        while start < samples.count {
            let end = min(samples.count, start + frameLength)
            var sum = 0.0
            for sample in samples[start..<end] { sum += Double(sample) * Double(sample) }
            levels.append((sum / Double(end - start)).squareRoot())
            start = end
        }
        let seconds = Double(samples.count) / Double(sampleRate)
        let frameDuration = Double(frameLength) / Double(sampleRate)
        let sorted = levels.sorted()
        func percentile(_ p: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
        }
        let background = max(1, percentile(0.10))
        let speech = percentile(0.95)
        guard speech >= silenceLevel else {
            return SpeechActivity(
                seconds: seconds, voicedSeconds: 0, signalToNoiseDecibels: 0, syllables: 0, endsInSpeech: false, isSilent: true)
        }
        let threshold = max(silenceLevel, background * pow(10, voicedAboveBackgroundDecibels / 20))
        let voiced = levels.map { $0 >= threshold }
        let voicedFrames = voiced.lazy.filter { $0 }.count

        // Syllable nuclei: hysteresis on the level in dB, counted only in voiced frames.
        var syllables = 0
        var rising = true
        var extreme = 0.0  // the lowest level (dB) while rising, the highest while falling
        for (level, isVoiced) in zip(levels, voiced) {
            let decibels = 20 * log10(max(1, level))
            guard isVoiced else {
                rising = true
                extreme = decibels
                continue
            }
            if rising {
                extreme = min(extreme, decibels)
                if decibels - extreme >= syllableRiseDecibels {
                    syllables += 1
                    rising = false
                    extreme = decibels
                }
            } else {
                if decibels > extreme { extreme = decibels }
                if extreme - decibels >= syllableRiseDecibels {
                    rising = true
                    extreme = decibels
                }
            }
        }
        let endFrames = max(1, Int((endWindowSeconds / frameDuration).rounded()))
        let endsInSpeech = voiced.suffix(endFrames).contains(true)
        return SpeechActivity(
            seconds: seconds, voicedSeconds: Double(voicedFrames) * frameDuration,
            signalToNoiseDecibels: 20 * log10(max(1, speech) / background), syllables: syllables, endsInSpeech: endsInSpeech,
            isSilent: false)
    }
}
