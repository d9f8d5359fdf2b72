import DefaultsCore
import FoundationEssentials
import Glibc

/// One invocation of `defaults`: parses the verb's arguments and talks to the daemon.
struct Command {
    let console: Console
    let options: DefaultsTool.Options
    let standardInput: () -> Data

    func connect() throws(ToolError) -> DaemonClient { try DaemonClient(socketPath: options.socketPath) }

    /// Runs the verb ``Verb/all`` names `verb`; a word that names none is a usage error. A file's
    /// path in the domain's place, outside the daemon's storage folder, is the file itself, for
    /// the verbs that take one (``Verb/runOnFile``).
    func run(verb: String, _ arguments: [String]) throws {
        guard let found = Verb.named(verb) else { throw ToolError.usage }
        if let onFile = found.runOnFile, let first = arguments.first, PlistPath.isPath(first) {
            let location = try plistPath(first)
            if location.domain(storageDirectory: options.storageDirectory) == nil {
                return try onFile(self)(location, Array(arguments.dropFirst()))
            }
        }
        try found.run(self)(arguments)
    }

    /// `help`: the usage text, on standard output, and success.
    func help(_ arguments: [String]) throws {
        console.printRaw(Usage.full)
    }

    /// `-app NAME` has no meaning without application bundles; macOS's message for an unknown one.
    func domainArgument(_ arguments: [String], at index: inout Int) throws(ToolError) -> DomainArgument {
        guard index < arguments.count else { throw ToolError.usage }
        if arguments[index] == "-app" {
            guard index + 1 < arguments.count else { throw ToolError.usage }
            throw ToolError.failure("Couldn't find an application named \"\(arguments[index + 1])\"; defaults unchanged")
        }
        defer { index += 1 }
        return try domainArgument(arguments[index])
    }

    /// The domain a word names: a domain name, a spelling of the global domain, or the path of
    /// the domain's file in the daemon's storage folder (`~/.config/com.example.app`), which is
    /// the domain as the daemon serves it, so that its subscribers hear of the change.
    func domainArgument(_ word: String) throws(ToolError) -> DomainArgument {
        guard PlistPath.isPath(word) else { return try DomainArgument(word, host: options.host) }
        guard let domain = try plistPath(word).domain(storageDirectory: options.storageDirectory) else {
            let verbs = Verb.all.filter { $0.runOnFile != nil }.map(\.name).joined(separator: ", ")
            throw ToolError.failure("\(word) is a file outside defaultsd's storage (\(options.storageDirectory)); only \(verbs) take a file's path")
        }
        return DomainArgument(domain: domain)
    }

    /// The file a path names. `-currentHost` and `-host` choose a domain's by-host variant, which a
    /// file has none of: a by-host domain's file is in `ByHost/`, and its path names it.
    func plistPath(_ word: String) throws(ToolError) -> PlistPath {
        guard options.host == .any else {
            throw ToolError.failure("-currentHost and -host choose a domain's by-host variant; \(word) names a file, which has none")
        }
        return try PlistPath(word, home: options.home)
    }

    func printJSON(_ value: PlistValue) {
        console.printRaw(String(decoding: WireValue.encode(value), as: UTF8.self) + "\n")
    }
}
