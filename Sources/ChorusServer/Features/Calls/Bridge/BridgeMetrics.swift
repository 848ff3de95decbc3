import ChorusCore
import NIOConcurrencyHelpers

/// Process-wide figures of the media bridges: how many are open, what they relayed, and how fast.
///
/// Each bridge keeps its own histograms (under its own lock) and merges them here once when it ends, so recording a
/// frame never contends across calls.
public final class BridgeMetrics: Sendable {
    /// A copy of the figures.
    public struct Snapshot: Sendable, Equatable {
        /// Bridges open now (each holds one Twilio socket and at most one OpenAI socket).
        public var openBridges = 0
        /// Realtime sessions opened ahead of an answer and not yet used or discarded.
        public var preparedSessions = 0
        public var completedBridges = 0
        /// Callee audio frames relayed to the model, and dropped (before the session was ready, beyond the buffer).
        public var framesToRealtime = 0
        public var framesDropped = 0
        /// Assistant audio chunks relayed to Twilio.
        public var framesToTwilio = 0
        /// Of those, the ones whose write failed because Twilio had already closed the socket (the call was over).
        public var framesUndeliverable = 0
        /// Frame received → frame written, per direction, in microseconds.
        public var relayToRealtime = LatencyHistogram()
        public var relayToTwilio = LatencyHistogram()
        /// `speech_started` received → `clear` and `truncate` written, in microseconds.
        public var bargeInReaction = LatencyHistogram()
        /// The callee answering (the stream starting) → the AI's first audio, one value per call that had audio, in
        /// microseconds.
        public var answerToFirstAudio = LatencyHistogram()
    }

    private let state = NIOLockedValueBox(Snapshot())

    public init() {}

    /// The current figures.
    public func snapshot() -> Snapshot { state.withLockedValue { $0 } }

    func bridgeOpened() { state.withLockedValue { $0.openBridges += 1 } }

    func frameUndeliverable() { state.withLockedValue { $0.framesUndeliverable += 1 } }

    func preparedSessionsChanged(by delta: Int) { state.withLockedValue { $0.preparedSessions += delta } }

    func bridgeClosed(_ figures: BridgeFigures) {
        state.withLockedValue { state in
            state.openBridges -= 1
            state.completedBridges += 1
            state.framesToRealtime += figures.framesToRealtime
            state.framesDropped += figures.framesDropped
            state.framesToTwilio += figures.framesToTwilio
            state.relayToRealtime.merge(figures.relayToRealtime)
            state.relayToTwilio.merge(figures.relayToTwilio)
            state.bargeInReaction.merge(figures.bargeInReaction)
            state.answerToFirstAudio.merge(figures.answerToFirstAudio)
        }
    }
}

/// One bridge's figures, merged into ``BridgeMetrics`` when it ends.
struct BridgeFigures: Sendable {
    var framesToRealtime = 0
    var framesDropped = 0
    var framesToTwilio = 0
    var relayToRealtime = LatencyHistogram()
    var relayToTwilio = LatencyHistogram()
    var bargeInReaction = LatencyHistogram()
    var answerToFirstAudio = LatencyHistogram()
}
