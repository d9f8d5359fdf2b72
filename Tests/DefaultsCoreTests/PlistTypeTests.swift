import DefaultsCore
import Foundation
import TestThreads
import Testing

/// The one set of type names (`PlistType`, docs/VALUES.md): each value's type, its name, and the
/// name in a sentence, as every message gives them.
@Suite(.ownThreads) struct PlistTypeTests {
    @Test func everyValueHasItsTypeAndItsName() {
        let values: [PlistValue] = ["s", 1, 1.5, true, .date(Date(timeIntervalSince1970: 0)), .data(Data()), [], [:]]
        #expect(values.map(\.plistType) == PlistType.allCases)
        #expect(values.map(\.typeName) == ["string", "integer", "real", "boolean", "date", "data", "array", "dictionary"])
        #expect(
            PlistType.allCases.map(\.nameWithArticle) == [
                "a string", "an integer", "a real", "a boolean", "a date", "data", "an array", "a dictionary",
            ])
        #expect(PlistType.allCases.filter(\.isContainer) == [.array, .dictionary])
        for type in PlistType.allCases { #expect(PlistType(rawValue: type.name) == type) }
    }
}
