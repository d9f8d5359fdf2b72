import DefaultsClient
import DefaultsCore
import Foundation
import Hummingbird

/// The page's JSON API, each call one or two daemon requests (docs/SETTINGS-APP.md, "API").
/// Every answer comes from the daemon's own descriptions, where secure values are already
/// masked; the app reads no domain file.
struct SettingsAPI: Sendable {
    let relay: DaemonRelay
    /// A request body is one small JSON object.
    static let maximumBodyBytes = 64 << 10

    struct Failure: Error {
        let status: HTTPResponse.Status
        let code: String
        let message: String
    }

    // MARK: Reading

    /// The apps (one per installed bundle) and the other domains.
    func overview() async throws -> JSON {
        let bundles = try await ask(["op": "listBundles"])
        let domains = try await ask(["op": "domains"])
        var apps: [JSON] = []
        var withBundle: Set<String> = []
        if case .array(let list)? = bundles["bundles"] {
            for bundle in list {
                guard case .string(let domain)? = bundle["domain"] else { continue }
                withBundle.insert(domain)
                apps.append(["domain": .string(domain), "title": bundle["title"] ?? .null])
            }
        }
        apps.sort { Self.sortTitle($0) < Self.sortTitle($1) }
        var others: [JSON] = []
        if case .array(let list)? = domains["domains"] {
            others = list.filter { if case .string(let name) = $0 { return !withBundle.contains(name) } else { return false } }
        }
        return ["apps": .array(apps), "otherDomains": .array(others)]
    }

    /// An app's whole pane tree, in the language asked for or the browser's best match.
    func app(_ domain: String, language: String?, acceptLanguage: String?) async throws -> JSON {
        let described = try await describe(domain, pane: nil, language: language, acceptLanguage: acceptLanguage)
        let title = try await appTitle(domain)
        return [
            "domain": .string(domain), "title": title,
            "language": described["language"] ?? .null, "languages": described["languages"] ?? .array([]),
            "diagnostics": described["diagnostics"] ?? .array([]), "pane": described["pane"] ?? .null,
        ]
    }

    /// Rows whose localised title or key contains `query`, across every app.
    func search(_ query: String, acceptLanguage: String?) async throws -> JSON {
        let needle = query.lowercased()
        guard !needle.isEmpty else { return ["results": .array([])] }
        let overview = try await overview()
        var results: [JSON] = []
        guard case .array(let apps)? = overview["apps"] else { return ["results": .array([])] }
        for app in apps {
            guard case .string(let domain)? = app["domain"] else { continue }
            let described = try await describe(domain, pane: nil, language: nil, acceptLanguage: acceptLanguage)
            guard let root = described["pane"] else { continue }
            PaneWalk.rows(of: root) { pane, row in
                let title = row["title"].flatMap { if case .string(let text) = $0 { text } else { nil } }
                let key = row["key"].flatMap { if case .string(let text) = $0 { text } else { nil } }
                guard key != nil, [title, key].contains(where: { $0?.lowercased().contains(needle) == true }) else { return }
                results.append([
                    "domain": .string(domain), "app": app["title"] ?? .null,
                    "pane": pane["file"] ?? .null, "paneTitle": pane["title"] ?? .null,
                    "title": title.map(JSON.string) ?? .null, "key": key.map(JSON.string) ?? .null,
                ])
            }
        }
        return ["results": .array(results)]
    }

    /// A domain's keys with their types, for the plain editor. Keys a bundle marks secure are
    /// listed as set, without their value; keys an administrator forces are marked.
    func plainDomain(_ domain: String) async throws -> JSON {
        let answer = try await ask(["op": "get", "domain": .string(domain)])
        let secret = try await secureKeys(of: domain)
        var forced: Set<String> = []
        if case .object(let members)? = answer["forced"] { forced = Set(members.keys) }
        var keys: [JSON] = []
        if case .object(let members)? = answer["value"] {
            for (key, value) in members.sorted(by: { $0.key < $1.key }) {
                let plain = PlainValue(wire: value)
                var entry: [String: JSON] = [
                    "key": .string(key), "type": .string(plain.type),
                    "editable": .bool(plain.isScalar && !forced.contains(key) && !secret.contains(key)),
                    "forced": .bool(forced.contains(key)), "secret": .bool(secret.contains(key)),
                ]
                if !secret.contains(key) { entry["text"] = .string(plain.text) }
                keys.append(.object(entry))
            }
        }
        return ["domain": .string(domain), "keys": .array(keys), "types": .array(PlainValue.scalarTypes.map(JSON.string))]
    }

