import DefaultsCore
import FoundationEssentials
import Glibc

/// `history`, `undo` and `blame`: the daemon's change journal (`history` and `revert` in
/// docs/PROTOCOL.md), which records every change of a preference with its writer.
extension Command {
    /// `history [<domain> [<key>]] [--since <time>] [--by <writer>] [--limit <n>]`: one line per
    /// recorded change, oldest first: local time, writer, the domain when none is named, key,
    /// `old → new`. With `--json`, the daemon's entries as they are.
    func history(_ arguments: [String]) throws {
        let (flags, words) = try Command.flags(in: arguments, taking: ["--since", "--by", "--limit"])
        guard words.count <= 2 else { throw ToolError.usage }
        var since: Date?
        if let text = flags["--since"] { since = try Command.time(text, after: "--since") }
        var limit: Int?
        if let text = flags["--limit"] {
            guard let number = Int(text), number > 0 else { throw ToolError.misuse("--limit takes a number of changes, not \"\(text)\"") }
            limit = number
        }
        var domain: DomainArgument?
        if !words.isEmpty {
            var index = 0
            domain = try domainArgument(words, at: &index)
        }
        let key = words.count == 2 ? words[1] : nil
        let answer = try journal(domain: domain) { w in
            if let domain { w.domain(domain.domain) } else { w.host(options.host) }
            if let key { w.key("key"); w.string(key) }
            if let since { w.key("since"); w.string(RFC3339.format(since)) }
            if let writer = flags["--by"] { w.key("writer"); w.string(writer) }
            if let limit { w.key("limit"); w.integer(Int64(limit)) }
        }
        if answer["truncated"] == .bool(true) {
            console.log("Older changes are left out: they would not fit in one answer. Narrow it with --since or --limit.")
        }
        if options.json { return printJournalJSON(answer["entries"] ?? .array([])) }
        let entries = try Command.entries(answer)
        guard !entries.isEmpty else { return console.printRaw("No recorded changes.\n") }
        console.printRaw(HistoryText.lines(entries, showingDomain: domain == nil))
    }

    /// `undo <domain>` undoes the domain's latest change; `undo <domain> --to <time>` returns it to
    /// how it was then. One change, under the checks of any write (forced keys, Settings bundles);
    /// prints what it set (`key = value`) or removed (`key removed`), and the secure keys it could
    /// not restore, whose values the journal never records.
    func undo(_ arguments: [String]) throws {
        let (flags, words) = try Command.flags(in: arguments, taking: ["--to"])
        guard words.count == 1 else { throw ToolError.usage }
        var time: Date?
        if let text = flags["--to"] { time = try Command.time(text, after: "--to") }
        var index = 0
        let domain = try domainArgument(words, at: &index)
        let client = try connect()
        let answer: JSON
        do {
            answer = try client.call(.revert) { w in
                w.domain(domain.domain)
                if let time { w.key("time"); w.string(RFC3339.format(time)) }
            }
        } catch let refusal as DaemonClient.Refusal {
            if refusal.error.code == .invalidParameter, time == nil, try latestEntry(of: domain, client) == nil {
                throw ToolError.failure("Nothing to undo: no change of \(domain.domain) is recorded")
            }
            if let failure = Command.journalFailure(refusal, domain: domain) { throw failure }
            throw ToolError.failure("Could not undo changes of \(domain.displayName); exiting (\(refusal.code): \(refusal.message))")
        }
        var text = ""
        if case .object(let changes)? = answer["changes"] {
            for (key, change) in changes.sorted(by: { OldStyleText.codeUnitOrder($0.key, $1.key) }) {
                let name = OldStyleText.quoted(key)
                guard change != .null else {
                    text += "\(name) removed\n"
                    continue
                }
                let value = try WireValue.decode(change)
                text += "\(name) = \(OldStyleText.oneLine(value))\n"
            }
        }
        if case .array(let skipped)? = answer["skipped"] {
            for case .string(let key) in skipped {
                text += "\(OldStyleText.quoted(key)) not restored: the journal never records a secure value\n"
            }
        }
        console.print(text.isEmpty ? "Nothing to undo: \(domain.domain) already holds the values it had then.\n" : text)
    }

