import ChorusCore
import ChorusProviders
import Foundation
import NIOConcurrencyHelpers
import Prometheus
import Vapor

extension ChorusConfiguration {
    /// Every OpenAI model this configuration uses, with the setting that chooses it (models turned off are left out).
    public var openAIModels: [ConfiguredModel] {
        var models = [ConfiguredModel(model: callBridge.realtimeModel, setting: "CHORUS_OPENAI_REALTIME_MODEL", product: "calls")]
        if let transcription = callBridge.transcriptionModel {
            models.append(ConfiguredModel(model: transcription, setting: "CHORUS_OPENAI_TRANSCRIPTION_MODEL", product: "calls"))
        }
        if let moderation = callsModerationModel {
            models.append(ConfiguredModel(model: moderation, setting: "CHORUS_CALLS_MODERATION_MODEL", product: "calls"))
        }
        models += [
            ConfiguredModel(model: voiceMessages.transcriptionModel, setting: "CHORUS_VOICE_TRANSCRIPTION_MODEL", product: "voice messages"),
            ConfiguredModel(
                model: voiceMessages.liveTranscriptionModel, setting: "CHORUS_VOICE_LIVE_TRANSCRIPTION_MODEL", product: "voice messages"),
            ConfiguredModel(model: voiceMessages.summaryModel, setting: "CHORUS_VOICE_SUMMARY_MODEL", product: "voice messages"),
            ConfiguredModel(model: voiceMessages.speechModel, setting: "CHORUS_VOICE_TTS_MODEL", product: "voice messages"),
            ConfiguredModel(model: stories.textModel, setting: "CHORUS_STORIES_TEXT_MODEL", product: "stories"),
            ConfiguredModel(model: stories.imageModel, setting: "CHORUS_STORIES_IMAGE_MODEL", product: "stories"),
            ConfiguredModel(model: stories.speechModel, setting: "CHORUS_STORIES_TTS_MODEL", product: "stories"),
        ]
        if let moderation = stories.moderationModel {
            models.append(ConfiguredModel(model: moderation, setting: "CHORUS_STORIES_MODERATION_MODEL", product: "stories"))
        }
        return models
    }
}

/// The model lifecycle check: reads OpenAI's `GET /v1/models` at startup and then every
/// `CHORUS_MODEL_CHECK_INTERVAL_SECONDS` (a day by default), classifies each configured model with
/// ``ModelLifecyclePolicy`` on the app clock's UTC day, and reports what needs attention in the log, on the console
/// (``latest``) and as gauges in the app's metrics registry.
///
/// Production with an OpenAI account checks once before it serves (``ChorusApp`` refuses to start when a configured
/// model is shut down or not offered); otherwise the first check runs once the server listens (without an account the
/// provider is the embedded emulator, served by this very server) and only warns. A failed check (network, 401, 5xx)
/// is logged and tried again at the next interval; it never stops the server.
final class ModelLifecycleWatch: LifecycleHandler, Sendable {
    /// What one check found.
    struct Report: Sendable {
        /// When the check ran (app clock).
        var checkedAt: Date
        /// One finding per configured model; empty when the list could not be read.
        var findings: [ModelLifecyclePolicy.Finding]
        /// Why the model list could not be read, if it could not.
        var failure: String?

        /// The models production refuses to start with.
        var unusable: [ModelLifecyclePolicy.Finding] { findings.filter(\.isUnusable) }
    }

    let models: [ConfiguredModel]
    let interval: TimeInterval
    private let catalog: OpenAIModelCatalog
    private let clock: @Sendable () -> Date
    private let logger: Logger
    private let gauges: Gauges
    private let state = NIOLockedValueBox(State())
    private let task = NIOLockedValueBox<Task<Void, Never>?>(nil)

    private struct State {
        var latest: Report?
        /// The first check already ran before the server started (production).
        var checkedBeforeBoot = false
    }

    init(
        models: [ConfiguredModel], catalog: OpenAIModelCatalog, interval: TimeInterval, clock: @escaping @Sendable () -> Date,
        registry: PrometheusCollectorRegistry, logger: Logger
    ) {
        self.models = models
        self.catalog = catalog
        self.interval = interval
        self.clock = clock
        self.gauges = Gauges(registry: registry)
        var logger = logger
        logger[metadataKey: "component"] = "model-lifecycle"
        self.logger = logger
    }

    /// The last check's report (`nil` before the first).
    var latest: Report? { state.withLockedValue { $0.latest } }

