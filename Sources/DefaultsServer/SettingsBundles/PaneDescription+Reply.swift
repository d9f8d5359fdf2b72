import DefaultsCore
import SettingsBundles

/// The JSON of `describeBundle`: a pane tree with current values and where each comes from.
extension PaneDescription {
    func write(into w: inout JSONWriter) {
        w.beginObject()
        w.key("file"); w.string(file)
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
            case .bundleDefault: w.string("bundleDefault")
            case .unset: w.string("unset")
            }
        }
        w.key("control"); w.beginObject()
        switch row.control {
        case .textField(let isSecure, let keyboardType):
            w.key("kind"); w.string("textField")
            w.key("secure"); w.bool(isSecure)
            w.key("keyboard"); w.string("\(keyboardType)")
        case .toggleSwitch(let isOn):
            w.key("kind"); w.string("toggleSwitch")
            w.key("on"); w.bool(isOn)
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
            w.key("pane"); if let pane { pane.write(into: &w) } else { w.null() }
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
}
