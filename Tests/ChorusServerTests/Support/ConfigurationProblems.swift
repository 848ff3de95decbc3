import ChorusServer

extension ChorusConfiguration {
    /// What loading `environment` reports, one line per problem; empty when it loads.
    static func problems(loading environment: [String: String]) -> [String] {
        do {
            _ = try load(from: environment)
            return []
        } catch let error as ConfigurationError {
            return error.problems
        } catch {
            return ["\(error)"]
        }
    }
}
