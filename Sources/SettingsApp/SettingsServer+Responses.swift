import DefaultsCore
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

/// How answers are written: assets and JSON with the security headers, and failures with the
/// status they stand for.
extension SettingsServer {
    // The `!` cannot fail: "Referrer-Policy" is a valid RFC 9110 token, all `HTTPField.Name.init?` checks.
    static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy: "default-src 'self'; img-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
        .xContentTypeOptions: "nosniff", .init("Referrer-Policy")!: "no-referrer", .cacheControl: "no-store",
    ]

    static func asset(_ bytes: [UInt8], type: String) -> Response {
        var headers = securityHeaders
        headers[.contentType] = type
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func json(_ body: () async throws -> JSON) async throws -> Response {
        do {
            return jsonResponse(.ok, try await body())
        } catch let failure as SettingsAPI.Failure {
            return Self.failure(failure)
        }
    }

    /// A POST: a bounded JSON object in, `{"ok":true}` or the error out.
    static func change(_ request: Request, _ apply: (JSON) async throws -> Void) async throws -> Response {
        do {
            let bytes: ByteBuffer
            do {
                bytes = try await request.body.collect(upTo: SettingsAPI.maximumBodyBytes)
            } catch {
                throw SettingsAPI.Failure(status: .contentTooLarge, code: "too_large", message: "the request body is over \(SettingsAPI.maximumBodyBytes) bytes")
            }
            let body: JSON
            do {
                body = try JSONParser.parse(Array(bytes.readableBytesView))
            } catch {
                throw SettingsAPI.Failure(status: .badRequest, code: "bad_request", message: "the body is not JSON: \(error)")
            }
            guard case .object = body else { throw SettingsAPI.Failure(status: .badRequest, code: "bad_request", message: "the body is not a JSON object") }
            try await apply(body)
            return jsonResponse(.ok, ["ok": true])
        } catch let failure as SettingsAPI.Failure {
            return Self.failure(failure)
        }
    }

    static func failure(_ failure: SettingsAPI.Failure) -> Response {
        jsonResponse(failure.status, ["ok": false, "error": ["code": .string(failure.code), "message": .string(failure.message)]])
    }

    static func jsonResponse(_ status: HTTPResponse.Status, _ value: JSON) -> Response {
        var writer = JSONWriter(capacity: 1024)
        writer.json(value)
        var headers = securityHeaders
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: writer.bytes)))
    }
}
