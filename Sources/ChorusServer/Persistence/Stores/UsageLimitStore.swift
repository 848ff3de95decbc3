import ChorusCore
import Foundation
import SQLKit

/// A recording's transcript in one language, or one being made.
struct StoredTranscript: Sendable, Equatable {
    var status: String
    var transcript: String?
    var confidence: Double?
    var label: String?
    var language: String?
}

/// A counter an admission charges: `scope` (`trial_calls`, `signup-ip:203.0.113.7`, `signup-net:203.0.113.0/24`) in
/// `period` (`2026-11-26`), against `limit`.
struct AdmissionCharge: Sendable, Equatable {
    var scope: String
    var period: String
    var limit: Int
}

/// The day's trial calls across all accounts are used up (`CHORUS_TRIAL_CALLS_PER_DAY`).
struct TrialCallsExhausted: Error {}

/// Denial-of-wallet limits: transcripts stored per recording and language (`audio_transcripts`), and global admission
/// counters (`admission_counters`: trial calls per day, signups per address and network).
///
/// Reached as `store.usageLimits`, or `tx.usageLimits` inside ``ChorusStore/writeTransaction(_:)``.
struct UsageLimitStore: StoreArea {
    let base: ChorusStore

    /// The counter of trial calls placed per UTC day, all accounts together.
    static let trialCallsScope = "trial_calls"

    /// The period of the admission counters: the UTC day of `date` (`2026-11-26`).
    static func admissionDay(_ date: Date) -> String { VoiceUsagePolicy.period(date, monthly: false) }

    // MARK: Transcripts

    func storedTranscript(audioID: String, languageKey: String) async throws -> StoredTranscript? {
        try await sql.raw(
            "SELECT * FROM audio_transcripts WHERE audio_id = \(bind: audioID) AND language_key = \(bind: languageKey)"
        ).first().map { row in
            StoredTranscript(
                status: try row.string("status"), transcript: try row.optionalString("transcript"),
                confidence: try row.decode(column: "confidence", as: Double?.self),
                label: try row.optionalString("label"), language: try row.optionalString("language"))
        }
    }

    /// Claims the transcription of `audioID` in `languageKey` until `until`: succeeds when no transcript is stored and
    /// nobody holds a live claim (one conditional upsert).
    func claimTranscript(audioID: String, languageKey: String, now: Date, until: Date) async throws -> Bool {
        try await sql.raw(
            """
            INSERT INTO audio_transcripts (audio_id, language_key, status, claimed_until)
            VALUES (\(bind: audioID), \(bind: languageKey), 'pending', \(bind: until.epochMillis))
            ON CONFLICT (audio_id, language_key) DO UPDATE SET claimed_until = excluded.claimed_until
            WHERE audio_transcripts.status = 'pending' AND audio_transcripts.claimed_until < \(bind: now.epochMillis)
            RETURNING audio_id
            """
        ).first() != nil
    }

    /// Stores the transcript of a claim and makes it the recording's (and its messages') transcript, in one transaction.
    func completeTranscript(
        audioID: String, languageKey: String, text: String, confidence: Double?, label: String?, language: String?
    ) async throws {
        try await writeTransaction { tx in
            try await tx.sql.raw(
                """
                UPDATE audio_transcripts SET status = 'ready', transcript = \(bind: text), confidence = \(bind: confidence),
                  label = \(bind: label), language = \(bind: language), claimed_until = NULL
                WHERE audio_id = \(bind: audioID) AND language_key = \(bind: languageKey)
                """
            ).run()
            try await tx.messaging.saveTranscript(audioID: audioID, text: text, confidence: confidence, label: label, language: language)
        }
    }

    /// Drops a failed claim so the next request tries again.
    func abandonTranscript(audioID: String, languageKey: String) async throws {
        try await sql.raw(
            "DELETE FROM audio_transcripts WHERE audio_id = \(bind: audioID) AND language_key = \(bind: languageKey) AND status = 'pending'"
        ).run()
    }

    // MARK: Admission counters

    /// Charges one unit to every counter of `charges` without passing its limit, all or nothing (conditional upserts in
    /// one transaction, in a fixed order so concurrent transactions cannot deadlock). Returns the first charge whose
    /// limit is reached, or `nil` when all were charged. Counters of days before the charged one are dropped first
    /// (nothing reads them again), so the table holds about a day of addresses and networks.
    func chargeAdmission(_ charges: [AdmissionCharge]) async throws -> AdmissionCharge? {
        if let today = charges.map(\.period).min() {
            try await sql.raw("DELETE FROM admission_counters WHERE period < \(bind: today)").run()
        }
        do {
            try await writeTransaction { tx in
                for charge in charges.sorted(by: { ($0.scope, $0.period) < ($1.scope, $1.period) }) {
                    guard charge.limit > 0 else { throw AdmissionRefused(charge: charge) }
                    let row = try await tx.sql.raw(
                        """
                        INSERT INTO admission_counters (scope, period, used) VALUES (\(bind: charge.scope), \(bind: charge.period), 1)
                        ON CONFLICT (scope, period) DO UPDATE SET used = admission_counters.used + 1
                        WHERE admission_counters.used < \(bind: Int64(charge.limit))
                        RETURNING used
                        """
                    ).first()
                    if row == nil { throw AdmissionRefused(charge: charge) }
                }
            }
            return nil
        } catch let refused as AdmissionRefused {
            return refused.charge
        }
    }

    /// Gives one unit back to `scope` in `period` (what it admitted did not happen).
    func refundAdmission(scope: String, period: String) async throws {
        try await sql.raw(
            "UPDATE admission_counters SET used = used - 1 WHERE scope = \(bind: scope) AND period = \(bind: period) AND used > 0"
        ).run()
    }

    func admissionCount(scope: String, period: String) async throws -> Int {
        try await reader.raw("SELECT used FROM admission_counters WHERE scope = \(bind: scope) AND period = \(bind: period)").first()
            .map { try $0.int("used") } ?? 0
    }
}

private struct AdmissionRefused: Error {
    var charge: AdmissionCharge
}
