import DaemonTestSupport
import DefaultsCore
import Foundation
import SharedCorpus
import TestThreads
import Testing

/// The hand-written property-list reader and writer (``XMLPropertyList``, ``BinaryPropertyList``)
/// against Foundation's `PropertyListSerialization`, on every `.plist` of the shared corpus: the
/// same values when read, and what is written reads back the same through Foundation and through
/// the reader itself, in both formats. Foundation is the reference here only; the daemon links
/// FoundationEssentials, which has no reader that keeps integer, real and bool apart.
@Suite(.ownThreads) struct PropertyListCorpusTests {
    static let files: [URL] = {
        let root = SharedCorpus.directory.appendingPathComponent("corpus")
        let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        var files: [URL] = []
        while let url = walker?.nextObject() as? URL {
            if url.pathExtension == "plist" { files.append(url) }
        }
        return files.sorted { $0.path < $1.path }
    }()

    /// Foundation's reading, with each number's type recovered from its `objCType`.
    static func reference(_ object: Any) -> PlistValue? {
        switch object {
        case let string as String: return .string(string)
        case let date as Date: return .date(date)
        case let data as Data: return .data(data)
        case let number as NSNumber:
            switch UInt8(bitPattern: number.objCType.pointee) {
            case UInt8(ascii: "c"), UInt8(ascii: "B"): return .bool(number.boolValue)
            case UInt8(ascii: "d"), UInt8(ascii: "f"): return .real(number.doubleValue)
            default: return .integer(number.int64Value)
            }
        case let array as [Any]:
            let elements = array.compactMap(reference)
            return elements.count == array.count ? .array(elements) : nil
        case let dictionary as [String: Any]:
            let members = dictionary.compactMapValues(reference)
            return members.count == dictionary.count ? .dictionary(members) : nil
        default: return nil
        }
    }

