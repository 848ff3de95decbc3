import ChorusCore
import Foundation
import Testing

@Suite("Call disclosure and opt-out (issue 17)")
struct CallDisclosureTests {
    @Test(
        "A persona's language is the one whose function words it uses most; English otherwise",
        arguments: [
            ("You are Sam, an old friend who calls to catch up with the person.", CallLanguage.english),
            ("Eres Lucía, una vieja amiga que llama para charlar con la persona y contarle un secreto.", .spanish),
            ("Tu es Paul, un ami qui appelle pour prendre des nouvelles et raconter une histoire.", .french),
            ("Du bist Anna, eine alte Freundin, die anruft und mit der Person über den Urlaub spricht.", .german),
            ("Sei Marco, un vecchio amico che chiama per raccontare una storia della sua vacanza.", .italian),
            ("", .english),
            ("12345 !!!", .english),
        ])
    func language(_ persona: String, _ expected: CallLanguage) {
        #expect(CallLanguage.detect(persona) == expected)
    }

    @Test(
        "The disclosure names a first name only when the display name is one; otherwise 'a user' in the call's language",
        arguments: [
            ("maria", "Maria"), ("Jean-Luc Picard", "Jean-Luc"), ("O'Brien", "O'Brien"), ("José", "José"),
            ("someone@example.com", nil), ("R2D2", nil), ("", nil), ("   ", nil), ("Bartholomew-Alexander-Maximilian", nil), ("-x", nil),
        ] as [(String, String?)])
    func firstNames(_ displayName: String, _ expected: String?) {
        #expect(CallDisclosure.firstName(from: displayName) == expected)
    }

