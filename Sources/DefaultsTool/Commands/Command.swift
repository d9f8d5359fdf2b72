import DefaultsCore
import FoundationEssentials
import Glibc

/// One invocation of `defaults`: parses the verb's arguments and talks to the daemon.
struct Command {
    let console: Console
    let options: DefaultsTool.Options
    let standardInput: () -> Data

    func connect() throws(ToolError) -> DaemonClient { try DaemonClient(socketPath: options.socketPath) }

    /// Runs the verb ``Verb/all`` names `verb`; a word that names none is a usage error.
    func run(verb: String, _ arguments: [String]) throws {
        guard let found = Verb.named(verb) else { throw ToolError.usage }
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
        return try DomainArgument(arguments[index], host: options.host)
    }

    func printJSON(_ value: PlistValue) {
        console.printRaw(String(decoding: WireValue.encode(value), as: UTF8.self) + "\n")
    }
}
