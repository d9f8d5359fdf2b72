import DefaultsClient
import DefaultsCore
import Foundation
import Hummingbird
import SettingsBundles

/// The changes a page asks for: a row's new value or its reset, and a plain domain's keys set
/// or removed.
extension SettingsAPI {
    /// A row of a pane changed: the value is made from the row as the daemon describes it.
    func change(_ domain: String, body: JSON) async throws {
        let input: RowInput
        do {
            input = try RowInput(json: body["input"])
        } catch let refused as RowInput.Refused {
            throw Failure(status: .badRequest, code: "bad_request", message: refused.description)
        }
        let (row, owner) = try await locateRow(domain, body: body)
        let value: PlistValue
        do {
            value = try input.value(for: row)
        } catch let refused as RowInput.Refused {
            throw Failure(status: .unprocessableContent, code: "invalid_value", message: refused.description)
        }
        _ = try await ask(.request(.set, ["domain": .string(owner), "key": .string(row.key ?? ""), "value": WireValue.json(value)]))
    }

    /// "Reset to default": removes the user's value of the row's key.
    func reset(_ domain: String, body: JSON) async throws {
        let (row, owner) = try await locateRow(domain, body: body)
        _ = try await ask(.request(.remove, ["domain": .string(owner), "key": .string(row.key ?? "")]))
    }

    /// The plain editor sets a key: a scalar typed as the page says (`type`, `text`), or a whole
    /// array or dictionary as the page's tree (`tree`), each element with its own type. A scalar
    /// is the tree of one element, so both are read by ``PlainValue/value(tree:at:depth:)``.
    func setPlain(_ domain: String, body: JSON) async throws {
        guard case .string(let key)? = body["key"], body["tree"] != nil || body["type"] != nil else {
            throw Failure(status: .badRequest, code: "bad_request", message: "expected a key, with a type and text or a tree")
        }
        let value: PlistValue
        do {
            value = try PlainValue.value(tree: body["tree"] ?? ["type": body["type"] ?? .null, "text": body["text"] ?? .null])
        } catch let refused as RowInput.Refused {
            throw Failure(status: .unprocessableContent, code: "invalid_value", message: refused.description)
        }
        if case .string = value {} else if try await secureKeys(of: domain).contains(key) {
            throw Failure(status: .unprocessableContent, code: "invalid_value", message: "\(key) is a secure text value")
        }
        // A key of a GSettings schema takes only what the schema allows: a GSettings program
        // would read anything else as its default.
        if let reason = await schemas.refusal(of: WireValue.json(value), for: key, in: domain) {
            throw Failure(status: .unprocessableContent, code: "invalid_value", message: reason)
        }
        _ = try await ask(.request(.set, ["domain": .string(domain), "key": .string(key), "value": WireValue.json(value)]))
    }

    func deletePlain(_ domain: String, body: JSON) async throws {
        guard case .string(let key)? = body["key"] else { throw Failure(status: .badRequest, code: "bad_request", message: "expected key") }
        _ = try await ask(.request(.remove, ["domain": .string(domain), "key": .string(key)]))
    }
}
