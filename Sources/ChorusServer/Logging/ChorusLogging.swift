import Foundation
import Logging
import NIOConcurrencyHelpers

/// Process-wide logging: JSON lines (`CHORUS_LOG_FORMAT=json`, the production default) or readable text.
public enum ChorusLogging {
    private static let bootstrapped = NIOLockedValueBox(false)

    public static func bootstrap(_ configuration: ChorusConfiguration) {
        let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
        let json = configuration.logFormat == .json
        bootstrapped.withLockedValue { done in
            guard !done else { return }
            done = true
            LoggingSystem.bootstrap { label in
                var handler: any LogHandler = json ? JSONLogHandler(label: label) : StreamLogHandler.standardOutput(label: label)
                handler.logLevel = level
                return handler
            }
        }
    }
}

/// One JSON object per line on standard output: `ts`, `level`, `label`, `message` and the metadata.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    private static let output = NIOLockedValueBox(FileHandle.standardOutput)

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var object: [String: Any] = [
            "ts": Date().formatted(.iso8601.time(includingFractionalSeconds: true).year().month().day()),
            "level": event.level.rawValue, "label": label, "message": event.message.description,
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { object[key] = Self.plain(value) }
        if let error = event.error { object["error"] = String(describing: error) }
        guard var data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        data.append(0x0A)
        Self.output.withLockedValue { $0.write(data) }
    }

    private static func plain(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): values.map(plain)
        case .dictionary(let values): values.mapValues(plain)
        }
    }
}
