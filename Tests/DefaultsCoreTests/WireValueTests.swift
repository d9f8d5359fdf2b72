import DefaultsCore
import Foundation
import TestThreads
import Testing

@Suite(.ownThreads) struct WireValueTests {
    func roundTrip(_ value: PlistValue) throws -> PlistValue {
        try WireValue.decode(try JSONParser.parse(WireValue.encode(value)))
    }

    func text(_ value: PlistValue) -> String { String(decoding: WireValue.encode(value), as: UTF8.self) }

    @Test(arguments: [
        PlistValue.string(""), "plain", "quote\" backslash\\ newline\n tab\t nul\u{0} bell\u{7}", "ünïcødé 🚀",
        .integer(0), .integer(1), .integer(-1), .integer(Int64.max), .integer(Int64.min),
        .real(0.0), .real(-0.0), .real(5.0), .real(0.1), .real(-1.5e-300), .real(1.7976931348623157e308),
        .real(Double.leastNonzeroMagnitude), .real(1e20), .real(123456789.0),
        .bool(true), .bool(false),
        .date(Date(timeIntervalSince1970: 1_795_255_200.25)), .date(Date(timeIntervalSince1970: 0)),
        .date(Date(timeIntervalSince1970: -1_000_000_000.5)), .date(Date(timeIntervalSince1970: 1_795_255_200.123456)),
        .data(Data()), .data(Data([0, 1, 2, 255])),
        [], [1, 1.0, true, "1"], [[["deep"]]],
        [:], ["a": 1, "b": ["c": [1.5, false]]],
        ["$date": "not a date, a key"], ["$only": 1], ["$dict": ["x": 1]],
    ])
    func everyTypeRoundTripsExactly(_ value: PlistValue) throws {
        #expect(try roundTrip(value) == value)
    }

    @Test(arguments: [0, 7, 9, 10, 99, 100, -1, -9, -10, 1234567890, Int64.max, Int64.min, Int64.min + 1])
    func integersAreWrittenInDecimalWithTheirLength(_ value: Int64) {
        var writer = JSONWriter()
        writer.integer(value)
        #expect(String(decoding: writer.bytes, as: UTF8.self) == String(value))
        #expect(JSONWriter.decimalLength(of: value) == String(value).utf8.count)
        #expect(WireValue.encodedSize(of: .integer(value)) == String(value).utf8.count)
    }