    static func foundation(_ data: Data) -> PlistValue? {
        (try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)).flatMap(reference)
    }

    @Test(.needsSharedCorpus) func theCorpusIsThere() {
        #expect(Self.files.count >= 100, "the corpus's plist files")
    }

    @Test(.needsSharedCorpus, arguments: files)
    func everyCorpusFileReadsAsFoundationReadsItAndWritesBackTheSame(_ file: URL) throws {
        let data = try Data(contentsOf: file)
        guard let expected = Self.foundation(data) else {
            // Foundation refuses it (the corpus keeps a few broken files): so must the reader.
            #expect(throws: DefaultsError.self, "\(file.path)") { try PropertyListFile.decodeValue(data) }
            return
        }
        let read = try PropertyListFile.decodeValue(data)
        #expect(read == expected, "\(file.path)")
        let xml = Data(XMLPropertyList.encode(read))
        let binary = Data(BinaryPropertyList.encode(read))
        // XML keeps dates to the second, as CoreFoundation writes them.
        let wholeSeconds = Self.truncatingDates(read)
        #expect(Self.foundation(xml) == wholeSeconds, "\(file.path) written as XML, read by Foundation")
        #expect(try XMLPropertyList.decode(xml) == wholeSeconds, "\(file.path) written as XML, read back")
        #expect(Self.foundation(binary) == read, "\(file.path) written as binary, read by Foundation")
        #expect(try BinaryPropertyList.decode(binary) == read, "\(file.path) written as binary, read back")
    }

    static func truncatingDates(_ value: PlistValue) -> PlistValue {
        switch value {
        case .date(let date): .date(Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
        case .array(let elements): .array(elements.map(truncatingDates))
        case .dictionary(let members): .dictionary(members.mapValues(truncatingDates))
        default: value
        }
    }

    @Test func foundationReadsWhatIsWrittenOfEveryTypeAndEdge() throws {
        let value: PlistValue = [
            "integer": 1, "real": 1.0, "half": 0.5, "true": true, "false": false, "min": .integer(.min), "max": .integer(.max),
            "negative": -300, "big": 4_294_967_296, "tiny": .real(5e-324), "huge": .real(1.7976931348623157e308),
            "string": "Siân & <Picard> \"Jean-Luc\"", "emoji": "🖖", "empty": "", "data": .data(Data([0, 1, 254, 255])),
            "date": .date(Date(timeIntervalSince1970: 1_795_000_000.25)), "array": [1, 2.5, "three", [], [:]],
            "long": .string(String(repeating: "x", count: 300)), "many": .array((0..<40).map { .integer($0) }),
        ]
        let binary = Data(BinaryPropertyList.encode(value))
        #expect(Self.foundation(binary) == value)
        #expect(try BinaryPropertyList.decode(binary) == value)
        let xml = Data(XMLPropertyList.encode(value))
        #expect(Self.foundation(xml) == Self.truncatingDates(value))
        #expect(try XMLPropertyList.decode(xml) == Self.truncatingDates(value))
        // Foundation's own binary output reads the same.
        let foundationBinary = try PropertyListSerialization.data(
            fromPropertyList: ["r": NSNumber(value: 1.0), "i": NSNumber(value: 1), "b": true, "u": "Siân"], format: .binary, options: 0)
        #expect(try BinaryPropertyList.decode(foundationBinary) == ["r": .real(1), "i": 1, "b": true, "u": "Siân"])
    }

    @Test func oldStyleTextIsReadInTheEncodingsCoreFoundationDetects() throws {
        let text = "{ officer = \"Siân\"; warpFactor = 9; }"
        let utf16LE = Data([0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        #expect(try PropertyListFile.decode(utf16LE) == ["officer": "Siân", "warpFactor": "9"])
        #expect(try PropertyListFile.decode(Data([0xEF, 0xBB, 0xBF] + Array(text.utf8))) == ["officer": "Siân", "warpFactor": "9"])
        #expect(throws: DefaultsError.self) { try PropertyListFile.decode(Data([0x7B, 0xC3, 0x28, 0x7D])) }
    }

    @Test func hostileBinaryFilesAreErrorsNotCrashes() throws {
        var good = BinaryPropertyList.encode(["a": [1, 2, 3], "b": "text"])
        // Every truncation, and every single byte flipped, is either read or refused.
        for length in 0..<good.count { _ = try? BinaryPropertyList.decode(good.prefix(length)) }
        for index in good.indices {
            for flip: UInt8 in [0x01, 0x10, 0x80, 0xFF] {
                var bad = good
                bad[index] ^= flip
                _ = try? BinaryPropertyList.decode(bad)
            }
        }
        // An array that holds itself.
        good = Array("bplist00".utf8) + [0xA1, 0x00] + [8] + [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1]
            + [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0, 10]
        #expect(throws: DefaultsError.self) { try BinaryPropertyList.decode(good) }
    }

    @Test func xmlReadsWhatCoreFoundationAcceptsAndRefusesTheRest() throws {
        let tolerant = """
            <!-- a licence --><?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict><key>a&amp;b</key><string><![CDATA[<x>]]>&#233;&#x1F596;</string>
            <key>n</key><integer> 0x10 </integer><key>r</key><real>1e3</real><key>e</key><string/></dict></plist>
            """
        #expect(try XMLPropertyList.decode(Array(tolerant.utf8)) == ["a&b": "<x>é🖖", "n": 16, "r": .real(1000), "e": ""])
        for bad in [
            "<plist><dict><key>a</key></dict></plist>", "<plist><integer>1.5</integer></plist>", "<plist><real>nan</real></plist>",
            "<plist><integer>9223372036854775808</integer></plist>", "<plist><dict><string>a</string></dict></plist>",
            "<plist><array><string>a</array></plist>", "<plist><date>yesterday</date></plist>", "<plist><foo/></plist>",
            "<plist><string>a</string></plist> trailing", String(repeating: "<array>", count: 600),
        ] {
            #expect(throws: DefaultsError.self, "\(bad)") { try XMLPropertyList.decode(Array(bad.utf8)) }
        }
    }
}
