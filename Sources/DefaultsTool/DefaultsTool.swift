import DefaultsCore
import FoundationEssentials
import Glibc

/// The `defaults` command: macOS `defaults(1)` over defaultsd, plus `watch`, `sync` and `--json`.
///
/// ```swift
/// let status = DefaultsTool.run(["read", "com.example.bridge"], environment: ProcessInfo.processInfo.environment)
/// ```
public enum DefaultsTool {
    /// Runs one command; returns the exit status (0, 1, or 255 for a usage error).
    public static func run(_ arguments: [String], environment: [String: String], console: Console = .process,
                           standardInput: (() -> Data)? = nil) -> Int32 {
        var options = Options(environment: environment)
        var words: [String] = []
        var index = 0
        // Options of this port may stand anywhere; -currentHost/-host (macOS) before the verb.
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--json": options.json = true
            case "--socket":
                guard index + 1 < arguments.count else { return usage(console) }
                options.socketPath = arguments[index + 1]
                index += 1
            case "-currentHost" where words.isEmpty:
                options.host = .current
            case "-host" where words.isEmpty:
                guard index + 1 < arguments.count else { return usage(console) }
                let name = arguments[index + 1]
                guard Options.namesThisMachine(name) else {
                    console.log("-host \(name) names another machine; defaultsd serves only the one it runs on (\(Options.hostName)). Use -currentHost for this machine's by-host domains, or run defaults on \(name).")
                    return 1
                }
                options.host = .current
                index += 1
            default: words.append(argument)
            }
            index += 1
        }
        guard let verb = words.first else { return usage(console) }
        let command = Command(
            console: console, options: options,
            standardInput: standardInput ?? { FileDescriptorIO.readToEnd(STDIN_FILENO) ?? Data() })
        do {
            try command.run(verb: verb.lowercased(), Array(words.dropFirst()))
            return 0
        } catch let error as ToolError {
            switch error {
            case .usage: return usage(console)
            case .misuse(let problem):
                console.log(problem)
                return usage(console)
            case .failure(let message):
                console.log(message)
                return 1
            case .daemonUnavailable(let message):
                console.standardError(message + "\n")
                return 1
            }
        } catch let refusal as DaemonClient.Refusal {
            console.log("\(refusal.message) (\(refusal.code))")
            return 1
        } catch {
            console.log("\(error)")
            return 1
        }
    }

    static func usage(_ console: Console) -> Int32 {
        console.printRaw(Usage.full)
        return 255
    }

    struct Options {
        var json = false
        var socketPath: String
        /// `-currentHost` (or `-host` with this machine's name): the by-host variant of each domain named.
        var host = DomainName.Host.any
        /// The folder the daemon shares with Foundation (`$XDG_CONFIG_HOME`): a plist path inside
        /// it names a domain, which is then changed through the daemon.
        var storageDirectory: String
        /// `$HOME`, which a path starting with `~` begins with.
        var home: String

        /// This machine's host name.
        static var hostName: String {
            var buffer = [CChar](repeating: 0, count: 256)
            guard gethostname(&buffer, buffer.count) == 0 else { return "localhost" }
            // Up to the first NUL, or the whole buffer when a name that long is cut without one.
            return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(truncatingIfNeeded: $0) }, as: UTF8.self)
        }

        /// Whether `name` is this machine: its host name, or that name's first label, in any case.
        static func namesThisMachine(_ name: String) -> Bool {
            let full = hostName.lowercased()
            let short = full.split(separator: ".").first.map(String.init) ?? full
            return [full, short, "localhost"].contains(name.lowercased())
        }

        init(environment: [String: String]) {
            socketPath = DefaultPaths.clientSocketPath(environment: environment, uid: getuid())
            storageDirectory = DefaultPaths.storageDirectory(environment: environment)
            home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path
        }
    }
}
