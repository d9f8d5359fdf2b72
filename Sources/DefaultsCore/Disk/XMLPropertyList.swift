import FoundationEssentials

/// Apple's XML property-list format (`<plist version="1.0">`), read and written here.
///
/// Written by hand because the daemon links FoundationEssentials only (docs/ARCHITECTURE.md),
/// whose `PropertyListDecoder` decodes through `Codable` and so cannot tell `<integer>1</integer>`
/// from `<real>1</real>`; `PropertyListSerialization`, which can, needs all of Foundation. Only
/// the plist vocabulary is read: the XML declaration, a DOCTYPE, comments, CDATA and the five
/// named entities and character references, as CoreFoundation reads them.
///
/// ```swift
/// let bytes = XMLPropertyList.encode(.dictionary(["warpFactor": .real(1)]))
/// try XMLPropertyList.decode(bytes)   // .dictionary(["warpFactor": .real(1)]), not .integer(1)
/// ```
public enum XMLPropertyList {
    /// The format's elements, named once for the reader, the writer and ``PropertyListFile``'s
    /// test of whether text is XML at all.
    enum Element: String, CaseIterable {
        case plist, dict, key, array, string, integer, real, date, data
        case trueBoolean = "true", falseBoolean = "false"
    }

    // MARK: - Reading

    /// Reads an XML property list of any root type.
    public static func decode(_ bytes: some Collection<UInt8>) throws(DefaultsError) -> PlistValue {
        var reader = Reader(Array(bytes))
        return try reader.document()
    }

    private struct Reader {
        let bytes: [UInt8]
        var position = 0
        var depth = 0

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
            // A UTF-8 byte order mark.
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        }

        func failure(_ message: String) -> DefaultsError {
            let line = bytes[..<min(position, bytes.count)].reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
            return DefaultsError(.invalidPlist, "not a property list: \(message) (XML line \(line))")
        }

        mutating func document() throws(DefaultsError) -> PlistValue {
            try skipMisc()
            guard let tag = try openTag() else { throw failure("no element") }
            let value: PlistValue
            if tag.name == Element.plist.rawValue {
                guard !tag.isEmpty else { throw failure("an empty <plist/>") }
                try skipMisc()
                guard let inner = try openTag() else { throw failure("<plist> holds no value") }
                value = try self.value(inner)
                try skipMisc()
                try closeTag(Element.plist.rawValue)
            } else {
                value = try self.value(tag)
            }
            try skipMisc()
            guard position == bytes.count else { throw failure("text after the property list") }
            return value
        }

        struct Tag {
            var name: String
            var isEmpty: Bool
        }

        /// Skips whitespace, comments, processing instructions and a DOCTYPE.
        mutating func skipMisc() throws(DefaultsError) {
            while position < bytes.count {
                if Reader.isSpace(bytes[position]) {
                    position += 1
                } else if starts("<!--") {
                    try skip(past: "-->")
                } else if starts("<?") {
                    try skip(past: "?>")
                } else if starts("<!DOCTYPE") {
                    try skipDoctype()
                } else {
                    return
                }
            }
        }

