import ChorusProviders
import Foundation
import Logging
import NIOConcurrencyHelpers
import OTel
import ServiceLifecycle
import Tracing

/// This instance's tracer (issue 18), owned by its application and handed to what makes spans: the request middleware
/// (``RequestTracingMiddleware``), the store's transactions, the job runner, the provider clients and the call bridge.
///
/// With an endpoint (``TracingSettings/endpoint``) it is swift-otel's OTLP tracer: spans are batched and posted to
/// `<endpoint>/v1/traces` by a background service that starts with the application and, when the application stops,
/// exports what is left before it ends. Without one it is a `NoOpTracer` and nothing runs. The process-global
/// `InstrumentationSystem` is never bootstrapped: each application (tests run many in one process) has its own tracer.
public final class ChorusTracing: Sendable {
    /// Makes the spans; a `NoOpTracer` when nothing is exported.
    public let tracer: any Tracer
    /// Whether spans are exported (an endpoint is configured and the exporter runs).
    public var isExporting: Bool { exporter != nil }

    private let exporter: ServiceGroup?
    private let running = NIOLockedValueBox<Task<Void, Never>?>(nil)

    private init(tracer: any Tracer, exporter: ServiceGroup?) {
        self.tracer = tracer
        self.exporter = exporter
    }

    /// The tracer `settings` ask for; its exporter (if any) does not run until ``start()``. swift-otel also reads the
    /// standard `OTEL_*` environment variables (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_TRACES_SAMPLER`...), which take
    /// precedence over these settings.
    ///
    /// - Throws: ``ConfigurationError`` when an `OTEL_*` variable asks for OTLP/gRPC, which is not built in (swift-otel
    ///   would stop the process); swift-otel's own errors (a certificate file that does not exist).
    public static func make(
        _ settings: TracingSettings, logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> ChorusTracing {
        guard let tracesURL = settings.tracesURL else { return ChorusTracing(tracer: NoOpTracer(), exporter: nil) }
        let problems = unsupportedOverrides(in: environment)
        if !problems.isEmpty { throw ConfigurationError(problems: problems) }
        var configuration = OTel.Configuration.default
        configuration.serviceName = settings.serviceName
        configuration.diagnosticLogger = .custom(logger)
        configuration.diagnosticLogLevel = .warning
        configuration.propagators = [.traceContext]
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        // Set explicitly, the endpoint is used as is: the signal's path is ours to add.
        configuration.traces.otlpExporter.endpoint = tracesURL.absoluteString
        configuration.traces.otlpExporter.protocol = settings.otlpProtocol == .json ? .httpJSON : .httpProtobuf
        configuration.traces.sampler = .parentBasedTraceIDRatio(ratio: settings.sampleRatio) ?? .parentBasedAlwaysOn
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        // Where to, without a path or any credentials the URL may carry.
        let collector = "\(tracesURL.scheme ?? "http")://\(tracesURL.host ?? "")\(tracesURL.port.map { ":\($0)" } ?? "")"
        logger.notice(
            "exporting traces over OTLP/HTTP",
            metadata: [
                "collector": .string(collector), "protocol": .string(settings.otlpProtocol.rawValue),
                "service_name": .string(settings.serviceName), "sample_ratio": .stringConvertible(settings.sampleRatio),
            ])
        let exporter = ServiceGroup(configuration: ServiceGroupConfiguration(services: [backend.service], logger: logger))
        return ChorusTracing(tracer: backend.factory, exporter: exporter)
    }

    /// The standard variables swift-otel would read that this build cannot honour: a gRPC protocol.
    static func unsupportedOverrides(in environment: [String: String]) -> [String] {
        ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"].compactMap { key in
            guard environment[key]?.trimmingCharacters(in: .whitespaces).lowercased() == "grpc" else { return nil }
            return "\(key) is grpc: Chorus exports traces over OTLP/HTTP only (http/protobuf or http/json, CHORUS_OTEL_PROTOCOL)."
        }
    }

    /// Starts exporting (once; nothing without an endpoint).
    public func start() {
        guard let exporter else { return }
        running.withLockedValue { task in
            guard task == nil else { return }
            task = Task { try? await exporter.run() }
        }
    }

    /// Exports the spans still buffered and stops the exporter; waits until it has stopped. Idempotent.
    public func shutdown() async {
        guard let exporter else { return }
        // Never started: run it just to stop it, so its HTTP client is shut down properly.
        start()
        await exporter.triggerGracefulShutdown()
        await running.withLockedValue({ $0 })?.value
    }
}

/// The provider clients' observer when tracing: reports each exchange to `base` (provider health, metrics) and hands
/// the clients the tracer of their exchanges' spans (``ProviderTracing``).
struct TracedProviderCalls: ProviderCallObserver {
    let base: any ProviderCallObserver
    let tracer: (any Tracer)?

    func providerCall(provider: String, operation: String, failure: String?, duration: Duration) {
        base.providerCall(provider: provider, operation: operation, failure: failure, duration: duration)
    }
}
