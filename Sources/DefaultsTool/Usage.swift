/// The usage text, as macOS prints it (Apple's typo `Key>` included) less the paths to plist files
/// this port does not take as domains, followed by what this port adds.
public enum Usage {
    public static let macOS = """
        Command line interface to a user's defaults.
        Syntax:

        'defaults' [-currentHost | -host <hostname>] followed by one of the following:

          read                                 shows all defaults
          read <domain>                        shows defaults for given domain
          read <domain> <key>                  shows defaults for given domain, key

          read-type <domain> <key>             shows the type for the given domain, key

          write <domain> <domain_rep>          writes domain (overwrites existing)
          write <domain> <key> <value>         writes key for domain

          rename <domain> <old_key> <new_key>  renames old_key to new_key

          delete <domain>                      deletes domain
          delete <domain> <key>                deletes key in domain
          delete-all <domain>                  deletes the domain from all containers
          delete-all <domain> Key>             deletes key in domain from all containers

          import <domain> <path to plist>      writes the plist at path to domain
          import <domain> -                    writes a plist from stdin to domain
          export <domain> <path to plist>      saves domain as a binary plist to path
          export <domain> -                    writes domain as an xml plist to stdout
          domains                              lists all domains
          find <word>                          lists all entries containing word
          help                                 print this help

        <domain> is ( <domain_name> | -app <application_name> | -globalDomain )

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

    public static let linux = """

        defaultsd additions:

          read-effective <domain> [<key>]      shows each key's effective value and its layer
                                               (managed, current host, user, bundle default)
          watch [<domain> ...]                 prints every change as it happens (Ctrl-C to stop)
          sync                                 waits until every change is on disk
          roaming                              shows which domains follow you to your other
                                               machines, and whether the etcd cluster answers
          settings                             lists the installed Settings bundles
          settings <domain> [<pane>]           shows a pane of the domain's Settings bundle,
                                               each row's key beside its title
            --choices                          ... with each multi-value's choices
            --diagnostics                      shows what was found wrong in the bundle
          settings <domain> set <key> <value>  changes a setting as the Settings app would:
                                               <key> may be a row's title; a bare <value> is
                                               read as the row stores it (on/off for a switch,
                                               a choice's title or value, a slider's number)
          schema <domain> [<key>]              shows the GSettings schema of a domain that GSettings
                                               programs keep here: each key's type, summary,
                                               description, default and range or choices

          --json                               (read, domains, find, watch, settings, roaming) prints JSON instead
          --socket <path>                      talks to the defaultsd listening on <path>
                                               (also $DEFAULTSD_SOCKET)
          --generate-completion-script <shell> prints a bash, zsh or fish completion script

        """

    public static var full: String { macOS + linux }
}