    @Test func theWriterGrowsPastItsFirstCapacity() throws {
        var writer = JSONWriter(capacity: 1)
        let long = String(repeating: "é\"x\u{1}", count: 100)
        writer.beginObject()
        writer.key(literal: "generation"); writer.integer(.min)
        writer.key("k\n"); writer.string(long)
        writer.key(literal: "list"); writer.beginArray(); writer.real(0.5); writer.bool(false); writer.null(); writer.endArray()
        writer.endObject()
        writer.newline()
        #expect(writer.bytes.last == UInt8(ascii: "\n"))
        let parsed = try JSONParser.parse(Array(writer.bytes.dropLast()))
        #expect(parsed == .object([
            "generation": .integer(.min), "k\n": .string(long), "list": .array([.real(0.5), .bool(false), .null]),
        ]))
    }

    @Test func aReusedWriterStartsAfresh() {
        var writer = JSONWriter()
        writer.beginArray(); writer.integer(1); writer.string("a\"b"); writer.endArray()
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"[1,"a\"b"]"#)
        writer.removeAll()
        writer.string("plain")
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #""plain""#)
    }

    @Test func integerRealAndBoolStayApart() throws {
        #expect(text(.integer(1)) == "1")
        #expect(text(.real(1)) == "1.0")
        #expect(text(.real(5)) == "5.0")
        #expect(text(.bool(true)) == "true")
        #expect(try WireValue.decode(JSONParser.parse("1")) == .integer(1))
        #expect(try WireValue.decode(JSONParser.parse("1.0")) == .real(1))
        #expect(try WireValue.decode(JSONParser.parse("1e0")) == .real(1))
        #expect(try WireValue.decode(JSONParser.parse("1E2")) == .real(100))
        #expect(try WireValue.decode(JSONParser.parse("true")) == .bool(true))
    }

    @Test func realsAlwaysCarryAPointOrExponent() {
        for value in [1.0, -3.0, 1e20, 1e-5, 123456789012345678.0, 0.5, 2.5e300] {
            let written = text(.real(value))
            #expect(written.contains(".") || written.contains("e"), "\(written)")
            #expect(Double(written) == value)
        }
    }

    @Test func datesKeepTheirFraction() throws {
        let date = RFC3339.parse("2026-11-21T10:00:00.250Z")!
        #expect(text(.date(date)) == #"{"$date":"2026-11-21T10:00:00.250Z"}"#)
        #expect(RFC3339.format(RFC3339.parse("2026-11-21T10:00:00Z")!) == "2026-11-21T10:00:00Z")
        #expect(RFC3339.format(RFC3339.parse("2026-11-21T10:00:00.123456Z")!) == "2026-11-21T10:00:00.123456Z")
        #expect(RFC3339.format(RFC3339.parse("2026-11-21T12:30:00+02:30")!) == "2026-11-21T10:00:00Z")
        #expect(RFC3339.format(RFC3339.parse("2024-02-29T23:59:59.5-00:00")!) == "2024-02-29T23:59:59.500Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: -0.25)) == "1969-12-31T23:59:59.750Z")
        #expect(RFC3339.format(Date(timeIntervalSinceReferenceDate: 0)) == "2001-01-01T00:00:00Z")
        for bad in ["", "2026-11-21", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-21T10:00:00",
                    "2026-11-21T25:00:00Z", "2026-11-21T10:00:00.Z", "2026-11-21T10:00:00Zjunk"] {
            #expect(RFC3339.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func bigDataRoundTrips() throws {
        let bytes = Data((0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        #expect(try roundTrip(.data(bytes)) == .data(bytes))
    }

    @Test func dictionaryWithOneDollarKeyIsWrapped() {
        #expect(text(["$date": "x"]) == #"{"$dict":{"$date":"x"}}"#)
        #expect(text(["$a": 1, "b": 2]) == #"{"$a":1,"b":2}"#)
        #expect(text(["plain": 1]) == #"{"plain":1}"#)
    }

    @Test(arguments: [
        ("null", "null is not"), ("[1,null]", "null is not"),
        ("9223372036854775808", "out of range"), ("-9223372036854775809", "out of range"), ("1e400", "out of range"),
        (#"{"$date":"yesterday"}"#, "RFC 3339"), (#"{"$date":5}"#, "must hold a string"),
        (#"{"$data":"%%%"}"#, "base64"), (#"{"$dict":[]}"#, "must hold an object"), (#"{"$other":1}"#, "wrapped"),
    ])
    func invalidValuesAreRefusedWithInvalidValue(json: String, message: String) throws {
        let parsed = try JSONParser.parse(json)
        let error = #expect(throws: DefaultsError.self) { try WireValue.decode(parsed) }
        #expect(error?.code == .invalidValue)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
    }

    @Test func numbersAtTheEdgesOfInt64() throws {
        #expect(try JSONParser.parse("9223372036854775807") == .integer(.max))
        #expect(try JSONParser.parse("-9223372036854775808") == .integer(.min))
        #expect(try JSONParser.parse("9223372036854775808") == .unrepresentableNumber("9223372036854775808"))
        #expect(try JSONParser.parse("-0") == .integer(0))
        #expect(try JSONParser.parse("-0.0") == .real(-0.0))
    }

    @Test func encodedSizeMatchesTheEncoding() {
        for value: PlistValue in ["a\"b\n\u{1}", 12345, -7, true, false, 2.5, ["x": [1, 2]], .data(Data([1, 2, 3]))] {
            #expect(WireValue.encodedSize(of: value) == WireValue.encode(value).count)
        }
    }

    /// A string's size is counted by the writer's own escape rule, so every byte, escaped or
    /// not, counts what the writer writes for it.
    @Test func everyByteOfAStringIsSizedAsItIsWritten() {
        for byte in UInt8(0)..<0x80 {
            let value = PlistValue.string("a" + String(UnicodeScalar(byte)) + "é")
            #expect(WireValue.encodedSize(of: value) == WireValue.encode(value).count, "byte \(byte)")
        }
    }

    /// The JSON tree is what the text encoder writes, read back: one mapping, written once.
    @Test(arguments: [
        PlistValue.string("quote\" and \u{1}"), .integer(-3), .real(5.0), .bool(false),
        .date(Date(timeIntervalSince1970: 1_795_255_200.25)), .data(Data([0, 255])),
        [1, 1.0, true, "1"], ["a": ["b": .data(Data([1]))]], ["$only": 1], ["$date": "a key, not a date"],
    ])
    func theTreeIsTheTextReadBack(_ value: PlistValue) throws {
        let parsed = try JSONParser.parse(WireValue.encode(value))
        #expect(WireValue.json(value) == parsed)
        #expect(try WireValue.decode(WireValue.json(value)) == value)
    }

    @Test func aDictionaryWhoseOnlyKeyLooksLikeATagIsWrapped() {
        #expect(WireValue.json(["$only": 1]) == ["$dict": ["$only": 1]])
        #expect(WireValue.json(["$a": 1, "b": 2]) == ["$a": 1, "b": 2])
        #expect(WireValue.json(.date(Date(timeIntervalSince1970: 0))) == ["$date": "1970-01-01T00:00:00Z"])
    }

    /// A value held in memory becomes a tree however deep it is, even past what the parser takes
    /// from outside (each `$dict` wrapper adds a level).
    @Test func aTreeIsMadeAtAnyDepth() throws {
        var value: PlistValue = 1
        for _ in 0..<JSONParser.maximumDepth { value = ["$deeper": value] }
        var expected: JSON = 1
        for _ in 0..<JSONParser.maximumDepth { expected = ["$dict": ["$deeper": expected]] }
        #expect(WireValue.json(value) == expected)
    }
}