    /// The bytes of an image the bundle names (a slider's MinimumValueImage, say), from the
    /// bundle's own folder only.
    func image(_ domain: String, name: String) async throws -> (bytes: [UInt8], contentType: String) {
        let allowed = name.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "._-@ ".unicodeScalars.contains($0) }
        guard allowed, !name.hasPrefix("."), !name.isEmpty else { throw Failure(status: .notFound, code: "not_found", message: "no such image") }
        let described = try await ask(["op": "describeBundle", "domain": .string(domain)])
        guard case .string(let folder)? = described["path"],
            let data = FileManager.default.contents(atPath: folder + "/" + name)
        else { throw Failure(status: .notFound, code: "not_found", message: "no such image") }
        let type = switch name.split(separator: ".").last?.lowercased() {
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "gif": "image/gif"
        case "svg": "image/svg+xml"
        default: "application/octet-stream"
        }
        return ([UInt8](data), type)
    }

    // MARK: Writing

    /// A row of a pane changed: the value is made from the row as the daemon describes it.
    func change(_ domain: String, body: JSON) async throws {
        let (row, owner) = try await locateRow(domain, body: body)
        let input: RowInput
        do {
            input = try RowInput(json: body["input"])
        } catch let refused as RowInput.Refused {
            throw Failure(status: .badRequest, code: "bad_request", message: refused.description)
        }
        guard case .string(let key)? = row["key"] else { throw Failure(status: .badRequest, code: "bad_request", message: "the row has no key") }
        let value: JSON
        do {
            value = try input.value(for: row)
        } catch let refused as RowInput.Refused {
            throw Failure(status: .unprocessableContent, code: "invalid_value", message: refused.description)
        }
        _ = try await ask(["op": "set", "domain": .string(owner), "key": .string(key), "value": value])
    }

    /// "Reset to default": removes the user's value of the row's key.
    func reset(_ domain: String, body: JSON) async throws {
        let (row, owner) = try await locateRow(domain, body: body)
        guard case .string(let key)? = row["key"] else { throw Failure(status: .badRequest, code: "bad_request", message: "the row has no key") }
        _ = try await ask(["op": "remove", "domain": .string(owner), "key": .string(key)])
    }

    /// The plain editor sets a scalar, typed as the page says.
    func setPlain(_ domain: String, body: JSON) async throws {
        guard case .string(let key)? = body["key"], case .string(let type)? = body["type"], case .string(let text)? = body["text"] else {
            throw Failure(status: .badRequest, code: "bad_request", message: "expected key, type and text")
        }
        if try await secureKeys(of: domain).contains(key), type != "string" {
            throw Failure(status: .unprocessableContent, code: "invalid_value", message: "\(key) is a secure text value")
        }
        let value: JSON
        do {
            value = try PlainValue.wire(type: type, text: text)
        } catch let refused as RowInput.Refused {
            throw Failure(status: .unprocessableContent, code: "invalid_value", message: refused.description)
        }
        _ = try await ask(["op": "set", "domain": .string(domain), "key": .string(key), "value": value])
    }

    func deletePlain(_ domain: String, body: JSON) async throws {
        guard case .string(let key)? = body["key"] else { throw Failure(status: .badRequest, code: "bad_request", message: "expected key") }
        _ = try await ask(["op": "remove", "domain": .string(domain), "key": .string(key)])
    }

    // MARK: Helpers

    /// The row `index` of pane `file` (as the page names them), and the domain its key lives in.
    private func locateRow(_ domain: String, body: JSON) async throws -> (row: JSON, owner: String) {
        guard case .string(let file)? = body["file"], case .integer(let index)? = body["index"] else {
            throw Failure(status: .badRequest, code: "bad_request", message: "expected file and index")
        }
        let described = try await ask(["op": "describeBundle", "domain": .string(domain), "pane": .string(file)])
        var found: JSON?
        if let pane = described["pane"] {
            PaneWalk.rows(of: pane, descending: false) { _, row in
                if found == nil, row["index"] == .integer(index) { found = row }
            }
        }
        guard let row = found else { throw Failure(status: .notFound, code: "not_found", message: "\(file) has no row \(index)") }
        if row["locked"] == .bool(true) {
            throw Failure(status: .unprocessableContent, code: "forced", message: "set by your administrator")
        }
        if case .string(let suite)? = row["suite"] { return (row, suite) }
        return (row, domain)
    }

    private func describe(_ domain: String, pane: String?, language: String?, acceptLanguage: String?) async throws -> JSON {
        var request: [String: JSON] = ["op": "describeBundle", "domain": .string(domain)]
        if let pane { request["pane"] = .string(pane) }
        let first = try await ask(.object(request))
        guard case .array(let offered)? = first["languages"] else { return first }
        let names = offered.compactMap { if case .string(let name) = $0 { name } else { nil } }
        let wanted = language.map { [$0] } ?? LanguageChoice.preferred(acceptLanguage ?? "")
        guard let chosen = LanguageChoice.best(of: names, for: wanted), first["language"] != .string(chosen) else { return first }
        request["language"] = .string(chosen)
        return try await ask(.object(request))
    }

    private func appTitle(_ domain: String) async throws -> JSON {
        let bundles = try await ask(["op": "listBundles"])
        guard case .array(let list)? = bundles["bundles"] else { return .null }
        return list.first { $0["domain"] == .string(domain) }?["title"] ?? .null
    }

    /// Keys that any installed bundle shows as a secure text field, in `domain`.
    private func secureKeys(of domain: String) async throws -> Set<String> {
        let overview = try await overview()
        var keys: Set<String> = []
        guard case .array(let apps)? = overview["apps"] else { return keys }
        for app in apps {
            guard case .string(let bundleDomain)? = app["domain"],
                let root = try await ask(["op": "describeBundle", "domain": .string(bundleDomain)])["pane"]
            else { continue }
            PaneWalk.rows(of: root) { _, row in
                guard row["control"]?["secure"] == .bool(true), case .string(let key)? = row["key"] else { return }
                let owner: String = if case .string(let suite)? = row["suite"] { suite } else { bundleDomain }
                if owner == domain { keys.insert(key) }
            }
        }
        return keys
    }

    /// A daemon request whose refusal becomes a ``Failure`` carrying the daemon's own message.
    private func ask(_ request: JSON) async throws -> JSON {
        let answer: JSON
        do {
            answer = try await relay.request(request)
        } catch {
            throw Failure(status: .serviceUnavailable, code: "unreachable", message: "defaultsd is not running")
        }
        if let (code, message) = DaemonChannel.failure(in: answer) {
            let status: HTTPResponse.Status = switch code {
            case "invalid_value", "forced", "too_large", "invalid_key", "no_machine_id": .unprocessableContent
            case "invalid_domain", "invalid_parameter", "missing_parameter": .badRequest
            default: .internalServerError
            }
            throw Failure(status: status, code: code, message: message)
        }
        return answer
    }

    private static func sortTitle(_ app: JSON) -> String {
        if case .string(let title)? = app["title"] { return title.lowercased() }
        if case .string(let domain)? = app["domain"] { return domain.lowercased() }
        return ""
    }
}

