import DefaultsCore
import FoundationEssentials

/// Reads a property-list file (a page, or a `.strings` file in plist form) with the tolerance of
/// Apple's CoreFoundation reader, through DefaultsCore's ``PropertyListFile/decodeValue(_:)``
/// (which keeps integer, real and bool apart).
enum PlistReader {
    struct Read {
        var value: PlistValue
        var format: Page.Format
        var encoding: TextEncoding?
        /// Why the XML prolog is not standard, when it is not.
        var prologProblem: String?
    }

    struct Failure: Error, Hashable {
        var message: String
    }

    static func read(_ data: Data) -> Result<Read, Failure> {
        guard !data.isEmpty else { return .failure(Failure(message: "the file is empty")) }
        if data.starts(with: Array("bplist".utf8)) {
            return decode(data).map { Read(value: $0, format: .binary) }
        }
        guard let (text, encoding) = TextEncoding.decode(Array(data)) else {
            return .failure(Failure(message: "not valid text in \(TextEncoding.detect(Array(data)).encoding.rawValue)"))
        }
        let trimmed = text.drop(while: { $0.isWhitespace })
        if trimmed.first == "<" {
            return readXML(text, encoding: encoding)
        }
        if trimmed.isEmpty {
            // CF reads whitespace-only old-style text as an empty dictionary.
            return .success(Read(value: .dictionary([:]), format: .openStep, encoding: encoding))
        }
        return decode(Data(text.utf8)).map { Read(value: $0, format: .openStep, encoding: encoding) }
    }

    /// CoreFoundation's XML reader skips whitespace, comments, processing instructions and a
    /// DOCTYPE in any order before the root element. A strict XML parser does not: the XML
    /// declaration must come first, and Foundation versions whose reader is stricter than CF
    /// reject, for example, a licence comment placed before `<?xml?>`. So when the prolog is not
    /// the standard one (or the text is not UTF-8) the file is handed over as a standard UTF-8
    /// declaration followed by the root element: the result does not depend on the Foundation
    /// version, and the oddity is still reported.
    private static func readXML(_ text: String, encoding: TextEncoding) -> Result<Read, Failure> {
        let prolog = Prolog(text)
        let problem = prolog.problem
        let bytes: Data
        if problem == nil && encoding == .utf8 {
            bytes = Data(text.utf8)
        } else {
            bytes = Data(("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + text[prolog.rootStart...]).utf8)
        }
        return decode(bytes).map { Read(value: $0, format: .xml, encoding: encoding, prologProblem: problem) }
    }

    private static func decode(_ data: Data) -> Result<PlistValue, Failure> {
        do throws(DefaultsError) {
            return .success(try PropertyListFile.decodeValue(data))
        } catch {
            return .failure(Failure(message: error.message))
        }
    }
}

/// What comes before the root element of an XML property list.
struct Prolog {
    enum Item: Equatable {
        case declaration, comment, processingInstruction, doctype
    }

    private(set) var items: [Item] = []
    /// The declaration is the very first thing in the text, as XML requires.
    private(set) var declarationIsFirst = false
    /// Where the root element (or whatever the prolog scan could not read) starts.
    private(set) var rootStart: String.Index

    init(_ text: String) {
        var index = text.startIndex
        scan: while true {
            index = text[index...].firstIndex(where: { !$0.isWhitespace }) ?? text.endIndex
            let rest = text[index...]
            let item: Item
            let terminator: String
            if rest.hasPrefix("<!--") {
                (item, terminator) = (.comment, "-->")
            } else if rest.hasPrefix("<?") {
                let isDeclaration = rest.hasPrefix("<?xml") && (rest.dropFirst(5).first?.isWhitespace ?? false)
                (item, terminator) = (isDeclaration ? .declaration : .processingInstruction, "?>")
            } else if rest.hasPrefix("<!") {
                (item, terminator) = (.doctype, ">")
            } else {
                break scan
            }
            var searchFrom = rest.index(rest.startIndex, offsetBy: 2)
            if item == .doctype, let bracket = rest.firstIndex(of: "["),
                bracket < (rest.firstIndex(of: ">") ?? rest.endIndex),
                let close = rest[bracket...].firstIndex(of: "]")
            {
                searchFrom = close  // an internal subset may contain '>'
            }
            guard let end = rest[searchFrom...].firstRange(of: terminator)?.upperBound else { break scan }
            if item == .declaration && index == text.startIndex { declarationIsFirst = true }
            items.append(item)
            index = end
        }
        rootStart = index
    }

    /// Nil for the standard prolog (the XML declaration first); else what is wrong with it.
    var problem: String? {
        guard items.contains(.declaration) else {
            return "no XML declaration (<?xml ...?>); Apple's parser accepts the file, strict XML readers do not"
        }
        guard declarationIsFirst else {
            return "the XML declaration is preceded by a comment or whitespace; Apple's parser accepts the file, "
                + "strict XML readers do not"
        }
        return nil
    }
}
