import DefaultsCore
import FoundationEssentials
import Glibc

/// One invocation of `defaults`: parses the verb's arguments and talks to the daemon.
struct Command {
    let console: Console
    let options: DefaultsTool.Options
    let standardInput: () -> Data

    func connect() throws(ToolError) -> DaemonClient { try DaemonClient(socketPath: options.socketPath) }

    func run(verb: String, _ arguments: [String]) throws {
        switch verb {
        case "help":
            console.printRaw(Usage.full)
        case "read": try read(arguments)
        case "read-type": try readType(arguments)
        case "read-effective": try readEffective(arguments)
        case "write": try write(arguments)
        case "rename": try rename(arguments)
        case "delete", "remove", "delete-all": try delete(arguments)
        case "import": try importDomain(arguments)
        case "export": try exportDomain(arguments)
        case "domains": try domains(arguments)
        case "find": try find(arguments)
        case "watch": try watch(arguments)
        case "sync": try sync(arguments)
        case "settings": try settings(arguments)
        case "roaming": try roaming(arguments)
        case "schema": try schema(arguments)
        default: throw ToolError.usage
        }
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
