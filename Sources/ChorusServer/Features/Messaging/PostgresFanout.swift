import ChorusAPI
import FluentPostgresDriver
import Foundation
import Logging
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// Realtime delivery across instances through PostgreSQL `LISTEN`/`NOTIFY` on the channel `chorus_realtime`.
///
/// Publishing sends `{"to": [user ids], "event": {...}}` with `pg_notify`; every instance (the publisher included)
/// listens on a dedicated connection and delivers to its local sockets, so an event reaches a member wherever they
/// are connected. Payloads over PostgreSQL's 8,000-byte limit are stored in `realtime_payloads` and the notification
/// carries their id. The listener reconnects with backoff when its connection drops; events published while no
/// listener is connected are not replayed (clients catch up with `GET /conversations/{id}/messages`).
final class PostgresFanout: RealtimeFanout, LifecycleHandler, Sendable {
    static let channel = "chorus_realtime"
    /// Inline payloads stay below PostgreSQL's 8,000-byte notification limit.
    static let inlineLimit = 7_500

    private let hub: RealtimeHub
    private let configuration: SQLPostgresConfiguration
    /// The application's database, known once the application booted.
    private let databaseBox = NIOLockedValueBox<(any SQLDatabase)?>(nil)
    private let logger: Logger
    private let listener = NIOLockedValueBox<Task<Void, Never>?>(nil)
    private let listening = NIOLockedValueBox(false)

    init(hub: RealtimeHub, configuration: SQLPostgresConfiguration, logger: Logger) {
        self.hub = hub
        self.configuration = configuration
        self.logger = logger
    }

    private func database() throws -> any SQLDatabase {
        guard let database = databaseBox.withLockedValue({ $0 }) else { throw ChorusStoreError.missingRow("database not ready") }
        return database
    }

    /// Whether the listener connection is up (health and tests).
    var isListening: Bool { listening.withLockedValue { $0 } }

    func publish(_ event: RealtimeEventDTO, to userIDs: [String]) async {
        guard !userIDs.isEmpty else { return }
        let envelope = Self.envelope(event: RealtimeHub.encode(event), to: userIDs)
        do {
            let sql = try database()
            if envelope.utf8.count <= Self.inlineLimit {
                try await sql.raw("SELECT pg_notify(\(bind: Self.channel), \(bind: envelope))").run()
            } else {
                guard
                    let row = try await sql.raw(
                        """
                        INSERT INTO realtime_payloads (payload, created_at) VALUES (\(bind: envelope), \(bind: Date().epochMillis)) RETURNING id
                        """
                    ).first()
                else { return }
                let reference = #"{"ref":\#(try row.int("id"))}"#
                try await sql.raw("SELECT pg_notify(\(bind: Self.channel), \(bind: reference))").run()
            }
        } catch {
            logger.error("could not publish a realtime event", metadata: ["type": .string(event.type), "error": .string("\(error)")])
        }
    }

    static func envelope(event: String, to userIDs: [String]) -> String {
        let recipients = String(decoding: (try? JSONEncoder().encode(userIDs)) ?? Data("[]".utf8), as: UTF8.self)
        return #"{"to":\#(recipients),"event":\#(event)}"#
    }

    // MARK: Listening

    func didBootAsync(_ application: Application) async throws {
        databaseBox.withLockedValue { $0 = application.db as? any SQLDatabase }
        let task = Task { [self] in await listenForever(eventLoop: application.eventLoopGroup.any()) }
        listener.withLockedValue { $0 = task }
    }

    func shutdownAsync(_ application: Application) async {
        let task = listener.withLockedValue { current -> Task<Void, Never>? in
            defer { current = nil }
            return current
        }
        task?.cancel()
        await task?.value
    }

    private func listenForever(eventLoop: any EventLoop) async {
        var backoff = 0.5
        var connectionID = 0
        while !Task.isCancelled {
            connectionID += 1
            do {
                let connection = try await PostgresConnection.connect(
                    on: eventLoop, configuration: configuration.coreConfiguration, id: connectionID, logger: logger)
                defer { Task { try? await connection.close() } }
                try await withTaskCancellationHandler {
                    try await connection.listen(on: Self.channel) { notifications in
                        listening.withLockedValue { $0 = true }
                        backoff = 0.5
                        for try await notification in notifications {
                            await handle(notification.payload)
                        }
                    }
                } onCancel: {
                    connection.close().whenComplete { _ in }
                }
            } catch {
                if Task.isCancelled { break }
                logger.warning("realtime listener disconnected", metadata: ["error": .string("\(error)")])
            }
            listening.withLockedValue { $0 = false }
            if Task.isCancelled { break }
            try? await Task.sleep(for: .milliseconds(Int(backoff * 1_000)))
            backoff = min(backoff * 2, 30)
        }
        listening.withLockedValue { $0 = false }
    }

    private struct Envelope: Decodable {
        var to: [String]?
        var ref: Int?
    }

    private func handle(_ payload: String) async {
        var text = payload
        guard var envelope = try? JSONDecoder().decode(Envelope.self, from: Data(text.utf8)) else { return }
        if let reference = envelope.ref {
            guard let row = try? await database().raw("SELECT payload FROM realtime_payloads WHERE id = \(bind: reference)").first(),
                let stored = try? row.string("payload"),
                let decoded = try? JSONDecoder().decode(Envelope.self, from: Data(stored.utf8))
            else { return }
            text = stored
            envelope = decoded
        }
        guard let recipients = envelope.to, let event = Self.eventText(in: text) else { return }
        hub.deliver(event, to: recipients)
    }

    /// The raw `event` member of an envelope (the text after `"event":` up to the closing brace), delivered verbatim.
    static func eventText(in envelope: String) -> String? {
        guard let range = envelope.range(of: #","event":"#), envelope.hasSuffix("}") else { return nil }
        return String(envelope[range.upperBound..<envelope.index(before: envelope.endIndex)])
    }
}
