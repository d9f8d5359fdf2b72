import DaemonTestSupport
@testable import DefaultsCore
import Foundation
import TestThreads
import Testing

/// Every reader of DefaultsCore does work linear in its input, however the input is made: wire
/// JSON (`JSONParser.parse`, the request path's `JSONParser.parseObjectMembers`, and
/// `WireValue.decode`) and the XML, binary and old-style property lists `PropertyListFile`
/// reads. Each shape is read at about n and 8n bytes, and the CPU time must grow by at most
/// ``WorkGrowth/bound``; what the reading gives (a count, or the refusal at a limit) is checked
/// too, since a refusal must be as cheap as a reading.
@Suite(.ownThreads) struct ParserWorkTests {
    /// The size of the small input, in bytes. Large enough that one reading of most shapes takes
    /// milliseconds in a debug build, so that the ratio shows the work rather than the cost of a
    /// call; the large input, 8 times this, stays far below every size limit of the daemon.
    static let n = 32 << 10

    /// How an input is read, and what its count counts.
    enum Reader: String, Sendable {
        /// `JSONParser.parse`: the elements of an array, the members of an object, the Unicode
        /// scalars of a string; 1 for anything else.
        case json = "JSONParser.parse"
        /// `JSONParser.parseObjectMembers`, then the lookups a request makes: the members.
        case request = "JSONParser.parseObjectMembers"
        /// `WireValue.decode` of what `JSONParser.parse` gives: counted as a property-list value.
        case wire = "WireValue.decode"
        /// `PropertyListFile.decodeValue`, whatever the format: the elements of an array, the
        /// members of a dictionary, the Unicode scalars of a string, the bytes of data; 1 for
        /// anything else.
        case plist = "PropertyListFile.decodeValue"

        func read(_ bytes: [UInt8]) -> ReadOutcome {
            do {
                switch self {
                case .json:
                    return .read(ParserWorkTests.count(try JSONParser.parse(bytes)))
                case .request:
                    guard let members = try JSONParser.parseObjectMembers(bytes) else { return .refused("not an object") }
                    // What the request path asks of every line: absent names are compared with
                    // every member, so that the lookups cost as much as they can.
                    _ = members["op"]
                    _ = members.stringValue("domain")
                    _ = members.hasValue("key")
                    _ = members.scalarValue("value")
                    return .read(members.count)
                case .wire:
                    return .read(ParserWorkTests.count(try WireValue.decode(try JSONParser.parse(bytes))))
                case .plist:
                    return .read(ParserWorkTests.count(try PropertyListFile.decodeValue(Data(bytes))))
                }
            } catch {
                return .refused("\(error)")
            }
        }
    }

    static func count(_ json: JSON) -> Int {
        switch json {
        case .array(let elements): elements.count
        case .object(let members): members.count
        case .string(let string): string.unicodeScalars.count
        default: 1
        }
    }

    static func count(_ value: PlistValue) -> Int {
        switch value {
        case .array(let elements): elements.count
        case .dictionary(let members): members.count
        case .string(let string): string.unicodeScalars.count
        case .data(let data): data.count
        default: 1
        }
    }

    /// One way of making an input hard to read.
    struct Shape: Sendable, CustomTestStringConvertible {
        let reader: Reader
        let name: String
        /// The input of about the given size in bytes.
        let input: @Sendable (Int) -> WorkInput
        /// What reading it gives, for the count of its input.
        let expected: @Sendable (Int) -> ReadOutcome

        init(
            _ reader: Reader, _ name: String, _ input: @escaping @Sendable (Int) -> WorkInput,
            _ expected: @escaping @Sendable (Int) -> ReadOutcome
        ) {
            self.reader = reader
            self.name = name
            self.input = input
            self.expected = expected
        }

        var testDescription: String { "\(reader.rawValue): \(name)" }
    }

