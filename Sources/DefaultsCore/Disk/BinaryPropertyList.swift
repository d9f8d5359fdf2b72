import FoundationEssentials

/// Apple's binary property-list format (`bplist00`), read and written here for the same reason
/// as ``XMLPropertyList``: FoundationEssentials has no reader that keeps integer, real and bool apart.
///
/// The reader checks every offset, size and reference against the file before it uses it, and
/// refuses a reference back to an object it is inside of, so a hostile file is an error, never
/// a crash or an endless loop. Objects may be shared, but a file cannot make the reader decode
/// more objects than it has bytes (each reference takes at least one), so sharing cannot blow up.
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
        let reader = try Reader(Array(bytes))
        var walk = Walk(remaining: reader.bytes.count)
        return try reader.object(reader.topObject, walk: &walk)
    }

    /// The containers the reader is inside of, and how many more objects it may decode.
    private struct Walk {
        var path: Set<Int> = []
        var remaining: Int
    }

    private struct Reader {
        let bytes: [UInt8]
        let offsetSize: Int
        let referenceSize: Int
        let objectCount: Int
        let topObject: Int
        let offsetTable: Int

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

        func object(_ index: Int, walk: inout Walk) throws(DefaultsError) -> PlistValue {
            walk.remaining -= 1
            guard walk.remaining >= 0 else { throw Reader.failure("more objects shared than the file can hold") }
            let start = try offset(of: index)
            let marker = UInt8(try read(start, 1))
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default: throw Reader.failure("a null or fill object, which a property list cannot hold")
                }
            case 0x1:
                let size = 1 << Int(marker & 0x0F)
                switch size {
                case 1, 2, 4: return .integer(Int64(try read(start + 1, size)))
                case 8: return .integer(Int64(bitPattern: try read(start + 1, 8)))
                case 16:
                    // A 128-bit integer: what CoreFoundation writes for values above Int64.max.
                    let high = try read(start + 1, 8), low = try read(start + 9, 8)
                    if high == 0, low <= UInt64(Int64.max) { return .integer(Int64(low)) }
                    if high == UInt64.max, low > UInt64(Int64.max) { return .integer(Int64(bitPattern: low)) }
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
                return .real(value)
            case 0x3:
                guard marker == 0x33 else { throw Reader.failure("a bad date") }
                let seconds = Double(bitPattern: try read(start + 1, 8))
                guard seconds.isFinite else { throw Reader.failure("a date that is not finite") }
                return .date(Date(timeIntervalSince1970: seconds + BinaryPropertyList.referenceDateOffset))
            case 0x4:
                let (count, content) = try self.count(at: start, marker: marker)
                _ = try read(content, count)
                return .data(Data(bytes[content..<(content + count)]))
            case 0x5:
                let (count, content) = try self.count(at: start, marker: marker)
                _ = try read(content, count)
                guard let text = String(validating: bytes[content..<(content + count)], as: UTF8.self),
                    text.utf8.allSatisfy({ $0 < 0x80 })
                else { throw Reader.failure("an ASCII string that is not ASCII") }
                return .string(text)
            case 0x6:
                let (count, content) = try self.count(at: start, marker: marker)
                guard count <= Int.max / 2 else { throw Reader.failure("a string too long") }
                _ = try read(content, count * 2)
                var units: [UInt16] = []
                units.reserveCapacity(count)
                for index in 0..<count {
                    units.append(UInt16(bytes[content + 2 * index]) << 8 | UInt16(bytes[content + 2 * index + 1]))
                }
                return .string(String(decoding: units, as: UTF16.self))
            case 0xA, 0xD:
                let (count, content) = try self.count(at: start, marker: marker)
                let references = marker >> 4 == 0xD ? 2 * count : count
                guard references <= Int.max / referenceSize else { throw Reader.failure("a container too large") }
                _ = try read(content, references * referenceSize)
                guard walk.path.insert(index).inserted else { throw Reader.failure("a container that holds itself") }
                defer { walk.path.remove(index) }
                guard walk.path.count <= XMLPropertyList.maximumDepth else { throw Reader.failure("nesting too deep") }
                func reference(_ position: Int) -> Int {
                    Int(truncatingIfNeeded: Reader.unsigned(bytes, content + position * referenceSize, referenceSize))
                }
                if marker >> 4 == 0xA {
                    var elements: [PlistValue] = []
                    elements.reserveCapacity(count)
                    for position in 0..<count { elements.append(try object(reference(position), walk: &walk)) }
                    return .array(elements)
                }
                var members: [String: PlistValue] = [:]
                members.reserveCapacity(count)
                for position in 0..<count {
                    guard case .string(let key) = try object(reference(position), walk: &walk) else {
                        throw Reader.failure("a dictionary key that is not a string")
                    }
                    members[key] = try object(reference(count + position), walk: &walk)
                }
                return .dictionary(members)
            default:
                throw Reader.failure("an object of type 0x\(String(marker, radix: 16)), which a property list cannot hold")
            }
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
                let keys = members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) })
                let keyReferences = keys.map { add(.string($0)) }
                let valueReferences = keys.map { add(members[$0]!) }
                objects[index] = .container(header: Writer.header(0xD0, keys.count), references: keyReferences + valueReferences)
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
