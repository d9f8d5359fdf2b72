import FoundationEssentials

/// Encodes any `Encodable` value as the property-list structure it naturally is: a struct or a
/// class becomes a dictionary of its coding keys, an array an array, `Date` a date, `Data` data,
/// `URL` its string, an integer an integer, a floating-point number a real, and an optional that is
/// nil is left out of its dictionary. So `defaults read`, the Settings app and a hand edit see and
/// change real fields, never a JSON string.
///
/// ```swift
/// struct Crew: Codable { var captain: String; var officers: [String]; var launched: Date? }
/// let value = try PlistValueEncoder().encode(Crew(captain: "Picard", officers: ["Riker"], launched: nil))
/// // .dictionary(["captain": "Picard", "officers": ["Riker"]])
/// ```
///
/// Written here rather than taken from Foundation: `PropertyListEncoder` produces the bytes of a
/// file, and going through them would cost a whole serialisation and parse on every read of a
/// typed key; the store and the wire hold ``PlistValue``s.
public struct PlistValueEncoder: Sendable {
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    public init() {}

    /// The value's property-list form; nil for a value that encodes as nil (an `Optional` that is
    /// nil), which as a default means "no value".
    public func encode<T: Encodable>(_ value: T) throws -> PlistValue? {
        let root = EncodedNode()
        try root.store(value, codingPath: [], userInfo: userInfo)
        return try root.finished(codingPath: [])
    }
}

/// Decodes any `Decodable` value from its property-list structure, the inverse of
/// ``PlistValueEncoder``. Integers and reals are both numbers (an integer decodes as a `Double`,
/// a real with no fraction as an `Int`); every other type must match. A missing key decodes as
/// nil for an optional and is an error otherwise.
///
/// ```swift
/// let crew = try PlistValueDecoder().decode(Crew.self, from: ["captain": "Picard", "officers": []])
/// ```
public struct PlistValueDecoder: Sendable {
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from value: PlistValue) throws -> T {
        try ValueDecoder(value: value, codingPath: [], userInfo: userInfo).unbox(type)
    }
}

// MARK: - Encoding

/// One value being encoded: what its `encode(to:)` put there so far. A reference, so that nested
/// containers fill it in place.
private final class EncodedNode {
    enum Content {
        /// Nothing encoded yet: an empty dictionary once finished, as for a type with no fields.
        case empty
        /// `encodeNil()`: left out of a dictionary; at the top, no value.
        case absent
        case value(PlistValue)
        case array(ArrayNode)
        case dictionary(DictionaryNode)
    }

    final class ArrayNode { var elements: [EncodedNode] = [] }
    final class DictionaryNode { var members: [String: EncodedNode] = [:] }

    var content: Content = .empty

    func store<T: Encodable>(_ value: T, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) throws {
        switch value {
        case let date as Date: content = .value(.date(date))
        case let data as Data: content = .value(.data(data))
        // A file URL as its path, as `UserDefaults` on Linux and a `Key<URL>` store one.
        case let url as URL: content = .value(.string(url.isFileURL ? url.path : url.absoluteString))
        default: try value.encode(to: NodeEncoder(node: self, codingPath: codingPath, userInfo: userInfo))
        }
    }

    func finished(codingPath: [any CodingKey]) throws -> PlistValue? {
        switch content {
        case .empty: return .dictionary([:])
        case .absent: return nil
        case .value(let value): return value
        case .array(let array):
            return .array(try array.elements.enumerated().map { index, element in
                let path = codingPath + [IndexKey(index)]
                guard let value = try element.finished(codingPath: path) else {
                    throw EncodingError.invalidValue(
                        Optional<Int>.none as Any, .init(codingPath: path, debugDescription: "nil in an array has no property-list form"))
                }
                return value
            })
        case .dictionary(let dictionary):
            var members: [String: PlistValue] = [:]
            members.reserveCapacity(dictionary.members.count)
            for (key, member) in dictionary.members {
                members[key] = try member.finished(codingPath: codingPath + [IndexKey(key)])
            }
            return .dictionary(members)
        }
    }

    func dictionary() -> DictionaryNode {
        if case .dictionary(let existing) = content { return existing }
        let made = DictionaryNode()
        content = .dictionary(made)
        return made
    }

    func array() -> ArrayNode {
        if case .array(let existing) = content { return existing }
        let made = ArrayNode()
        content = .array(made)
        return made
    }
}

