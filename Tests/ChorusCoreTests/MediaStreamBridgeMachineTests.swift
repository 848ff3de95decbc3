import ChorusCore
import Foundation
import Testing

@Suite("Media stream bridge machine")
struct MediaStreamBridgeMachineTests {
    /// A machine whose stream started at t=1000 ms with a ready session.
    private func streaming(limit: Int = 60) -> MediaStreamBridgeMachine {
        var machine = MediaStreamBridgeMachine(durationLimitSeconds: limit)
        _ = machine.realtimeConfigured()
        _ = machine.streamStarted(at: 1_000)
        return machine
    }

    @Test("The AI speaks first once the callee answered and the session is configured, in either order, once")
    func speaksFirst() {
        var early = MediaStreamBridgeMachine(durationLimitSeconds: 60)
        #expect(early.realtimeConfigured() == [])
        #expect(early.streamStarted(at: 10) == [.startResponse])
        #expect(early.realtimeConfigured() == [])

        var late = MediaStreamBridgeMachine(durationLimitSeconds: 60)
        #expect(late.streamStarted(at: 10) == [])
        #expect(!late.forwardsCalleeAudio)
        #expect(late.realtimeConfigured() == [.startResponse])
        #expect(late.forwardsCalleeAudio)
        #expect(late.streamStarted(at: 20) == [])
    }

    @Test("Assistant audio is forwarded with a unique mark each; first-audio latency is measured from the stream start")
    func forwardsAudioWithMarks() {
        var machine = streaming()
        let first = machine.assistantAudio(itemID: "item_1", milliseconds: 100, at: 1_450)
        let second = machine.assistantAudio(itemID: "item_1", milliseconds: 100, at: 1_460)
        guard case .forward(let a) = first, case .forward(let b) = second else {
            Issue.record("audio was not forwarded")
            return
        }
        #expect(a != b)
        #expect(machine.firstAudioLatencyMilliseconds == 450)
        #expect(machine.currentItemSentMilliseconds == 200)
        #expect(machine.isAssistantSpeaking)
    }

    @Test("Played audio follows acknowledged marks, runs in real time between them, and never exceeds what was sent")
    func playedAudio() {
        var machine = streaming()
        guard case .forward(let m1) = machine.assistantAudio(itemID: "i", milliseconds: 100, at: 2_000),
            case .forward(let m2) = machine.assistantAudio(itemID: "i", milliseconds: 100, at: 2_005),
            case .forward = machine.assistantAudio(itemID: "i", milliseconds: 100, at: 2_010)
        else {
            Issue.record("audio was not forwarded")
            return
        }
        // Playback started when the first chunk was sent.
        #expect(machine.playedMilliseconds(at: 2_040) == 40)
        machine.markAcknowledged(m1, at: 2_100)
        #expect(machine.playedMilliseconds(at: 2_100) == 100)
        #expect(machine.playedMilliseconds(at: 2_130) == 130)
        machine.markAcknowledged(m2, at: 2_200)
        // Far later, but only 300 ms were sent.
        #expect(machine.playedMilliseconds(at: 9_000) == 300)
    }

    @Test("Barge-in clears Twilio and truncates at the audio played, then drops the interrupted item's late audio")
    func bargeIn() {
        var machine = streaming()
        guard case .forward(let m1) = machine.assistantAudio(itemID: "i", milliseconds: 500, at: 2_000),
            case .forward = machine.assistantAudio(itemID: "i", milliseconds: 500, at: 2_010)
        else {
            Issue.record("audio was not forwarded")
            return
        }
        machine.markAcknowledged(m1, at: 2_500)
        let actions = machine.calleeStartedSpeaking(at: 2_620)
        #expect(actions == [.clearTwilio, .truncate(itemID: "i", audioEndMs: 620)])
        #expect(machine.bargeIns == 1)
        #expect(!machine.isAssistantSpeaking)
        #expect(machine.assistantAudio(itemID: "i", milliseconds: 100, at: 2_630) == .drop)
        // A new response plays normally.
        if case .drop = machine.assistantAudio(itemID: "j", milliseconds: 100, at: 3_000) { Issue.record("new item dropped") }
    }

    @Test("Speech while nothing is playing is no barge-in; truncation never exceeds the generated audio")
    func noBargeInWhenSilent() {
        var machine = streaming()
        #expect(machine.calleeStartedSpeaking(at: 1_500) == [])
        guard case .forward(let mark) = machine.assistantAudio(itemID: "i", milliseconds: 200, at: 2_000) else {
            Issue.record("audio was not forwarded")
            return
        }
        machine.markAcknowledged(mark, at: 2_200)
        #expect(machine.calleeStartedSpeaking(at: 2_300) == [])
        _ = machine.assistantAudio(itemID: "k", milliseconds: 100, at: 3_000)
        // Long after the anchor: clamped to the 100 ms generated for item k.
        #expect(machine.calleeStartedSpeaking(at: 8_000) == [.clearTwilio, .truncate(itemID: "k", audioEndMs: 100)])
    }

