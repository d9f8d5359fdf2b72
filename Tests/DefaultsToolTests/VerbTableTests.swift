import DefaultsCore
@testable import DefaultsTool
import TestThreads
import Testing

/// `defaults`' verbs are one table (`Verb.all`): what runs, what the usage text lists and what
/// completion offers cannot differ.
@Suite(.ownThreads) struct VerbTableTests {
    @Test func everyVerbIsInTheUsageTextAndInCompletion() throws {
        let usageLines = Usage.full.split(separator: "\n").map(String.init)
        let bash = try #require(Completions.scriptText(for: "bash"))
        for verb in Verb.all {
            #expect(usageLines.contains { $0.hasPrefix("  \(verb.name) ") }, "\(verb.name) is not in the usage text")
            #expect(bash.contains(verb.name), "\(verb.name) is not in the bash completion")
        }
        #expect(Completions.verbNames == Verb.all.map(\.name))
        #expect(Completions.verbNames.contains("read-effective"))
        #expect(Completions.verbNames.contains("history") && Completions.verbNames.contains("undo") && Completions.verbNames.contains("blame"))
        #expect(Set(Verb.all.map(\.name)).count == Verb.all.count, "a verb is listed twice")
    }

    @Test func everyNameAndAliasFindsItsVerb() {
        for verb in Verb.all {
            for name in [verb.name] + verb.aliases { #expect(Verb.named(name)?.name == verb.name, "\(name)") }
        }
        #expect(Verb.named("remove")?.name == "delete")
        #expect(Verb.named("nonsense") == nil)
    }

    @Test func theUsageTextKeepsMacOSsLayout() {
        let usage = Usage.full
        #expect(usage.hasPrefix("""
            Command line interface to a user's defaults.
            Syntax:

            'defaults' [-currentHost | -host <hostname>] followed by one of the following:

              read                                 shows all defaults
              read <domain>                        shows defaults for given domain
              read <domain> <key>                  shows defaults for given domain, key

              read-type <domain> <key>             shows the type for the given domain, key

            """))
        #expect(usage.contains("""
              delete <domain> <key>                deletes key in domain
              delete-all <domain>                  deletes the domain from all containers
              delete-all <domain> Key>             deletes key in domain from all containers

              import <domain> <path to plist>      writes the plist at path to domain

            """))
        #expect(usage.contains("""
              help                                 print this help

            <domain> is ( <domain_name> | -app <application_name> | -globalDomain )
                     or a path to a file omitting the '.plist' extension

            """))
        #expect(usage.contains("""
              -dict-add <key1> <value1> ...

            defaultsd additions:

              read-effective <domain> [<key>]      shows each key's effective value and its layer
                                                   (managed, current host, user, bundle default)

            """))
        #expect(usage.contains("""
              watch [<domain> ...]                 prints every change as it happens (Ctrl-C to stop)
              history [<domain> [<key>]]           prints each recorded change, oldest first: time,
                                                   writer, key, old → new
                --since <30m | 2d | time>          ... only the changes since then
                --by <writer>                      ... only the changes of one writer: a program,
                                                   file, managed or roaming
                --limit <n>                        ... only the newest n
              undo <domain>                        undoes the domain's latest change
              undo <domain> --to <time>            returns the domain to how it was at <time>
              blame <domain> <key>                 shows who made the key's last change, and when
              sync                                 waits until every change is on disk

            """))
        #expect(usage.contains("""
              --json                               (read, domains, find, read-effective, watch, history, blame, roaming, settings) prints JSON instead

            """))
        #expect(usage.hasSuffix("  --generate-completion-script <shell> prints a bash, zsh or fish completion script\n"))
    }

    /// The verbs that take a file's path in the domain's place, as macOS's do; the journal's and
    /// this port's other verbs take domains only.
    @Test func theVerbsThatTakeAFilesPath() {
        #expect(Verb.all.filter { $0.runOnFile != nil }.map(\.name)
            == ["read", "read-type", "write", "rename", "delete", "delete-all", "import", "export"])
    }

    @Test func readTypeNamesTypesAsMacOSDoes() {
        #expect(
            PlistType.allCases.map(Command.readTypeName)
                == ["string", "integer", "float", "boolean", "date", "data", "array", "dictionary"])
    }
}
