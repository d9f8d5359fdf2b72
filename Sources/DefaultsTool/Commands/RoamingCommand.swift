import DefaultsCore

extension Command {
    /// `roaming`: which domains follow the user to their other machines, and whether the etcd
    /// cluster answers (the daemon's `stats`, its `roaming` member).
    func roaming(_ arguments: [String]) throws {
        guard arguments.isEmpty else { throw ToolError.usage }
        let roaming = try connect().call(.stats)["roaming"] ?? .null
        if options.json {
            var writer = JSONWriter()
            writer.json(roaming)
            console.printRaw(String(decoding: writer.bytes, as: UTF8.self) + "\n")
            return
        }
        guard case .string(let state)? = roaming["state"], state != "off" else {
            console.print("Roaming is off: the daemon's configuration has no roaming section.\n")
            return
        }
        let described = switch state {
        case "online": "online"
        case "stale": "stale (the watch fell behind the cluster: \(Command.text(roaming["stale"])); resuming through another member)"
        case "offline": "offline (no etcd endpoint answers; changes are queued)"
        default: "connecting"
        }
        var text = "Roaming through etcd: \(described)\n"
        text += "Host name: \(Command.text(roaming["host"]))\n"
        if case .string(let watching)? = roaming["watching"] { text += "Watching through: \(watching)\n" }
        text += "Members:\n"
        if case .array(let members)? = roaming["members"] {
            text += members.map { "    \(Command.text($0["endpoint"]))  \(Command.memberState($0))\n" }.joined()
        }
        text += "Behind the cluster: \(Command.text(roaming["behind"])) revisions"
        if case .integer(let milliseconds)? = roaming["millisecondsSinceProgress"] {
            text += " (last event or progress \(Command.seconds(milliseconds)) ago)"
        }
        text += "\n"
        text += "Last revision applied: \(Command.text(roaming["revision"]))\n"
        text += "Changes waiting to be sent: \(Command.text(roaming["queue"]))\n"
        let domains = Command.texts(roaming["domains"])
        text += domains.isEmpty ? "No domain roams.\n" : "Domains that roam:\n" + domains.map { "    \($0)\n" }.joined()
        if case .object(let stopped)? = roaming["stopped"], !stopped.isEmpty {
            text += "Domains that stopped roaming (reload the daemon to try again):\n"
            text += stopped.sorted { $0.key < $1.key }.map { "    \($0.key): \(Command.text($0.value))\n" }.joined()
        }
        console.print(text)
    }

    private static func text(_ json: JSON?) -> String {
        switch json {
        case .string(let text)?: text
        case .integer(let number)?: String(number)
        default: "?"
        }
    }

    /// One member of the last check: whether it answers, its leader and revision, its problem.
    private static func memberState(_ member: JSON) -> String {
        switch member["answers"] {
        case .bool(true)?:
            let leader = member["leader"].flatMap { if case .string(let id) = $0 { id } else { nil } }
            var described = leader.map { "answers, leader \($0), revision \(text(member["revision"]))" } ?? "answers, no leader"
            if case .string(let problem)? = member["problem"] { described += " (\(problem))" }
            return described
        case .bool(false)?: return "does not answer: \(text(member["problem"]))"
        default: return "not checked yet"
        }
    }

    private static func seconds(_ milliseconds: Int64) -> String {
        milliseconds < 60_000 ? "\(milliseconds / 1000).\(milliseconds % 1000 / 100) s" : "\(milliseconds / 1000) s"
    }

    private static func texts(_ json: JSON?) -> [String] {
        guard case .array(let items)? = json else { return [] }
        return items.map { text($0) }
    }
}
