import DefaultsCore
import Foundation
import TestThreads
import Testing
import ValueSyntaxCases

/// ValueSyntax against the shared table, and `boolValue` against Foundation's own
/// `NSString.boolValue` on every string of it.
@Suite(.ownThreads) struct ValueSyntaxTests {
    @Test func booleanWords() {
        for (word, typeFlag, setting) in ValueSyntaxCases.booleanWords {
            #expect(ValueSyntax.booleanWord(word, in: .typeFlag) == typeFlag, "\(word.debugDescription)")
            #expect(ValueSyntax.booleanWord(word, in: .setting) == setting, "\(word.debugDescription)")
        }
        #expect(ValueSyntax.booleanWordList(in: .typeFlag) == "yes/no, true/false")
        #expect(ValueSyntax.booleanWordList(in: .setting) == "yes/no, true/false, on/off, 1/0")
    }

    @Test func hexData() {
        for (text, bytes) in ValueSyntaxCases.hexData {
            #expect((try? ValueSyntax.data(fromHex: text)).map(Array.init) == bytes, "\(text.debugDescription)")
        }
        #expect(ValueSyntax.hex(Data("Hello".utf8)) == "48656c6c6f")
        #expect(throws: ValueSyntaxError(text: "0x48", expected: "hexadecimal digits without 0x")) { try ValueSyntax.data(fromHex: "0x48") }
        #expect(throws: ValueSyntaxError(text: "abc", expected: "an even number of hexadecimal digits")) { try ValueSyntax.data(fromHex: "abc") }
    }

    /// Old-style `<…>` data is read by the same digits rule as typed data: the same rows give
    /// the same bytes, and the same rows are refused (an odd count among them).
    @Test func oldStyleDataReadsHexAsTypedDataDoes() {
        for (text, bytes) in ValueSyntaxCases.hexData {
            var inner = Substring(text)
            if inner.hasPrefix("<") && inner.hasSuffix(">") && inner.count >= 2 { inner = inner.dropFirst().dropLast() }
            let parsed = try? PropertyListFile.decodeValue(Data("<\(inner)>".utf8))
            #expect(parsed == bytes.map { PlistValue.data(Data($0)) }, "\(text.debugDescription)")
        }
        #expect(throws: DefaultsError.self) { try PropertyListFile.decodeValue(Data("{ blob = <abc>; }".utf8)) }
    }

    @Test func boolValueIsFoundations() {
        for text in ValueSyntaxCases.boolValueStrings {
            #expect(ValueSyntax.boolValue(of: text) == NSString(string: text).boolValue, "\(text.debugDescription)")
        }
    }

    @Test func boolValueSkipsExactlyFoundationsWhiteSpace() {
        var differing: [String] = []
        for value in 0..<0x3100 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = String(Character(scalar)) + "y"
            if ValueSyntax.boolValue(of: text) != NSString(string: text).boolValue { differing.append(String(value, radix: 16)) }
        }
        #expect(differing.isEmpty, "\(differing)")
    }
}