    /// `blame <domain> <key>`: who made the key's last recorded change, and when (with the
    /// program's process, user and executable), then the change as `history` prints it.
    func blame(_ arguments: [String]) throws {
        guard arguments.count == 2 else { throw ToolError.usage }
        var index = 0
        let domain = try domainArgument(arguments, at: &index)
        let key = arguments[index]
        let answer = try journal(domain: domain) { w in
            w.domain(domain.domain)
            w.key("key"); w.string(key)
            w.key("limit"); w.integer(1)
        }
        if options.json {
            guard case .array(let items)? = answer["entries"], let last = items.last else { return printJournalJSON(.null) }
            return printJournalJSON(last)
        }
        guard let entry = try Command.entries(answer).last else {
            return console.print("The current value of \(OldStyleText.quoted(key)) in \(domain.domain) has no recorded change.\n")
        }
        console.printRaw(HistoryText.author(of: entry) + HistoryText.lines([entry], showingDomain: false))
    }

    /// Asks the journal (`history`, its members written by `body`); its refusals in this command's words.
    private func journal(domain: DomainArgument?, _ body: (inout JSONWriter) -> Void) throws -> JSON {
        do {
            return try connect().call(.history, body)
        } catch let refusal as DaemonClient.Refusal {
            throw Command.journalFailure(refusal, domain: domain) ?? ToolError.failure("\(refusal.message) (\(refusal.code))")
        }
    }

    /// The latest recorded change of the domain; nil when none is.
    private func latestEntry(of domain: DomainArgument, _ client: DaemonClient) throws -> JournalEntry? {
        let answer = try client.call(.history) { w in
            w.domain(domain.domain)
            w.key("limit"); w.integer(1)
        }
        return try Command.entries(answer).last
    }

    /// The entries of a `history` answer, oldest first.
    private static func entries(_ answer: JSON) throws -> [JournalEntry] {
        guard case .array(let items)? = answer["entries"] else { return [] }
        return try items.map { item in
            guard let entry = JournalEntry(json: item, domain: nil) else {
                throw ToolError.failure("defaultsd answered a change this defaults cannot read: \(SystemText.excerpt("\(item)"))")
            }
            return entry
        }
    }

    /// The journal's own refusals, said plainly: the journal is off, or this daemon keeps none.
    private static func journalFailure(_ refusal: DaemonClient.Refusal, domain: DomainArgument?) -> ToolError? {
        switch refusal.error.code {
        case .noJournal:
            let excluded = domain.map { " (or excludes \($0.domain))" } ?? ""
            return ToolError.failure("The change journal is off\(excluded); see ADMINISTRATION.md")
        case .unknownOp:
            return ToolError.failure("This defaultsd keeps no change journal: it is older than this defaults (\(refusal.message))")
        default:
            return nil
        }
    }

    /// `--since` and `--to`: a duration back from now or a time (``TimeArgument``).
    private static func time(_ text: String, after flag: String) throws(ToolError) -> Date {
        guard let date = TimeArgument.parse(text, now: Date()) else {
            throw ToolError.misuse("\(flag) takes \(TimeArgument.accepted), not \"\(text)\"")
        }
        return date
    }

    /// Splits a verb's arguments into the flags it takes, each with the word after it, and the
    /// other words, in order. Another word starting with `--` is a usage error; one starting with
    /// a single `-` is a word (`-g` is a domain).
    static func flags(in arguments: [String], taking names: Set<String>) throws(ToolError) -> (flags: [String: String], words: [String]) {
        var flags: [String: String] = [:]
        var words: [String] = []
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if names.contains(word) {
                guard index + 1 < arguments.count else { throw ToolError.misuse("\(word) needs a value after it") }
                flags[word] = arguments[index + 1]
                index += 2
                continue
            }
            guard !word.hasPrefix("--") else { throw ToolError.usage }
            words.append(word)
            index += 1
        }
        return (flags, words)
    }

    private func printJournalJSON(_ json: JSON) {
        var writer = JSONWriter()
        writer.json(json)
        console.printRaw(String(decoding: writer.bytes, as: UTF8.self) + "\n")
    }
}