    static let shapes: [Shape] = [
        // Wire JSON. The outer array of a tower is one level, so a tower of 511 reaches the
        // parser's limit of 512 (JSONParser.maximumDepth) without passing it.
        Shape(.json, "a wide array", { .filling($0, "[", "0,", "0]") }, { .read($0 + 1) }),
        Shape(.json, "a wide array of empty objects", { .filling($0, "[", "{},", "{}]") }, { .read($0 + 1) }),
        Shape(.json, "many distinct keys", { .filling($0, "{", numbered: { i in #""k\#(i)":0,"# }, "\"\":0}") }, { .read($0 + 1) }),
        Shape(.json, "one key repeated", { .filling($0, "{", #""k":0,"#, #""k":1}"#) }, { _ in .read(1) }),
        Shape(.json, "a long key", { .filling($0, #"{""#, "k", #"":0}"#) }, { _ in .read(1) }),
        Shape(.json, "a long key of \\u escapes", { .filling($0, #"{""#, #"\u0041"#, #"":0}"#) }, { _ in .read(1) }),
        Shape(.json, "a long string of \\u escapes", { .filling($0, "\"", #"\u0041"#, "\"") }, { .read($0) }),
        Shape(.json, "a long string of surrogate pairs", { .filling($0, "\"", #"\ud83d\ude00"#, "\"") }, { .read($0) }),
        Shape(.json, "a long string of short escapes", { .filling($0, "\"", #"\n\t\"\\\/"#, "\"") }, { .read(5 * $0) }),
        Shape(.json, "a long string of two-byte UTF-8", { .filling($0, "\"", "é", "\"") }, { .read($0) }),
        Shape(.json, "a long plain string", { .filling($0, "\"", "a", "\"") }, { .read($0) }),
        Shape(.json, "arrays 512 deep, side by side", { .filling($0, "[", jsonArrays(511) + ",", "0]") }, { .read($0 + 1) }),
        Shape(.json, "objects 512 deep, side by side", { .filling($0, "[", jsonObjects(511) + ",", "0]") }, { .read($0 + 1) }),
        Shape(.json, "arrays nested past the limit", { .filling($0, "", "[", "") }, { _ in .refused("nesting deeper than 512") }),
        Shape(.json, "objects nested past the limit", { .filling($0, "", #"{"a":"#, "") }, { _ in .refused("nesting deeper than 512") }),
        Shape(.json, "white space", { .filling($0, "[", " \n\t\r", "0]") }, { _ in .read(1) }),
        Shape(.json, "an integer of many digits", { .filling($0, "", "1", "") }, { _ in .read(1) }),
        Shape(.json, "a real of many digits", { .filling($0, "0.", "1", "") }, { _ in .read(1) }),
        Shape(.json, "an exponent of many digits", { .filling($0, "1e", "1", "") }, { _ in .read(1) }),
        Shape(.json, "an unterminated string after many", { .filling($0, "[", #""a","#, "\"") }, { _ in .refused("unterminated string") }),
        Shape(.json, "a bad escape after a long string", { .filling($0, "\"", "a", #"\x""#) }, { _ in .refused("invalid escape") }),

        // The request path: members are checked, not built, and looked up by name.
        Shape(.request, "many members", { .filling($0, "{", numbered: { i in #""k\#(i)":0,"# }, #""op":"get"}"#) }, { .read($0 + 1) }),
        Shape(.request, "many names written with escapes", { .filling($0, "{", numbered: { i in #""\u006b\#(i)":0,"# }, #""op":"get"}"#) }, { .read($0 + 1) }),
        Shape(.request, "many members named op", { .filling($0, "{", #""op":"\u0041","#, #""op":"get"}"#) }, { .read($0 + 1) }),
        Shape(.request, "members 512 deep", { .filling($0, "{", numbered: { i in #""k\#(i)":"# + jsonArrays(511) + "," }, #""op":"get"}"#) }, { .read($0 + 1) }),
        Shape(.request, "a long value of \\u escapes", { .filling($0, #"{"op":""#, #"\u0041"#, #""}"#) }, { _ in .read(1) }),
        Shape(.request, "nesting past the limit", { .filling($0, #"{"op":"#, "[", "") }, { _ in .refused("nesting deeper than 512") }),

        // The wire's tagged values. A `$dict` level is two JSON levels.
        Shape(.wire, "many $data", { .filling($0, "[", #"{"$data":"AAAA"},"#, "1]") }, { .read($0 + 1) }),
        Shape(.wire, "many $date", { .filling($0, "[", #"{"$date":"2026-11-21T10:00:00.250Z"},"#, "1]") }, { .read($0 + 1) }),
        Shape(.wire, "a long $data", { .filling($0, #"{"$data":""#, "AAAA", #""}"#) }, { .read(3 * $0) }),
        Shape(.wire, "a $dict of many keys", { .filling($0, #"{"$dict":{"#, numbered: { i in #""$k\#(i)":0,"# }, #""$":0}}"#) }, { .read($0 + 1) }),
        Shape(.wire, "$dicts 511 deep, side by side", { .filling($0, "[", wireDictionaries(255) + ",", "1]") }, { .read($0 + 1) }),
        Shape(.wire, "a null after many values", { .filling($0, "[", "1,", "null]") }, { _ in .refused("null is not a property-list value") }),
        Shape(.wire, "nesting past the limit", { .filling($0, "", "[", "") }, { _ in .refused("nesting deeper than 512") }),

        // XML property lists. The outer array is one level of PropertyListLimits.maximumDepth.
        Shape(.plist, "XML: comments before the root", { .filling($0, "", "<!-- c -->", "<plist><dict/></plist>") }, { _ in .read(0) }),
        Shape(.plist, "XML: processing instructions before the root", { .filling($0, #"<?xml version="1.0"?>"#, "<?pi x?>", "<plist><dict/></plist>") }, { _ in .read(0) }),
        Shape(.plist, "XML: DOCTYPEs before the root", { .filling($0, "", "<!DOCTYPE plist>", "<plist><dict/></plist>") }, { _ in .read(0) }),
        Shape(.plist, "XML: a DOCTYPE with a long internal subset", { .filling($0, "<!DOCTYPE plist [", #"<!ENTITY a "b">"#, "]><plist><dict/></plist>") }, { _ in .read(0) }),
        Shape(.plist, "XML: an unterminated comment after many", { .filling($0, "", "<!-- c -->", "<!--") }, { _ in .refused("unterminated -->") }),
        Shape(.plist, "XML: comments between elements", { .filling($0, "<plist><array>", "<!-- c --><true/>", "</array></plist>") }, { .read($0) }),
        Shape(.plist, "XML: a wide array", { .filling($0, "<plist><array>", "<integer>1</integer>", "</array></plist>") }, { .read($0) }),
        Shape(.plist, "XML: many distinct keys", { .filling($0, "<plist><dict>", numbered: { i in "<key>k\(i)</key><true/>" }, "</dict></plist>") }, { .read($0) }),
        Shape(.plist, "XML: one key repeated", { .filling($0, "<plist><dict>", "<key>k</key><true/>", "</dict></plist>") }, { _ in .read(1) }),
        Shape(.plist, "XML: a long key", { .filling($0, "<plist><dict><key>", "k", "</key><true/></dict></plist>") }, { _ in .read(1) }),
        Shape(.plist, "XML: a long string of &amp;", { .filling($0, "<plist><string>", "&amp;", "</string></plist>") }, { .read($0) }),
        Shape(.plist, "XML: a long string of &#65;", { .filling($0, "<plist><string>", "&#65;", "</string></plist>") }, { .read($0) }),
        Shape(.plist, "XML: a long string of &#x1F600;", { .filling($0, "<plist><string>", "&#x1F600;", "</string></plist>") }, { .read($0) }),
        Shape(.plist, "XML: CDATA sections", { .filling($0, "<plist><string>", "<![CDATA[x]]>", "</string></plist>") }, { .read($0) }),
        Shape(.plist, "XML: comments inside a string", { .filling($0, "<plist><string>", "a<!--c-->", "</string></plist>") }, { .read($0) }),
        Shape(.plist, "XML: long data", { .filling($0, "<plist><data>", "AAAA", "</data></plist>") }, { .read(3 * $0) }),
        Shape(.plist, "XML: data in short lines", { .filling($0, "<plist><data>", "AAAA\n", "</data></plist>") }, { .read(3 * $0) }),
        Shape(.plist, "XML: arrays 512 deep, side by side", { .filling($0, "<plist><array>", xmlArrays(511), "</array></plist>") }, { .read($0) }),
        Shape(.plist, "XML: dictionaries 512 deep, side by side", { .filling($0, "<plist><array>", xmlDictionaries(511), "</array></plist>") }, { .read($0) }),
        Shape(.plist, "XML: arrays nested past the limit", { .filling($0, "<plist>", "<array>", "") }, { _ in .refused("nested more than 512 deep") }),
        Shape(.plist, "XML: many attributes", { .filling($0, "<plist", #" version="1.0""#, "><dict/></plist>") }, { _ in .read(0) }),
        Shape(.plist, "XML: a real of many digits", { .filling($0, "<plist><real>0.", "1", "</real></plist>") }, { _ in .read(1) }),
        Shape(.plist, "XML: an integer after much white space", { .filling($0, "<plist><integer>", " ", "1</integer></plist>") }, { _ in .read(1) }),
        Shape(.plist, "XML: an unknown entity after many", { .filling($0, "<plist><string>", "&amp;", "&bogus;</string></plist>") }, { _ in .refused("the unknown entity") }),

        // Binary property lists, built whole: their size is about the given one.
        Shape(.plist, "binary: a wide array", { BinaryShapes.integers($0) }, { .read($0) }),
        Shape(.plist, "binary: many distinct keys", { BinaryShapes.keys($0) }, { .read($0) }),
        Shape(.plist, "binary: a long ASCII string", { BinaryShapes.string($0, "a") }, { .read($0) }),
        Shape(.plist, "binary: a long UTF-16 string", { BinaryShapes.string($0 / 2, "é") }, { .read($0) }),
        Shape(.plist, "binary: long data", { BinaryShapes.data($0) }, { .read($0) }),
        Shape(.plist, "binary: one small object referenced from every element", { BinaryShapes.sharedData($0, bytes: 16) }, { .read($0) }),
        Shape(.plist, "binary: one container the value of every key", { BinaryShapes.sharedContainer($0) }, { .read($0) }),
        Shape(.plist, "binary: every object number at one offset", { BinaryShapes.oneOffset($0) }, { .read($0) }),
        Shape(.plist, "binary: arrays 512 deep, side by side", { BinaryShapes.towers($0) }, { .read($0) }),
        Shape(.plist, "binary: arrays nested past the limit", { BinaryShapes.chain($0) }, { _ in .refused("nesting too deep") }),
        Shape(.plist, "binary: one large object referenced past the budget", { BinaryShapes.sharedData($0, bytes: 4096) }, { _ in .refused("stand for more than") }),

        // Old-style (OpenStep) text.
        Shape(.plist, "old-style: a wide array", { .filling($0, "(", "a,", "a)") }, { .read($0 + 1) }),
        Shape(.plist, "old-style: many distinct keys", { .filling($0, "{", numbered: { i in "k\(i)=v;" }, "}") }, { .read($0) }),
        Shape(.plist, "old-style: .strings lines", { .filling($0, "", numbered: { i in #""k\#(i)" = "v";"# + "\n" }, "") }, { .read($0) }),
        Shape(.plist, "old-style: one key repeated", { .filling($0, "{", "a=b;", "}") }, { _ in .read(1) }),
        Shape(.plist, "old-style: a long string of \\U escapes", { .filling($0, "\"", #"\U0041"#, "\"") }, { .read($0) }),
        Shape(.plist, "old-style: a long string of short escapes", { .filling($0, "\"", #"\n\t\"\\"#, "\"") }, { .read(4 * $0) }),
        Shape(.plist, "old-style: a long string of octal escapes", { .filling($0, "\"", #"\101"#, "\"") }, { .read($0) }),
        Shape(.plist, "old-style: a long unquoted string", { .filling($0, "", "a", "") }, { .read($0) }),
        Shape(.plist, "old-style: a long key", { .filling($0, "{", "k", "=v;}") }, { _ in .read(1) }),
        Shape(.plist, "old-style: long hexadecimal data", { .filling($0, "<", "0f", ">") }, { .read($0) }),
        Shape(.plist, "old-style: hexadecimal data with spaces", { .filling($0, "<", "0f ", ">") }, { .read($0) }),
        Shape(.plist, "old-style: block comments", { .filling($0, "", "/* c */", "()") }, { _ in .read(0) }),
        Shape(.plist, "old-style: line comments", { .filling($0, "", "// c\n", "()") }, { _ in .read(0) }),
        Shape(.plist, "old-style: an unterminated block comment", { .filling($0, "/*", "x", "") }, { _ in .read(0) }),
        Shape(.plist, "old-style: arrays 512 deep, side by side", { .filling($0, "(", oldStyleArrays(511) + ",", "a)") }, { .read($0 + 1) }),
        Shape(.plist, "old-style: arrays nested past the limit", { .filling($0, "", "(", "") }, { _ in .refused("nested more than 512 deep") }),
        Shape(.plist, "old-style: dictionaries nested past the limit", { .filling($0, "", "{a=", "") }, { _ in .refused("nested more than 512 deep") }),
        Shape(.plist, "old-style: an unterminated string after many lines", { .filling($0, "", numbered: { i in "k\(i)=v;\n" }, #"k=""#) }, { _ in .refused("unterminated quoted string") }),
        Shape(.plist, "old-style: UTF-16 text", { WorkInput.filling($0, "(", "a,", "a)").utf16LittleEndianWithMark }, { .read($0 + 1) }),
    ]

    @Test(arguments: Self.shapes)
    func workGrowsLinearly(_ shape: Shape) {
        let small = shape.input(Self.n)
        let large = shape.input(WorkGrowth.factor * Self.n)
        for input in [small, large] {
            let outcome = shape.reader.read(input.bytes)
            #expect(shape.expected(input.count).admits(outcome), "\(shape.name), \(input.bytes.count) bytes: \(outcome)")
        }
        let growth = WorkGrowth.measure(small: small.bytes, large: large.bytes) { shape.reader.read($0) }
        #expect(growth.ratio <= WorkGrowth.bound, "\(shape.name): \(growth)")
    }
}

/// `depth` arrays, each holding the next: `[[…]]`.
private func jsonArrays(_ depth: Int) -> String {
    String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
}

/// `depth` objects, each the value of `a` in the one before: `{"a":{"a":…0}}`.
private func jsonObjects(_ depth: Int) -> String {
    String(repeating: #"{"a":"#, count: depth) + "0" + String(repeating: "}", count: depth)
}

/// `levels` wrapped dictionaries, each two JSON levels: `{"$dict":{"a":{"$dict":{"a":…0}}}}`.
private func wireDictionaries(_ levels: Int) -> String {
    String(repeating: #"{"$dict":{"a":"#, count: levels) + "0" + String(repeating: "}}", count: levels)
}

private func xmlArrays(_ depth: Int) -> String {
    String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth)
}

private func xmlDictionaries(_ depth: Int) -> String {
    String(repeating: "<dict><key>a</key>", count: depth) + "<true/>" + String(repeating: "</dict>", count: depth)
}

private func oldStyleArrays(_ depth: Int) -> String {
    String(repeating: "(", count: depth) + String(repeating: ")", count: depth)
}

/// Binary property lists of about `size` bytes, each of one shape; the count is what reading
/// it gives.
private enum BinaryShapes {
    typealias Hostile = HostilePropertyLists

    /// An array of integers: about 8 bytes each (the integer, its reference and its offset).
    static func integers(_ size: Int) -> WorkInput {
        let count = size / 8
        return WorkInput(bytes: BinaryPropertyList.encode(.array((0..<count).map { .integer(Int64($0)) })), count: count)
    }

    /// A dictionary of distinct keys, every value `true`: about 16 bytes a member.
    static func keys(_ size: Int) -> WorkInput {
        let count = size / 16
        let members = Dictionary(uniqueKeysWithValues: (0..<count).map { ("k\($0)", PlistValue.bool(true)) })
        return WorkInput(bytes: BinaryPropertyList.encode(.dictionary(members)), count: count)
    }

    /// `count` times `character`: ASCII is written a byte a character, anything else in UTF-16.
    static func string(_ count: Int, _ character: String) -> WorkInput {
        WorkInput(bytes: BinaryPropertyList.encode(.string(String(repeating: character, count: count))), count: count)
    }

    static func data(_ size: Int) -> WorkInput {
        WorkInput(bytes: BinaryPropertyList.encode(.data(Data(repeating: 0x2A, count: size))), count: size)
    }

    /// An array of `size` one-byte references to one data object of `bytes` bytes: within the
    /// expansion budget for 16 bytes, past it for 4096.
    static func sharedData(_ size: Int, bytes: Int) -> WorkInput {
        WorkInput(bytes: Hostile.sharedData(references: size, bytes: bytes), count: size)
    }

    /// A dictionary whose every value is one array (object 1) holding a string: each member is
    /// charged the array's expanded size, well within the budget. About 22 bytes a member.
    static func sharedContainer(_ size: Int) -> WorkInput {
        let count = size / 22
        var dictionary = Hostile.header(0xD0, count)
        for key in 0..<count { dictionary += Hostile.bigEndian(2 + key, 4) }
        for _ in 0..<count { dictionary += Hostile.bigEndian(1, 4) }
        let array = Hostile.header(0xA0, 1) + Hostile.bigEndian(2, 4)
        let strings = (0..<count).map { Hostile.header(0x50, String($0).utf8.count) + Array(String($0).utf8) }
        return WorkInput(bytes: Hostile.binary([dictionary, array] + strings, referenceSize: 4), count: count)
    }

    /// An array of `count` object numbers whose offsets are all the one string's: 12 bytes an
    /// element (its reference and its offset).
    static func oneOffset(_ size: Int) -> WorkInput {
        let count = size / 12
        let array = Hostile.header(0xA0, count) + (1...count).flatMap { Hostile.bigEndian($0, 4) }
        let string = Hostile.header(0x50, 3) + Array("tea".utf8)
        return WorkInput(
            bytes: Hostile.binary([array, string], referenceSize: 4, offsets: [0] + Array(repeating: 1, count: count)),
            count: count)
    }

    /// An array of towers, each 511 arrays holding the next and the last holding `false`: 512
    /// levels with the outer array. Built by hand, since a value that deep is not built here.
    static func towers(_ size: Int) -> WorkInput {
        let levels = 511
        let count = max(1, size / (levels * 13))
        var objects: [[UInt8]] = [
            Hostile.header(0xA0, count) + (0..<count).flatMap { Hostile.bigEndian(2 + $0 * levels, 4) },
            [0x08],
        ]
        for tower in 0..<count {
            for level in 0..<levels {
                let next = level == levels - 1 ? 1 : 2 + tower * levels + level + 1
                objects.append(Hostile.header(0xA0, 1) + Hostile.bigEndian(next, 4))
            }
        }
        return WorkInput(bytes: Hostile.binary(objects, referenceSize: 4), count: count)
    }

    /// Arrays each holding the next, as many as make `size` bytes (13 bytes a level), far past
    /// the depth limit.
    static func chain(_ size: Int) -> WorkInput {
        let count = size / 13
        let objects: [[UInt8]] = (0..<count).map { Hostile.header(0xA0, 1) + Hostile.bigEndian($0 + 1, 4) } + [[0x08]]
        return WorkInput(bytes: Hostile.binary(objects, referenceSize: 4), count: count)
    }
}
