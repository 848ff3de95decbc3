@preconcurrency import AsyncKit
import Logging
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit

/// Read-only connections to the SQLite file, several per event loop.
///
/// Fluent's SQLite driver keeps one connection per event loop, so at most two queries run at once on two cores
/// and every request queues behind the others' round trips to the blocking pool. In WAL mode readers never block
/// each other or the writer, so reads get their own pool; writes stay on Fluent's connections behind the
/// ``WriteGate``. A read started after a write committed sees it.
///
/// `@unchecked Sendable`: AsyncKit's pools synchronise internally (a lock for the group, the event loop for each
/// loop's pool) but do not declare it; Fluent's drivers wrap them the same way.
final class SQLiteReadPool: @unchecked Sendable {
    private let pool: EventLoopGroupConnectionPool<SQLiteConnectionSource>
    private let logger: Logger
    /// Told how long each read waited for a connection (`/metrics`).
    private let waits: @Sendable (Duration) -> Void

    init(
        path: String, connectionsPerEventLoop: Int, threadPool: NIOThreadPool, eventLoopGroup: any EventLoopGroup, logger: Logger,
        waits: @Sendable @escaping (Duration) -> Void
    ) {
        self.pool = EventLoopGroupConnectionPool(
            source: SQLiteConnectionSource(configuration: .init(storage: .file(path: path)), threadPool: threadPool),
            maxConnectionsPerEventLoop: connectionsPerEventLoop, requestTimeout: .seconds(10), pruneInterval: nil, logger: logger,
            on: eventLoopGroup
        )
        self.logger = logger
        self.waits = waits
    }

    /// A database for reads on `eventLoop`.
    func database(on eventLoop: any EventLoop) -> any SQLDatabase {
        PooledReader(pool: pool.pool(for: eventLoop), logger: logger, waits: waits).sql(encoder: .init(), decoder: .init(), queryLogLevel: nil)
    }

    func shutdown() async throws {
        try await pool.shutdownAsync()
    }
}

private struct PooledReader: SQLiteDatabase, @unchecked Sendable {
    let pool: EventLoopConnectionPool<SQLiteConnectionSource>
    let logger: Logger
    let waits: @Sendable (Duration) -> Void

    var eventLoop: any EventLoop { pool.eventLoop }

    func query(
        _ query: String, _ binds: [SQLiteData], logger: Logger, _ onRow: @escaping @Sendable (SQLiteRow) -> Void
    )
        -> EventLoopFuture<Void>
    {
        withConnection { $0.query(query, binds, logger: logger, onRow) }
    }

    func withConnection<T>(_ closure: @escaping @Sendable (SQLiteConnection) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        let requested = ContinuousClock.now
        return pool.withConnection(logger: logger) { connection in
            waits(ContinuousClock.now - requested)
            return closure(connection)
        }
    }
}
