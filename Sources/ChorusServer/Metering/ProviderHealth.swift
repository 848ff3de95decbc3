import ChorusCore
import ChorusProviders
import Foundation
import NIOConcurrencyHelpers

/// This instance's provider health: every exchange with OpenAI, ElevenLabs, Twilio, S3 and the Realtime API over the
/// last 15 minutes (``ProviderHealthWindow``), for the console; and the same exchanges, with the same outcome, as
/// `/metrics`' provider figures (``ChorusMetrics/providerCall(provider:operation:failure:duration:)``): one observer,
/// one definition for both.
final class ProviderHealth: ProviderCallObserver {
    private let window = NIOLockedValueBox(ProviderHealthWindow())
    private let clock: @Sendable () -> Date
    private let metrics: ChorusMetrics

    init(clock: @escaping @Sendable () -> Date, metrics: ChorusMetrics) {
        self.clock = clock
        self.metrics = metrics
    }

    func providerCall(provider: String, operation: String, failure: String?, duration: Duration) {
        let milliseconds = Int(duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000)
        let now = clock()
        window.withLockedValue {
            $0.record(provider: provider, operation: operation, failure: failure, milliseconds: milliseconds, at: now)
        }
        metrics.providerCall(provider: provider, operation: operation, failure: failure, duration: duration)
    }

    /// Each provider operation's figures now.
    func figures() -> [ProviderHealthWindow.Figures] {
        let now = clock()
        return window.withLockedValue { $0.figures(at: now) }
    }
}
