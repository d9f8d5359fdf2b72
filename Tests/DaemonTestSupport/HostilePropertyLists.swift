/// Property lists made to hurt a reader, for the unit tests of the readers and the tests of the
/// real daemon: the same bytes reach both.
public enum HostilePropertyLists {
    /// Old-style text of `count` unclosed `(`.
    public static func openArrays(_ count: Int) -> String { String(repeating: "(", count: count) }

    /// Old-style text of `count` dictionaries, each the value of `a` in the one before: `{a={a=…`.
    public static func openDictionaries(_ count: Int) -> String { String(repeating: "{a=", count: count) }

    /// A binary property list whose root array holds `count` references to one data object of
    /// `count` bytes: about 2 × `count` bytes that stand for `count`² bytes once written out.
    /// For a power of two from 2^16 to 2^22 every byte is below 0x80, so the file can travel in a
    /// JSON string (`import`).
    public static func sharedData(count: Int) -> [UInt8] {
        let array = header(0xA0, count) + [UInt8](repeating: 1, count: count)
        let data = header(0x40, count) + [UInt8](repeating: 0x2A, count: count)
        return binary([array, data], referenceSize: 1)
    }

    /// A binary property list whose root array holds `references` references to one data object
    /// of `bytes` bytes.
    public static func sharedData(references: Int, bytes: Int) -> [UInt8] {
        let array = header(0xA0, references) + [UInt8](repeating: 1, count: references)
        let data = header(0x40, bytes) + [UInt8](repeating: 0x2A, count: bytes)
        return binary([array, data], referenceSize: 1)
    }

    /// A binary property list of `objects` (each its bytes, references as `referenceSize`-byte
    /// numbers), with 8-byte offsets (`offsets` lists each object number's object; by default
    /// one object each), whose top object is the first.
    public static func binary(_ objects: [[UInt8]], referenceSize: Int, offsets: [Int]? = nil) -> [UInt8] {
        var out = Array("bplist00".utf8)
        var starts: [Int] = []
        for object in objects {
            starts.append(out.count)
            out += object
        }
        let table = out.count
        for start in offsets?.map({ starts[$0] }) ?? starts { out += bigEndian(start, 8) }
        let count = offsets?.count ?? objects.count
        out += [0, 0, 0, 0, 0, 0, 8, UInt8(referenceSize)] + bigEndian(count, 8) + bigEndian(0, 8) + bigEndian(table, 8)
        return out
    }

    public static func bigEndian(_ value: Int, _ size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// A marker with a count: in its low nibble, or as a 4-byte integer after it.
    public static func header(_ marker: UInt8, _ count: Int) -> [UInt8] {
        count < 15 ? [marker | UInt8(count)] : [marker | 0x0F, 0x12] + bigEndian(count, 4)
    }
}
