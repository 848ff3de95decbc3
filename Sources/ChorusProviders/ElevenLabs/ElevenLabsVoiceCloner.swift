import Foundation
import NIOCore
import NIOFoundationCompat

/// Instant voice cloning with ElevenLabs: `POST /v1/voices/add` (multipart) and `DELETE /v1/voices/{voice_id}`.
///
/// The form carries `name`, one `files` part per sample (with its file name and content type),
/// `remove_background_noise` (`true`/`false`), and the configured `description` and `labels` (a serialised JSON
/// object) when set. The answer is `{"voice_id", "requires_verification"}`.
///
/// Cloning is never retried: after a lost answer or a 5xx the voice may exist already, and a second attempt would use
/// a second voice slot; the caller decides. Refusals keep ElevenLabs' code: `voice_limit_reached` (the account's voice
/// slots are used up) and `can_not_use_instant_voice_cloning` (the plan has no cloning) arrive as
/// ``ProviderError/rejected(httpStatus:code:message:)``. Deleting a voice ElevenLabs no longer knows (404, or
/// `voice_not_found` / `voice_does_not_exist`) succeeds.
public struct ElevenLabsVoiceCloner: VoiceCloner {
    /// Sent as `description` with every clone, when set.
    public let voiceDescription: String?
    /// Sent as `labels` (a JSON object) with every clone, when not empty.
    public let labels: [String: String]
    private let connection: ElevenLabsConnection

    /// A cloner; `description` and `labels` are attached to every voice it creates (never personal data: the voice
    /// name and labels are visible to anyone with access to the ElevenLabs account).
    public init(connection: ElevenLabsConnection, description: String? = nil, labels: [String: String] = [:]) {
        self.connection = connection
        self.voiceDescription = description.flatMap { $0.isEmpty ? nil : $0 }
        self.labels = labels
    }

    /// The multipart form sent for `request` (also what tests inspect).
    public func form(for request: VoiceCloneRequest, boundary: String = MultipartFormData.randomBoundary()) throws -> MultipartFormData {
        var form = MultipartFormData(boundary: boundary)
        form.append(name: "name", value: request.name)
        for sample in request.samples {
            form.append(name: "files", filename: sample.filename, contentType: sample.contentType, data: sample.audio)
        }
        form.append(name: "remove_background_noise", value: request.removeBackgroundNoise ? "true" : "false")
        if let voiceDescription { form.append(name: "description", value: voiceDescription) }
        if !labels.isEmpty {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            form.append(name: "labels", value: String(decoding: try encoder.encode(labels), as: UTF8.self))
        }
        return form
    }

    /// Creates the voice. Throws ``ProviderError``.
    public func cloneVoice(_ request: VoiceCloneRequest) async throws -> ClonedVoice {
        guard !request.samples.isEmpty else {
            throw ProviderError.rejected(httpStatus: 400, code: "no_samples", message: "Voice cloning needs at least one sample")
        }
        let form = try form(for: request)
        let response = try await connection.send(
            operation: "voices.add", method: .POST, path: "/v1/voices/add", contentType: form.contentType,
            body: ByteBuffer(data: form.encoded()), retryable: false)
        do {
            let created = try JSONDecoder().decode(AddVoiceResponse.self, from: response.data)
            guard !created.voiceID.isEmpty else { throw ProviderError.invalidResponse("ElevenLabs voices.add returned an empty voice_id") }
            return ClonedVoice(voiceID: created.voiceID, requiresVerification: created.requiresVerification)
        } catch let error as ProviderError {
            throw error
        } catch {
            throw ProviderError.invalidResponse("ElevenLabs voices.add returned an unreadable body: \(error)")
        }
    }

    /// Deletes the voice; a voice ElevenLabs does not know counts as deleted. Throws ``ProviderError``.
    public func deleteVoice(id: String) async throws {
        do {
            _ = try await connection.send(
                operation: "voices.delete", method: .DELETE, path: "/v1/voices/\(ElevenLabsConnection.pathSegment(id))")
        } catch ProviderError.rejected(404, _, _) {
            return
        } catch ProviderError.rejected(_, "voice_not_found", _), ProviderError.rejected(_, "voice_does_not_exist", _) {
            return
        }
    }

    struct AddVoiceResponse: Decodable {
        let voiceID: String
        let requiresVerification: Bool

        enum CodingKeys: String, CodingKey {
            case voiceID = "voice_id"
            case requiresVerification = "requires_verification"
        }
    }
}
