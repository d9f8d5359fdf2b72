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

    var fields: [(String, Field)] = []

    init(_ fields: [(String, Field)] = []) { self.fields = fields }

    static var empty: Reply { Reply() }

    func write(into writer: inout JSONWriter) {
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
