@testable import DefaultsCore
import Foundation
import TestThreads
import Testing

/// The XML format's element names are one list (`XMLPropertyList.Element`): what the writer
/// writes, what the reader reads back, and what `PropertyListFile` takes for XML.
@Suite(.ownThreads) struct XMLElementTests {
    @Test func theWriterWritesTheListedElementsAndTheFormatTestKnowsEachOne() throws {
        let value: PlistValue = [
            "s": "x", "i": 1, "r": 1.5, "t": true, "f": false, "d": .date(Date(timeIntervalSince1970: 0)),
            "b": .data(Data([1])), "a": [1], "e": [], "n": [:], "m": ["k": "v"],
        ]
        let xml = String(decoding: XMLPropertyList.encode(value), as: UTF8.self)
        let written = Set(xml.matches(of: #/<\/?([a-z]+)/#).map { String($0.output.1) })
        #expect(written == Set(XMLPropertyList.Element.allCases.map(\.rawValue)))
        for element in XMLPropertyList.Element.allCases {
            #expect(PropertyListFile.looksLikeXML(Array("<\(element.rawValue)>".utf8)), "\(element)")
        }
        #expect(try XMLPropertyList.decode(Array(xml.utf8)) == value)
    }

    @Test func anElementThatIsNoValueIsRefusedWhereAValueBelongs() {
        #expect(throws: DefaultsError.self) { try XMLPropertyList.decode(Array("<plist><key>k</key></plist>".utf8)) }
        #expect(throws: DefaultsError.self) { try XMLPropertyList.decode(Array("<array><bool/></array>".utf8)) }
    }
}
