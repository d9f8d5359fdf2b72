import DefaultsCore

/// The JSON form of a pane, as `describeBundle` answers it (docs/PROTOCOL.md): written by the
/// daemon and read back by its clients (`defaults settings`), so both sides share one form.
///
/// ```swift
/// var writer = JSONWriter()
/// pane.writeJSON(into: &writer)
/// let same = try PaneDescription(json: JSONParser.parse(String(decoding: writer.bytes, as: UTF8.self)))
/// ```
extension PaneDescription {
    public func writeJSON(into w: inout JSONWriter) {
        w.beginObject()
        w.key("file"); optional(file, &w)
        w.key("title"); optional(title, &w)
        w.key("sections"); w.beginArray()
        for section in sections {
            w.beginObject()
            w.key("title"); optional(section.title, &w)
            w.key("footer"); optional(section.footer, &w)
            w.key("rows"); w.beginArray()
            for row in section.rows { write(row, into: &w) }
            w.endArray()
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }

    private func write(_ row: Row, into w: inout JSONWriter) {
        w.beginObject()
        w.key("index"); w.integer(Int64(row.location.index))
        w.key("type"); optional(row.type, &w)
        w.key("key"); optional(row.key, &w)
        w.key("suite"); optional(row.suite?.rawValue, &w)
        w.key("title"); optional(row.title, &w)
        w.key("display"); w.string(row.displayValue)
        if let current = row.value {
            w.key("value"); if let value = current.value { w.value(value) } else { w.null() }
            w.key("masked"); w.bool(current.isMasked)
            w.key("source")
            switch current.source {
            case .stored(let origin): w.string("stored"); w.key("origin"); w.string(origin)
            case .managed(let origin): w.string("managed"); w.key("origin"); w.string(origin); w.key("locked"); w.bool(true)
            case .bundleDefault: w.string("bundleDefault")
            case .unset: w.string("unset")
            }
        }
        if let defaultValue = row.defaultValue {
            // A secure field's default is as secret as its value.
            w.key("defaultValue"); if row.value?.isMasked == true { w.null() } else { w.value(defaultValue) }
        }
        w.key("control"); w.beginObject()
        switch row.control {
        case .textField(let isSecure, let keyboardType, let autocapitalization, let autocorrection):
            w.key("kind"); w.string("textField")
            w.key("secure"); w.bool(isSecure)
            w.key("keyboard"); w.string("\(keyboardType)")
            w.key("autocapitalization"); w.string(autocapitalization.rawValue)
            w.key("autocorrection"); w.string(autocorrection.rawValue)
        case .toggleSwitch(let isOn, let trueValue, let falseValue):
            w.key("kind"); w.string("toggleSwitch")
            w.key("on"); w.bool(isOn)
            w.key("trueValue"); w.value(trueValue)
            w.key("falseValue"); w.value(falseValue)
        case .slider(let minimum, let maximum, let minimumImage, let maximumImage):
            w.key("kind"); w.string("slider")
            w.key("minimum"); if let minimum { w.real(minimum) } else { w.null() }
            w.key("maximum"); if let maximum { w.real(maximum) } else { w.null() }
            w.key("minimumImage"); optional(minimumImage, &w)
            w.key("maximumImage"); optional(maximumImage, &w)
        case .multiValue(let options), .radioGroup(let options):
            if case .multiValue = row.control { w.key("kind"); w.string("multiValue") } else { w.key("kind"); w.string("radioGroup") }
            w.key("options"); w.beginArray()
            for option in options {
                w.beginObject()
                w.key("title"); w.string(option.title)
                w.key("shortTitle"); optional(option.shortTitle, &w)
                w.key("value"); w.value(option.value)
                w.key("selected"); w.bool(option.isSelected)
                w.endObject()
            }
            w.endArray()
        case .titleValue:
            w.key("kind"); w.string("titleValue")
        case .childPane(let file, let pane):
            w.key("kind"); w.string("childPane")
            w.key("file"); optional(file, &w)
            w.key("pane"); if let pane { pane.writeJSON(into: &w) } else { w.null() }
        case .unknown(let raw):
            w.key("kind"); w.string("unknown")
            w.key("raw"); w.dictionary(raw)
        }
        w.endObject()
        w.endObject()
    }

    private func optional(_ text: String?, _ w: inout JSONWriter) {
        if let text { w.string(text) } else { w.null() }
    }

    /// Reads a pane written by ``writeJSON(into:)``. A row's location is its page file and the
    /// index the JSON gives.
    public init(json: JSON) throws(DefaultsError) {
        let reader = JSONShape(json, path: "pane")
        let file = try reader.string("file") ?? ""
        var sections: [Section] = []
        for section in try reader.array("sections") {
            var rows: [Row] = []
            for row in try section.array("rows") { rows.append(try Self.row(row, file: file)) }
            sections.append(
                Section(location: nil, title: try section.string("title"), footer: try section.string("footer"), rows: rows))
        }
        self.init(file: file, title: try reader.string("title"), sections: sections)
    }

    private static func row(_ row: JSONShape, file: String) throws(DefaultsError) -> Row {
        var value: CurrentValue?
        if let source = try row.string("source") {
            let stored = try row.value("value")
            switch source {
            case "stored": value = CurrentValue(value: stored, source: .stored(origin: try row.string("origin") ?? ""))
            case "managed": value = CurrentValue(value: stored, source: .managed(origin: try row.string("origin") ?? ""))
            case "bundleDefault": value = CurrentValue(value: stored, source: .bundleDefault)
            default: value = CurrentValue(value: stored, source: .unset)
            }
            value?.isMasked = try row.bool("masked") ?? false
        }
        let control = try row.object("control")
        let kind: Control
        switch try control.string("kind") {
        case "textField":
            kind = .textField(
                isSecure: try control.bool("secure") ?? false,
                keyboardType: KeyboardType.allCases.first { "\($0)" == (try? control.string("keyboard")) } ?? .alphabet,
                autocapitalization: (try control.string("autocapitalization")).flatMap(AutocapitalizationType.init) ?? .none,
                autocorrection: (try control.string("autocorrection")).flatMap(AutocorrectionType.init) ?? .default)
        case "toggleSwitch":
            kind = .toggleSwitch(
                isOn: try control.bool("on") ?? false, trueValue: try control.value("trueValue") ?? .bool(true),
                falseValue: try control.value("falseValue") ?? .bool(false))
        case "slider":
            kind = .slider(
                minimum: try control.number("minimum"), maximum: try control.number("maximum"),
                minimumImage: try control.string("minimumImage"), maximumImage: try control.string("maximumImage"))
        case let name where name == "multiValue" || name == "radioGroup":
            var options: [Option] = []
            for option in try control.array("options") {
                options.append(
                    Option(
                        title: try option.string("title") ?? "", shortTitle: try option.string("shortTitle"),
                        value: try option.value("value") ?? .string(""), isSelected: try option.bool("selected") ?? false))
            }
            kind = name == "multiValue" ? .multiValue(options: options) : .radioGroup(options: options)
        case "titleValue":
            kind = .titleValue
        case "childPane":
            let pane = try control.optionalObject("pane").map { (pane: JSONShape) throws(DefaultsError) in try PaneDescription(json: pane.json) }
            kind = .childPane(file: try control.string("file"), pane: pane)
        default:
            guard case .dictionary(let raw)? = try control.value("raw") else { throw DefaultsError(.badJSON, "pane: unknown control") }
            kind = .unknown(raw: raw)
        }
        return Row(
            location: SpecifierLocation(file: file, index: Int(try row.integer("index") ?? 0)), type: try row.string("type"),
            key: try row.string("key"), suite: try row.string("suite").flatMap { try? DomainName($0) },
            title: try row.string("title"), value: value, defaultValue: try row.value("defaultValue"), control: kind,
            displayValue: try row.string("display") ?? "")
    }
}

/// Typed reads of a JSON object's members, each failing with the member's path.
private struct JSONShape {
    let json: JSON
    let path: String

