import DefaultsCore
import NIOCore

/// The fields of a successful response, in the order they are written after `id` and `ok`.
struct Reply {
    enum Field {
        case value(PlistValue?)
        case values([String: PlistValue])
        case integer(Int64)
        case string(String?)
        case bool(Bool)
        case strings([String])
        case generations([DomainName: Int64])
        case object(Reply)
        /// Already-encoded JSON.
        case raw([UInt8])
    }

    /// The answers of every write and of a one-key `get` are kept apart from the general
    /// list of fields, so the commonest requests need no array (an allocation each).
    private enum Shape {
        case fields([(String, Field)])
        case generation(Int64)
        case value(PlistValue?, generation: Int64)
    }

    private let shape: Shape

    init(_ fields: [(String, Field)] = []) { self.shape = .fields(fields) }

    private init(shape: Shape) { self.shape = shape }

    static var empty: Reply { Reply() }

    /// `"generation":N`, the answer of every write.
    static func generation(_ generation: Int64) -> Reply { Reply(shape: .generation(generation)) }

    /// `"value":…,"generation":N`, the answer of a one-key `get`.
    static func value(_ value: PlistValue?, generation: Int64) -> Reply {
        Reply(shape: .value(value, generation: generation))
    }

    func write(into writer: inout JSONWriter) {
        switch shape {
        case .fields(let fields):
            write(fields, into: &writer)
        case .generation(let generation):
            writer.key(literal: "generation"); writer.integer(generation)
        case .value(let value, let generation):
            writer.key(literal: "value")
            if let value { writer.value(value) } else { writer.null() }
            writer.key(literal: "generation"); writer.integer(generation)
        }
    }

    private func write(_ fields: [(String, Field)], into writer: inout JSONWriter) {
        for (name, field) in fields {
            writer.key(name)
            switch field {
            case .value(let value?): writer.value(value)
            case .value(nil): writer.null()
            case .values(let values): writer.dictionary(values)
            case .integer(let i): writer.integer(i)
            case .string(let s?): writer.string(s)
            case .string(nil): writer.null()
            case .bool(let b): writer.bool(b)
            case .strings(let strings):
                writer.beginArray()
                for s in strings { writer.string(s) }
                writer.endArray()
            case .generations(let generations):
                writer.beginObject()
                for (domain, generation) in generations.sorted(by: { $0.key < $1.key }) {
                    writer.key(domain.rawValue)
                    writer.integer(generation)
                }
                writer.endObject()
            case .raw(let bytes):
                writer.raw(bytes)
            case .object(let reply):
                writer.beginObject()
                reply.write(into: &writer)
                writer.endObject()
            }
        }
    }
}
