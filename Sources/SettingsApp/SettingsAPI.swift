import DefaultsClient
import DefaultsCore
import Foundation
import Hummingbird
import Logging
import SettingsBundles

/// The page's JSON API, each call one or two daemon requests (docs/SETTINGS-APP.md, "API"), and
/// for a view with rows one `history` request more per domain it shows, for the notes of when
/// and by what each key last changed (``lastChanges(of:)``, ``lastChangesByDomain(_:)``).
/// Every answer comes from the daemon's own descriptions, where secure values are already
/// masked; the app reads no domain file.
struct SettingsAPI: Sendable {
    let relay: DaemonRelay
    /// Where apps' names and icons come from (their desktop entries).
    let desktopEntries: DesktopEntryLookup
    /// The GSettings schemas of the domains GSettings programs keep here.
    let schemas: GSettingsSchemas
    /// Where a refused image is named.
    let logger: Logger
    /// A request body is one small JSON object.
    static let maximumBodyBytes = 64 << 10
    /// The largest bundle image served: a slider's end images are a few kilobytes, and even a
    /// large PNG is well under this.
    static let maximumImageBytes = 4 << 20

    struct Failure: Error {
        let status: HTTPResponse.Status
        let code: String
        let message: String
    }

    // MARK: Reading

    /// The apps (one per installed bundle) and the other domains. An app is named as its desktop
    /// entry names it, in the browser's language, else by its bundle's title; `icon` says
    /// whether its entry has an icon to show.
    func overview(acceptLanguage: String? = nil) async throws -> JSON {
        let bundles = try await ask(.request(.listBundles))
        let domains = try await ask(.request(.domains))
        var apps: [JSON] = []
        var withBundle: Set<String> = []
        if case .array(let list)? = bundles["bundles"] {
            for bundle in list {
                guard case .string(let domain)? = bundle["domain"] else { continue }
                withBundle.insert(domain)
                let entry = desktopEntries.entry(for: domain)
                apps.append([
                    "domain": .string(domain),
                    "title": entry?.name(for: LanguageChoice.preferred(acceptLanguage ?? "")).map(JSON.string) ?? bundle["title"] ?? .null,
                    "icon": .bool(desktopEntries.hasIcon(entry)),
                ])
            }
        }
        apps.sort { Self.sortTitle($0) < Self.sortTitle($1) }
        var others: [JSON] = []
        if case .array(let list)? = domains["domains"] {
            others = list.filter { if case .string(let name) = $0 { return !withBundle.contains(name) } else { return false } }
        }
        return ["apps": .array(apps), "otherDomains": .array(others)]
    }

    /// An app's whole pane tree, in the language asked for or the browser's best match, and
    /// when and by what each key of the domains it shows last changed (`lastChanges`, by domain
    /// then key).
    func app(_ domain: String, language: String?, acceptLanguage: String?) async throws -> JSON {
        let described = try await describe(domain, pane: nil, language: language, acceptLanguage: acceptLanguage)
        let entry = desktopEntries.entry(for: domain)
        let title = try await appTitle(domain, entry: entry, acceptLanguage: acceptLanguage)
        // The app's own domain and the suites its rows keep values in.
        let shown: Set<String> = if let root = try? Self.pane(in: described) {
            Set([domain] + root.allRows.compactMap { $0.suite?.rawValue })
        } else {
            [domain]
        }
        let notes = await lastChangesByDomain(shown)
        return [
            "domain": .string(domain), "title": title, "icon": .bool(desktopEntries.hasIcon(entry)),
            "language": described["language"] ?? .null, "languages": described["languages"] ?? .array([]),
            "diagnostics": described["diagnostics"] ?? .array([]), "pane": described["pane"] ?? .null,
            "lastChanges": notes,
        ]
    }

    /// Rows that match `query` by words, across every app: each word of the query begins a word
    /// of the row's localised title or of its key (``SearchWords``).
    func search(_ query: String, acceptLanguage: String?) async throws -> JSON {
        let needle = SearchWords(query)
        guard !needle.isEmpty, case .array(let apps)? = try await overview(acceptLanguage: acceptLanguage)["apps"] else {
            return ["results": .array([])]
        }
        var results: [JSON] = []
        for app in apps {
            guard case .string(let domain)? = app["domain"],
                let root = try Self.pane(in: try await describe(domain, pane: nil, language: nil, acceptLanguage: acceptLanguage))
            else { continue }
            let paneTitles = Dictionary(Self.panes(of: root).map { ($0.file, $0.title) }, uniquingKeysWith: { first, _ in first })
            // A row without a title of its own (a slider, as on iOS) is named by its group's.
            for pane in Self.panes(of: root) {
                for section in pane.sections {
                    for row in section.rows {
                        let title = row.title ?? section.title
                        guard let key = row.key, needle.matches(SearchWords(title ?? "") + SearchWords(key)) else { continue }
                        results.append([
                            "domain": .string(domain), "app": app["title"] ?? .null,
                            "pane": .string(row.location.file), "paneTitle": (paneTitles[row.location.file] ?? nil).map(JSON.string) ?? .null,
                            "title": title.map(JSON.string) ?? .null, "key": .string(key),
                        ])
                    }
                }
            }
        }
        return ["results": .array(results)]
    }

