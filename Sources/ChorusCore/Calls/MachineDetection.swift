import Foundation

/// Who answered, as Twilio's answering-machine detection reports it (`AnsweredBy`).
public enum AnsweredBy: String, Sendable, Codable, CaseIterable {
    case human
    /// `MachineDetection=Enable` only: a machine, reported before its greeting ends.
    case machineStart = "machine_start"
    /// The greeting ended with a beep.
    case machineEndBeep = "machine_end_beep"
    /// The greeting ended with silence.
    case machineEndSilence = "machine_end_silence"
    /// The greeting ended, neither by a beep nor by silence.
    case machineEndOther = "machine_end_other"
    case fax
    /// Detection could not decide (for example a callee who stays silent).
    case unknown

    /// An answering machine whose greeting is over: a message recorded now is heard.
    public var isMachineEnd: Bool { self == .machineEndBeep || self == .machineEndSilence || self == .machineEndOther }
}

/// What a call does when an answering machine answers. Built-in scenarios hang up; a custom scenario may leave a
/// message.
public enum VoicemailPolicy: String, Sendable, Codable, CaseIterable {
    /// Hang up without a word; the call is not charged.
    case hangUp = "hang_up"
    /// Once the greeting is over, the persona leaves a short message, then the call hangs up.
    case leaveMessage = "leave_message"
}

/// When a call's AI may say its first words while answering-machine detection runs. Pure values; the rules are
/// applied by ``MediaStreamBridgeMachine``.
///
/// The AI's first words are held until one of: detection says `human` or `unknown`; the callee's first utterance
/// ended (the model's `speech_stopped`), it was short enough to be a person's "Hello?" and `quietAfterUtterance`
/// passed without more speech; nobody spoke for `silentAnswer` after the answer (someone who picks up and waits);
/// or `maximumHold` passed (detection never reported). A long first utterance is a greeting: only detection
/// releases it.
public struct OpeningGate: Sendable, Equatable {
    /// Whether the first words wait at all (`false`: the AI speaks as soon as the call is answered).
    public var holdsForDetection: Bool
    /// Silence after the end of a short first utterance before the AI speaks.
    public var quietAfterUtteranceMilliseconds: Int
    /// A first utterance longer than this (from `speech_started` to `speech_stopped`, which comes after the model's
    /// 500 ms of silence) is taken for a machine's greeting.
    public var longestHumanGreetingMilliseconds: Int
    /// No speech at all this long after the answer: the callee waits for the caller, who speaks.
    public var silentAnswerMilliseconds: Int
    /// The longest the first words are held.
    public var maximumHoldMilliseconds: Int
    /// The longest a message left on a machine may play before the call is hung up.
    public var longestMessageMilliseconds: Int

    public init(
        holdsForDetection: Bool, quietAfterUtteranceMilliseconds: Int = 300, longestHumanGreetingMilliseconds: Int = 3_000,
        silentAnswerMilliseconds: Int = 2_500, maximumHoldMilliseconds: Int = 30_000, longestMessageMilliseconds: Int = 30_000
    ) {
        self.holdsForDetection = holdsForDetection
        self.quietAfterUtteranceMilliseconds = quietAfterUtteranceMilliseconds
        self.longestHumanGreetingMilliseconds = longestHumanGreetingMilliseconds
        self.silentAnswerMilliseconds = silentAnswerMilliseconds
        self.maximumHoldMilliseconds = maximumHoldMilliseconds
        self.longestMessageMilliseconds = longestMessageMilliseconds
    }

    /// The AI speaks as soon as the call is answered (no detection).
    public static let immediate = OpeningGate(holdsForDetection: false)
    /// The defaults with detection on.
    public static let detection = OpeningGate(holdsForDetection: true)
}

/// The instruction of the message a scenario leaves on an answering machine (`response.create` instructions: the
/// persona's session instructions stay in force).
public enum VoicemailInstructions {
    public static let leaveMessage = """
        The call reached an answering machine and its greeting is over: you are now recording a voicemail. Stay in your \
        persona and leave one short message of at most three sentences (under 20 seconds): say who is calling and why, \
        in the language of your instructions. Do not ask questions and do not wait for an answer; end with a short goodbye.
        """

    /// The message's instructions; a call that opens with a disclosure leaves it first, word for word (a recorded
    /// message is an AI-generated call too).
    public static func leaveMessage(disclosure: String?) -> String {
        guard let disclosure, !disclosure.isEmpty else { return leaveMessage }
        return leaveMessage + " Start the message with exactly the words between the quotation marks « », then continue: «\(disclosure)»"
    }
}
