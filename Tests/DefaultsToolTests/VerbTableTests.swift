import DefaultsCore
@testable import DefaultsTool
import Testing

/// `defaults`' verbs are one table (`Verb.all`): what runs, what the usage text lists and what
/// completion offers cannot differ.
@Suite struct VerbTableTests {
    @Test func everyVerbIsInTheUsageTextAndInCompletion() throws {
        let usageLines = Usage.full.split(separator: "\n").map(String.init)
        let bash = try #require(Completions.scriptText(for: "bash"))
        for verb in Verb.all {
            #expect(usageLines.contains { $0.hasPrefix("  \(verb.name) ") }, "\(verb.name) is not in the usage text")
            #expect(bash.contains(verb.name), "\(verb.name) is not in the bash completion")
        }
        #expect(Completions.verbNames == Verb.all.map(\.name))
        #expect(Completions.verbNames.contains("read-effective"))
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

            """))
        #expect(usage.contains("""
              -dict-add <key1> <value1> ...

            defaultsd additions:

              read-effective <domain> [<key>]      shows each key's effective value and its layer
                                                   (managed, current host, user, bundle default)

            """))
        #expect(usage.contains("""
              --json                               (read, domains, find, read-effective, watch, roaming, settings) prints JSON instead

            """))
        #expect(usage.hasSuffix("  --generate-completion-script <shell> prints a bash, zsh or fish completion script\n"))
    }

    @Test func readTypeNamesTypesAsMacOSDoes() {
        #expect(
            PlistType.allCases.map(Command.readTypeName)
                == ["string", "integer", "float", "boolean", "date", "data", "array", "dictionary"])
    }
}
