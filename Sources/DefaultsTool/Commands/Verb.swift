/// Every verb of `defaults`, in one table: its name and the other names it answers to, its lines
/// in the usage text, the arguments shell completion offers after it, and what runs it.
/// `Command.run(verb:_:)`, ``Usage`` and ``Completions`` are all made from this table, so a verb
/// cannot be run without being in the usage text and in completion (`VerbTableTests`).
///
/// ```swift
/// Verb.named("remove")?.name   // "delete"
/// Verb.all.map(\.name)         // ["read", "read-type", "write", ...]
/// ```
struct Verb {
    /// Where the usage text lists a verb: with macOS's own, or among this port's additions.
    enum Origin {
        case macOS
        case defaultsd
    }

    let name: String
    /// Other names that run the verb; completion understands them, the usage text (macOS's)
    /// does not list them.
    var aliases: [String] = []
    let origin: Origin
    /// The verb's lines in the usage text, in order.
    let usage: [Usage.Line]
    /// A blank line follows the verb's lines in the usage text, as macOS groups its verbs.
    var endsGroup = false
    /// `--json` changes what the verb prints.
    var printsJSON = false
    /// The arguments shell completion offers after the verb.
    let completion: any VerbCompletion.Type
    let run: (Command) -> ([String]) throws -> Void
    /// What runs the verb on a property-list file named by its path in the domain's place (one
    /// outside the daemon's storage folder; a path inside it names a domain); nil for a verb that
    /// takes domains only.
    var runOnFile: ((Command) -> (PlistPath, [String]) throws -> Void)? = nil

    /// The verb a word on the command line names (by its name or an alias), or nil.
    static func named(_ word: String) -> Verb? {
        all.first { $0.name == word || $0.aliases.contains(word) }
    }

