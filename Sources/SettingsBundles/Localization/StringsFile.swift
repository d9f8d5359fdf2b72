import DefaultsCore
import FoundationEssentials

/// One `.strings` table file, as read: how it was written and its entries, or nil entries when
/// the file is abandoned whole (a syntax error anywhere, or not a dictionary), as Apple's parser
/// abandons it; every lookup in it then shows the key.
///
/// ```swift
/// let file = StringsFile.read(bytes, path: "fr.lproj/Root.strings").file
/// file.entries?["Rank"] // "Grade"
/// ```
public struct StringsFile: Sendable, Hashable {
    public enum Format: Sendable, Hashable {
        /// `"key" = "value";` text.
        case text(TextEncoding)
        case binaryPlist
        case xmlPlist
    }

    /// Relative to the bundle directory (`en.lproj/Root.strings`).
    public var path: String
    /// Nil when the bytes are not text in any encoding Apple's parser recognises.
    public var format: Format?
    /// The table, or nil when the file was abandoned.
    public var entries: [String: String]?

    public init(path: String, format: Format?, entries: [String: String]?) {
        self.path = path
        self.format = format
        self.entries = entries
    }

    /// Reads a `.strings` file's bytes. A binary or XML property list is read as a plist; anything
    /// else as old-style text in UTF-8, UTF-16 or UTF-32, with or without a byte-order mark.
    public static func read(_ data: Data, path: String) -> (file: StringsFile, diagnostics: [Diagnostic]) {
        var diagnostics: [Diagnostic] = []
        func abandon(_ format: Format?, _ code: DiagnosticCode, line: Int? = nil, _ message: String)
            -> (StringsFile, [Diagnostic])
        {
            diagnostics.append(Diagnostic(.error, code, file: path, line: line, message))
            return (StringsFile(path: path, format: format, entries: nil), diagnostics)
        }

        let bytes = Array(data)
        if !BinaryPropertyList.isBinary(data) {
            guard let (text, encoding) = TextEncoding.decode(bytes) else {
                return abandon(
                    nil, .stringsUnparseable,
                    "not valid \(TextEncoding.detect(bytes).encoding.rawValue) text; the whole table is ignored")
            }
            if !PropertyListFile.looksLikeXML(Array(text.utf8)) {
                switch OldStyleParser.parse(text) {
                case .failure(let failure):
                    return abandon(
                        .text(encoding), .stringsUnparseable, line: failure.line,
                        "\(failure.message) (line \(failure.line)); the whole table is ignored, as Apple's parser does")
                case .success(let parsed):
                    for duplicate in parsed.duplicates {
                        diagnostics.append(
                            Diagnostic(
                                .warning, .stringsDuplicateKey, file: path, line: duplicate.line,
                                "\"\(duplicate.key)\" is defined on lines \(duplicate.firstLine) and \(duplicate.line); "
                                    + "the last one wins"))
                    }
                    for line in parsed.emptyKeyLines {
                        diagnostics.append(
                            Diagnostic(
                                .info, .stringsEmptyKey, file: path, line: line, "an entry has the empty key \"\""))
                    }
                    if let line = parsed.trailingTextLine {
                        diagnostics.append(
                            Diagnostic(
                                .warning, .stringsTrailingText, file: path, line: line,
                                "text after the last entry cannot start an entry and is ignored"))
                    }
                    return table(parsed.value, format: .text(encoding), path: path, diagnostics: diagnostics)
                }
            }
        }
        switch PlistReader.read(data) {
        case .failure(let failure):
            return abandon(nil, .stringsUnparseable, "\(failure.message); the whole table is ignored")
        case .success(let read):
            let format: Format = read.format == .binary ? .binaryPlist : .xmlPlist
            return table(read.value, format: format, path: path, diagnostics: diagnostics)
        }
    }

    private static func table(_ value: PlistValue, format: Format, path: String, diagnostics: [Diagnostic])
        -> (StringsFile, [Diagnostic])
    {
        var diagnostics = diagnostics
        guard case .dictionary(let dictionary) = value else {
            diagnostics.append(
                Diagnostic(
                    .error, .stringsNotDict, file: path,
                    "the top level is \(value.typeWithArticle), not \(PlistType.dictionary.nameWithArticle); the whole table is ignored"))
            return (StringsFile(path: path, format: format, entries: nil), diagnostics)
        }
        var entries: [String: String] = [:]
        for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) {
            guard let string = value.stringValue else {
                diagnostics.append(
                    Diagnostic(
                        .warning, .stringsValueNotString, file: path,
                        "the value of \"\(key)\" is \(value.typeWithArticle); lookups of it show the key"))
                continue
            }
            entries[key] = string
        }
        return (StringsFile(path: path, format: format, entries: entries), diagnostics)
    }
}
