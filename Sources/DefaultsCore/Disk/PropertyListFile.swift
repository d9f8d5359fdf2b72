import FoundationEssentials

/// The on-disk format of a domain: a property list whose root is a dictionary, XML or binary,
/// read and written by ``XMLPropertyList`` and ``BinaryPropertyList`` (old-style text is read
/// too, by ``OldStyleParser``). Integer, real and bool stay apart both ways.
///
/// ```swift
/// let bytes = try PropertyListFile.encode(["warp": true], format: .xml)
/// let values = try PropertyListFile.decode(bytes) // ["warp": .bool(true)]
/// ```
public enum PropertyListFile {
    public enum Format: String, Sendable, CaseIterable {
        case xml, binary
    }

    /// Reads a property list (XML, binary or old-style text) whose root is a dictionary.
    public static func decode(_ data: Data) throws(DefaultsError) -> [String: PlistValue] {
        guard case .dictionary(let values) = try decodeValue(data) else {
            throw DefaultsError(.invalidPlist, "the property list's root is not a dictionary")
        }
        return values
    }

    /// Reads a property list (XML, binary or old-style text) of any root type.
    public static func decodeValue(_ data: Data) throws(DefaultsError) -> PlistValue {
        let bytes = Array(data)
        if BinaryPropertyList.isBinary(bytes) { return try BinaryPropertyList.decode(bytes) }
        if looksLikeXML(bytes) { return try XMLPropertyList.decode(bytes) }
        guard let (text, _) = TextEncoding.decode(bytes) else {
            throw DefaultsError(.invalidPlist, "not a property list: the text is not valid \(TextEncoding.detect(bytes).encoding.rawValue)")
        }
        switch OldStyleParser.parse(text) {
        case .success(let parsed): return parsed.value
        case .failure(let failure):
            throw DefaultsError(.invalidPlist, "not a property list: \(failure.message) (line \(failure.line))")
        }
    }

    public static func encode(_ values: [String: PlistValue], format: Format) throws(DefaultsError) -> Data {
        for (_, value) in values { try checkFinite(value) }
        switch format {
        case .xml: return Data(XMLPropertyList.encode(.dictionary(values)))
        case .binary: return Data(BinaryPropertyList.encode(.dictionary(values)))
        }
    }

    /// A real must be finite to be written: neither format has a NaN a reader agrees on.
    private static func checkFinite(_ value: PlistValue) throws(DefaultsError) {
        switch value {
        case .real(let real) where !real.isFinite:
            throw DefaultsError(.invalidValue, "a real is not finite")
        case .array(let elements): for element in elements { try checkFinite(element) }
        case .dictionary(let members): for (_, member) in members { try checkFinite(member) }
        default: break
        }
    }

    /// XML when the first thing after whitespace is a declaration, a comment, a DOCTYPE or a
    /// plist element; old-style text otherwise (its data, `<0fbd>`, starts with `<` too).
    package static func looksLikeXML(_ bytes: [UInt8]) -> Bool {
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D {
            index += 1
        }
        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "<") else { return false }
        if bytes[index + 1] == UInt8(ascii: "?") || bytes[index + 1] == UInt8(ascii: "!") { return true }
        let name = bytes[(index + 1)...].prefix { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
        return XMLPropertyList.Element(rawValue: String(decoding: name, as: UTF8.self)) != nil
            && index + 1 + name.count < bytes.count && !isHexDigit(bytes[index + 1 + name.count])
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