        mutating func skipDoctype() throws(DefaultsError) {
            var brackets = 0
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "["): brackets += 1
                case UInt8(ascii: "]"): brackets -= 1
                case UInt8(ascii: ">") where brackets <= 0:
                    position += 1
                    return
                default: break
                }
                position += 1
            }
            throw failure("an unterminated DOCTYPE")
        }

        func starts(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard position + count <= bytes.count else { return false }
            return text.withUTF8Buffer { bytes[position..<(position + count)].elementsEqual($0) }
        }

        mutating func skip(past text: StaticString) throws(DefaultsError) {
            while position < bytes.count {
                if starts(text) {
                    position += text.utf8CodeUnitCount
                    return
                }
                position += 1
            }
            throw failure("unterminated \(text)")
        }

        /// An opening tag (`<dict>`, `<true/>`); nil when the next thing is not one.
        mutating func openTag() throws(DefaultsError) -> Tag? {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "<"),
                position + 1 < bytes.count, Reader.isNameStart(bytes[position + 1])
            else { return nil }
            position += 1
            let start = position
            while position < bytes.count, Reader.isNameByte(bytes[position]) { position += 1 }
            let name = String(decoding: bytes[start..<position], as: UTF8.self)
            // Attributes (`version="1.0"`) are skipped, quoted values and all.
            var quote: UInt8?
            while position < bytes.count {
                let byte = bytes[position]
                if let open = quote {
                    if byte == open { quote = nil }
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    quote = byte
                } else if byte == UInt8(ascii: "/"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: ">") {
                    position += 2
                    return Tag(name: name, isEmpty: true)
                } else if byte == UInt8(ascii: ">") {
                    position += 1
                    return Tag(name: name, isEmpty: false)
                }
                position += 1
            }
            throw failure("an unterminated <\(name)>")
        }

        mutating func closeTag(_ name: String) throws(DefaultsError) {
            guard starts("</") else { throw failure("expected </\(name)>") }
            position += 2
            let start = position
            while position < bytes.count, Reader.isNameByte(bytes[position]) { position += 1 }
            guard bytes[start..<position].elementsEqual(name.utf8) else {
                throw failure("expected </\(name)>, found </\(String(decoding: bytes[start..<position], as: UTF8.self))>")
            }
            while position < bytes.count, Reader.isSpace(bytes[position]) { position += 1 }
            guard position < bytes.count, bytes[position] == UInt8(ascii: ">") else { throw failure("an unterminated </\(name)>") }
            position += 1
        }

        /// The text up to the element's closing tag, with entities, character references and
        /// CDATA sections resolved; comments inside are skipped.
        mutating func text(of tag: Tag) throws(DefaultsError) -> String {
            guard !tag.isEmpty else { return "" }
            var result: [UInt8] = []
            while true {
                guard position < bytes.count else { throw failure("an unterminated <\(tag.name)>") }
                let byte = bytes[position]
                if byte == UInt8(ascii: "<") {
                    if starts("</") { break }
                    if starts("<![CDATA[") {
                        position += 9
                        let start = position
                        try skip(past: "]]>")
                        result += bytes[start..<(position - 3)]
                    } else if starts("<!--") {
                        try skip(past: "-->")
                    } else {
                        throw failure("an element inside <\(tag.name)>")
                    }
                } else if byte == UInt8(ascii: "&") {
                    result += try entity()
                } else {
                    result.append(byte)
                    position += 1
                }
            }
            try closeTag(tag.name)
            guard let text = String(validating: result, as: UTF8.self) else { throw failure("text that is not UTF-8") }
            return text
        }

        mutating func entity() throws(DefaultsError) -> [UInt8] {
            let start = position
            guard let end = bytes[position...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                throw failure("an unterminated entity")
            }
            let name = String(decoding: bytes[(start + 1)..<end], as: UTF8.self)
            position = end + 1
            switch name {
            case "lt": return [UInt8(ascii: "<")]
            case "gt": return [UInt8(ascii: ">")]
            case "amp": return [UInt8(ascii: "&")]
            case "quot": return [UInt8(ascii: "\"")]
            case "apos": return [UInt8(ascii: "'")]
            default:
                var digits = Substring(name)
                guard digits.first == "#" else { throw failure("the unknown entity &\(name);") }
                digits = digits.dropFirst()
                let radix = digits.first == "x" || digits.first == "X" ? 16 : 10
                if radix == 16 { digits = digits.dropFirst() }
                guard let code = UInt32(digits, radix: radix), let scalar = Unicode.Scalar(code) else {
                    throw failure("the character reference &\(name);")
                }
                return Array(String(Character(scalar)).utf8)
            }
        }

        mutating func value(_ tag: Tag) throws(DefaultsError) -> PlistValue {
            guard let element = Element(rawValue: tag.name) else { throw failure("the unknown element <\(tag.name)>") }
            switch element {
            case .dict: return try dictionary(tag)
            case .array: return try array(tag)
            case .string: return .string(try text(of: tag))
            case .trueBoolean, .falseBoolean:
                if !tag.isEmpty { try skipMisc(); try closeTag(tag.name) }
                return .bool(element == .trueBoolean)
            case .integer: return .integer(try integer(try text(of: tag)))
            case .real: return .real(try real(try text(of: tag)))
            case .date:
                let text = try text(of: tag).trimmingSpaces
                guard let date = RFC3339.parse(text) else { throw failure("the date \"\(text)\"") }
                return .date(date)
            case .data:
                let text = try text(of: tag).filter { !$0.isWhitespace }
                guard let data = Data(base64Encoded: text) else { throw failure("<data> that is not base64") }
                return .data(data)
            case .plist, .key:
                throw failure("<\(tag.name)> where a value belongs")
            }
        }

        mutating func nested<T>(_ body: (inout Reader) throws(DefaultsError) -> T) throws(DefaultsError) -> T {
            depth += 1
            defer { depth -= 1 }
            guard depth <= PropertyListLimits.maximumDepth else { throw failure("nested more than \(PropertyListLimits.maximumDepth) deep") }
            return try body(&self)
        }

        mutating func array(_ tag: Tag) throws(DefaultsError) -> PlistValue {
            guard !tag.isEmpty else { return .array([]) }
            return try nested { (reader) throws(DefaultsError) -> PlistValue in
                var elements: [PlistValue] = []
                while true {
                    try reader.skipMisc()
                    guard let element = try reader.openTag() else { break }
                    elements.append(try reader.value(element))
                }
                try reader.closeTag(Element.array.rawValue)
                return .array(elements)
            }
        }

        mutating func dictionary(_ tag: Tag) throws(DefaultsError) -> PlistValue {
            guard !tag.isEmpty else { return .dictionary([:]) }
            return try nested { (reader) throws(DefaultsError) -> PlistValue in
                var members: [String: PlistValue] = [:]
                while true {
                    try reader.skipMisc()
                    guard let keyTag = try reader.openTag() else { break }
                    guard keyTag.name == Element.key.rawValue else { throw reader.failure("<\(keyTag.name)> where a <key> belongs") }
                    let key = try reader.text(of: keyTag)
                    try reader.skipMisc()
                    guard let valueTag = try reader.openTag() else { throw reader.failure("the key \"\(key)\" has no value") }
                    // As CoreFoundation: a repeated key keeps the last value.
                    members[key] = try reader.value(valueTag)
                }
                try reader.closeTag(Element.dict.rawValue)
                return .dictionary(members)
            }
        }

        func integer(_ text: String) throws(DefaultsError) -> Int64 {
            let trimmed = text.trimmingSpaces
            var digits = Substring(trimmed)
            let negative = digits.first == "-"
            if negative || digits.first == "+" { digits = digits.dropFirst() }
            var radix = 10
            if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
                radix = 16
                digits = digits.dropFirst(2)
            }
            guard !digits.isEmpty, let magnitude = UInt64(digits, radix: radix) else { throw failure("the integer \"\(trimmed)\"") }
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else { throw failure("the integer \(trimmed) is smaller than a 64-bit signed integer") }
                return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
            }
            guard magnitude <= UInt64(Int64.max) else {
                throw DefaultsError(.invalidPlist, "the integer \(magnitude) is larger than a 64-bit signed integer")
            }
            return Int64(magnitude)
        }

        func real(_ text: String) throws(DefaultsError) -> Double {
            let trimmed = text.trimmingSpaces
            guard let value = Double(trimmed) else { throw failure("the real \"\(trimmed)\"") }
            guard value.isFinite else { throw DefaultsError(.invalidPlist, "a real is not finite") }
            return value
        }

        static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        static func isNameStart(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
        }
        static func isNameByte(_ byte: UInt8) -> Bool {
            isNameStart(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
        }
    }

    // MARK: - Writing

    /// Writes `value` as Apple does: a tab per level, keys sorted, dates to the second in UTC.
    public static func encode(_ value: PlistValue) -> [UInt8] {
        var out = Bytes()
        out.bytes.reserveCapacity(256)
        out.append(prolog)
        write(value, level: 0, into: &out)
        out.append(epilog)
        return out.bytes
    }

    /// The bytes one entry of a top-level dictionary takes in the file `encode` writes: its key
    /// line and its value, one level in. A domain's file is ``emptyDictionaryFileBytes`` less
    /// the empty dictionary's own line plus its entries, so a change's effect on the file's
    /// size is known before the change is made, without writing the file.
    public static func encodedEntryBytes(key: String, value: PlistValue) -> Int {
        var count = ByteCount()
        writeEntry(key: key, value: value, level: 1, into: &count)
        return count.bytes
    }

    /// The bytes of a file holding a dictionary with entries, less the entries: the prolog,
    /// `<dict>` and `</dict>`, the epilog.
    public static let dictionaryFileOverheadBytes =
        prolog.utf8.count + "<\(Element.dict.rawValue)>\n</\(Element.dict.rawValue)>\n".utf8.count + epilog.utf8.count

    private static let prolog = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """
    private static let epilog = "</\(Element.plist.rawValue)>\n"

    /// Where the writer puts what it writes: the file's bytes, or only how many there are.
    private protocol Output {
        mutating func append(tabs: Int)
        mutating func append(_ text: String)
    }

    private struct Bytes: Output {
        var bytes: [UInt8] = []
        mutating func append(tabs: Int) { bytes += repeatElement(UInt8(ascii: "\t"), count: tabs) }
        mutating func append(_ text: String) { bytes += text.utf8 }
    }

    private struct ByteCount: Output {
        var bytes = 0
        mutating func append(tabs: Int) { bytes += tabs }
        mutating func append(_ text: String) { bytes += text.utf8.count }
    }

    private static func write(_ value: PlistValue, level: Int, into out: inout some Output) {
        func line(_ text: String) { out.append(tabs: level); out.append(text); out.append("\n") }
        func open(_ name: Element) { line("<\(name.rawValue)>") }
        func close(_ name: Element) { line("</\(name.rawValue)>") }
        func empty(_ name: Element) { line("<\(name.rawValue)/>") }
        func element(_ name: Element, _ text: String) { line("<\(name.rawValue)>\(text)</\(name.rawValue)>") }
        switch value {
        case .string(let string): element(.string, escaped(string))
        case .integer(let integer): element(.integer, String(integer))
        case .real(let real): element(.real, text(of: real))
        case .bool(let flag): empty(flag ? .trueBoolean : .falseBoolean)
        case .date(let date):
            // Whole seconds, as CoreFoundation writes them; a binary file keeps the fraction.
            element(.date, RFC3339.format(Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))))
        case .data(let data):
            open(.data)
            line(data.base64EncodedString())
            close(.data)
        case .array(let elements):
            guard !elements.isEmpty else { return empty(.array) }
            open(.array)
            for element in elements { write(element, level: level + 1, into: &out) }
            close(.array)
        case .dictionary(let members):
            guard !members.isEmpty else { return empty(.dict) }
            open(.dict)
            for (key, member) in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                writeEntry(key: key, value: member, level: level + 1, into: &out)
            }
            close(.dict)
        }
    }

    private static func writeEntry(key: String, value: PlistValue, level: Int, into out: inout some Output) {
        out.append(tabs: level)
        out.append("<\(Element.key.rawValue)>\(escaped(key))</\(Element.key.rawValue)>\n")
        write(value, level: level, into: &out)
    }

    /// The shortest text that reads back as the same double, without a trailing `.0`.
    static func text(of real: Double) -> String {
        let text = real.description
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }

    static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") }) else {
            return text
        }
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            default: result.append(character)
            }
        }
        return result
    }
}

extension String {
    /// Without leading and trailing XML whitespace.
    var trimmingSpaces: String {
        let utf8 = Array(self.utf8)
        guard let first = utf8.firstIndex(where: { $0 > 0x20 }), let last = utf8.lastIndex(where: { $0 > 0x20 }) else { return "" }
        return String(decoding: utf8[first...last], as: UTF8.self)
    }
}
