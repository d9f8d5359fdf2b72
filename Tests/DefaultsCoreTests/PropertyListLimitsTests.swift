import DaemonTestSupport
@testable import DefaultsCore
import Foundation
import TestThreads
import Testing

/// Every property-list reader holds hostile input to ``PropertyListLimits``: nesting past the
/// maximum depth and binary files whose shared objects stand for more than their budget are
/// `invalid_plist` errors, never a crash, a hang or gigabytes of memory.
@Suite(.ownThreads) struct PropertyListLimitsTests {
    static func isInvalidPlist(_ body: () throws -> Void) -> Bool {
        do { try body() } catch let error as DefaultsError { return error.code == .invalidPlist } catch { return false }
        return false
    }

    @Test("a million '(' in old-style text is an error, not a stack overflow")
    func deepOldStyleArrays() {
        let text = HostilePropertyLists.openArrays(1_000_000)
        #expect(Self.isInvalidPlist { _ = try PropertyListFile.decodeValue(Data(text.utf8)) })
        guard case .failure(let failure) = OldStyleParser.parse(text) else { Issue.record("parsed"); return }
        #expect(failure.message == "nested more than 512 deep")
    }

    @Test("'{a=' nested 300,000 deep is an error")
    func deepOldStyleDictionaries() {
        let text = HostilePropertyLists.openDictionaries(300_000)
        #expect(Self.isInvalidPlist { _ = try PropertyListFile.decodeValue(Data(text.utf8)) })
    }

    /// `depth` containers, each holding the next, in old-style text.
    static func oldStyle(depth: Int) -> String {
        String(repeating: "(", count: depth) + String(repeating: ")", count: depth)
    }

    static func xml(depth: Int) -> String {
        "<plist version=\"1.0\">" + String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth) + "</plist>"
    }

    static func nested(depth: Int) -> PlistValue {
        (1..<depth).reduce(PlistValue.array([])) { inner, _ in .array([inner]) }
    }

    @Test("the maximum depth is the same in every format: 512 is read, 513 refused")
    func theSameDepthEverywhere() throws {
        let limit = PropertyListLimits.maximumDepth
        #expect(try PropertyListFile.decodeValue(Data(Self.oldStyle(depth: limit).utf8)) == Self.nested(depth: limit))
        #expect(Self.isInvalidPlist { _ = try PropertyListFile.decodeValue(Data(Self.oldStyle(depth: limit + 1).utf8)) })
        #expect(try XMLPropertyList.decode(Array(Self.xml(depth: limit).utf8)) == Self.nested(depth: limit))
        #expect(Self.isInvalidPlist { _ = try XMLPropertyList.decode(Array(Self.xml(depth: limit + 1).utf8)) })
        #expect(try BinaryPropertyList.decode(BinaryPropertyList.encode(Self.nested(depth: limit))) == Self.nested(depth: limit))
        #expect(Self.isInvalidPlist { _ = try BinaryPropertyList.decode(BinaryPropertyList.encode(Self.nested(depth: limit + 1))) })
    }

    @Test("2^18 references to one 2^18-byte data object (0.5 MiB) are refused at once, not expanded to 64 GiB")
    func sharedObjectsAreChargedToTheBudget() {
        let bytes = HostilePropertyLists.sharedData(count: 1 << 18)
        #expect(bytes.count < 1 << 20)
        let started = ContinuousClock.now
        #expect(Self.isInvalidPlist { _ = try BinaryPropertyList.decode(bytes) })
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test("one 4 MiB object referenced 32 times (128 MiB written out) is refused: a file stands for no more than a file may hold")
    func expansionIsCappedInAll() throws {
        let bytes = HostilePropertyLists.sharedData(references: 32, bytes: 4 << 20)
        #expect(Self.isInvalidPlist { _ = try BinaryPropertyList.decode(bytes) })
        let fits = try BinaryPropertyList.decode(HostilePropertyLists.sharedData(references: 32, bytes: 256 << 10))
        #expect(PropertyListLimits.expandedSize(of: fits) > 8 << 20)
        #expect(PropertyListLimits.maximumExpandedBytes(inputBytes: 1 << 30) == PropertyListLimits.maximumFileBytes)
    }

    @Test("sharing within the budget is read, each object decoded once")
    func sharingWithinTheBudgetIsRead() throws {
        let bytes = HostilePropertyLists.sharedData(count: 1 << 10)
        let value = try BinaryPropertyList.decode(bytes)
        let data = PlistValue.data(Data(repeating: 0x2A, count: 1 << 10))
        #expect(value == .array(Array(repeating: data, count: 1 << 10)))
        #expect(PropertyListLimits.expandedSize(of: value) <= PropertyListLimits.maximumExpandedBytes(inputBytes: bytes.count))
    }

    @Test("many object numbers at one offset are one object")
    func objectNumbersSharingAnOffset() throws {
        // Object 0 is an array of objects 1...4; all four are the same string at one offset.
        let array = HostilePropertyLists.header(0xA0, 4) + [1, 2, 3, 4]
        let string = HostilePropertyLists.header(0x50, 3) + Array("tea".utf8)
        let bytes = HostilePropertyLists.binary([array, string], referenceSize: 1, offsets: [0, 1, 1, 1, 1])
        #expect(try BinaryPropertyList.decode(bytes) == .array(["tea", "tea", "tea", "tea"]))
    }

    @Test("a dictionary whose values all reference one large container is charged for each")
    func sharedContainers() {
        // Object 0: a dictionary of 4,000 keys (objects 2...4001), every value object 1;
        // object 1: an array of 4,000 references to object 2 (a 1-character string).
        let keys = 4_000
        var dictionary = HostilePropertyLists.header(0xD0, keys)
        for key in 0..<keys { dictionary += HostilePropertyLists.bigEndian(2 + key, 4) }
        for _ in 0..<keys { dictionary += HostilePropertyLists.bigEndian(1, 4) }
        let array = HostilePropertyLists.header(0xA0, keys) + (0..<keys).flatMap { _ in HostilePropertyLists.bigEndian(2, 4) }
        let strings = (0..<keys).map { HostilePropertyLists.header(0x50, String($0).utf8.count) + Array(String($0).utf8) }
        let bytes = HostilePropertyLists.binary([dictionary, array] + strings, referenceSize: 4)
        #expect(Self.isInvalidPlist { _ = try BinaryPropertyList.decode(bytes) })
    }
}