    @Test("Built-in disclosures: every language, the caller's name or 'a user' filled in, the opt-out key named")
    func defaultTexts() {
        let disclosure = CallDisclosure()
        for language in CallLanguage.allCases {
            let named = disclosure.text(language: language, callerName: "Maria")
            #expect(named.contains("Maria") && named.contains("Chorus") && named.contains(CallOptOut.key), "\(language): \(named)")
            #expect(!named.contains(CallDisclosure.placeholder))
            let anonymous = disclosure.text(language: language, callerName: nil)
            #expect(anonymous.contains(CallDisclosure.anonymousCaller(language)))
            #expect(CallDisclosure.problem(in: CallDisclosure.defaultTemplates[language]!) == nil)
        }
        #expect(
            disclosure.text(language: .english, callerName: nil)
                == "This is an AI-generated call from Chorus on behalf of a user. Say stop, or press 9, at any time and you will not be called again.")
        // A language without its own template falls back to English.
        let englishOnly = CallDisclosure(templates: [.english: "AI call for {caller}."])
        #expect(englishOnly.text(language: .german, callerName: nil) == "AI call for einem Nutzer.")
    }

    @Test("Templates are checked: not empty, at most 300 characters, no braces but the placeholder")
    func templateProblems() {
        #expect(CallDisclosure.problem(in: "AI call for {caller}.") == nil)
        #expect(CallDisclosure.problem(in: "AI call, no name.") == nil)
        #expect(CallDisclosure.problem(in: "  ") != nil)
        #expect(CallDisclosure.problem(in: String(repeating: "a", count: 301)) != nil)
        #expect(CallDisclosure.problem(in: "AI call for {name}.") != nil)
    }

    // MARK: - The bridge machine

    /// A machine with a disclosure whose stream started at t=1000 with a ready session: it has asked for the disclosure.
    private func disclosing() -> MediaStreamBridgeMachine {
        var machine = MediaStreamBridgeMachine(durationLimitSeconds: 60, disclosure: true)
        #expect(machine.realtimeConfigured() == [])
        #expect(machine.streamStarted(at: 1_000) == [.speakDisclosure])
        machine.responseCreated()
        return machine
    }

    private func forward(_ machine: inout MediaStreamBridgeMachine, _ item: String, at time: UInt64) -> String {
        guard case .forward(let mark) = machine.assistantAudio(itemID: item, milliseconds: 500, at: time) else {
            Issue.record("audio of \(item) was not forwarded")
            return ""
        }
        return mark
    }

    @Test("The disclosure is the first response; the persona speaks and answers turns only once it has played")
    func disclosureFirst() {
        var machine = disclosing()
        #expect(machine.disclosure == .speaking)
        let first = forward(&machine, "disclosure", at: 1_300)
        let last = forward(&machine, "disclosure", at: 1_310)
        #expect(machine.disclosureItem == "disclosure")
        #expect(machine.responseDone() == [])  // generated, still playing
        #expect(machine.markAcknowledged(first, at: 1_800) == [])
        #expect(machine.markAcknowledged(last, at: 2_300) == [.enableTurnResponses, .startResponse])
        #expect(machine.disclosure == .said)
        // The first words were the disclosure's.
        #expect(machine.firstAudioLatencyMilliseconds == 300)
    }

    @Test("A disclosure played out before its response.done: the persona follows the response.done")
    func disclosurePlayedBeforeDone() {
        var machine = disclosing()
        let mark = forward(&machine, "disclosure", at: 1_300)
        #expect(machine.markAcknowledged(mark, at: 1_800) == [])
        #expect(machine.responseDone() == [.enableTurnResponses, .startResponse])
    }

    @Test("Nothing interrupts the disclosure: the callee's speech over it neither clears nor truncates")
    func disclosureNotInterrupted() {
        var machine = disclosing()
        _ = forward(&machine, "disclosure", at: 1_300)
        #expect(machine.calleeStartedSpeaking(at: 1_500) == [])
        #expect(machine.bargeIns == 0)
    }

    @Test("A disclosure that produced no audio is asked for once more, then the call ends rather than go on undisclosed")
    func disclosureFailure() {
        var machine = disclosing()
        #expect(machine.responseDone() == [.speakDisclosure])
        #expect(machine.responseDone() == [.end(.errorOpenAI)])
    }

    @Test("Without a disclosure nothing changes: the persona speaks first")
    func noDisclosure() {
        var machine = MediaStreamBridgeMachine(durationLimitSeconds: 60, disclosure: false)
        _ = machine.realtimeConfigured()
        #expect(machine.streamStarted(at: 1_000) == [.startResponse])
        #expect(machine.disclosure == .none)
    }

    @Test("The opt-out key during the disclosure: recorded, audio cleared, the response cancelled, then the goodbye, then the end")
    func keyOptOut() {
        var machine = disclosing()
        _ = forward(&machine, "disclosure", at: 1_300)
        #expect(machine.keyPressed("5", at: 1_400) == [])  // other keys do nothing
        #expect(
            machine.keyPressed("9", at: 1_500)
                == [.recordOptOut(.key), .clearTwilio, .truncate(itemID: "disclosure", audioEndMs: 200), .disableTurnResponses, .cancelResponse])
        #expect(machine.optOutSource == .key)
        #expect(machine.keyPressed("9", at: 1_550) == [])  // once
        // The cancelled response's done: now the goodbye.
        #expect(machine.responseDone() == [.sayOptOutGoodbye(functionCallID: nil)])
        machine.responseCreated()
        // Late audio of the disclosure is dropped; the goodbye's is played.
        #expect(machine.assistantAudio(itemID: "disclosure", milliseconds: 100, at: 1_600) == .drop)
        let mark = forward(&machine, "goodbye", at: 1_700)
        // The callee talking over the goodbye does not cut it.
        #expect(machine.calleeStartedSpeaking(at: 1_800) == [])
        #expect(machine.responseDone() == [])
        #expect(machine.markAcknowledged(mark, at: 2_200) == [.end(.optedOut)])
        #expect(machine.endedReason == .optedOut)
    }

    @Test("The opt_out tool: recorded at once; the output and the goodbye follow the tool's response.done")
    func toolOptOut() {
        var machine = disclosing()
        let mark = forward(&machine, "disclosure", at: 1_300)
        _ = machine.responseDone()
        #expect(machine.markAcknowledged(mark, at: 1_800) == [.enableTurnResponses, .startResponse])
        machine.responseCreated()
        #expect(machine.optOutToolCalled(callID: "call_1", at: 3_000) == [.recordOptOut(.speech), .disableTurnResponses])
        #expect(machine.responseDone() == [.sayOptOutGoodbye(functionCallID: "call_1")])
        machine.responseCreated()
        let goodbye = forward(&machine, "goodbye", at: 3_300)
        #expect(machine.markAcknowledged(goodbye, at: 3_800) == [])  // not generated yet
        #expect(machine.responseDone() == [.end(.optedOut)])
    }

    @Test("A tool call with no response running asks for the goodbye at once")
    func toolOptOutIdle() {
        var machine = MediaStreamBridgeMachine(durationLimitSeconds: 60)
        _ = machine.realtimeConfigured()
        _ = machine.streamStarted(at: 1_000)
        #expect(
            machine.optOutToolCalled(callID: "c", at: 2_000)
                == [.recordOptOut(.speech), .disableTurnResponses, .sayOptOutGoodbye(functionCallID: "c")])
    }

    @Test("A goodbye that never finishes is hung up on after 10 s, as opted_out")
    func goodbyeDeadline() {
        var machine = disclosing()
        _ = machine.keyPressed("9", at: 2_000)
        #expect(machine.nextDeadline == 12_000)
        #expect(machine.deadlineReached(at: 11_999) == [])
        #expect(machine.deadlineReached(at: 12_000) == [.end(.optedOut)])
        #expect(machine.nextDeadline == nil)
    }

    @Test("A key pressed before the session is ready: recorded now, the goodbye once the session is configured")
    func keyBeforeSession() {
        var machine = MediaStreamBridgeMachine(durationLimitSeconds: 60, disclosure: true)
        _ = machine.streamStarted(at: 1_000)
        #expect(machine.keyPressed("9", at: 1_100) == [.recordOptOut(.key)])
        #expect(machine.realtimeConfigured() == [.disableTurnResponses, .sayOptOutGoodbye(functionCallID: nil)])
    }

    @Test("With answering-machine detection the disclosure waits for the release, and a left message cannot opt out")
    func withDetection() {
        var machine = MediaStreamBridgeMachine(durationLimitSeconds: 60, gate: .detection, voicemail: .leaveMessage, disclosure: true)
        _ = machine.realtimeConfigured()
        #expect(machine.streamStarted(at: 1_000) == [])
        #expect(machine.machineDetected(.human, at: 1_500) == [.speakDisclosure])

        var message = MediaStreamBridgeMachine(durationLimitSeconds: 60, gate: .detection, voicemail: .leaveMessage, disclosure: true)
        _ = message.realtimeConfigured()
        _ = message.streamStarted(at: 1_000)
        _ = message.machineDetected(.machineEndBeep, at: 3_000)
        #expect(message.keyPressed("9", at: 3_500) == [])
    }
}
