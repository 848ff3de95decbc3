import Foundation
import Testing

@testable import ChorusSandbox

/// The Twilio emulator's answering-machine detection: what `CreateCall` may ask for, and what it reports when.
@Suite("Sandbox answering-machine detection")
struct SandboxMachineDetectionTests {
    static func parse(_ form: [String: String]) -> Result<SandboxTwilio.MachineDetection?, SandboxTwilio.DetectionParameterError> {
        SandboxTwilio.MachineDetection.parse { form[$0] }
    }

    @Test("CreateCall's parameters: asynchronous detection with Twilio's ranges; synchronous detection is not emulated")
    func parameters() throws {
        #expect(try Self.parse([:]).get() == nil)
        let parsed = try #require(
            try Self.parse(["MachineDetection": "DetectMessageEnd", "AsyncAmd": "true", "AsyncAmdStatusCallback": "http://h/amd"]).get())
        #expect(parsed.detectsMessageEnd && parsed.callback == "http://h/amd" && parsed.callbackMethod == "POST")
        #expect(parsed.timeoutMs == 30_000 && parsed.speechThresholdMs == 2_400 && parsed.speechEndThresholdMs == 1_200)
        #expect(parsed.silenceTimeoutMs == 5_000)
        for bad in [
            ["MachineDetection": "Detect", "AsyncAmd": "true"], ["MachineDetection": "Enable"],
            ["MachineDetection": "Enable", "AsyncAmd": "true", "MachineDetectionSpeechThreshold": "999"],
            ["MachineDetection": "Enable", "AsyncAmd": "true", "MachineDetectionTimeout": "1e9"],
            ["MachineDetection": "Enable", "AsyncAmd": "true", "AsyncAmdStatusCallbackMethod": "PUT"],
        ] {
            guard case .failure = Self.parse(bad) else {
                Issue.record("accepted \(bad)")
                continue
            }
        }
    }

    @Test("What detection reports, and when (ms after the stream started)")
    func outcomes() throws {
        let detection = try #require(try Self.parse(["MachineDetection": "DetectMessageEnd", "AsyncAmd": "true"]).get())
        // A person who says a short hello at 300 ms: human 1.2 s after it ends.
        #expect(detection.outcome(callee: .person, firstLineAfterMs: 300, firstLineMs: 800, greetingMs: 0) == ("human", 2_300))
        // A person who talks 3 s at once is taken for a machine, as Twilio would.
        #expect(detection.outcome(callee: .person, firstLineAfterMs: 300, firstLineMs: 3_000, greetingMs: 0) == ("machine_end_other", 4_500))
        // A person who waits: unknown after the silence timeout.
        #expect(detection.outcome(callee: .person, firstLineAfterMs: nil, firstLineMs: 800, greetingMs: 0) == ("unknown", 5_000))
        // A voicemail: 250 ms after the beep; without a beep, 1.2 s after the greeting.
        #expect(detection.outcome(callee: .voicemail(beep: true), firstLineAfterMs: 400, firstLineMs: nil, greetingMs: 5_000) == ("machine_end_beep", 6_450))
        #expect(
            detection.outcome(callee: .voicemail(beep: false), firstLineAfterMs: 400, firstLineMs: nil, greetingMs: 5_000) == ("machine_end_silence", 6_600))
        #expect(detection.outcome(callee: .fax, firstLineAfterMs: 200, firstLineMs: nil, greetingMs: 0) == ("fax", 2_700))
        // A greeting longer than the detection timeout: unknown at the timeout.
        #expect(
            detection.outcome(callee: .voicemail(beep: true), firstLineAfterMs: 400, firstLineMs: nil, greetingMs: 40_000) == ("unknown", 30_000))
        // Enable mode reports machine_start once the greeting passed the speech threshold.
        let enable = try #require(try Self.parse(["MachineDetection": "Enable", "AsyncAmd": "true"]).get())
        #expect(enable.outcome(callee: .voicemail(beep: true), firstLineAfterMs: 400, firstLineMs: nil, greetingMs: 5_000) == ("machine_start", 2_800))
    }

    @Test("Machine sounds: the beep follows a pause; the fax's calling tone repeats every 3.5 s")
    func sounds() {
        #expect(CalleeSounds.beepFrames.count == (CalleeSounds.beepGapMs + CalleeSounds.beepMs) / 20)
        #expect(CalleeSounds.faxFrames(seconds: 7).count == 2 * CalleeSounds.faxCycleMs / 20)
    }
}
