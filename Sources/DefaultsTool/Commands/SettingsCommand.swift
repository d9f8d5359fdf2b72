import DefaultsCore
import Foundation

extension Command {
    /// `settings <domain> [<pane>]` shows a pane of the domain's Settings bundle as the Settings app
    /// lays it out; `settings <domain> set <key> <value...>` writes a value, checked against the bundle.
    func settings(_ arguments: [String]) throws {
        var index = 0
        let domain = try domainArgument(arguments, at: &index)
        let rest = Array(arguments[index...])
        if rest.first == "set" {
            guard rest.count >= 3 else { throw ToolError.usage }
            let key = rest[1]
            guard case .set(let value) = try ValueArguments.parse(Array(rest.dropFirst(2))) else { throw ToolError.usage }
            let client = try connect()
            do {
                try client.call("set") { w in
                    w.key("domain"); w.string(domain.domain.rawValue)
                    w.key("key"); w.string(key)
                    w.key("value"); w.value(value)
                }
            } catch let refusal as DaemonClient.Refusal {
                throw ToolError.failure(refusal.message)
            }
            return
        }
        guard rest.count <= 1 else { throw ToolError.usage }
        let client = try connect()
        let answer: JSON
        do {
            answer = try client.call("describeBundle") { w in
                w.key("domain"); w.string(domain.domain.rawValue)
                if let pane = rest.first { w.key("pane"); w.string(pane) }
                w.key("text"); w.bool(true)
            }
        } catch let refusal as DaemonClient.Refusal {
            throw ToolError.failure(refusal.message)
        }
        if options.json {
            var writer = JSONWriter()
            writer.json(answer["pane"] ?? .null)
            console.printRaw(String(decoding: writer.bytes, as: UTF8.self) + "\n")
        } else if case .string(let text)? = answer["text"] {
            console.printRaw(text.hasSuffix("\n") ? text : text + "\n")
        }
    }
}