    /// A domain's keys with their types, for the plain editor. Keys a bundle marks secure are
    /// listed as set, without their value; keys an administrator forces are marked; the defaults
    /// the domain's running apps registered follow, for keys that hold no value (`registered`);
    /// `lastChanges` says when and by what each key last changed.
    func plainDomain(_ domain: String) async throws -> JSON {
        let answer = try await ask(.request(.get, ["domain": .string(domain)]))
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
                // Arrays and dictionaries come as trees too, which the page edits element by element.
                if !plain.isScalar, !secret.contains(key), let decoded = try? WireValue.decode(value) {
                    entry["tree"] = PlainValue.tree(decoded)
                    entry["editable"] = .bool(!forced.contains(key))
                }
                keys.append(.object(entry))
            }
        }
        // The defaults the domain's running apps registered (typed keys' defaults), for keys
        // that hold no value: shown as the app's default, which a change turns into a value.
        let stored: Set<String> = if case .object(let members)? = answer["value"] { Set(members.keys) } else { [] }
        // A daemon without `registeredDefaults` (an older one) leaves them out.
        if case .object(let registered)? = (try? await ask(.request(.registeredDefaults, ["domain": .string(domain)])))?["values"] {
            for (key, value) in registered.sorted(by: { $0.key < $1.key }) where !stored.contains(key) && !secret.contains(key) {
                let plain = PlainValue(wire: value)
                keys.append([
                    "key": .string(key), "type": .string(plain.type), "text": .string(plain.text),
                    "editable": .bool(plain.isScalar && !forced.contains(key)), "forced": .bool(forced.contains(key)),
                    "secret": false, "registered": true,
                ])
            }
        }
        let notes = await lastChanges(of: domain)
        var page: [String: JSON] = [
            "domain": .string(domain), "keys": .array(keys), "types": .array(PlainValue.types.map(JSON.string)), "lastChanges": notes,
        ]
        if let schema = await schemas.describe(domain) { page["schema"] = Self.schemaForPage(schema) }
        return .object(page)
    }

    /// A schema as the page shows it: each key with its default also as the plain editor's
    /// type and text, which its controls use.
    static func schemaForPage(_ schema: JSON) -> JSON {
        guard case .object(var members) = schema, case .array(let keys)? = members["keys"] else { return schema }
        members["keys"] = .array(keys.map { key in
            guard case .object(var entry) = key, let fallback = entry["default"] else { return key }
            let plain = PlainValue(wire: fallback)
            entry["defaultText"] = .string(plain.text)
            entry["plainType"] = .string(plain.type)
            return .object(entry)
        })
        return .object(members)
    }

    /// The bytes of an image the bundle names (a slider's MinimumValueImage, say), from the
    /// bundle's own folder only, and only a regular file of at most ``maximumImageBytes``
    /// (``DiskFile``): anything else is answered as no such image.
    func image(_ domain: String, name: String) async throws -> (bytes: [UInt8], contentType: String) {
        let allowed = name.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "._-@ ".unicodeScalars.contains($0) }
        guard allowed, !name.hasPrefix("."), !name.isEmpty else { throw Failure(status: .notFound, code: "not_found", message: "no such image") }
        let described = try await ask(.request(.describeBundle, ["domain": .string(domain)]))
        guard case .string(let folder)? = described["path"],
            let data = DiskFile.read(folder + "/" + name, maximumBytes: Self.maximumImageBytes, logger: logger)
        else { throw Failure(status: .notFound, code: "not_found", message: "no such image") }
        return ([UInt8](data), ImageType.contentType(of: name) ?? "application/octet-stream")
    }

    // MARK: Helpers

    /// The row `index` of pane `file` (as the page names them), and the domain its key lives in.
    func locateRow(_ domain: String, body: JSON) async throws -> (row: PaneDescription.Row, owner: String) {
        guard case .string(let file)? = body["file"], case .integer(let index)? = body["index"] else {
            throw Failure(status: .badRequest, code: "bad_request", message: "expected file and index")
        }
        let location = SpecifierLocation(file: file, index: Int(index))
        let root = try Self.pane(in: try await ask(.request(.describeBundle, ["domain": .string(domain)])))
        guard let row = root?.allRows.first(where: { $0.location == location }), row.isEditable else {
            throw Failure(status: .notFound, code: "not_found", message: "\(file) has no setting at \(index)")
        }
        if row.value?.isLocked == true {
            throw Failure(status: .unprocessableContent, code: "forced", message: "set by your administrator")
        }
        return (row, row.suite?.rawValue ?? domain)
    }

    private func describe(_ domain: String, pane: String?, language: String?, acceptLanguage: String?) async throws -> JSON {
        var members: [String: JSON] = ["domain": .string(domain)]
        if let pane { members["pane"] = .string(pane) }
        let first = try await ask(.request(.describeBundle, members))
        guard case .array(let offered)? = first["languages"] else { return first }
        let names = offered.compactMap { if case .string(let name) = $0 { name } else { nil } }
        let wanted = language.map { [$0] } ?? LanguageChoice.preferred(acceptLanguage ?? "")
        guard let chosen = LanguageChoice.best(of: names, for: wanted), first["language"] != .string(chosen) else { return first }
        members["language"] = .string(chosen)
        return try await ask(.request(.describeBundle, members))
    }

    /// The app's name: its desktop entry's, else its bundle's title.
    private func appTitle(_ domain: String, entry: DesktopEntry?, acceptLanguage: String?) async throws -> JSON {
        if let name = entry?.name(for: LanguageChoice.preferred(acceptLanguage ?? "")) { return .string(name) }
        let bundles = try await ask(.request(.listBundles))
        guard case .array(let list)? = bundles["bundles"] else { return .null }
        return list.first { $0["domain"] == .string(domain) }?["title"] ?? .null
    }

    /// Keys that any installed bundle shows as a secure text field, in `domain`.
    func secureKeys(of domain: String) async throws -> Set<String> {
        var keys: Set<String> = []
        guard case .array(let apps)? = try await overview()["apps"] else { return keys }
        for app in apps {
            guard case .string(let bundleDomain)? = app["domain"],
                let root = try Self.pane(in: try await ask(.request(.describeBundle, ["domain": .string(bundleDomain)])))
            else { continue }
            for row in root.allRows where (row.suite?.rawValue ?? bundleDomain) == domain {
                if case .textField(isSecure: true, _, _, _) = row.control, let key = row.key { keys.insert(key) }
            }
        }
        return keys
    }

    /// The pane of a `describeBundle` answer, read by the form the daemon writes it in.
    static func pane(in answer: JSON) throws -> PaneDescription? {
        guard let pane = answer["pane"], pane != .null else { return nil }
        return try PaneDescription(json: pane)
    }

    /// A pane and the child panes described inside it.
    private static func panes(of pane: PaneDescription) -> [PaneDescription] {
        [pane] + pane.allRows.compactMap { row in if case .childPane(_, let child?) = row.control { child } else { nil } }
    }

    /// A daemon request whose refusal becomes a ``Failure`` carrying the daemon's own message.
    func ask(_ request: JSON) async throws -> JSON {
        let answer = try await reply(to: request)
        if let refusal = DefaultsError(answer: answer) { throw Self.failure(refusal) }
        return answer
    }

    /// The daemon's answer to `request`, a refusal included, for a caller that reads some
    /// refusals as answers (`no_journal` to `history`). A daemon that is not there, or does not
    /// answer within ``DaemonRelay/requestTimeout``, is a ``Failure``.
    func reply(to request: JSON) async throws -> JSON {
        do {
            return try await relay.request(request)
        } catch let timedOut as DaemonChannel.TimedOut {
            throw Failure(status: .gatewayTimeout, code: "timed_out", message: timedOut.description)
        } catch {
            throw Failure(status: .serviceUnavailable, code: "unreachable", message: "defaultsd is not running")
        }
    }

    /// The ``Failure`` the daemon's refusal stands for, with its code and message.
    static func failure(_ refusal: DefaultsError) -> Failure {
        let status: HTTPResponse.Status = switch refusal.code {
        case .invalidValue, .forced, .tooLarge, .invalidKey, .noMachineID, .noJournal: .unprocessableContent
        case .invalidDomain, .invalidParameter, .missingParameter: .badRequest
        default: .internalServerError
        }
        return Failure(status: status, code: refusal.code.rawValue, message: refusal.message)
    }

    private static func sortTitle(_ app: JSON) -> String {
        if case .string(let title)? = app["title"] { return title.lowercased() }
        if case .string(let domain)? = app["domain"] { return domain.lowercased() }
        return ""
    }
}
