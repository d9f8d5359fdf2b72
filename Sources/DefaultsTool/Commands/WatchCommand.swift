import DefaultsCore
import FoundationEssentials
import Glibc

extension Command {
    /// `watch [<domain>...]`: one line per changed key, as it happens, like `dconf watch`:
    /// `2026-11-21 10:00:00.250 com.example.bridge warpFactor = 7  (pid 4242, uid 1000, defaults)`.
    /// With `--json`, the daemon's event lines as they are. Once subscribed it says
    /// `watching <domains>; Ctrl-C to stop` on standard error. Ctrl-C ends it with status 0.
    func watch(_ arguments: [String]) throws {
        var domains: [DomainArgument] = []
        for argument in arguments { domains.append(try DomainArgument(argument, host: options.host)) }
        // Ctrl-C ends a watch normally (installed before subscribing, so a subscribed watcher has it).
        // _exit: exit() is not safe inside a signal handler; output is unbuffered.
        // A parent may have left SIGINT blocked in the mask it passed down; unblock it.
        signal(SIGINT) { _ in _exit(0) }
        var interrupt = sigset_t()
        sigemptyset(&interrupt)
        sigaddset(&interrupt, SIGINT)
        sigprocmask(SIG_UNBLOCK, &interrupt, nil)
        let client = try connect()
        try client.call(.hello) { w in w.key("client"); w.string("defaults watch") }
        try client.call(.subscribe) { w in
            if domains.isEmpty {
                w.key("all"); w.bool(true)
            } else {
                w.key("domains"); w.beginArray()
                for domain in domains { w.string(domain.domain.rawValue) }
                w.endArray()
                w.host(options.host)
            }
        }
        // Said on standard error once subscribed, so the output stays the events alone and a
        // script (or a test) knows from when on a change is seen.
        let watched = domains.isEmpty ? "every domain" : domains.map(\.domain.description).joined(separator: ", ")
        console.standardError("watching \(watched); Ctrl-C to stop\n")
        while let line = client.nextEvent() {
            if options.json {
                console.printRaw(line + "\n")
            } else if let text = try? Command.describeEvent(line, at: Date()) {
                console.print(text)
            }
        }
        throw ToolError.daemonUnavailable("defaultsd at \(options.socketPath) closed the connection")
    }

    static func describeEvent(_ line: String, at time: Date) throws -> String {
        let event = try JSONParser.parse(line)
        guard case .string(let name)? = event["domain"], case .object(let changes)? = event["changes"] else { return "" }
        let host = DomainName.Host(wire: event["host"]) ?? .any
        let domain = (try? DomainName(name, host: host))?.description ?? name
        var origin: [String] = []
        if let from = Origin(wire: event["origin"]) {
            if from.source == .connection {
                origin += ["pid \(from.pid)", "uid \(from.uid)"] + (from.client.map { [$0] } ?? [])
            } else {
                origin.append(from.source.rawValue)
                if let machine = from.host { origin.append("from \(machine)") }
            }
        }
        let stamp = OldStyleText.date(time).dropLast(6) + SystemText.format(".%03d", Int(time.timeIntervalSince1970 * 1000) % 1000)
        var text = ""
        for (key, change) in changes.sorted(by: { OldStyleText.codeUnitOrder($0.key, $1.key) }) {
            let description = change == .null ? "(removed)" : OldStyleText.describe(try WireValue.decode(change))
            text += "\(stamp) \(domain) \(OldStyleText.quoted(key)) = \(description)  (\(origin.joined(separator: ", ")))\n"
        }
        return text
    }
}