    /// Every verb, in the order of the usage text.
    static var all: [Verb] {
        typealias Arguments = DefaultsCompletionModel
        return [
            Verb(
                name: "read", origin: .macOS,
                usage: [
                    Usage.Line("read", "shows all defaults"),
                    Usage.Line("read <domain>", "shows defaults for given domain"),
                    Usage.Line("read <domain> <key>", "shows defaults for given domain, key"),
                ], endsGroup: true, printsJSON: true, completion: Arguments.Read.self, run: Command.read,
                runOnFile: Command.readFile),
            Verb(
                name: "read-type", origin: .macOS,
                usage: [Usage.Line("read-type <domain> <key>", "shows the type for the given domain, key")],
                endsGroup: true, completion: Arguments.ReadType.self, run: Command.readType, runOnFile: Command.readTypeInFile),
            Verb(
                name: "write", origin: .macOS,
                usage: [
                    Usage.Line("write <domain> <domain_rep>", "writes domain (overwrites existing)"),
                    Usage.Line("write <domain> <key> <value>", "writes key for domain"),
                ], endsGroup: true, completion: Arguments.Write.self, run: Command.write, runOnFile: Command.writeFile),
            Verb(
                name: "rename", origin: .macOS,
                usage: [Usage.Line("rename <domain> <old_key> <new_key>", "renames old_key to new_key")],
                endsGroup: true, completion: Arguments.Rename.self, run: Command.rename, runOnFile: Command.renameInFile),
            Verb(
                name: "delete", aliases: ["remove"], origin: .macOS,
                usage: [
                    Usage.Line("delete <domain>", "deletes domain"),
                    Usage.Line("delete <domain> <key>", "deletes key in domain"),
                ], completion: Arguments.Delete.self, run: Command.delete, runOnFile: Command.deleteFromFile),
            // There are no containers here, so it deletes as `delete` does. `Key>` is Apple's typo.
            Verb(
                name: "delete-all", origin: .macOS,
                usage: [
                    Usage.Line("delete-all <domain>", "deletes the domain from all containers"),
                    Usage.Line("delete-all <domain> Key>", "deletes key in domain from all containers"),
                ], endsGroup: true, completion: Arguments.DeleteAll.self, run: Command.delete,
                runOnFile: Command.deleteFromFile),
            Verb(
                name: "import", origin: .macOS,
                usage: [
                    Usage.Line("import <domain> <path to plist>", "writes the plist at path to domain"),
                    Usage.Line("import <domain> -", "writes a plist from stdin to domain"),
                ], completion: Arguments.Import.self, run: Command.importDomain, runOnFile: Command.importIntoFile),
            Verb(
                name: "export", origin: .macOS,
                usage: [
                    Usage.Line("export <domain> <path to plist>", "saves domain as a binary plist to path"),
                    Usage.Line("export <domain> -", "writes domain as an xml plist to stdout"),
                ], completion: Arguments.Export.self, run: Command.exportDomain, runOnFile: Command.exportFile),
            Verb(
                name: "domains", origin: .macOS, usage: [Usage.Line("domains", "lists all domains")],
                printsJSON: true, completion: Arguments.Domains.self, run: Command.domains),
            Verb(
                name: "find", origin: .macOS, usage: [Usage.Line("find <word>", "lists all entries containing word")],
                printsJSON: true, completion: Arguments.Find.self, run: Command.find),
            Verb(
                name: "help", origin: .macOS, usage: [Usage.Line("help", "print this help")], endsGroup: true,
                completion: Arguments.Help.self, run: Command.help),
            Verb(
                name: "read-effective", origin: .defaultsd,
                usage: [
                    Usage.Line(
                        "read-effective <domain> [<key>]", "shows each key's effective value and its layer",
                        "(managed, current host, user, bundle default)")
                ], printsJSON: true, completion: Arguments.ReadEffective.self, run: Command.readEffective),
            Verb(
                name: "watch", origin: .defaultsd,
                usage: [Usage.Line("watch [<domain> ...]", "prints every change as it happens (Ctrl-C to stop)")],
                printsJSON: true, completion: Arguments.Watch.self, run: Command.watch),
            Verb(
                name: "history", origin: .defaultsd,
                usage: [
                    Usage.Line(
                        "history [<domain> [<key>]]", "prints each recorded change, oldest first: time,",
                        "writer, key, old → new"),
                    Usage.Line("  --since <30m | 2d | time>", "... only the changes since then"),
                    Usage.Line("  --by <writer>", "... only the changes of one writer: a program,", "file, managed or roaming"),
                    Usage.Line("  --limit <n>", "... only the newest n"),
                ], printsJSON: true, completion: Arguments.History.self, run: Command.history),
            Verb(
                name: "undo", origin: .defaultsd,
                usage: [
                    Usage.Line("undo <domain>", "undoes the domain's latest change"),
                    Usage.Line("undo <domain> --to <time>", "returns the domain to how it was at <time>"),
                ], completion: Arguments.Undo.self, run: Command.undo),
            Verb(
                name: "blame", origin: .defaultsd,
                usage: [Usage.Line("blame <domain> <key>", "shows who made the key's last change, and when")],
                printsJSON: true, completion: Arguments.Blame.self, run: Command.blame),
            Verb(
                name: "sync", origin: .defaultsd, usage: [Usage.Line("sync", "waits until every change is on disk")],
                completion: Arguments.Sync.self, run: Command.sync),
            Verb(
                name: "roaming", origin: .defaultsd,
                usage: [
                    Usage.Line(
                        "roaming", "shows which domains follow you to your other",
                        "machines, and whether the etcd cluster answers")
                ], printsJSON: true, completion: Arguments.Roaming.self, run: Command.roaming),
            Verb(
                name: "settings", origin: .defaultsd,
                usage: [
                    Usage.Line("settings", "lists the installed Settings bundles"),
                    Usage.Line(
                        "settings <domain> [<pane>]", "shows a pane of the domain's Settings bundle,",
                        "each row's key beside its title"),
                    Usage.Line("  --choices", "... with each multi-value's choices"),
                    Usage.Line("  --diagnostics", "shows what was found wrong in the bundle"),
                    Usage.Line(
                        "settings <domain> set <key> <value>", "changes a setting as the Settings app would:",
                        "<key> may be a row's title; a bare <value> is", "read as the row stores it (on/off for a switch,",
                        "a choice's title or value, a slider's number)"),
                ], printsJSON: true, completion: Arguments.Settings.self, run: Command.settings),
            Verb(
                name: "schema", origin: .defaultsd,
                usage: [
                    Usage.Line(
                        "schema <domain> [<key>]", "shows the GSettings schema of a domain that GSettings",
                        "programs keep here: each key's type, summary,", "description, default and range or choices")
                ], endsGroup: true, completion: Arguments.Schema.self, run: Command.schema),
        ]
    }
}
