import Foundation

/// The input files of a corpus.
public enum FuzzInputs {
    /// `url` itself when it is a file, else the regular files directly inside it, sorted by name.
    public static func files(at url: URL) -> [URL] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return [] }
        guard isDirectory.boolValue else { return [url] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.sorted().map { url.appendingPathComponent($0) }.filter { !$0.hasDirectoryPath }
    }
}