/// Walks a pane tree as `describeBundle` answers it: every row, with the pane that holds it.
enum PaneWalk {
    static func rows(of pane: JSON, descending: Bool = true, _ visit: (_ pane: JSON, _ row: JSON) -> Void) {
        guard case .array(let sections)? = pane["sections"] else { return }
        for section in sections {
            guard case .array(let rows)? = section["rows"] else { continue }
            for row in rows {
                visit(pane, row)
                if descending, let child = row["control"]?["pane"], child != .null { Self.rows(of: child, visit) }
            }
        }
    }
}

/// The browser's languages (`Accept-Language`) matched against a bundle's `.lproj` folders.
enum LanguageChoice {
    /// Language tags by preference (q-values honoured, order kept among equals).
    static func preferred(_ header: String) -> [String] {
        let entries = header.split(separator: ",").enumerated().compactMap { position, part -> (String, Double, Int)? in
            let pieces = part.split(separator: ";").map { SystemText.trimmingWhitespace(String($0)) }
            guard let tag = pieces.first, !tag.isEmpty, tag != "*" else { return nil }
            let quality = pieces.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return (tag, quality, position)
        }
        return entries.filter { $0.1 > 0 }.sorted { ($0.1, -$0.2) > ($1.1, -$1.2) }.map(\.0)
    }

    /// The first wanted language a folder serves: exactly (`pt-BR` = `pt_BR`), else by its
    /// language alone (`fr-CA` → `fr`).
    static func best(of offered: [String], for wanted: [String]) -> String? {
        func normal(_ tag: String) -> String { tag.lowercased().replacingOccurrences(of: "_", with: "-") }
        for tag in wanted {
            if let exact = offered.first(where: { normal($0) == normal(tag) }) { return exact }
            let language = normal(tag).split(separator: "-").first.map(String.init) ?? ""
            if let close = offered.first(where: { normal($0).split(separator: "-").first.map(String.init) == language }) { return close }
        }
        return nil
    }
}
