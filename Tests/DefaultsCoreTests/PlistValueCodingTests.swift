import DefaultsCore
import Foundation
import TestThreads
import Testing

/// `PlistValueEncoder` and `PlistValueDecoder`: any Codable value as its natural property-list
/// structure, and back.
@Suite(.ownThreads) struct PlistValueCodingTests {
    struct Officer: Codable, Equatable {
        var name: String
        var rank: Int
    }

    enum Alert: String, Codable { case green, yellow, red }

    struct Ship: Codable, Equatable {
        var name: String
        var warpFactor: Double
        var crew: [Officer]
        var registry: [String: Int]
        var commissioned: Date
        var badge: Data
        var alert: Alert
        var motto: String?
        var cloaked: Bool
        var speed: Float
        var home: URL
    }

    static let ship = Ship(
        name: "Enterprise", warpFactor: 9.5, crew: [Officer(name: "Picard", rank: 4), Officer(name: "Riker", rank: 3)],
        registry: ["NCC": 1701], commissioned: Date(timeIntervalSince1970: 1_700_000_000), badge: Data([1, 2, 3]),
        alert: .yellow, motto: nil, cloaked: false, speed: 12.34, home: URL(string: "https://example.org/fleet")!)

    @Test func aStructBecomesADictionaryOfItsFields() throws {
        let value = try PlistValueEncoder().encode(Self.ship)
        #expect(value == .dictionary([
            "name": "Enterprise", "warpFactor": 9.5,
            "crew": [["name": "Picard", "rank": 4], ["name": "Riker", "rank": 3]],
            "registry": ["NCC": 1701], "commissioned": .date(Date(timeIntervalSince1970: 1_700_000_000)),
            "badge": .data(Data([1, 2, 3])), "alert": "yellow", "cloaked": false, "speed": 12.34,
            "home": "https://example.org/fleet",
        ]), "a nil optional is left out; a Float is its decimal value")
        #expect(try PlistValueDecoder().decode(Ship.self, from: try #require(value)) == Self.ship)
    }

    @Test func valuesOfEveryDepthRoundTrip() throws {
        let nested: [[String: [Officer?]]] = [["bridge": [Officer(name: "Data", rank: 2)]], [:]]
        let encoded = try #require(try PlistValueEncoder().encode(nested.map { $0.mapValues { $0.compactMap { $0 } } }))
        #expect(try PlistValueDecoder().decode([[String: [Officer]]].self, from: encoded).count == 2)
        #expect(try PlistValueEncoder().encode(Optional<Int>.none) == nil)
        #expect(try PlistValueEncoder().encode(7) == .integer(7))
        #expect(try PlistValueDecoder().decode(Int.self, from: .real(7)) == 7, "a real with no fraction is an integer")
        #expect(try PlistValueDecoder().decode(Double.self, from: .integer(5)) == 5.0)
        #expect(try PlistValueDecoder().decode(Officer?.self, from: ["name": "Worf", "rank": 1]) == Officer(name: "Worf", rank: 1))
    }

    @Test func whatHasNoPropertyListFormIsAnError() {
        #expect(throws: EncodingError.self) { try PlistValueEncoder().encode(Double.nan) }
        #expect(throws: EncodingError.self) { try PlistValueEncoder().encode(UInt64.max) }
        #expect(throws: EncodingError.self) { try PlistValueEncoder().encode([1, nil, 3] as [Int?]) }
    }

    @Test func aStoredValueOfAnotherShapeIsADecodingErrorNamingWhere() throws {
        let old: PlistValue = ["name": "Enterprise", "crew": ["Picard", "Riker"]]
        do {
            _ = try PlistValueDecoder().decode(Ship.self, from: old)
            Issue.record("decoded an old shape")
        } catch let DecodingError.typeMismatch(_, context) {
            #expect(context.codingPath.map(\.stringValue) == ["crew", "Index 0"])
        } catch let DecodingError.keyNotFound(key, _) {
            #expect(["warpFactor", "registry", "commissioned", "badge", "alert", "cloaked", "speed", "home"].contains(key.stringValue))
        }
        #expect(throws: DecodingError.self) { try PlistValueDecoder().decode(Int.self, from: .real(7.5)) }
        #expect(throws: DecodingError.self) { try PlistValueDecoder().decode(Bool.self, from: .integer(1)) }
    }

    /// A file URL is stored as its path, as a `Key<URL>` and `UserDefaults` store one; a real
    /// too large for a `Float` is a decoding error, not an infinity.
    @Test func fileURLsAreTheirPathsAndFloatsAreChecked() throws {
        let file = URL(fileURLWithPath: "/tmp/captain.log")
        #expect(try PlistValueEncoder().encode(file) == .string("/tmp/captain.log"))
        #expect(try PlistValueDecoder().decode(URL.self, from: "/tmp/captain.log") == file)
        #expect(throws: DecodingError.self) { try PlistValueDecoder().decode(Float.self, from: .real(1e300)) }
    }
}
