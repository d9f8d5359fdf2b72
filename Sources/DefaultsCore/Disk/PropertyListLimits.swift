/// The limits every property-list reader (XML, binary, old-style text) holds its input to, in one
/// place, so that a hostile file, `import` text or Settings bundle is an `invalid_plist` error,
/// never a crash, a hang or memory out of proportion to its size. docs/RELIABILITY.md lists them
/// with the daemon's other limits.
public enum PropertyListLimits {
    /// Containers nested deeper are refused: each level is a frame of a recursive reader, and
    /// real preferences nest a few levels.
    public static let maximumDepth = 512

    /// The largest property-list file read, a domain's or a Settings bundle's page or `.strings`
    /// table: four times the default domain limit, for XML's markup. A larger file (or one that is
    /// not a regular file) is refused before it is read.
    public static let maximumFileBytes = 16 << 20

    /// The most that `inputBytes` of a binary property list may decode to, in bytes of content
    /// (``expandedSize(of:)``). A binary file may reference one object many times, so a small
    /// file could otherwise stand for gigabytes once written out as XML or JSON. Writers share
    /// equal strings, so a real file expands by a small factor; 32 leaves room for that. Never
    /// more than ``maximumFileBytes`` in all: what a file stands for must fit in a file the
    /// readers here take, once written out.
    public static func maximumExpandedBytes(inputBytes: Int) -> Int {
        min((1 << 20) + 32 * inputBytes, maximumFileBytes)
    }

    /// The bytes a value stands for once written out, with no sharing: the bytes of its strings
    /// and data, and a few for every other object and container. The binary reader charges shared
    /// objects to its budget in this measure.
    public static func expandedSize(of value: PlistValue) -> Int {
        switch value {
        case .string(let string): objectBytes + string.utf8.count
        case .data(let data): objectBytes + data.count
        case .array(let elements): elements.reduce(objectBytes) { $0 + expandedSize(of: $1) }
        case .dictionary(let members):
            members.reduce(objectBytes) { $0 + objectBytes + $1.key.utf8.count + expandedSize(of: $1.value) }
        case .integer, .real, .bool, .date: objectBytes
        }
    }

    /// What every object counts for beside its content.
    static let objectBytes = 8
}