    /// Reads the model list and reports; never throws.
    @discardableResult
    func check() async -> Report {
        let report: Report
        do {
            let listing = try await catalog.listing()
            let now = clock()
            report = Report(
                checkedAt: now, findings: ModelLifecyclePolicy.evaluate(models, listing: listing, today: CalendarDay(utc: now)), failure: nil)
            for finding in report.findings where finding.needsAttention {
                var metadata: Logger.Metadata = [
                    "model": .string(finding.model.model), "setting": .string(finding.model.setting), "product": .string(finding.model.product),
                ]
                if let date = finding.shutdownDate { metadata["shutdown_date"] = .string(date.description) }
                if let days = finding.daysLeft { metadata["days_left"] = .stringConvertible(days) }
                logger.warning("\(finding.summary)", metadata: metadata)
            }
        } catch is CancellationError {
            return latest ?? Report(checkedAt: clock(), findings: [], failure: "cancelled")
        } catch {
            report = Report(checkedAt: clock(), findings: [], failure: "\(error)")
            logger.warning(
                "the model lifecycle check could not read OpenAI's model list; it runs again in \(Int(interval)) s",
                metadata: ["error": .string("\(error)")])
        }
        gauges.record(report, models: models)
        state.withLockedValue { $0.latest = report }
        return report
    }

    /// The check production runs before serving: the server's own loop then waits a whole interval for the next.
    func checkBeforeServing() async -> Report {
        let report = await check()
        state.withLockedValue { $0.checkedBeforeBoot = true }
        return report
    }

    func didBootAsync(_ application: Application) async throws {
        let checkedBeforeBoot = state.withLockedValue { $0.checkedBeforeBoot }
        let server = application.http.server.shared
        let loop = Task { [self, interval] in
            if !checkedBeforeBoot {
                // The embedded emulator answers once this server listens (within moments of booting).
                for _ in 0..<600 where server.localAddress == nil && !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(100))
                }
                guard !Task.isCancelled else { return }
                await check()
            }
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(Int64(interval * 1_000)))
                guard !Task.isCancelled else { return }
                await check()
            }
        }
        task.withLockedValue { $0 = loop }
    }

    func shutdownAsync(_ application: Application) async {
        let loop = task.withLockedValue { current -> Task<Void, Never>? in
            defer { current = nil }
            return current
        }
        loop?.cancel()
        await loop?.value
    }

    /// `chorus_openai_model_*` in the app's registry. Labels are the configured models and their settings only.
    final class Gauges: Sendable {
        private let registry: PrometheusCollectorRegistry
        private let timestamp: Gauge
        private let failed: Gauge
        private let daysLeft = NIOLockedValueBox<[String: Gauge]>([:])

        static let daysName = "chorus_openai_model_days_until_shutdown"
        static let daysHelp = "Days from today (UTC) until the configured model's announced shutdown date; 0 or less: shut down."
        static let shutDownName = "chorus_openai_model_shut_down"
        static let shutDownHelp = "1 when the configured model is shut down or not offered by OpenAI, else 0."

        init(registry: PrometheusCollectorRegistry) {
            self.registry = registry
            timestamp = registry.makeGauge(
                descriptor: MetricNameDescriptor(
                    metricName: "chorus_openai_model_check_timestamp_seconds",
                    helpText: "Unix time of the last model lifecycle check that read OpenAI's model list."),
                labels: [])
            failed = registry.makeGauge(
                descriptor: MetricNameDescriptor(
                    metricName: "chorus_openai_model_check_failed", helpText: "1 when the last model lifecycle check could not read the model list."),
                labels: [])
        }

        func record(_ report: Report, models: [ConfiguredModel]) {
            guard report.failure == nil else {
                failed.set(to: 1)
                return
            }
            failed.set(to: 0)
            timestamp.set(to: report.checkedAt.timeIntervalSince1970.rounded(.down))
            daysLeft.withLockedValue { gauges in
                var dated: Set<String> = []
                for finding in report.findings {
                    let labels = [("model", finding.model.model), ("setting", finding.model.setting)]
                    registry.makeGauge(descriptor: MetricNameDescriptor(metricName: Self.shutDownName, helpText: Self.shutDownHelp), labels: labels)
                        .set(to: finding.isUnusable ? 1 : 0)
                    let key = finding.model.model + "\u{0}" + finding.model.setting
                    if let days = finding.daysLeft {
                        dated.insert(key)
                        let gauge =
                            gauges[key]
                            ?? registry.makeGauge(descriptor: MetricNameDescriptor(metricName: Self.daysName, helpText: Self.daysHelp), labels: labels)
                        gauge.set(to: Double(days))
                        gauges[key] = gauge
                    }
                }
                // A date withdrawn: its series goes.
                for (key, gauge) in gauges where !dated.contains(key) {
                    registry.unregisterGauge(gauge)
                    gauges[key] = nil
                }
            }
        }
    }
}