    init(_ json: JSON, path: String) {
        self.json = json
        self.path = path
    }

    private func member(_ name: String) -> JSON? {
        guard let member = json[name], member != .null else { return nil }
        return member
    }

    private func wrong(_ name: String, _ expected: String) -> DefaultsError {
        DefaultsError(.badJSON, "\(path).\(name) must be \(expected)")
    }

    func string(_ name: String) throws(DefaultsError) -> String? {
        guard let member = member(name) else { return nil }
        guard case .string(let text) = member else { throw wrong(name, "a string") }
        return text
    }

    func bool(_ name: String) throws(DefaultsError) -> Bool? {
        guard let member = member(name) else { return nil }
        guard case .bool(let flag) = member else { throw wrong(name, "true or false") }
        return flag
    }

    func integer(_ name: String) throws(DefaultsError) -> Int64? {
        guard let member = member(name) else { return nil }
        guard case .integer(let number) = member else { throw wrong(name, "an integer") }
        return number
    }

    func number(_ name: String) throws(DefaultsError) -> Double? {
        switch member(name) {
        case nil: return nil
        case .integer(let number)?: return Double(number)
        case .real(let number)?: return number
        default: throw wrong(name, "a number")
        }
    }

    /// A property-list value in the wire form (`{"$date":...}`, `{"$data":...}`).
    func value(_ name: String) throws(DefaultsError) -> PlistValue? {
        guard let member = member(name) else { return nil }
        return try WireValue.decode(member)
    }

    func object(_ name: String) throws(DefaultsError) -> JSONShape {
        guard let object = try optionalObject(name) else { throw wrong(name, "an object") }
        return object
    }

    func optionalObject(_ name: String) throws(DefaultsError) -> JSONShape? {
        guard let member = member(name) else { return nil }
        guard case .object = member else { throw wrong(name, "an object") }
        return JSONShape(member, path: path + "." + name)
    }

    func array(_ name: String) throws(DefaultsError) -> [JSONShape] {
        guard let member = member(name) else { return [] }
        guard case .array(let elements) = member else { throw wrong(name, "an array") }
        return elements.enumerated().map { JSONShape($1, path: "\(path).\(name)[\($0)]") }
    }
}
