import DefaultsCore
import FoundationEssentials
import Glibc
import SettingsBundles

extension Command {
    /// `settings` lists the installed Settings bundles; `settings <domain> [<pane>]` shows a pane
    /// as the Settings app lays it out, each row's key beside its title (`--choices` adds a
    /// multi-value's choices, `--diagnostics` shows what the bundle's loader reported instead);
    /// `settings <domain> set <key or title> <value...>` changes a setting as Settings would.
    func settings(_ arguments: [String]) throws {
        guard options.host == .any else {
            throw ToolError.failure("settings has no by-host form: Settings bundles belong to the domain every host sees")
        }
        var flags: Set<String> = []
        let words = arguments.filter { word in
            guard word == "--choices" || word == "--diagnostics" else { return true }
            flags.insert(word)
            return false
        }
        guard !words.isEmpty else {
            guard flags.isEmpty else { throw ToolError.usage }
            return try listBundles()
        }
        var index = 0
        let domain = try domainArgument(words, at: &index)
        let rest = Array(words[index...])
        if rest.first == "set" {
            guard rest.count >= 3, flags.isEmpty else { throw ToolError.usage }
            return try setSetting(of: domain, named: rest[1], to: Array(rest.dropFirst(2)))
        }
        guard rest.count <= 1 else { throw ToolError.usage }
        let answer = try describe(domain, pane: rest.first)
        if flags.contains("--diagnostics") {
            guard case .array(let diagnostics)? = answer["diagnostics"] else { return }
            if options.json { return printJSONValue(.array(diagnostics)) }
            let lines = diagnostics.compactMap { if case .string(let line) = $0 { line } else { nil } }
            console.printRaw(lines.isEmpty ? "No diagnostics\n" : lines.joined(separator: "\n") + "\n")
            return
        }
        if options.json { return printJSONValue(answer["pane"] ?? .null) }
        let pane = try PaneDescription(json: answer["pane"] ?? .null)
        // Keys are dimmed on a terminal only: piped output stays plain text.
        let dim = isatty(STDOUT_FILENO) == 1
        let rendering = TextRenderingOptions(
            showsKeys: true, showsChoices: flags.contains("--choices"),
            keyStyle: { dim ? "\u{1B}[2m" + $0 + "\u{1B}[0m" : $0 })
        console.printRaw(pane.renderedText(rendering))
    }

    /// `settings`: one line per installed bundle (domain, title, diagnostics, path).
    private func listBundles() throws {
        let answer = try connect().call(.listBundles)
        guard case .array(let bundles)? = answer["bundles"] else { return }
        if options.json { return printJSONValue(.array(bundles)) }
        guard !bundles.isEmpty else {
            console.printRaw("No Settings bundles are installed.\n")
            return
        }
        var rows = [["DOMAIN", "TITLE", "DIAGNOSTICS", "PATH"]]
        for bundle in bundles {
            guard case .string(let domain)? = bundle["domain"], case .string(let path)? = bundle["path"] else { continue }
            let title = if case .string(let title)? = bundle["title"] { title } else { "-" }
            let count = if case .integer(let count)? = bundle["diagnostics"] { String(count) } else { "0" }
            rows.append([domain, title, count, path])
        }
        let widths = (0..<3).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let padded = (0..<3).map { row[$0] + String(repeating: " ", count: widths[$0] - row[$0].count) }
            console.printRaw((padded + [row[3]]).joined(separator: "  ") + "\n")
        }
    }

    private func describe(_ domain: DomainArgument, pane: String?) throws -> JSON {
        do {
            return try connect().call(.describeBundle) { w in
                w.key("domain"); w.string(domain.domain.rawValue)
                if let pane { w.key("pane"); w.string(pane) }
            }
        } catch let refusal as DaemonClient.Refusal {
            throw ToolError.failure(refusal.message)
        }
    }

    /// Writes a setting as the Settings app would: only a key the bundle describes (or a row's
    /// title), to the domain the row stores in (its suite, if it names one). A single word is read
    /// as the row's control would store it; typed values (`-int 30`) are taken as written.
    private func setSetting(of domain: DomainArgument, named name: String, to values: [String]) throws {
        // Typed values are checked before connecting, so a mistake is reported as such.
        var typed: PlistValue?
        if values.count > 1 || ValueArguments.isTypeFlag(values[0]) {
            guard case .set(let value) = try ValueArguments.parse(values) else { throw ToolError.usage }
            typed = value
        }
        let pane = try PaneDescription(json: try describe(domain, pane: nil)["pane"] ?? .null)
        let row: PaneDescription.Row
        let value: PlistValue
        do {
            row = try pane.editableRow(named: name)
            value = try typed ?? row.value(fromWord: values[0])
        } catch let error as SettingArgumentError {
            throw ToolError.failure(error.description)
        }
        let target = row.suite?.rawValue ?? domain.domain.rawValue
        do {
            try connect().call(.set) { w in
                w.key("domain"); w.string(target)
                w.key("key"); w.string(row.key ?? name)
                w.key("value"); w.value(value)
            }
        } catch let refusal as DaemonClient.Refusal {
            throw ToolError.failure(refusal.message)
        }
    }

    private func printJSONValue(_ json: JSON) {
        var writer = JSONWriter()
        writer.json(json)
        console.printRaw(String(decoding: writer.bytes, as: UTF8.self) + "\n")
    }
}
