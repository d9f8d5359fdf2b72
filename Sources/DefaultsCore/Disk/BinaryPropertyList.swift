import FoundationEssentials

/// Apple's binary property-list format (`bplist00`), read and written here for the same reason
/// as ``XMLPropertyList``: FoundationEssentials has no reader that keeps integer, real and bool apart.
///
/// The reader checks every offset, size and reference against the file before it uses it, and
/// refuses a reference back to an object it is inside of, so a hostile file is an error, never
/// a crash or an endless loop. Objects may be shared, as CoreFoundation writes equal strings
/// once: each object is decoded once, by its offset, and every later reference reuses it, so the
/// work is proportional to the file. What the objects stand for once written out with no sharing
/// is charged to a budget proportional to the file (``PropertyListLimits``), so a small file
/// that references one large object many times is refused instead of expanding without bound.
///
/// ```swift
/// let bytes = BinaryPropertyList.encode(.dictionary(["warp": .bool(true)]))
/// try BinaryPropertyList.decode(bytes)   // .dictionary(["warp": .bool(true)])
/// ```
public enum BinaryPropertyList {
    static let magic: [UInt8] = Array("bplist00".utf8)
    /// Seconds from 1970 to 2001, the epoch of binary dates.
    static let referenceDateOffset = 978_307_200.0

    /// Whether `bytes` begins like a binary property list.
    public static func isBinary(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.starts(with: Array("bplist".utf8))
    }

    // MARK: - Reading

    public static func decode(_ bytes: some Collection<UInt8>) throws(DefaultsError) -> PlistValue {
        var reader = try Reader(Array(bytes))
        return try reader.object(reader.topObject).value
    }

    /// An object as decoded once, with the bytes it stands for when written out with no sharing.
    private struct Decoded {
        var value: PlistValue
        var expandedSize: Int
    }

    /// Owned by the single `decode` call that creates it.
    private struct Reader {
        let bytes: [UInt8]
        let offsetSize: Int
        let referenceSize: Int
        let objectCount: Int
        let topObject: Int
        let offsetTable: Int
        /// The most the document may stand for (``PropertyListLimits/maximumExpandedBytes(inputBytes:)``).
        let budget: Int
        /// Every object decoded so far, by its offset in the file.
        private var decoded: [Int: Decoded] = [:]
        /// The offsets of the containers being decoded, from the top down.
        private var path: Set<Int> = []

        static func failure(_ message: String) -> DefaultsError {
            DefaultsError(.invalidPlist, "not a property list: \(message) (binary)")
        }

        init(_ bytes: [UInt8]) throws(DefaultsError) {
            self.bytes = bytes
            guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist0".utf8)) else { throw Reader.failure("too short") }
            let trailer = bytes.count - 32
            offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            let count = Reader.unsigned(bytes, trailer + 8, 8)
            let top = Reader.unsigned(bytes, trailer + 16, 8)
            let table = Reader.unsigned(bytes, trailer + 24, 8)
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else { throw Reader.failure("bad trailer sizes") }
            guard count > 0, count <= UInt64(bytes.count), top < count, table >= 8, table <= UInt64(trailer),
                count * UInt64(offsetSize) <= UInt64(trailer) - table
            else { throw Reader.failure("a trailer that does not fit the file") }
            objectCount = Int(count)
            topObject = Int(top)
            offsetTable = Int(table)
            budget = PropertyListLimits.maximumExpandedBytes(inputBytes: bytes.count)
        }

        static func unsigned(_ bytes: [UInt8], _ start: Int, _ size: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in start..<(start + size) { value = value << 8 | UInt64(bytes[index]) }
            return value
        }

        /// `size` bytes at `start`, checked to lie before the offset table.
        func read(_ start: Int, _ size: Int) throws(DefaultsError) -> UInt64 {
            guard start >= 8, size >= 0, start <= offsetTable, size <= offsetTable - start else { throw Reader.failure("an object past its end") }
            return Reader.unsigned(bytes, start, size)
        }

        func offset(of object: Int) throws(DefaultsError) -> Int {
            guard object >= 0, object < objectCount else { throw Reader.failure("a reference to object \(object) of \(objectCount)") }
            let offset = Reader.unsigned(bytes, offsetTable + object * offsetSize, offsetSize)
            guard offset >= 8, offset < UInt64(offsetTable) else { throw Reader.failure("an object offset outside the file") }
            return Int(offset)
        }

        /// The count of a data, string, array or dictionary marker at `start`, and where its content begins.
        func count(at start: Int, marker: UInt8) throws(DefaultsError) -> (count: Int, content: Int) {
            let low = Int(marker & 0x0F)
            guard low == 0x0F else { return (low, start + 1) }
            let intMarker = try read(start + 1, 1)
            guard intMarker & 0xF0 == 0x10, intMarker & 0x0F <= 3 else { throw Reader.failure("a bad length") }
            let size = 1 << Int(intMarker & 0x0F)
            let count = try read(start + 2, size)
            guard count <= UInt64(offsetTable) else { throw Reader.failure("a length past the end") }
            return (Int(count), start + 2 + size)
        }

