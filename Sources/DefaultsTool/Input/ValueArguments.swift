import DefaultsCore
import FoundationEssentials
import Glibc

/// What `defaults write <domain> <key> ...` asks for.
public enum WriteRequest: Equatable, Sendable {
    case set(PlistValue)
    case arrayAdd([PlistValue])
    case dictionaryAdd([String: PlistValue])
}

/// Parses the value arguments of `defaults write` the way macOS does.
///
/// ```swift
/// try ValueArguments.parse(["-int", "5"])            // .set(.integer(5))
/// try ValueArguments.parse(["(a, b)"])               // .set(["a", "b"])
/// try ValueArguments.parse(["1"])                    // .set("1") — an untyped 1 is a string, as on macOS
/// ```
public enum ValueArguments {
    /// The flags that type one value, each with its longer spelling when it has one; shell
    /// completion offers them too.
    static let scalarFlagSpellings = [["-string"], ["-data"], ["-int", "-integer"], ["-float"], ["-bool", "-boolean"], ["-date"]]
    static let scalarFlags = scalarFlagSpellings.flatMap { $0 }
    static let compositeFlags = ["-array", "-array-add", "-dict", "-dict-add"]

    /// Every flag as a message lists them, a longer spelling in brackets: `-string, -data,
    /// -int[eger], ...`.
    static let typeNames = (scalarFlagSpellings + compositeFlags.map { [$0] }).map { (spellings: [String]) -> String in
        guard let short = spellings.first, let long = spellings.last, long != short else { return spellings.joined() }
        return "\(short)[\(long.dropFirst(short.count))]"
    }.joined(separator: ", ")

    /// Whether `word` is one of the flags that type a value (`-int`, `-array`, ...).
    public static func isTypeFlag(_ word: String) -> Bool {
        scalarFlags.contains(word.lowercased()) || compositeFlags.contains(word.lowercased())
    }

    public static func parse(_ arguments: [String]) throws(ToolError) -> WriteRequest {
        guard let first = arguments.first else { throw ToolError.usage }
        let request: WriteRequest
        var consumed = 1
        switch first.lowercased() {
        case "-array", "-array-add":
            let elements = try elementValues(Array(arguments.dropFirst()))
            consumed = arguments.count
            request = first.lowercased() == "-array" ? .set(.array(elements)) : .arrayAdd(elements)
        case "-dict", "-dict-add":
            let pairs = Array(arguments.dropFirst())
            var members: [String: PlistValue] = [:]
            var index = 0
            while index < pairs.count {
                var offset = index
                let keyValue = try scalar(pairs, at: &offset)
                guard case .string(let key) = keyValue else { throw ToolError.failure("Dictionary keys must be strings") }
                guard offset < pairs.count else { throw ToolError.failure("Key \(key) lacks a corresponding value") }
                members[key] = try scalar(pairs, at: &offset)
                index = offset
            }
            consumed = arguments.count
            request = first.lowercased() == "-dict" ? .set(.dictionary(members)) : .dictionaryAdd(members)
        default:
            var offset = 0
            request = .set(try scalar(arguments, at: &offset))
            consumed = offset
        }
        if consumed < arguments.count {
            var message = "Unexpected argument \(arguments[consumed]); leaving defaults unchanged."
            // macOS takes an unknown flag for a string value and blames the word after it.
            if consumed == 1, first.hasPrefix("-"), first.count > 1, Double(first) == nil {
                message += "\n\(first) is not a type; the types are \(typeNames)"
            }
            throw ToolError.failure(message)
        }
        return request
    }

    private static func elementValues(_ arguments: [String]) throws(ToolError) -> [PlistValue] {
        var values: [PlistValue] = []
        var offset = 0
        while offset < arguments.count { values.append(try scalar(arguments, at: &offset)) }
        return values
    }

