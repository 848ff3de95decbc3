import ChorusCore
import Foundation
import Logging
import SQLKit
import Tracing

/// Access to the database: plain SQL through SQLKit, identical on SQLite and PostgreSQL. The queries live in one store
/// per area (``StoreArea``, `Persistence/Stores/`), reached from here (`store.calls`) or from a transaction (`tx.calls`).
///
/// Money paths never read-modify-write: they are single compare-and-set statements, or run inside
/// ``writeTransaction(_:)``, which takes SQLite's write lock up front (`BEGIN IMMEDIATE`) so concurrent writers
/// queue instead of failing with "database is locked".
struct ChorusStore: Sendable {
    enum Dialect: Sendable {
        case sqlite
        case postgres
    }

    /// Writes (and reads that must see an open transaction's writes).
    let sql: any SQLDatabase
    /// Plain reads: on SQLite a separate pool of read connections, otherwise the same database.
    let reader: any SQLDatabase
    let dialect: Dialect
    /// Serialises write transactions in this process (used on SQLite only).
    let writeGate: WriteGate
    /// Told how long each write transaction waited for its connection (and on SQLite the write gate): `/metrics`.
    let connectionWaits: (@Sendable (Duration) -> Void)?

    init(sql: any SQLDatabase, reader: (any SQLDatabase)? = nil, writeGate: WriteGate, connectionWaits: (@Sendable (Duration) -> Void)? = nil) {
        self.sql = sql
        self.reader = reader ?? sql
        self.dialect = sql.dialect.name == "postgresql" ? .postgres : .sqlite
        self.writeGate = writeGate
        self.connectionWaits = connectionWaits
    }

    private init(session: any SQLDatabase, dialect: Dialect, writeGate: WriteGate) {
        self.sql = session
        self.reader = session
        self.dialect = dialect
        self.writeGate = writeGate
        self.connectionWaits = nil
    }

    /// Runs `body` in one write transaction on one connection; rolls back on error. Nested calls join the
    /// transaction they run in.
    ///
    /// Within a traced request, job or call the transaction is a `db.transaction` span, its child; transactions outside
    /// any span (the job runner's polling) make none, so idle polls do not fill the collector.
    func writeTransaction<R: Sendable>(_ body: @escaping @Sendable (ChorusStore) async throws -> R) async throws -> R {
        if inTransaction { return try await body(self) }
        if let context = ServiceContext.current, tracer.activeSpan(identifiedBy: context) != nil {
            return try await tracer.withSpan("db.transaction", context: context, ofKind: .client) { span in
                span.attributes["db.system.name"] = dialect == .sqlite ? "sqlite" : "postgresql"
                return try await runTransaction(body)
            }
        }
        return try await runTransaction(body)
    }

    private func runTransaction<R: Sendable>(_ body: @escaping @Sendable (ChorusStore) async throws -> R) async throws -> R {
        let dialect = self.dialect
        let gate = writeGate
        let tracer = self.tracer
        let requested = ContinuousClock.now
        let run = {
            try await self.sql.withSession { session in
                self.connectionWaits?(ContinuousClock.now - requested)
                if dialect == .sqlite {
                    // WAL with synchronous=NORMAL: commits are atomic and consistent; the last ones may be lost on a
                    // power failure (not on a crash of the process). Set per connection, so set on each use.
                    try await session.raw("PRAGMA synchronous = NORMAL").run()
                }
                try await session.raw(dialect == .sqlite ? "BEGIN IMMEDIATE" : "BEGIN").run()
                do {
                    var store = ChorusStore(session: session, dialect: dialect, writeGate: gate)
                    store.inTransaction = true
                    store.tracer = tracer
                    let result = try await body(store)
                    try await session.raw("COMMIT").run()
                    return result
                } catch {
                    try? await session.raw("ROLLBACK").run()
                    throw error
                }
            }
        }
        return dialect == .sqlite ? try await gate.withPermit(run) : try await run()
    }

    private var inTransaction = false
    /// Makes a span of each write transaction run for a traced request, job or call (``ChorusTracing``).
    var tracer: any Tracer = NoOpTracer()

    /// `SELECT 1`: the database answers.
    func ping() async throws {
        _ = try await reader.raw("SELECT 1 AS one").first()
    }
}

/// The queries of one area (the tables it owns), on the database or the transaction of `base`.
///
/// A store holds nothing but `base`: reached from a transaction's `ChorusStore` (`tx.calls`), its statements run on
/// that transaction's connection.
protocol StoreArea: Sendable {
    var base: ChorusStore { get }
}

extension StoreArea {
    /// Writes (and reads that must see an open transaction's writes).
    var sql: any SQLDatabase { base.sql }
    /// Plain reads (``ChorusStore/reader``).
    var reader: any SQLDatabase { base.reader }
    var dialect: ChorusStore.Dialect { base.dialect }

    /// ``ChorusStore/writeTransaction(_:)``: joins the transaction `base` runs in, if any.
    func writeTransaction<R: Sendable>(_ body: @escaping @Sendable (ChorusStore) async throws -> R) async throws -> R {
        try await base.writeTransaction(body)
    }
}

extension ChorusStore {
    var accounts: AccountStore { AccountStore(base: self) }
    var callBridge: CallBridgeStore { CallBridgeStore(base: self) }
    var calls: CallStore { CallStore(base: self) }
    var console: ConsoleStore { ConsoleStore(base: self) }
    var destinations: DestinationStore { DestinationStore(base: self) }
    var idempotency: IdempotencyStore { IdempotencyStore(base: self) }
    var invitations: InvitationStore { InvitationStore(base: self) }
    var jobs: JobStore { JobStore(base: self) }
    var messaging: MessagingStore { MessagingStore(base: self) }
    var metering: MeteringStore { MeteringStore(base: self) }
    var playbacks: PlaybackStore { PlaybackStore(base: self) }
    var purchases: PurchaseStore { PurchaseStore(base: self) }
    var rateLimits: RateLimitStore { RateLimitStore(base: self) }
    var reports: ReportStore { ReportStore(base: self) }
    var scenarios: ScenarioStore { ScenarioStore(base: self) }
    var schedules: ScheduleStore { ScheduleStore(base: self) }
    var stories: StoryStore { StoryStore(base: self) }
    var usage: UsageStore { UsageStore(base: self) }
    var usageLimits: UsageLimitStore { UsageLimitStore(base: self) }
    var voices: VoiceStore { VoiceStore(base: self) }
}

extension Date {
    /// Milliseconds since 1970, the storage format of every timestamp.
    /// Clamped to what an `Int64` holds: dates from outside (App Store payloads) can lie past the year 292 million.
    var epochMillis: Int64 { Int64(clampingRounded: timeIntervalSince1970 * 1000, .down) }

    init(epochMillis: Int64) {
        self.init(timeIntervalSince1970: TimeInterval(epochMillis) / 1000)
    }
}

extension SQLRow {
    func int(_ column: String) throws -> Int { Int(try decode(column: column, as: Int64.self)) }
    func optionalInt(_ column: String) throws -> Int? { try decode(column: column, as: Int64?.self).map(Int.init) }
    func string(_ column: String) throws -> String { try decode(column: column, as: String.self) }
    func optionalString(_ column: String) throws -> String? { try decode(column: column, as: String?.self) }
    func date(_ column: String) throws -> Date { Date(epochMillis: try decode(column: column, as: Int64.self)) }
    func optionalDate(_ column: String) throws -> Date? { try decode(column: column, as: Int64?.self).map(Date.init(epochMillis:)) }
}