/// A key for paths in errors: an array index, or a dictionary key met while finishing.
private struct IndexKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ index: Int) { (stringValue, intValue) = ("Index \(index)", index) }
    init(_ key: String) { (stringValue, intValue) = (key, nil) }
    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) { self.init(intValue) }
}

private struct NodeEncoder: Encoder {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    let info: [CodingUserInfoKey: any Sendable]
    var userInfo: [CodingUserInfoKey: Any] { info }

    init(node: EncodedNode, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.node = node
        self.codingPath = codingPath
        self.info = userInfo
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedNodeContainer(members: node.dictionary(), codingPath: codingPath, userInfo: info))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedNodeContainer(array: node.array(), codingPath: codingPath, userInfo: info)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleNodeContainer(node: node, codingPath: codingPath, userInfo: info)
    }
}

/// The property-list value of a number, checked: integers must fit 64 signed bits, and reals must
/// be finite (property lists have no NaN or infinity).
private enum Numbers {
    static func integer<T: BinaryInteger>(_ value: T, _ codingPath: [any CodingKey]) throws -> PlistValue {
        guard let exact = Int64(exactly: value) else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) does not fit a property-list integer (64-bit signed)"))
        }
        return .integer(exact)
    }

    static func real(_ value: Double, _ codingPath: [any CodingKey]) throws -> PlistValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) has no property-list form"))
        }
        return .real(value)
    }

    static func real(_ value: Float, _ codingPath: [any CodingKey]) throws -> PlistValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) has no property-list form"))
        }
        return .real(PlistValue.realValue(of: value))
    }
}

private struct SingleNodeContainer: SingleValueEncodingContainer {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]

    mutating func encodeNil() throws { node.content = .absent }
    mutating func encode(_ value: Bool) throws { node.content = .value(.bool(value)) }
    mutating func encode(_ value: String) throws { node.content = .value(.string(value)) }
    mutating func encode(_ value: Double) throws { node.content = .value(try Numbers.real(value, codingPath)) }
    mutating func encode(_ value: Float) throws { node.content = .value(try Numbers.real(value, codingPath)) }
    mutating func encode(_ value: Int) throws { node.content = .value(try Numbers.integer(value, codingPath)) }
    mutating func encode(_ value: Int8) throws { node.content = .value(try Numbers.integer(value, codingPath)) }
    mutating func encode(_ value: Int16) throws { node.content = .value(try Numbers.integer(value, codingPath)) }
    mutating func encode(_ value: Int32) throws { node.content = .value(try Numbers.integer(value, codingPath)) }
    mutating func encode(_ value: Int64) throws { node.content = .value(try Numbers.integer(value, codingPath)) }
    mutating func encode(_ value: UInt) throws { node.content = .value(try Numbers.integer(value, codingPath)) }
    mutating func encode(_ value: UInt8) throws { node.content = .value(try Numbers.integer(value, codingPath)) }
    mutating func encode(_ value: UInt16) throws { node.content = .value(try Numbers.integer(value, codingPath)) }
    mutating func encode(_ value: UInt32) throws { node.content = .value(try Numbers.integer(value, codingPath)) }
    mutating func encode(_ value: UInt64) throws { node.content = .value(try Numbers.integer(value, codingPath)) }
    mutating func encode<T: Encodable>(_ value: T) throws { try node.store(value, codingPath: codingPath, userInfo: userInfo) }
}

private struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let members: EncodedNode.DictionaryNode
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]

    private func member(_ key: Key) -> EncodedNode {
        if let existing = members.members[key.stringValue] { return existing }
        let made = EncodedNode()
        members.members[key.stringValue] = made
        return made
    }

    private func put(_ value: PlistValue, _ key: Key) { member(key).content = .value(value) }

    mutating func encodeNil(forKey key: Key) throws { member(key).content = .absent }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(try Numbers.real(value, codingPath + [key]), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(try Numbers.real(value, codingPath + [key]), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(try Numbers.integer(value, codingPath + [key]), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(try Numbers.integer(value, codingPath + [key]), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(try Numbers.integer(value, codingPath + [key]), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(try Numbers.integer(value, codingPath + [key]), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(try Numbers.integer(value, codingPath + [key]), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(try Numbers.integer(value, codingPath + [key]), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(try Numbers.integer(value, codingPath + [key]), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(try Numbers.integer(value, codingPath + [key]), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(try Numbers.integer(value, codingPath + [key]), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(try Numbers.integer(value, codingPath + [key]), key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try member(key).store(value, codingPath: codingPath + [key], userInfo: userInfo)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(KeyedNodeContainer<NestedKey>(members: member(key).dictionary(), codingPath: codingPath + [key], userInfo: userInfo))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        UnkeyedNodeContainer(array: member(key).array(), codingPath: codingPath + [key], userInfo: userInfo)
    }

    mutating func superEncoder() -> any Encoder { superEncoder(named: "super") }
    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(named: key.stringValue) }

    private func superEncoder(named name: String) -> any Encoder {
        let node = members.members[name] ?? EncodedNode()
        members.members[name] = node
        return NodeEncoder(node: node, codingPath: codingPath + [IndexKey(name)], userInfo: userInfo)
    }
}

private struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
    let array: EncodedNode.ArrayNode
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]
    var count: Int { array.elements.count }

    private func next() -> EncodedNode {
        let made = EncodedNode()
        array.elements.append(made)
        return made
    }

    private var nextPath: [any CodingKey] { codingPath + [IndexKey(array.elements.count)] }
    private func put(_ value: PlistValue) { next().content = .value(value) }

    mutating func encodeNil() throws { next().content = .absent }
    mutating func encode(_ value: Bool) throws { put(.bool(value)) }
    mutating func encode(_ value: String) throws { put(.string(value)) }
    mutating func encode(_ value: Double) throws { put(try Numbers.real(value, nextPath)) }
    mutating func encode(_ value: Float) throws { put(try Numbers.real(value, nextPath)) }
    mutating func encode(_ value: Int) throws { put(try Numbers.integer(value, nextPath)) }
    mutating func encode(_ value: Int8) throws { put(try Numbers.integer(value, nextPath)) }
    mutating func encode(_ value: Int16) throws { put(try Numbers.integer(value, nextPath)) }
    mutating func encode(_ value: Int32) throws { put(try Numbers.integer(value, nextPath)) }
    mutating func encode(_ value: Int64) throws { put(try Numbers.integer(value, nextPath)) }
    mutating func encode(_ value: UInt) throws { put(try Numbers.integer(value, nextPath)) }
    mutating func encode(_ value: UInt8) throws { put(try Numbers.integer(value, nextPath)) }
    mutating func encode(_ value: UInt16) throws { put(try Numbers.integer(value, nextPath)) }
    mutating func encode(_ value: UInt32) throws { put(try Numbers.integer(value, nextPath)) }
    mutating func encode(_ value: UInt64) throws { put(try Numbers.integer(value, nextPath)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = nextPath
        try next().store(value, codingPath: path, userInfo: userInfo)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = nextPath
        return KeyedEncodingContainer(KeyedNodeContainer<NestedKey>(members: next().dictionary(), codingPath: path, userInfo: userInfo))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath
        return UnkeyedNodeContainer(array: next().array(), codingPath: path, userInfo: userInfo)
    }

    mutating func superEncoder() -> any Encoder {
        let path = nextPath
        return NodeEncoder(node: next(), codingPath: path, userInfo: userInfo)
    }
}

// MARK: - Decoding

private struct ValueDecoder: Decoder {
    let value: PlistValue
    let codingPath: [any CodingKey]
    let sendableUserInfo: [CodingUserInfoKey: any Sendable]
    var userInfo: [CodingUserInfoKey: Any] { sendableUserInfo }

    init(value: PlistValue, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.value = value
        self.codingPath = codingPath
        self.sendableUserInfo = userInfo
    }

    func unbox<T: Decodable>(_ type: T.Type) throws -> T {
        switch type {
        case is Date.Type:
            guard case .date(let date) = value else { throw mismatch(type) }
            return date as! T  // the case above checked `T` is `Date`
        case is Data.Type:
            guard case .data(let data) = value else { throw mismatch(type) }
            return data as! T  // the case above checked `T` is `Data`
        case is URL.Type:
            guard case .string(let text) = value else { throw mismatch(type) }
            let url = text.hasPrefix("/") ? URL(fileURLWithPath: text) : URL(string: text)
            guard let url else { throw mismatch(type) }
            return url as! T  // the case above checked `T` is `URL`
        default:
            return try T(from: self)
        }
    }

    func mismatch(_ type: Any.Type) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "expected \(type), found \(value.plistType.nameWithArticle)"))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .dictionary(let members) = value else { throw mismatch([String: PlistValue].self) }
        return KeyedDecodingContainer(KeyedValueContainer<Key>(members: members, codingPath: codingPath, userInfo: sendableUserInfo))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw mismatch([PlistValue].self) }
        return UnkeyedValueContainer(elements: elements, codingPath: codingPath, userInfo: sendableUserInfo)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValueContainer(decoder: self) }

    // The scalars, one rule each: numbers are numbers whether integer or real, exactly.

    func bool() throws -> Bool {
        guard case .bool(let flag) = value else { throw mismatch(Bool.self) }
        return flag
    }

    func string() throws -> String {
        guard case .string(let text) = value else { throw mismatch(String.self) }
        return text
    }

    func integer<T: BinaryInteger & FixedWidthInteger>(_ type: T.Type) throws -> T {
        let exact: T?
        switch value {
        case .integer(let integer): exact = T(exactly: integer)
        case .real(let real): exact = T(exactly: real)
        default: throw mismatch(type)
        }
        guard let exact else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(value) does not fit \(type)"))
        }
        return exact
    }

    func float() throws -> Float {
        let double = try double()
        let float = Float(double)
        guard float.isFinite else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\(double) does not fit Float"))
        }
        return float
    }

    func double() throws -> Double {
        switch value {
        case .real(let real): return real
        case .integer(let integer): return Double(integer)
        default: throw mismatch(Double.self)
        }
    }
}

private struct SingleValueContainer: SingleValueDecodingContainer {
    let decoder: ValueDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { false }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.bool() }
    func decode(_ type: String.Type) throws -> String { try decoder.string() }
    func decode(_ type: Double.Type) throws -> Double { try decoder.double() }
    func decode(_ type: Float.Type) throws -> Float { try decoder.float() }
    func decode(_ type: Int.Type) throws -> Int { try decoder.integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.integer(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.unbox(type) }
}

private struct KeyedValueContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: PlistValue]
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]

    var allKeys: [Key] { members.keys.compactMap(Key.init(stringValue:)) }
    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func decoder(_ key: Key) throws -> ValueDecoder {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no value for \(key.stringValue)"))
        }
        return ValueDecoder(value: value, codingPath: codingPath + [key], userInfo: userInfo)
    }

    func decodeNil(forKey key: Key) throws -> Bool { members[key.stringValue] == nil }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder(key).bool() }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder(key).string() }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder(key).double() }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoder(key).float() }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder(key).integer(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder(key).integer(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder(key).integer(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder(key).integer(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder(key).integer(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder(key).integer(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder(key).integer(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder(key).integer(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder(key).integer(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder(key).integer(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder(key).unbox(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try decoder(key).unkeyedContainer() }

    func superDecoder() throws -> any Decoder {
        ValueDecoder(value: members["super"] ?? .dictionary([:]), codingPath: codingPath + [IndexKey("super")], userInfo: userInfo)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: members[key.stringValue] ?? .dictionary([:]), codingPath: codingPath + [key], userInfo: userInfo)
    }
}

private struct UnkeyedValueContainer: UnkeyedDecodingContainer {
    let elements: [PlistValue]
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: any Sendable]
    private(set) var currentIndex = 0

    init(elements: [PlistValue], codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.elements = elements
        self.codingPath = codingPath
        self.userInfo = userInfo
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next() throws -> ValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                PlistValue.self, .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "the array has no more elements"))
        }
        defer { currentIndex += 1 }
        return ValueDecoder(value: elements[currentIndex], codingPath: codingPath + [IndexKey(currentIndex)], userInfo: userInfo)
    }

    mutating func decodeNil() throws -> Bool { false }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try next().bool() }
    mutating func decode(_ type: String.Type) throws -> String { try next().string() }
    mutating func decode(_ type: Double.Type) throws -> Double { try next().double() }
    mutating func decode(_ type: Float.Type) throws -> Float { try next().float() }
    mutating func decode(_ type: Int.Type) throws -> Int { try next().integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next().integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next().integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next().integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next().integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next().integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next().integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next().integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next().integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next().integer(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().unbox(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }
    mutating func superDecoder() throws -> any Decoder { try next() }
}

extension PlistValue {
    /// The real a `Float` stands for, as people read it: its shortest decimal form (`12.34`), not
    /// the binary expansion widening gives (`12.34000015258789`). Foundation's `UserDefaults`
    /// stores a `Float` so, and reads it back as `"12.34"` and `12.34`.
    public static func realValue(of float: Float) -> Double {
        Double("\(float)") ?? Double(float)
    }
}