    /// One value: a type flag and its argument, or an untyped literal. Advances `offset`.
    static func scalar(_ arguments: [String], at offset: inout Int) throws(ToolError) -> PlistValue {
        let token = arguments[offset]
        if compositeFlags.contains(token.lowercased()) {
            throw ToolError.failure("Cannot nest composite types (arrays and dictionaries); exiting")
        }
        guard scalarFlags.contains(token.lowercased()) else {
            offset += 1
            return try literal(token)
        }
        guard offset + 1 < arguments.count else { throw ToolError.misuse("\(token) needs a value after it") }
        let argument = arguments[offset + 1]
        offset += 2
        switch token.lowercased() {
        case "-string": return .string(argument)
        case "-data":
            do { return .data(try ValueSyntax.data(fromHex: argument)) } catch {
                throw ToolError.misuse("-data takes \(error.expected), not \"\(argument)\"")
            }
        case "-int", "-integer":
            // macOS stores 0 for a value with no number in front; that is never what was meant.
            guard startsWithNumber(argument) else {
                throw ToolError.failure("\(token) needs an integer, not \"\(argument)\"; leaving defaults unchanged.")
            }
            return .integer(longLongValue(argument))
        case "-float":
            guard startsWithNumber(argument) else {
                throw ToolError.failure("-float needs a number, not \"\(argument)\"; leaving defaults unchanged.")
            }
            return .real(doubleValue(argument))
        case "-bool", "-boolean":
            guard let on = ValueSyntax.booleanWord(argument, in: .typeFlag) else {
                throw ToolError.misuse("\(token) takes \(ValueSyntax.booleanWordList(in: .typeFlag)), not \"\(argument)\"")
            }
            return .bool(on)
        default:
            guard let date = date(argument) else {
                throw ToolError.misuse(
                    "-date takes 2026-11-21 10:00:00 +0000, 2026-11-21T10:00:00Z or 2026-11-21, not \"\(argument)\"")
            }
            return .date(date)
        }
    }

    /// An untyped value: a token without any of `"()[]{}<>` is a string (its backslash escapes
    /// interpreted, as macOS does by quoting it first); anything else is parsed as a property list.
    public static func literal(_ token: String) throws(ToolError) -> PlistValue {
        let special: Set<Character> = ["\"", "(", ")", "[", "]", "{", "}", "<", ">"]
        let text = token.contains(where: { special.contains($0) }) ? token : "\"" + token + "\""
        guard let value = parsePropertyList(text) else {
            throw ToolError.failure("Could not parse: \(text).  Try single-quoting it.")
        }
        return value
    }

    /// Old-style text or an XML fragment (`<integer>1</integer>`, `<dict>...</dict>`).
    static func parsePropertyList(_ text: String) -> PlistValue? {
        guard !text.isEmpty else { return nil }
        return try? PropertyListFile.decodeValue(Data(text.utf8))
    }

    /// Whether NSString would find a number at the start: leading spaces, a sign, then a digit
    /// (or a point and a digit).
    static func startsWithNumber(_ text: String) -> Bool {
        var characters = Substring(text).drop(while: { $0 == " " || $0 == "\t" || $0 == "\n" })
        if let sign = characters.first, sign == "-" || sign == "+" { characters = characters.dropFirst() }
        if characters.first == "." { characters = characters.dropFirst() }
        return characters.first.map { $0.isASCII && $0.isNumber } ?? false
    }

    /// NSString `longLongValue`: leading spaces, a sign, digits up to the first other character; saturates.
    static func longLongValue(_ text: String) -> Int64 {
        var characters = Substring(text).drop(while: { $0 == " " || $0 == "\t" || $0 == "\n" })
        var negative = false
        if let sign = characters.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            characters = characters.dropFirst()
        }
        var value: Int64 = 0
        for character in characters {
            guard let digit = character.wholeNumberValue, character.isASCII else { break }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = negative ? times10.subtractingReportingOverflow(Int64(digit)) : times10.addingReportingOverflow(Int64(digit))
            if o1 || o2 { return negative ? .min : .max }
            value = next
        }
        return value
    }

    /// NSString `doubleValue`: the longest leading number, 0 when there is none.
    static func doubleValue(_ text: String) -> Double {
        let trimmed = text.drop(while: { $0 == " " || $0 == "\t" })
        var best = 0.0
        var end = trimmed.startIndex
        while end < trimmed.endIndex {
            end = trimmed.index(after: end)
            if let value = Double(trimmed[trimmed.startIndex..<end]), value.isFinite { best = value }
        }
        return best
    }

    /// `2026-11-21 10:00:00 +0000` (NSDate's format), RFC 3339, or a bare `2026-11-21` (midnight UTC).
    static func date(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        if parts.count == 3, parts[2].count == 5, let sign = parts[2].first, sign == "+" || sign == "-" {
            let zone = parts[2]
            let rfc = "\(parts[0])T\(parts[1])\(zone.prefix(3)):\(zone.suffix(2))"
            if let date = RFC3339.parse(rfc) { return date }
        }
        if let date = RFC3339.parse(text) { return date }
        if parts.count == 2, let date = RFC3339.parse("\(parts[0])T\(parts[1])Z") { return date }
        if parts.count == 1, let date = RFC3339.parse(text + "T00:00:00Z") { return date }
        return nil
    }
}
