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
        if BinaryPropertyList.isBinary(data) {
            return decode(data).map { Read(value: $0, format: .binary) }
        }
        guard let (text, encoding) = TextEncoding.decode(Array(data)) else {
            return .failure(Failure(message: "not valid text in \(TextEncoding.detect(Array(data)).encoding.rawValue)"))
        }
        // The format is told as DefaultsCore tells it, on the text decoded (so UTF-16 XML too).
        if PropertyListFile.looksLikeXML(Array(text.utf8)) {
            return readXML(text, encoding: encoding)
        }
        if text.allSatisfy(\.isWhitespace) {
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
///
/// One pass over the text's bytes: each item is read from where the last one ended, and no
/// search looks past the item it is in, so the work is linear in the text whatever it holds
/// (`bytesExamined` counts it, and the tests hold it to that).
struct Prolog {
    enum Item: Equatable {
        case declaration, comment, processingInstruction, doctype
    }

    private(set) var items: [Item] = []
    /// The declaration is the very first thing in the text, as XML requires.
    private(set) var declarationIsFirst = false
    /// Where the root element (or whatever the prolog scan could not read) starts.
    private(set) var rootStart: String.Index
    /// The bytes the scan looked at: the measure of its work.
    private(set) var bytesExamined = 0

    init(_ text: String) {
        let bytes = Array(text.utf8)
        var position = 0
        var examined = 0
        var items: [Item] = []
        var isFirst = false
        scan: while true {
            while position < bytes.count, Prolog.isSpace(bytes[position]) {
                position += 1
                examined += 1
            }
            let item: Item
            let terminator: [UInt8]
            if Prolog.has(bytes, "<!--", at: position) {
                (item, terminator) = (.comment, Array("-->".utf8))
            } else if Prolog.has(bytes, "<?", at: position) {
                let isDeclaration = Prolog.has(bytes, "<?xml", at: position)
                    && position + 5 < bytes.count && Prolog.isSpace(bytes[position + 5])
                (item, terminator) = (isDeclaration ? .declaration : .processingInstruction, Array("?>".utf8))
            } else if Prolog.has(bytes, "<!", at: position) {
                (item, terminator) = (.doctype, Array(">".utf8))
            } else {
                break scan
            }
            guard let end = Prolog.scanItem(bytes, from: position + 2, to: terminator, bracketed: item == .doctype, counting: &examined)
            else { break scan }
            if item == .declaration && position == 0 { isFirst = true }
            items.append(item)
            position = end
        }
        rootStart = text.utf8.index(text.utf8.startIndex, offsetBy: position)
        self.items = items
        declarationIsFirst = isFirst
        bytesExamined = examined
    }

    /// The end of an item that starts before `start` and ends with `terminator`; nil when the
    /// text ends first. A DOCTYPE's internal subset (`[...]`) may hold a `>`, so inside brackets
    /// the terminator does not count.
    private static func scanItem(
        _ bytes: [UInt8], from start: Int, to terminator: [UInt8], bracketed: Bool, counting examined: inout Int
    ) -> Int? {
        var position = start
        var inSubset = false
        while position < bytes.count {
            examined += 1
            let byte = bytes[position]
            if bracketed && byte == UInt8(ascii: "[") {
                inSubset = true
            } else if inSubset {
                if byte == UInt8(ascii: "]") { inSubset = false }
            } else if byte == terminator[0], bytes[position...].starts(with: terminator) {
                return position + terminator.count
            }
            position += 1
        }
        return nil
    }

    private static func has(_ bytes: [UInt8], _ text: StaticString, at position: Int) -> Bool {
        text.withUTF8Buffer { bytes[min(position, bytes.count)...].starts(with: $0) }
    }

    /// XML's white space, which is what may stand between prolog items.
    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
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
