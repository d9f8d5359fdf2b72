import DefaultsCore
import Foundation
import TestThreads
import Testing

@Suite(.ownThreads) struct PropertyListFileTests {
    let sample: [String: PlistValue] = [
        "string": "Vulcan", "integer": 1, "real": 1.0, "bool": true, "false": false,
        "big": .integer(Int64.max), "negative": .integer(Int64.min), "fraction": 0.1,
        "date": .date(Date(timeIntervalSince1970: 1_795_255_200)), "data": .data(Data([0, 1, 254, 255])),
        "array": [1, 1.0, true, "1"], "dictionary": ["nested": ["deeper": 2.5]], "empty": [:], "list": [],
    ]

    @Test(arguments: PropertyListFile.Format.allCases)
    func typesSurviveExactly(_ format: PropertyListFile.Format) throws {
        let data = try PropertyListFile.encode(sample, format: format)
        #expect(try PropertyListFile.decode(data) == sample)
    }

    @Test func xmlKeepsIntegerRealAndBoolApart() throws {
        let xml = String(decoding: try PropertyListFile.encode(["i": 1, "r": 1.0, "b": true], format: .xml), as: UTF8.self)
        #expect(xml.contains("<key>i</key>\n\t<integer>1</integer>"))
        #expect(xml.contains("<key>r</key>\n\t<real>1</real>"))
        #expect(xml.contains("<key>b</key>\n\t<true/>"))
    }

    @Test func binaryKeepsFractionalSecondsAndXMLKeepsWholeSeconds() throws {
        let date = Date(timeIntervalSince1970: 1_795_255_200.25)
        #expect(try PropertyListFile.decode(PropertyListFile.encode(["d": .date(date)], format: .binary)) == ["d": .date(date)])
        let fromXML = try PropertyListFile.decode(PropertyListFile.encode(["d": .date(date)], format: .xml))
        #expect(fromXML == ["d": .date(Date(timeIntervalSince1970: 1_795_255_200))])
    }

    @Test func readsOldStyleText() throws {
        let text = #"{ name = "Jean-Luc"; list = (a, "b c"); bytes = <0102>; }"#
        #expect(try PropertyListFile.decode(Data(text.utf8)) == ["name": "Jean-Luc", "list": ["a", "b c"], "bytes": .data(Data([1, 2]))])
    }

    @Test func refusesWhatIsNotADictionaryOrNotAPlist() {
        let notPlist = #expect(throws: DefaultsError.self) { try PropertyListFile.decode(Data("<plist><dict><key>".utf8)) }
        #expect(notPlist?.code == .invalidPlist)
        let array = #expect(throws: DefaultsError.self) { try PropertyListFile.decode(Data("(1, 2)".utf8)) }
        #expect(array?.code == .invalidPlist)
    }

    @Test func unsignedAboveInt64IsRefusedNotTruncated() {
        let xml = #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>u</key><integer>18446744073709551615</integer></dict></plist>"#
        let error = #expect(throws: DefaultsError.self) { try PropertyListFile.decode(Data(xml.utf8)) }
        #expect(error?.code == .invalidPlist)
    }

    /// Domains of every shape: what the daemon measures a file by before a change is made.
    static let shapedDomains: [[String: PlistValue]] = [
        ["a": 1, "b": true, "c": false, "d": 0.5, "e": "", "f": "x<&>y"],
        ["ints": .array((0..<500).map { .integer(Int64($0)) }), "bools": .array(Array(repeating: .bool(true), count: 500))],
        ["deep": (0..<200).reduce(PlistValue.array([])) { inner, _ in .array([inner]) }],
        ["nested": ["k": ["k2": .array([.string(""), .dictionary([:]), .array([])])]]],
        ["data": .data(Data(repeating: 7, count: 100)), "date": .date(Date(timeIntervalSince1970: 1_700_000_000.75))],
        Dictionary(uniqueKeysWithValues: (0..<300).map { ("key\($0)", PlistValue.string("")) }),
        ["reals": .array((0..<300).map { .real(Double($0) / 7) }), "emptyStrings": .array(Array(repeating: .string(""), count: 300))],
    ]

    /// The file's size is its overhead plus each entry's bytes, exactly: the daemon adds them up
    /// change by change instead of writing the file.
    @Test(arguments: Self.shapedDomains)
    func anXMLFilesSizeIsItsEntriesAddedUp(_ values: [String: PlistValue]) throws {
        let file = try PropertyListFile.encode(values, format: .xml)
        let added = values.reduce(XMLPropertyList.dictionaryFileOverheadBytes) {
            $0 + XMLPropertyList.encodedEntryBytes(key: $1.key, value: $1.value)
        }
        #expect(added == file.count)
    }

    /// XML is never smaller than the binary form of the same values, so its size bounds what
    /// the daemon writes in either format.
    @Test(arguments: Self.shapedDomains)
    func anXMLFileIsNeverSmallerThanTheBinaryOne(_ values: [String: PlistValue]) throws {
        let xml = try PropertyListFile.encode(values, format: .xml)
        let binary = try PropertyListFile.encode(values, format: .binary)
        #expect(binary.count <= xml.count, "binary \(binary.count), XML \(xml.count)")
    }
}
