import Foundation

extension ChorusConfiguration {
    /// Where the data lives: a SQLite file (the embedded default) or PostgreSQL.
    public enum DatabaseLocation: Sendable, Equatable {
        case sqlite(path: String)
        case postgres(url: String)

        public var kind: String {
            switch self {
            case .sqlite: "sqlite"
            case .postgres: "postgres"
            }
        }

        /// `CHORUS_DATABASE_URL`: a SQLite path (relative to `workingDirectory`, `sqlite://` optional) or a PostgreSQL URL;
        /// `chorus.sqlite` in the working directory when unset.
        static func load(from reader: inout EnvironmentReader, workingDirectory cwd: URL) -> DatabaseLocation {
            let sqliteDefault = DatabaseLocation.sqlite(path: cwd.appendingPathComponent("chorus.sqlite").path)
            guard let databaseURL = reader.string("CHORUS_DATABASE_URL") else { return sqliteDefault }
            let scheme = databaseURL.range(of: "://").map { String(databaseURL[..<$0.lowerBound]).lowercased() }
            switch scheme {
            case .some(let scheme) where scheme.hasPrefix("postgres"):
                if URL(string: databaseURL)?.host == nil && !scheme.hasSuffix("+uds") {
                    reader.problems.append("CHORUS_DATABASE_URL is not a valid PostgreSQL URL (postgres://user:password@host:5432/database).")
                }
                return .postgres(url: databaseURL)
            case "sqlite", nil:
                let path = scheme == nil ? databaseURL : String(databaseURL.dropFirst("sqlite://".count))
                return .sqlite(path: path.hasPrefix("/") ? path : cwd.appendingPathComponent(path).path)
            case .some(let scheme):
                reader.problems.append("CHORUS_DATABASE_URL: unsupported scheme '\(scheme)' (use a SQLite path or postgres://).")
                return sqliteDefault
            }
        }
    }
}
