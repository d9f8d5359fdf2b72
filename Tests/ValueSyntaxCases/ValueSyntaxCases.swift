/// The one table of value syntax that every user of `ValueSyntax` is tested against: `defaults
/// -bool` and `-data`, `defaults settings` and the Settings app's switch rows, the plain
/// editor, and the client's `bool(forKey:)` of a string. Each test target runs its user over
/// these same rows, so the users cannot drift apart.
public enum ValueSyntaxCases {
    /// A word typed for a boolean: what `defaults -bool` makes of it (Apple's words only), and
    /// what a switch makes of it (`defaults settings`, the Settings app); nil: refused.
    public static let booleanWords: [(word: String, typeFlag: Bool?, setting: Bool?)] = [
        ("yes", true, true), ("YES", true, true), ("Yes", true, true), ("true", true, true), ("TRUE", true, true),
        (" yes ", true, true), ("no", false, false), ("NO", false, false), ("false", false, false), ("False", false, false),
        ("\tno\n", false, false),
        ("on", nil, true), ("On", nil, true), ("1", nil, true), ("off", nil, false), ("OFF", nil, false), ("0", nil, false),
        ("y", nil, nil), ("n", nil, nil), ("2", nil, nil), ("-1", nil, nil), ("", nil, nil), ("maybe", nil, nil),
        ("yes please", nil, nil), ("01", nil, nil),
    ]

    /// Data typed as text, and the bytes it stands for (nil: refused). An odd number of digits
    /// is refused, as macOS's `defaults write -data` and old-style `<…>` refuse it.
    public static let hexData: [(text: String, bytes: [UInt8]?)] = [
        ("48656c6c6f", Array("Hello".utf8)), ("48656C6C6F", Array("Hello".utf8)), ("<48656c6c6f>", Array("Hello".utf8)),
        ("<48 65 6c 6c 6f>", Array("Hello".utf8)), ("4 8\t65\n", [0x48, 0x65]), ("", []), ("<>", []),
        ("abc", nil), ("<abc>", nil), ("0x48", nil), ("zz", nil), ("SGVsbG8=", nil), ("\u{FF14}\u{FF18}", nil),
    ]

    /// Strings whose `NSString.boolValue` the client's `bool(forKey:)` and Settings' switches
    /// must reproduce; the expected truth of each is Foundation's own, asked at test time.
    public static let boolValueStrings: [String] = [
        "YES", "yes", "y", "true", "T", "1", "9", "0", "00", "-1", "+1", "-yes", "+y", "0y", "00t", "-0", "-00 1", " yes",
        "\tyes", "\nyes", "\r\nyes", "\u{00A0}yes", "\u{2003}yes", "\u{200B}y", "\u{FEFF}y", "  -01", "no", "NO", "false",
        "", "  ", "-", "+", "x1", "1x", "0x1", "\u{0663}", "\u{FF11}", "1.5", "0.5", ".5", "  +007", "- 1", "0 1", "+ 0 1",
        "-0 0 1", "- y", "+-1", "--1", "  0  0  5", "\u{85}y", "\u{2028}y", "\u{0B}y", "0\u{00A0}1",
    ]
}
