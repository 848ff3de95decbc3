import Foundation

/// How long a placed call may take, from the request to the provider to its end. Pure.
public enum CallTiming {
    /// How long the callee's phone rings before the call counts as unanswered (Twilio's `Timeout`).
    public static let ringTimeoutSeconds = 30

    /// Margin after the ringing and the call's time limit for the provider's final status to arrive.
    public static let finalStatusGraceSeconds = 120

    /// When a call placed at `placedAt` with a limit of `durationLimit` seconds must be over: its ringing, its whole limit
    /// and the grace for the final status. Past it, a call with no final status is asked about (reconciliation).
    public static func mustBeOver(placedAt: Date, durationLimit: Int) -> Date {
        placedAt.addingTimeInterval(TimeInterval(ringTimeoutSeconds) + TimeInterval(durationLimit) + TimeInterval(finalStatusGraceSeconds))
    }
}
