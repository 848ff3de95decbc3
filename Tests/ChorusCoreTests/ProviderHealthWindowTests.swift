import ChorusCore
import Foundation
import Testing

@Suite("Provider health window")
struct ProviderHealthWindowTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("counts, failures by kind, latency percentiles and the status, per provider and operation")
    func figures() {
        var window = ProviderHealthWindow()
        for i in 0..<100 {
            window.record(provider: "openai", operation: "chat", failure: nil, milliseconds: i + 1, at: start.addingTimeInterval(Double(i)))
        }
        window.record(provider: "openai", operation: "speech", failure: "http_503", milliseconds: 40, at: start)
        window.record(provider: "openai", operation: "speech", failure: "timeout", milliseconds: 60_000, at: start.addingTimeInterval(1))
        window.record(provider: "openai", operation: "speech", failure: "timeout", milliseconds: 60_000, at: start.addingTimeInterval(2))
        window.record(provider: "openai", operation: "speech", failure: nil, milliseconds: 900, at: start.addingTimeInterval(3))
        window.record(provider: "twilio", operation: "create_call", failure: "http_429", milliseconds: 20, at: start.addingTimeInterval(4))
        for i in 0..<9 {
            window.record(provider: "twilio", operation: "create_call", failure: nil, milliseconds: 20, at: start.addingTimeInterval(5 + Double(i)))
        }

        let figures = window.figures(at: start.addingTimeInterval(120))
        #expect(figures.map { "\($0.provider)/\($0.operation)" } == ["openai/chat", "openai/speech", "twilio/create_call"])
        let chat = figures[0]
        #expect(chat.calls == 100 && chat.failures == 0 && chat.status == .ok)
        #expect(chat.p50Milliseconds == 50 && chat.p95Milliseconds == 95)
        let speech = figures[1]
        #expect(speech.calls == 4 && speech.failures == 3 && speech.failuresByKind == ["http_503": 1, "timeout": 2])
        #expect(speech.errorRate == 0.75 && speech.status == .down)
        #expect(speech.lastFailure == "timeout" && speech.lastFailureAt == start.addingTimeInterval(2))
        let twilio = figures[2]
        #expect(twilio.errorRate == 0.1 && twilio.status == .degraded)
    }

    @Test("exchanges older than the window drop out")
    func window() {
        var window = ProviderHealthWindow()
        window.record(provider: "s3", operation: "put", failure: "unreachable", milliseconds: 5, at: start)
        window.record(provider: "s3", operation: "put", failure: nil, milliseconds: 5, at: start.addingTimeInterval(10 * 60))
        #expect(window.figures(at: start.addingTimeInterval(10 * 60)).first?.calls == 2)
        // 15 minutes after the first: only the second is left; 26 minutes after: nothing.
        #expect(window.figures(at: start.addingTimeInterval(15 * 60)).first?.calls == 1)
        #expect(window.figures(at: start.addingTimeInterval(15 * 60)).first?.status == .ok)
        #expect(window.figures(at: start.addingTimeInterval(26 * 60)).isEmpty)
    }
}
