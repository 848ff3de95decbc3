import ChorusAPI
import Foundation
import SQLKit

/// A stored playback snapshot and its version.
struct PlaybackSnapshot: Sendable {
    var state: PlaybackState
    var version: Int
}

/// Conversation playbacks as they fill in (`playbacks`), so `GET /conversations/{id}/playbacks/{playback_id}` answers
/// on any instance. The generator's in-memory state is authoritative; it writes snapshots with a growing version, and
/// an older snapshot arriving late never replaces a newer one.
///
/// Reached as `store.playbacks`.
struct PlaybackStore: StoreArea {
    let base: ChorusStore

    /// How long a playback can be read back; older rows are deleted by the retention sweep.
    static let lifetime: TimeInterval = 3_600

    /// Stores a new playback as version 0.
    func insert(_ state: PlaybackState, now: Date) async throws {
        let json = try Self.encode(state)
        try await sql.raw(
            """
            INSERT INTO playbacks (id, conversation_id, user_id, version, state, created_at, updated_at)
            VALUES (\(bind: state.id), \(bind: state.conversationID), \(bind: state.userID), \(bind: Int64(0)), \(bind: json),
              \(bind: now.epochMillis), \(bind: now.epochMillis))
            """
        ).run()
    }

    /// Replaces the snapshot with `state` as `version` in one compare-and-set statement: only when the stored version
    /// is lower. Returns whether it was written.
    @discardableResult
    func update(_ state: PlaybackState, version: Int, now: Date) async throws -> Bool {
        let json = try Self.encode(state)
        let row = try await sql.raw(
            """
            UPDATE playbacks SET state = \(bind: json), version = \(bind: Int64(version)), updated_at = \(bind: now.epochMillis)
            WHERE id = \(bind: state.id) AND version < \(bind: Int64(version))
            RETURNING id
            """
        ).first()
        return row != nil
    }

    /// The playback `id` of `userID` in `conversationID`, unless made more than ``lifetime`` before `now`.
    func snapshot(id: String, conversationID: String, userID: String, now: Date) async throws -> PlaybackSnapshot? {
        let since = now.addingTimeInterval(-Self.lifetime).epochMillis
        guard
            let row = try await reader.raw(
                """
                SELECT state, version FROM playbacks
                WHERE id = \(bind: id) AND conversation_id = \(bind: conversationID) AND user_id = \(bind: userID)
                  AND created_at > \(bind: since)
                """
            ).first()
        else { return nil }
        let state = try ChorusJSON.makeDecoder().decode(PlaybackState.self, from: Data(try row.string("state").utf8))
        return PlaybackSnapshot(state: state, version: try row.int("version"))
    }

    /// Deletes the playbacks made more than ``lifetime`` before `now`; returns how many.
    @discardableResult
    func deleteExpired(now: Date) async throws -> Int {
        let before = now.addingTimeInterval(-Self.lifetime).epochMillis
        let rows = try await sql.raw("DELETE FROM playbacks WHERE created_at <= \(bind: before) RETURNING id").all()
        return rows.count
    }

    private static func encode(_ state: PlaybackState) throws -> String {
        String(decoding: try ChorusJSON.makeEncoder().encode(state), as: UTF8.self)
    }
}
