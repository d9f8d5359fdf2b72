import DefaultsCore

/// What a text rendering adds to the Settings app's own layout.
///
/// ```swift
/// pane.renderedText(TextRenderingOptions(showsKeys: true, showsChoices: true, keyStyle: { "\u{1B}[2m" + $0 + "\u{1B}[0m" }))
/// ```
public struct TextRenderingOptions: Sendable {
    /// Each row's key in a column beside its title, so a person can name it to `defaults`.
    public var showsKeys: Bool
    /// A multi-value's choices under its row, `title = value`, the selected one checked.
    public var showsChoices: Bool
    /// Applied to each key (not to its padding), to dim it on a terminal, say.
    public var keyStyle: @Sendable (String) -> String

    public init(showsKeys: Bool = false, showsChoices: Bool = false, keyStyle: @escaping @Sendable (String) -> String = { $0 }) {
        self.showsKeys = showsKeys
        self.showsChoices = showsChoices
        self.keyStyle = keyStyle
    }
}

extension PaneDescription {
    /// The pane as text, laid out as Settings does: section titles in capitals, one row per
    /// specifier with its title and value (toggles `ON`/`OFF`, the selected title of a
    /// multi-value, a slider's value and range, `••••` for a secure field), a radio group's
    /// choices with `✓` on the selected one, child panes with `>`, footers indented under their
    /// section. Specifiers Settings does not show are left out.
    ///
    /// ```text
    /// GENERAL INFO
    ///   Commanding Officer  Picard
    ///   Warp Drive          ON
    /// ```
    public func renderedText(_ options: TextRenderingOptions = TextRenderingOptions()) -> String {
        let shown = sections.map { section in
            section.rows.filter { if case .unknown = $0.control { false } else { true } }
        }
        // A radio group's title is its section's header, not a row title: it takes no column.
        let titled = shown.joined().filter { if case .radioGroup = $0.control { false } else { true } }
        let width = titled.map { Self.columns($0.title ?? "") }.max() ?? 0
        let keyWidth = options.showsKeys ? shown.joined().map { Self.columns($0.key ?? "") }.max() ?? 0 : 0
        func line(_ title: String?, _ key: String?, _ value: String) -> String {
            guard options.showsKeys else { return Self.line(title, value, width: width) }
            let key = key ?? ""
            let keyColumn = (key.isEmpty ? "" : options.keyStyle(key)) + String(repeating: " ", count: max(0, keyWidth - Self.columns(key)))
            return Self.line(title, keyColumn + "  " + value, width: width)
        }
        var lines: [String] = []
        for (section, rows) in zip(sections, shown) {
            let header = section.title.flatMap { $0.isEmpty ? nil : $0.uppercased() }
            let footer = section.footer.flatMap { $0.isEmpty ? nil : $0 }
            guard header != nil || !rows.isEmpty || footer != nil else { continue }
            if !lines.isEmpty { lines.append("") }
            if let header { lines.append(header) }
            for row in rows {
                switch row.control {
                case .radioGroup(let choices):
                    if options.showsKeys, let key = row.key { lines.append("  " + options.keyStyle(key)) }
                    lines += choices.map { "  " + ($0.isSelected ? "✓ " : "  ") + $0.title + Self.choiceValue($0, options) }
                    if !choices.contains(where: \.isSelected), !row.displayValue.isEmpty { lines.append("    " + row.displayValue) }
                case .childPane:
                    lines.append(line(row.title, nil, ">"))
                case .multiValue(let choices):
                    lines.append(line(row.title, row.key, row.displayValue))
                    if options.showsChoices {
                        lines += choices.map { "      " + ($0.isSelected ? "✓ " : "  ") + $0.title + Self.choiceValue($0, options) }
                    }
                default:
                    // As the Settings app says of a locked row.
                    let value = row.value?.isLocked == true ? row.displayValue + " (set by your administrator)" : row.displayValue
                    lines.append(line(row.title, row.key, value))
                }
            }
            if let footer {
                lines += footer.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }
            }
        }
        return lines.map(Self.trimmingTrailingSpaces).joined(separator: "\n") + "\n"
    }

    /// ` = 15` after a choice's title, when choices are shown and the value differs from the title.
    private static func choiceValue(_ option: Option, _ options: TextRenderingOptions) -> String {
        guard options.showsChoices, option.value.displayText != option.title else { return "" }
        return " = " + option.value.displayText
    }

    private static func line(_ title: String?, _ value: String, width: Int) -> String {
        let title = title ?? ""
        return "  " + title + String(repeating: " ", count: max(0, width - columns(title))) + "  " + value
    }

    /// The terminal columns a text takes: two for East Asian wide and full-width characters, none
    /// for combining marks and zero-width characters, one otherwise. Enough to keep the values of
    /// a Chinese or Japanese pane aligned.
    static func columns(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { total, scalar in
            switch scalar.value {
            case 0x200B...0x200F, 0x2060...0x2064, 0xFE00...0xFE0F, 0xFEFF: return total
            case 0x0300...0x036F, 0x1AB0...0x1AFF, 0x20D0...0x20FF: return total
            case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
                0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
                0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
                return total + 2
            default: return total + 1
            }
        }
    }

    private static func trimmingTrailingSpaces(_ line: String) -> String {
        String(line.reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}

extension SettingsBundle {
    /// A pane (the root by default) as text; see ``PaneDescription/renderedText()``.
    ///
    /// ```swift
    /// print(bundle.renderText(lookup: StoredValue.lookup(in: ["rank": "Captain"], origin: "app")))
    /// ```
    public func renderText(pane file: String? = nil, lookup: ValueLookup) -> String {
        guard let file = file ?? rootFile, let pane = describe(pane: file, expandingChildren: false, lookup: lookup)
        else { return "" }
        return pane.renderedText()
    }
}
