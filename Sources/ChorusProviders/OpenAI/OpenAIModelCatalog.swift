import ChorusCore
import Foundation

/// OpenAI's model list, `GET /v1/models`: every model the key may use, each with its `shutdown_date` (`YYYY-MM-DD`,
/// or `null` while no shutdown is announced).
///
/// The answer is read tolerantly: members other than `id` and `shutdown_date` are ignored, a `shutdown_date` that is
/// not a date (a number, a malformed string) is reported as ``ModelListing/listedWithUnreadableDate(_:)`` for that
/// model instead of failing the list, and an entry without a string `id` is skipped. A body that is not a model list
/// at all is ``ProviderError/invalidResponse(_:)``.
public struct OpenAIModelCatalog: Sendable {
    private let connection: OpenAIConnection

    public init(connection: OpenAIConnection) {
        self.connection = connection
    }

    /// The listed models by id (the first entry wins if an id repeats).
    public func listing() async throws -> [String: ModelListing] {
        let response = try await connection.get(operation: "models.list", path: "models")
        return try Self.listing(from: response.data)
    }

    /// Reads a `ListModelsResponse` body.
    public static func listing(from body: Data) throws -> [String: ModelListing] {
        let answer: Answer
        do {
            answer = try JSONDecoder().decode(Answer.self, from: body)
        } catch {
            throw ProviderError.invalidResponse("OpenAI models.list returned an unreadable body: \(error)")
        }
        var listing: [String: ModelListing] = [:]
        for entry in answer.data {
            guard let id = entry.id, listing[id] == nil else { continue }
            switch entry.shutdownDate {
            case .none, .some(.null): listing[id] = .listed(shutdownDate: nil)
            case .some(.text(let text)):
                listing[id] = CalendarDay(iso: text).map { .listed(shutdownDate: $0) } ?? .listedWithUnreadableDate(text)
            case .some(.other): listing[id] = .listedWithUnreadableDate("not a string")
            }
        }
        return listing
    }

    struct Answer: Decodable {
        let data: [Entry]

        enum CodingKeys: String, CodingKey {
            case data
        }
    }

    struct Entry: Decodable {
        let id: String?
        let shutdownDate: DateField?

        enum CodingKeys: String, CodingKey {
            case id
            case shutdownDate = "shutdown_date"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try? container.decodeIfPresent(String.self, forKey: .id)
            shutdownDate = try container.decodeIfPresent(DateField.self, forKey: .shutdownDate)
        }
    }

    /// `shutdown_date` as sent: a string, `null`, or anything else.
    enum DateField: Decodable {
        case text(String)
        case null
        case other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let text = try? container.decode(String.self) {
                self = .text(text)
            } else {
                self = .other
            }
        }
    }
}
