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
        case "offline": "offline (no etcd endpoint answers; changes are queued)"
        default: "connecting"
        }
        var text = "Roaming through etcd: \(described)\n"
        text += "Host name: \(Command.text(roaming["host"]))\n"
        text += "Endpoints: \(Command.texts(roaming["endpoints"]).joined(separator: ", "))\n"
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

    private static func texts(_ json: JSON?) -> [String] {
        guard case .array(let items)? = json else { return [] }
        return items.map { text($0) }
    }
}
