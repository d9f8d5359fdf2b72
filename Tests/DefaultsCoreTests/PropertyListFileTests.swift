import DefaultsCore
import Foundation
import Testing

@Suite struct PropertyListFileTests {
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
}
