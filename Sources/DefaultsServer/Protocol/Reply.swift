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

/// What the connection handler sends down the pipeline.
enum Outgoing {
    case response(id: JSON?, Result<Reply, DefaultsError>)
    /// An event line, already encoded (shared by every subscriber).
    case event(ByteBuffer)
}

/// Encodes responses as lines: `{"id":7,"ok":true,...}` or `{"id":7,"ok":false,"error":{...}}`.
enum ResponseEncoding {
    static func encode(id: JSON?, _ result: Result<Reply, DefaultsError>) -> [UInt8] {
        var writer = JSONWriter(capacity: 64)
        writer.beginObject()
        if let id {
            writer.key("id")
            writer.json(id)
        }
        switch result {
        case .success(let reply):
            writer.key("ok"); writer.bool(true)
            reply.write(into: &writer)
        case .failure(let error):
            writer.key("ok"); writer.bool(false)
            writer.key("error"); writer.beginObject()
            writer.key("code"); writer.string(error.code.rawValue)
            writer.key("message"); writer.string(error.message)
            writer.endObject()
        }
        writer.endObject()
        writer.newline()
        return writer.bytes
    }
}
