import Foundation

/// Who may store voice data and clone a voice, and what a cloning sample must be (PRD §C, issue 6).
///
/// Accounts record only a birth year, so ages are the lowest the person can have: the current UTC calendar year minus
/// the birth year minus one, since their birthday this year may not have come yet. That errs towards "too young".
public enum VoiceDataPolicy {
    /// Voice cloning is for adults only.
    public static let minimumCloningAge = 18
    /// COPPA: no voice data from children under 13.
    public static let minimumStorageAge = 13
    /// ElevenLabs instant cloning needs at least this much speech; the PRD's 30 s script is the floor.
    public static let minimumSampleSeconds = 30.0
    /// More than three minutes does not improve an instant clone (research notes §1.8).
    public static let maximumSampleSeconds = 180.0

    /// The lowest age someone born in `birthYear` can have at `now`.
    public static func minimumAge(birthYear: Int, now: Date) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        return calendar.component(.year, from: now) - birthYear - 1
    }

    /// Only an account whose birth year proves 18 or more may clone a voice; an unknown birth year may not.
    public static func canCloneVoice(birthYear: Int?, now: Date) -> Bool {
        guard let birthYear else { return false }
        return minimumAge(birthYear: birthYear, now: now) >= minimumCloningAge
    }

    /// An account may store recordings, transcripts and voice profiles unless its birth year says it may be under 13.
    /// Accounts without a birth year passed the app's age gate at sign-up and are not known to be children.
    public static func mayStoreVoiceData(birthYear: Int?, now: Date) -> Bool {
        guard let birthYear else { return true }
        return minimumAge(birthYear: birthYear, now: now) >= minimumStorageAge
    }

    /// Checks the length of a voice-cloning sample.
    public static func checkCloningSample(durationSeconds: Double) throws(VoiceSampleError) {
        guard durationSeconds >= minimumSampleSeconds else {
            throw .tooShort(seconds: durationSeconds, minimumSeconds: minimumSampleSeconds)
        }
        guard durationSeconds <= maximumSampleSeconds else {
            throw .tooLong(seconds: durationSeconds, maximumSeconds: maximumSampleSeconds)
        }
    }
}

/// A voice-cloning sample of the wrong length.
public enum VoiceSampleError: Error, Sendable, Equatable {
    case tooShort(seconds: Double, minimumSeconds: Double)
    case tooLong(seconds: Double, maximumSeconds: Double)

    /// What to tell the person recording ("Your sample is 12 seconds long. Record at least 30 seconds.").
    public var message: String {
        switch self {
        case .tooShort(let seconds, let minimum):
            "Your sample is \(Self.spoken(seconds.rounded(.down))) long. Record at least \(Self.spoken(minimum))."
        case .tooLong(let seconds, let maximum):
            "Your sample is \(Self.spoken(seconds.rounded(.up))) long. Keep it to \(Self.spoken(maximum)) or less."
        }
    }

    /// "45 seconds", "2 minutes", "3 minutes 5 seconds".
    static func spoken(_ seconds: Double) -> String {
        let total = max(0, Int(clampingRounded: seconds, .towardZero))
        let minutes = total / 60
        let rest = total % 60
        func unit(_ count: Int, _ name: String) -> String { "\(count) \(name)\(count == 1 ? "" : "s")" }
        switch (minutes, rest) {
        case (0, _): return unit(rest, "second")
        case (_, 0): return unit(minutes, "minute")
        default: return "\(unit(minutes, "minute")) \(unit(rest, "second"))"
        }
    }
}

/// When a recording is deleted (PRD 1.3: after 30 days by default, per-user configurable; starred messages kept).
public enum RecordingExpiry: Sendable, Equatable {
    /// Kept until its owner deletes it (starred).
    case never
    case at(Date)

    /// Whether the recording should be gone at `now`.
    public func isExpired(now: Date) -> Bool {
        switch self {
        case .never: false
        case .at(let date): now >= date
        }
    }
}

/// How long recordings are kept.
public enum RetentionPolicy {
    public static let defaultDays = 30
    /// The retention a user may choose.
    public static let allowedDays = 1...365

    /// When a recording sent at `sentAt` expires: `retentionDays` whole days (of 86,400 s) later, never when starred.
    /// Days outside ``allowedDays`` are clamped into it.
    public static func expiry(sentAt: Date, retentionDays: Int, starred: Bool) -> RecordingExpiry {
        guard !starred else { return .never }
        let days = min(max(retentionDays, allowedDays.lowerBound), allowedDays.upperBound)
        return .at(sentAt.addingTimeInterval(Double(days) * 86_400))
    }
}