    @Test("Turn latency runs from the end of the callee's speech to the next assistant audio")
    func turnLatency() {
        var machine = streaming()
        _ = machine.assistantAudio(itemID: "a", milliseconds: 100, at: 1_500)
        machine.calleeStoppedSpeaking(at: 5_000)
        _ = machine.assistantAudio(itemID: "b", milliseconds: 100, at: 5_700)
        _ = machine.assistantAudio(itemID: "b", milliseconds: 100, at: 5_720)
        machine.calleeStoppedSpeaking(at: 9_000)
        _ = machine.assistantAudio(itemID: "c", milliseconds: 100, at: 9_900)
        #expect(machine.turnLatenciesMilliseconds == [700, 900])
        #expect(LatencyPercentile.of(machine.turnLatenciesMilliseconds, 50) == 700)
        #expect(LatencyPercentile.of(machine.turnLatenciesMilliseconds, 90) == 900)
    }

    @Test("Endings: the first cause wins; stop near the limit is the limit, earlier it is the callee")
    func endings() {
        var limit = streaming(limit: 60)
        #expect(limit.durationTimerMilliseconds == 59_000)
        #expect(limit.durationLimitReached() == [.end(.maxDuration)])
        #expect(limit.streamStopped(at: 70_000) == [])
        #expect(limit.endedReason == .maxDuration)
        #expect(limit.assistantAudio(itemID: "x", milliseconds: 20, at: 70_001) == .drop)

        var hangup = streaming(limit: 60)
        #expect(hangup.streamStopped(at: 1_000 + 12_000) == [.end(.calleeHangup)])

        var backstop = streaming(limit: 60)
        #expect(backstop.streamStopped(at: 1_000 + 59_500) == [.end(.maxDuration)])

        var openAI = streaming()
        #expect(openAI.realtimeFailed() == [.end(.errorOpenAI)])
        #expect(openAI.streamClosed() == [])

        var dropped = streaming()
        #expect(dropped.streamClosed() == [.end(.errorStream)])
    }

    @Test("Transcript lines carry their speaker, time and whether the callee interrupted them")
    func transcript() {
        var machine = streaming()
        _ = machine.assistantAudio(itemID: "a", milliseconds: 400, at: 1_200)
        machine.transcribed(.assistant, text: " Hello there! ", itemID: "a", at: 1_300)
        _ = machine.calleeStartedSpeaking(at: 1_350)
        machine.transcribed(.callee, text: "Who is this?", itemID: "u1", at: 2_400)
        machine.transcribed(.callee, text: "   ", itemID: "u2", at: 2_500)
        #expect(
            machine.transcript == [
                .init(speaker: .assistant, text: "Hello there!", atMilliseconds: 300, interrupted: true),
                .init(speaker: .callee, text: "Who is this?", atMilliseconds: 1_400),
            ])
    }

    @Test("Call instructions keep the persona, frame an outbound call and express the temperature")
    func instructions() {
        let text = CallInstructions.outboundCall(persona: "You are Sam, an old friend.", temperature: 0.9)
        #expect(text.hasPrefix("You are Sam, an old friend."))
        #expect(text.contains("speak first"))
        #expect(text.contains("Never mention time limits"))
        #expect(text.contains(CallInstructions.deliveryStyle(temperature: 0.9)))
        #expect(CallInstructions.deliveryStyle(temperature: 0.5) != CallInstructions.deliveryStyle(temperature: 0.8))
    }

    @Test("The latency histogram reports percentiles within its precision and merges")
    func histogram() {
        var histogram = LatencyHistogram()
        for value in 1...1_000 { histogram.record(microseconds: UInt64(value * 10)) }
        let p50 = histogram.percentile(50) ?? 0
        let p99 = histogram.percentile(99) ?? 0
        #expect(abs(Double(p50) - 5_000) / 5_000 < 0.04)
        #expect(abs(Double(p99) - 9_900) / 9_900 < 0.04)
        var other = LatencyHistogram()
        other.record(microseconds: 2_000_000)
        histogram.merge(other)
        #expect(histogram.count == 1_001)
        #expect(abs(Double(histogram.percentile(100) ?? 0) - 2_000_000) / 2_000_000 < 0.04)
        #expect(histogram.maximum == 2_000_000)
        #expect(LatencyHistogram().percentile(50) == nil)
    }

    @Test("μ-law round trip and levels")
    func muLaw() {
        for sample: Int16 in [0, 1_000, -1_000, 8_000, -32_000, 32_000] {
            let decoded = MuLaw.decode(MuLaw.encode(sample))
            #expect(abs(Int(decoded) - Int(sample)) <= max(16, abs(Int(sample)) / 16))
        }
        #expect(MuLaw.rms([UInt8](repeating: MuLaw.silence, count: 160)) < 10)
        #expect(MuLaw.rms(MuLaw.encode([Int16](repeating: 8_000, count: 160))) > 7_000)
        #expect(MuLaw.milliseconds(base64Length: 216, padding: 0) == 20)
    }
}
