import DefaultsCore
import FoundationEssentials
import Glibc

/// The path of a property-list file, written where a domain goes, as macOS's `defaults` takes
/// one: `defaults read ~/Library/Preferences/com.apple.finder`. A word is a path when it holds a
/// `/` or starts with `~`, which no domain name can. As on macOS, `.plist` is appended unless
/// the word ends with it, even when a file of the bare name exists; `~` and `~/` stand for
/// `$HOME`; a relative path starts at the working directory.
///
/// ```swift
/// PlistPath.isPath("~/prefs/com.example.app")                           // true
/// try PlistPath("~/prefs/com.example.app", home: "/home/picard").path   // "/home/picard/prefs/com.example.app.plist"
/// ```
struct PlistPath: Equatable, Sendable {
    /// The word as written; messages name the file so, as macOS's do (`Domain /tmp/x does not exist`).
    let argument: String
    /// The file's absolute path, ending in `.plist`.
    let path: String

    /// Whether a word in a domain's place is a path rather than a domain name.
    static func isPath(_ word: String) -> Bool { word.contains("/") || word.hasPrefix("~") }

    init(_ argument: String, home: String) throws(ToolError) {
        var expanded = argument
        if argument == "~" || argument.hasPrefix("~/") {
            expanded = home + argument.dropFirst()
        } else if argument.hasPrefix("~") {
            // Another user's home would need the user database, which the static `defaults` does not read.
            throw ToolError.failure("\(argument): only ~ and ~/ are expanded; write another user's home in full")
        }
        guard !expanded.hasSuffix("/") else {
            throw ToolError.failure("\(argument) names a folder; a domain's path names a file")
        }
        if !expanded.hasPrefix("/") { expanded = PlistPath.workingDirectory() + "/" + expanded }
        if !expanded.hasSuffix(".plist") { expanded += ".plist" }
        self.argument = argument
        self.path = expanded
    }

    /// The folder that holds the file.
    var folder: String { SystemText.parentDirectory(of: path) }

    /// The file's name in its folder.
    var fileName: String { String(path.split(separator: "/").last ?? "") }

    /// The domain this file holds when it lies in the daemon's storage folder: `<storage>/<domain>.plist`,
    /// or `<storage>/ByHost/<domain>..plist` for this machine's variant (the names Foundation gives
    /// them in the folder it shares with the daemon); nil for any other file. The folders are
    /// compared by their real paths, so a link to the storage folder, or `..` on the way, still
    /// finds it; the file's own name is not resolved, since a domain's file may itself be a link
    /// into a dotfiles folder and is still that domain's.
    func domain(storageDirectory: String) -> DomainName? {
        guard let storage = PlistPath.realPath(storageDirectory), let folder = PlistPath.resolved(self.folder) else { return nil }
        if folder == storage { return DomainName.fromFileName(fileName) }
        if folder == PlistPath.resolved(storageDirectory + "/" + DomainName.byHostFolder) {
            return DomainName.fromByHostFileName(fileName, hostID: "")
        }
        return nil
    }

    /// `path` resolved as ``realPath(_:)`` does, or, when it does not exist (a `ByHost` folder
    /// before the daemon's first by-host write makes it), its resolved folder and its own name.
    private static func resolved(_ path: String) -> String? {
        if let real = realPath(path) { return real }
        guard let name = path.split(separator: "/").last else { return nil }
        return realPath(SystemText.parentDirectory(of: path)).map { "\($0)/\(name)" }
    }

    /// `path` with every link and `.` or `..` resolved; nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func workingDirectory() -> String {
        guard let directory = getcwd(nil, 0) else { return "." }
        defer { free(directory) }
        return String(cString: directory)
    }
}
