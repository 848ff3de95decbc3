import ChorusAPI
import ChorusCore
import Foundation
import Testing

/// The AI's first words while answering-machine detection runs, and what a machine gets (issue 17).
@Suite("Opening gate and answering machines")
struct OpeningGateTests {
    enum Event: Sendable, CustomStringConvertible {
        case speechStarted(UInt64)
        case speechStopped(UInt64)
        case detected(AnsweredBy, UInt64)

        var at: UInt64 {
            switch self {
            case .speechStarted(let t), .speechStopped(let t), .detected(_, let t): t
            }
        }

        var description: String {
            switch self {
            case .speechStarted(let t): "speech started at \(t)"
            case .speechStopped(let t): "speech stopped at \(t)"
            case .detected(let result, let t): "\(result.rawValue) at \(t)"
            }
        }
    }

    struct Outcome: Equatable, CustomStringConvertible {
        /// When `startResponse` (or the model's own answer) was released, in ms after the answer.
        var releasedAt: Int?
        var cause: MediaStreamBridgeMachine.ReleaseCause?
        var ended: EndedReason?
        var leftMessage = false
        var sentStartResponse = false

        var description: String {
            "released \(releasedAt.map(String.init) ?? "-") (\(cause?.rawValue ?? "-")), ended \(ended?.rawValue ?? "-"), "
                + "message \(leftMessage), response.create \(sentStartResponse)"
        }
    }

    /// Plays `events` (times in ms after the answer, which is t=0) through a machine with detection on, firing its
    /// deadlines as a timer would, up to `until`.
    static func play(_ events: [Event], voicemail: VoicemailPolicy = .hangUp, until: UInt64 = 40_000) -> (Outcome, MediaStreamBridgeMachine) {
        var machine = MediaStreamBridgeMachine(durationLimitSeconds: 120, gate: .detection, voicemail: voicemail)
        var outcome = Outcome()
        func apply(_ actions: [MediaStreamBridgeMachine.Action], at now: UInt64) {
            for action in actions {
                switch action {
                case .enableTurnResponses:
                    if outcome.releasedAt == nil {
                        outcome.releasedAt = Int(now)
                        outcome.cause = machine.releaseCause
                    }
                case .startResponse: outcome.sentStartResponse = true
                case .end(let reason): outcome.ended = reason
                case .leaveMessage: outcome.leftMessage = true
                default: break
                }
            }
        }
        apply(machine.streamStarted(at: 0), at: 0)
        apply(machine.realtimeConfigured(), at: 0)
        var pending = events.sorted { $0.at < $1.at }[...]
        while !machine.isEnded {
            let nextEvent = pending.first?.at
            let deadline = machine.nextDeadline
            guard let now = [nextEvent, deadline].compactMap({ $0 }).min(), now <= until else { break }
            if let deadline, deadline <= (nextEvent ?? .max) {
                apply(machine.deadlineReached(at: deadline), at: deadline)
                if machine.nextDeadline == deadline { break }  // nothing more would change
                continue
            }
            let event = pending.removeFirst()
            switch event {
            case .speechStarted(let t): apply(machine.calleeStartedSpeaking(at: t), at: t)
            case .speechStopped(let t): machine.calleeStoppedSpeaking(at: t)
            case .detected(let result, let t): apply(machine.machineDetected(result, at: t), at: t)
            }
        }
        return (outcome, machine)
    }