        /// The object numbered `index`: decoded at its first reference, reused at the others.
        mutating func object(_ index: Int) throws(DefaultsError) -> Decoded {
            let start = try offset(of: index)
            if let known = decoded[start] { return known }
            let object = try decode(at: start)
            decoded[start] = object
            return object
        }

        /// A scalar's expanded size: its content and ``PropertyListLimits/objectBytes``.
        private static func scalar(_ value: PlistValue, content: Int = 0) -> Decoded {
            Decoded(value: value, expandedSize: PropertyListLimits.objectBytes + content)
        }

        private mutating func decode(at start: Int) throws(DefaultsError) -> Decoded {
            let marker = UInt8(try read(start, 1))
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x08: return Reader.scalar(.bool(false))
                case 0x09: return Reader.scalar(.bool(true))
                default: throw Reader.failure("a null or fill object, which a property list cannot hold")
                }
            case 0x1:
                let size = 1 << Int(marker & 0x0F)
                switch size {
                case 1, 2, 4: return Reader.scalar(.integer(Int64(try read(start + 1, size))))
                case 8: return Reader.scalar(.integer(Int64(bitPattern: try read(start + 1, 8))))
                case 16:
                    // A 128-bit integer: what CoreFoundation writes for values above Int64.max.
                    let high = try read(start + 1, 8), low = try read(start + 9, 8)
                    if high == 0, low <= UInt64(Int64.max) { return Reader.scalar(.integer(Int64(low))) }
                    if high == UInt64.max, low > UInt64(Int64.max) { return Reader.scalar(.integer(Int64(bitPattern: low))) }
                    throw DefaultsError(.invalidPlist, "the integer is larger than a 64-bit signed integer")
                default: throw Reader.failure("an integer of \(size) bytes")
                }
            case 0x2:
                let value: Double
                switch marker & 0x0F {
                case 2: value = Double(Float(bitPattern: UInt32(try read(start + 1, 4))))
                case 3: value = Double(bitPattern: try read(start + 1, 8))
                default: throw Reader.failure("a real of an unknown size")
                }
                guard value.isFinite else { throw DefaultsError(.invalidPlist, "a real is not finite") }
                return Reader.scalar(.real(value))
            case 0x3:
                guard marker == 0x33 else { throw Reader.failure("a bad date") }
                let seconds = Double(bitPattern: try read(start + 1, 8))
                guard seconds.isFinite else { throw Reader.failure("a date that is not finite") }
                return Reader.scalar(.date(Date(timeIntervalSince1970: seconds + BinaryPropertyList.referenceDateOffset)))
            case 0x4:
                let (count, content) = try self.count(at: start, marker: marker)
                _ = try read(content, count)
                return Reader.scalar(.data(Data(bytes[content..<(content + count)])), content: count)
            case 0x5:
                let (count, content) = try self.count(at: start, marker: marker)
                _ = try read(content, count)
                guard let text = String(validating: bytes[content..<(content + count)], as: UTF8.self),
                    text.utf8.allSatisfy({ $0 < 0x80 })
                else { throw Reader.failure("an ASCII string that is not ASCII") }
                return Reader.scalar(.string(text), content: count)
            case 0x6:
                let (count, content) = try self.count(at: start, marker: marker)
                guard count <= Int.max / 2 else { throw Reader.failure("a string too long") }
                _ = try read(content, count * 2)
                var units: [UInt16] = []
                units.reserveCapacity(count)
                for index in 0..<count {
                    units.append(UInt16(bytes[content + 2 * index]) << 8 | UInt16(bytes[content + 2 * index + 1]))
                }
                let text = String(decoding: units, as: UTF16.self)
                return Reader.scalar(.string(text), content: text.utf8.count)
            case 0xA, 0xD:
                return try container(at: start, marker: marker)
            default:
                throw Reader.failure("an object of type 0x\(String(marker, radix: 16)), which a property list cannot hold")
            }
        }

        /// An array (`0xA`) or dictionary (`0xD`), its expanded size the sum of its members', which
        /// must stay within the budget.
        private mutating func container(at start: Int, marker: UInt8) throws(DefaultsError) -> Decoded {
            let (count, content) = try self.count(at: start, marker: marker)
            let isArray = marker >> 4 == 0xA
            let references = isArray ? count : 2 * count
            guard references <= Int.max / referenceSize else { throw Reader.failure("a container too large") }
            _ = try read(content, references * referenceSize)
            guard path.insert(start).inserted else { throw Reader.failure("a container that holds itself") }
            defer { path.remove(start) }
            guard path.count <= PropertyListLimits.maximumDepth else { throw Reader.failure("nesting too deep") }
            let bytes = self.bytes, referenceSize = self.referenceSize
            func reference(_ position: Int) -> Int {
                Int(truncatingIfNeeded: Reader.unsigned(bytes, content + position * referenceSize, referenceSize))
            }
            var expandedSize = PropertyListLimits.objectBytes
            func charge(_ size: Int) throws(DefaultsError) {
                expandedSize += size
                guard expandedSize <= budget else {
                    throw DefaultsError(
                        .invalidPlist,
                        "not a property list: its shared objects stand for more than \(budget) bytes (binary)")
                }
            }
            if isArray {
                var elements: [PlistValue] = []
                elements.reserveCapacity(count)
                for position in 0..<count {
                    let element = try object(reference(position))
                    try charge(element.expandedSize)
                    elements.append(element.value)
                }
                return Decoded(value: .array(elements), expandedSize: expandedSize)
            }
            var members: [String: PlistValue] = [:]
            members.reserveCapacity(count)
            for position in 0..<count {
                guard case .string(let key) = try object(reference(position)).value else {
                    throw Reader.failure("a dictionary key that is not a string")
                }
                let member = try object(reference(count + position))
                try charge(PropertyListLimits.objectBytes + key.utf8.count + member.expandedSize)
                members[key] = member.value
            }
            return Decoded(value: .dictionary(members), expandedSize: expandedSize)
        }
    }

    // MARK: - Writing

    /// Writes `value` in the `bplist00` format, each object once (equal strings are shared).
    public static func encode(_ value: PlistValue) -> [UInt8] {
        var writer = Writer()
        let top = writer.add(value)
        return writer.finish(top: top)
    }

    private struct Writer {
        /// The objects, each as its bytes with references still as object numbers.
        var objects: [Object] = []
        var strings: [String: Int] = [:]

        enum Object {
            case bytes([UInt8])
            /// A marker and count header, then references.
            case container(header: [UInt8], references: [Int])
        }

        mutating func add(_ value: PlistValue) -> Int {
            switch value {
            case .string(let string):
                if let index = strings[string] { return index }
                let index = append(.bytes(Writer.string(string)))
                strings[string] = index
                return index
            case .integer(let integer): return append(.bytes(Writer.integer(integer)))
            case .real(let real): return append(.bytes([0x23] + Writer.bigEndian(real.bitPattern, 8)))
            case .bool(let flag): return append(.bytes([flag ? 0x09 : 0x08]))
            case .date(let date):
                let seconds = date.timeIntervalSince1970 - BinaryPropertyList.referenceDateOffset
                return append(.bytes([0x33] + Writer.bigEndian(seconds.bitPattern, 8)))
            case .data(let data): return append(.bytes(Writer.header(0x40, data.count) + Array(data)))
            case .array(let elements):
                let index = append(.bytes([]))
                let references = elements.map { add($0) }
                objects[index] = .container(header: Writer.header(0xA0, elements.count), references: references)
                return index
            case .dictionary(let members):
                let index = append(.bytes([]))
                let sorted = members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) })
                let keyReferences = sorted.map { add(.string($0.key)) }
                let valueReferences = sorted.map { add($0.value) }
                objects[index] = .container(header: Writer.header(0xD0, sorted.count), references: keyReferences + valueReferences)
                return index
            }
        }

        mutating func append(_ object: Object) -> Int {
            objects.append(object)
            return objects.count - 1
        }

        func finish(top: Int) -> [UInt8] {
            let referenceSize = Writer.byteCount(UInt64(objects.count))
            var out = BinaryPropertyList.magic
            var offsets: [Int] = []
            offsets.reserveCapacity(objects.count)
            for object in objects {
                offsets.append(out.count)
                switch object {
                case .bytes(let bytes): out += bytes
                case .container(let header, let references):
                    out += header
                    for reference in references { out += Writer.bigEndian(UInt64(reference), referenceSize) }
                }
            }
            let tableOffset = out.count
            let offsetSize = Writer.byteCount(UInt64(tableOffset))
            for offset in offsets { out += Writer.bigEndian(UInt64(offset), offsetSize) }
            out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
            out += Writer.bigEndian(UInt64(objects.count), 8) + Writer.bigEndian(UInt64(top), 8) + Writer.bigEndian(UInt64(tableOffset), 8)
            return out
        }

        static func string(_ string: String) -> [UInt8] {
            if string.utf8.allSatisfy({ $0 < 0x80 }) { return header(0x50, string.utf8.count) + Array(string.utf8) }
            let units = Array(string.utf16)
            var out = header(0x60, units.count)
            for unit in units { out += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
            return out
        }

        /// As CoreFoundation: a non-negative integer in 1, 2 or 4 bytes when it fits, else 8.
        static func integer(_ value: Int64) -> [UInt8] {
            switch value {
            case 0...0xFF: return [0x10, UInt8(value)]
            case 0...0xFFFF: return [0x11] + bigEndian(UInt64(value), 2)
            case 0...0xFFFF_FFFF: return [0x12] + bigEndian(UInt64(value), 4)
            default: return [0x13] + bigEndian(UInt64(bitPattern: value), 8)
            }
        }

        /// A marker with its count in the low nibble, or `0xF` and the count as an integer after it.
        static func header(_ marker: UInt8, _ count: Int) -> [UInt8] {
            count < 15 ? [marker | UInt8(count)] : [marker | 0x0F] + integer(Int64(count))
        }

        static func byteCount(_ value: UInt64) -> Int {
            value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
        }

        static func bigEndian(_ value: UInt64, _ size: Int) -> [UInt8] {
            (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
    }
}
