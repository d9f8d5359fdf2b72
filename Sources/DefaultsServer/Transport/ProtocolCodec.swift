import DefaultsCore
import NIOCore

/// What a request line becomes: a request, or the typed error it is answered with.
enum Incoming {
    case request(Request)
    case invalid(id: JSON?, DefaultsError)
}

/// Decodes one line into a request. One job: JSON and request shape; no knowledge of the ops.
///
/// A plain type rather than a channel handler of its own: the connection handler calls it
/// for each line, which spares every request a hop through the pipeline (each hop boxes the
/// message and casts it back; docs/PERFORMANCE.md has the cost).
enum RequestDecoder {
    /// Blank lines are ignored, so `nc -U` sessions may press Enter freely.
    static func isBlank(_ line: ByteBuffer) -> Bool {
        line.readableBytesView.allSatisfy { $0 == 0x20 || $0 == 0x09 }
    }

    /// Decodes into `members`, so a connection's requests share one table's storage; the
    /// request keeps a reference to it, so the next decode finds it free again only once the
    /// request is done.
    static func decode(_ line: ByteBuffer, reusing members: inout JSONMembers) -> Incoming {
        let parsed: Result<Bool, JSONParseError> = line.withUnsafeReadableBytes { raw in
            Result { () throws(JSONParseError) -> Bool in
                try JSONParser.parseObjectMembers(raw, into: &members)
            }
        }
        switch parsed {
        case .failure(let error):
            // A syntax error caused by bytes that are not UTF-8 is reported as such.
            if case .syntax = error, String(validating: line.readableBytesView, as: UTF8.self) == nil {
                return .invalid(id: nil, DefaultsError(.invalidUTF8, "the line is not valid UTF-8"))
            }
            return .invalid(id: nil, error.defaultsError)
        case .success(false):
            return .invalid(id: nil, DefaultsError(.badJSON, "a request must be a JSON object"))
        case .success(true):
            switch Request.parse(members) {
            case .success(let request): return .request(request)
            case .failure(let failure): return .invalid(id: failure.id, failure.error)
            }
        }
    }
}

/// Encodes responses as lines: `{"id":7,"ok":true,...}` or `{"id":7,"ok":false,"error":{...}}`.
enum ResponseEncoding {
    /// Appends the response line, newline included, to `writer`.
    static func encode(id: JSON?, _ result: Result<Reply, DefaultsError>, into writer: inout JSONWriter) {
        writer.beginObject()
        if let id {
            writer.key(literal: "id")
            writer.json(id)
        }
        switch result {
        case .success(let reply):
            writer.key(literal: "ok"); writer.bool(true)
            reply.write(into: &writer)
        case .failure(let error):
            writer.key(literal: "ok"); writer.bool(false)
            writer.key(literal: "error"); writer.beginObject()
            writer.key(literal: "code"); writer.string(error.code.rawValue)
            writer.key(literal: "message"); writer.string(error.message)
            if let conflict = error.conflict {
                writer.key(literal: "key"); writer.string(conflict.key)
                writer.key(literal: "found")
                if let found = conflict.found { writer.value(found) } else { writer.null() }
            }
            writer.endObject()
        }
        writer.endObject()
        writer.newline()
    }

    static func encode(id: JSON?, _ result: Result<Reply, DefaultsError>) -> [UInt8] {
        var writer = JSONWriter(capacity: 64)
        encode(id: id, result, into: &writer)
        return writer.bytes
    }
}
