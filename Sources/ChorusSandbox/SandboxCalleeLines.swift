import NIOConcurrencyHelpers

/// What the simulated callees say, by audio frame, shared by the Twilio and Realtime emulators of one sandbox: the
/// Twilio emulator registers the 20 ms frames of every line a callee speaks, and the Realtime emulator — which
/// receives those very frames, relayed unchanged by the bridge — transcribes a turn as the line its frames belong to,
/// as a real model would, instead of a placeholder.
///
/// A frame found in two different lines (silence inside speech) names neither. At most ``capacity`` frames are kept;
/// beyond that the directory starts again (old calls' lines are forgotten first).
public final class SandboxCalleeLines: Sendable {
    /// Frames kept at most (about 30 minutes of distinct speech).
    public static let capacity = 100_000

    private struct State {
        var lines: [String: String] = [:]
        var ambiguous: Set<String> = []
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    /// Registers the base64 payloads of the frames of a line that says `text`.
    public func register(_ text: String, frames: [String]) {
        state.withLockedValue { state in
            if state.lines.count + frames.count > Self.capacity { state = State() }
            for frame in frames where !state.ambiguous.contains(frame) {
                if let known = state.lines[frame], known != text {
                    state.lines[frame] = nil
                    state.ambiguous.insert(frame)
                } else {
                    state.lines[frame] = text
                }
            }
        }
    }

    /// The line a frame (its base64 payload) belongs to, if it belongs to exactly one.
    public func line(containing frame: String) -> String? {
        state.withLockedValue { $0.lines[frame] }
    }
}
