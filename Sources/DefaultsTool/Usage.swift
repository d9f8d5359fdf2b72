/// The usage text: macOS's (Apple's typo `Key>` included), followed by what this port adds.
/// Each verb's lines come from ``Verb/all``; the rest is the prose around them.
public enum Usage {
    /// One entry of the usage text: a syntax, and what it does, the description running on in
    /// further lines under its first.
    struct Line {
        let syntax: String
        let description: [String]

        init(_ syntax: String, _ description: String...) {
            self.syntax = syntax
            self.description = description
        }

        /// The column where descriptions start, after the two spaces that indent every syntax.
        static let descriptionColumn = 39

        /// The entry as printed: the syntax indented, the description in its column.
        var text: String {
            let indent = String(repeating: " ", count: 2)
            let gap = String(repeating: " ", count: max(1, Line.descriptionColumn - indent.count - syntax.count))
            let under = String(repeating: " ", count: Line.descriptionColumn)
            var lines = [indent + syntax + gap + (description.first ?? "")]
            lines += description.dropFirst().map { under + $0 }
            return lines.map { $0 + "\n" }.joined()
        }
    }

    private static let introduction = """
        Command line interface to a user's defaults.
        Syntax:

        'defaults' [-currentHost | -host <hostname>] followed by one of the following:


        """

    private static let macOSArguments = """
        <domain> is ( <domain_name> | -app <application_name> | -globalDomain )
                 or a path to a file omitting the '.plist' extension

        <value> is one of:
          <value_rep>
          -string <string_value>
          -data <hex_digits>
          -int[eger] <integer_value>
          -float  <floating-point_value>
          -bool[ean] (true | false | yes | no)
          -date <date_rep>
          -array <value1> <value2> ...
          -array-add <value1> <value2> ...
          -dict <key1> <value1> <key2> <value2> ...
          -dict-add <key1> <value1> ...

        """

    private static let additionsHeading = """

        defaultsd additions:


        """

    /// The options of this port, after its verbs; `--json` names the verbs it changes.
    private static var options: [Line] {
        let printingJSON = Verb.all.filter(\.printsJSON).map(\.name).joined(separator: ", ")
        return [
            Line("-expect <value> | -expect-absent", "after write <domain> <key> <value>: writes only if",
                 "the key holds <value> (or nothing) now"),
            Line("--json", "(\(printingJSON)) prints JSON instead"),
            Line("--socket <path>", "talks to the defaultsd listening on <path>", "(also $DEFAULTSD_SOCKET)"),
            Line("--generate-completion-script <shell>", "prints a bash, zsh or fish completion script"),
        ]
    }

    /// The verbs from `origin`, in the table's order, grouped as macOS groups them.
    private static func verbs(from origin: Verb.Origin) -> String {
        Verb.all.filter { $0.origin == origin }.map { verb in
            verb.usage.map(\.text).joined() + (verb.endsGroup ? "\n" : "")
        }.joined()
    }

    public static var full: String {
        introduction + verbs(from: .macOS) + macOSArguments + additionsHeading + verbs(from: .defaultsd)
            + options.map(\.text).joined()
    }
}