    struct Case: Sendable, CustomStringConvertible {
        let name: String
        let events: [Event]
        let releasedAt: Int?
        let cause: MediaStreamBridgeMachine.ReleaseCause?
        let ended: EndedReason?
        var description: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "a person says hello: released 300 ms after the model's end of speech, before detection",
            events: [.speechStarted(400), .speechStopped(1_500), .detected(.human, 2_900)], releasedAt: 1_800, cause: .utteranceEnded,
            ended: nil),
        Case(
            name: "detection says human first (the callee still silent)", events: [.detected(.human, 1_900)], releasedAt: 1_900,
            cause: .detectedHuman, ended: nil),
        Case(
            name: "a person who waits silently: released after 2.5 s of silence", events: [.detected(.unknown, 5_000)], releasedAt: 2_500,
            cause: .silentAnswer, ended: nil),
        Case(
            name: "a person who says hello twice: the second start cancels the first release",
            events: [.speechStarted(300), .speechStopped(1_000), .speechStarted(1_200), .speechStopped(2_000)], releasedAt: 2_300,
            cause: .utteranceEnded, ended: nil),
        Case(
            name: "a long greeting: held until detection reports the machine, which is hung up on without a word",
            events: [.speechStarted(400), .speechStopped(5_900), .detected(.machineEndBeep, 6_700)], releasedAt: nil, cause: nil,
            ended: .voicemail),
        Case(
            name: "a greeting with a pause: the long first part keeps the hold through the pause",
            events: [.speechStarted(400), .speechStopped(4_000), .speechStarted(4_300), .speechStopped(6_000), .detected(.machineEndSilence, 7_200)],
            releasedAt: nil, cause: nil, ended: .voicemail),
        Case(
            name: "a fax machine: hung up on", events: [.speechStarted(300), .speechStopped(3_900), .detected(.fax, 2_700)], releasedAt: nil,
            cause: nil, ended: .fax),
        Case(
            name: "detection never reports and the greeting never ends: released at 30 s",
            events: [.speechStarted(400), .speechStopped(10_000)], releasedAt: 30_000, cause: .holdTimeout, ended: nil),
        Case(
            name: "detection reports machine_start (Enable mode): nothing changes until the end is reported",
            events: [.speechStarted(400), .detected(.machineStart, 2_800), .speechStopped(6_000)], releasedAt: 30_000, cause: .holdTimeout,
            ended: nil),
        Case(
            name: "a greeting that starts late: the silent-answer rule speaks, detection then hangs up (no charge)",
            events: [.speechStarted(2_700), .speechStopped(8_000), .detected(.machineEndBeep, 8_800)], releasedAt: 2_500, cause: .silentAnswer,
            ended: .voicemail),
    ]

    @Test("When the first words are released, and why", arguments: cases)
    func table(_ item: Case) {
        let (outcome, machine) = Self.play(item.events)
        #expect(outcome.releasedAt == item.releasedAt, "\(item.name): \(outcome)")
        #expect(outcome.cause == item.cause, "\(item.name): \(outcome)")
        #expect(outcome.ended == item.ended, "\(item.name): \(outcome)")
        if item.releasedAt != nil {
            #expect(machine.releasedAfterMilliseconds == item.releasedAt)
        }
        // Nothing was said before the release.
        if item.releasedAt == nil { #expect(!outcome.sentStartResponse) }
    }

    @Test("Released while the callee speaks: the model answers when they stop (no response.create over them)")
    func releasedMidSentence() {
        var machine = MediaStreamBridgeMachine(durationLimitSeconds: 60, gate: .detection)
        _ = machine.realtimeConfigured()
        #expect(machine.streamStarted(at: 0) == [])
        #expect(machine.calleeStartedSpeaking(at: 500) == [])
        #expect(machine.machineDetected(.human, at: 1_800) == [.enableTurnResponses])
        machine.calleeStoppedSpeaking(at: 2_300)
        #expect(machine.deadlineReached(at: 2_600) == [])
        #expect(machine.opening == .released)
    }

    @Test("The session opening after the release still turns the model's answers on and speaks")
    func releasedBeforeSession() {
        var machine = MediaStreamBridgeMachine(durationLimitSeconds: 60, gate: .detection)
        _ = machine.streamStarted(at: 0)
        #expect(machine.machineDetected(.human, at: 100) == [])
        #expect(machine.realtimeConfigured() == [.enableTurnResponses, .startResponse])
    }

    @Test("Detection before the stream was accepted applies when it starts")
    func detectionBeforeStream() {
        var machine = MediaStreamBridgeMachine(durationLimitSeconds: 60, gate: .detection)
        _ = machine.realtimeConfigured()
        #expect(machine.machineDetected(.fax, at: 10) == [])
        #expect(machine.streamStarted(at: 20) == [.end(.fax)])
    }

    @Test("Without detection the AI speaks at once and the session answers turns from the start")
    func immediate() {
        var machine = MediaStreamBridgeMachine(durationLimitSeconds: 60, gate: .immediate)
        _ = machine.realtimeConfigured()
        #expect(machine.streamStarted(at: 0) == [.startResponse])
        #expect(machine.nextDeadline == nil)
    }

    @Test("Leaving a message: asked for after the greeting, played without barge-in, the call ends once it has played")
    func leavesMessage() {
        var machine = MediaStreamBridgeMachine(durationLimitSeconds: 60, gate: .detection, voicemail: .leaveMessage)
        _ = machine.realtimeConfigured()
        _ = machine.streamStarted(at: 0)
        _ = machine.calleeStartedSpeaking(at: 400)
        machine.calleeStoppedSpeaking(at: 5_900)
        #expect(machine.machineDetected(.machineEndBeep, at: 6_700) == [.leaveMessage])
        #expect(machine.opening == .leavingMessage)
        guard case .forward(let first) = machine.assistantAudio(itemID: "msg", milliseconds: 200, at: 7_000),
            case .forward(let last) = machine.assistantAudio(itemID: "msg", milliseconds: 200, at: 7_010)
        else {
            Issue.record("the message was not forwarded")
            return
        }
        // The machine's noise is no barge-in.
        #expect(machine.calleeStartedSpeaking(at: 7_100) == [])
        #expect(machine.markAcknowledged(first, at: 7_200) == [])
        #expect(machine.responseDone() == [])  // its audio is still playing
        #expect(machine.markAcknowledged(last, at: 7_400) == [.end(.voicemailMessage)])
    }

    @Test("Leaving a message after the AI already spoke to the greeting: cleared, cancelled, then the message")
    func leavesMessageAfterEarlyRelease() {
        var machine = MediaStreamBridgeMachine(durationLimitSeconds: 60, gate: .detection, voicemail: .leaveMessage)
        _ = machine.realtimeConfigured()
        _ = machine.streamStarted(at: 0)
        #expect(machine.deadlineReached(at: 2_500) == [.enableTurnResponses, .startResponse])
        _ = machine.assistantAudio(itemID: "hello", milliseconds: 500, at: 3_000)
        let actions = machine.machineDetected(.machineEndSilence, at: 3_100)
        #expect(actions.first == .clearTwilio)
        #expect(Array(actions.suffix(2)) == [.cancelResponse, .leaveMessage])
        // The cancelled response's audio is dropped; its done does not end the message.
        #expect(machine.assistantAudio(itemID: "hello", milliseconds: 100, at: 3_200) == .drop)
        #expect(machine.responseDone() == [])
        _ = machine.assistantAudio(itemID: "msg", milliseconds: 100, at: 3_300)
        #expect(machine.responseDone() == [])
        // A message that never finishes is cut at 30 s; a machine hanging up ends it too.
        #expect(machine.nextDeadline == 3_100 + 30_000)
        #expect(machine.streamStopped(at: 9_000) == [.end(.voicemailMessage)])
    }

    @Test("A fax never gets a message; a person is never left one")
    func messagesOnlyForMachines() {
        let (fax, _) = Self.play([.detected(.fax, 3_000)], voicemail: .leaveMessage)
        #expect(fax.ended == .fax && !fax.leftMessage)
        let (person, _) = Self.play([.speechStarted(300), .speechStopped(1_200), .detected(.human, 2_500)], voicemail: .leaveMessage)
        #expect(person.ended == nil && !person.leftMessage && person.sentStartResponse)
    }

    @Test("Only voicemail and fax endings give the charge back")
    func releasesCharge() {
        #expect(EndedReason.allCases.filter(\.releasesCharge) == [.voicemail, .fax])
    }
}
