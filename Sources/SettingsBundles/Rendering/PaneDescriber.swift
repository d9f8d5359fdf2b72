import DefaultsCore
import FoundationEssentials

extension SettingsBundle {
    /// The root pane as Settings shows it, with the panes its child panes open nested inside.
    /// Each page is nested once, where the walk first reaches it (depth first, in document order,
    /// at most ``maximumNesting`` deep); a later child pane to it, or one closing a cycle, names
    /// its file without a pane. So the tree stays as large as the bundle, whatever its links.
    ///
    /// - Parameter lookup: the stored value of a key; a key it does not know shows its
    ///   `DefaultValue`, marked ``CurrentValue/Source-swift.enum/bundleDefault``.
    public func describe(lookup: ValueLookup) -> PaneDescription? {
        rootFile.flatMap { describe(pane: $0, lookup: lookup) }
    }

    /// One pane (a file of ``pages``). With `expandingChildren` false its child-pane rows carry no pane.
    public func describe(pane file: String, expandingChildren: Bool = true, lookup: ValueLookup) -> PaneDescription? {
        var described: Set<String> = [file]
        return describe(
            pane: file, title: nil, depth: expandingChildren ? 1 : Self.maximumNesting, described: &described,
            lookup: lookup)
    }

    /// How deep child panes are nested in a description.
    public static let maximumNesting = 32

    private func describe(
        pane file: String, title: String?, depth: Int, described: inout Set<String>, lookup: ValueLookup
    ) -> PaneDescription? {
        guard let page = pages[file] else { return nil }
        var sections: [PaneDescription.Section] = []
        var current = PaneDescription.Section(location: nil, title: nil, footer: nil, rows: [])
        func close() {
            if current.location != nil || !current.rows.isEmpty { sections.append(current) }
        }
        for specifier in page.specifiers where specifier.isVisible(on: options.idiom) {
            let text = { (raw: String?) in raw.map { localized($0, in: page) } }
            switch specifier.kind {
            case .group(let footer):
                close()
                current = .init(
                    location: specifier.location, title: text(specifier.title), footer: text(footer), rows: [])
            case .radioGroup(_, let footer):
                close()
                current = .init(
                    location: specifier.location, title: text(specifier.title), footer: text(footer),
                    rows: [row(specifier, in: page, depth: depth, described: &described, lookup: lookup)])
                sections.append(current)
                current = .init(location: nil, title: nil, footer: nil, rows: [])
            default:
                current.rows.append(row(specifier, in: page, depth: depth, described: &described, lookup: lookup))
            }
        }
        close()
        return PaneDescription(file: file, title: title, sections: sections)
    }

    private func row(
        _ specifier: Specifier, in page: Page, depth: Int, described: inout Set<String>, lookup: ValueLookup
    ) -> PaneDescription.Row {
        let title = specifier.title.map { localized($0, in: page) }
        let rowDefault = specifier.storesValue ? bundleDefault(of: specifier) : nil
        var value: CurrentValue?
        if specifier.storesValue, let key = specifier.key {
            // A specifier whose suite is not a valid domain is never looked up (in the app's domain least of all).
            if specifier.hasUsableDomain, let stored = lookup(key, specifier.suite) {
                value = CurrentValue(
                    value: stored.value, source: stored.isForced ? .managed(origin: stored.origin) : .stored(origin: stored.origin))
            } else if let rowDefault {
                value = CurrentValue(value: rowDefault, source: .bundleDefault)
            } else {
                value = CurrentValue(value: nil, source: .unset)
            }
        }
        // A key a secure text field shows is masked wherever it shows: a title value, a toggle
        // or a choice of the same key would otherwise give the secret away.
        let isSecret = specifier.key.map { secureKeys.contains(SuiteKey(suite: specifier.suite, key: $0)) } ?? false
        let hasValue = value?.value.map { !$0.displayText.isEmpty } ?? false
        if isSecret {
            value?.value = nil
            value?.isMasked = true
        }
        let shown = value?.value
        let control: PaneDescription.Control
        var display = ""
        switch specifier.kind {
        case .textField(let field):
            control = .textField(
                isSecure: field.isSecure, keyboardType: field.keyboardType,
                autocapitalization: field.autocapitalizationType, autocorrection: field.autocorrectionType)
            display = shown?.displayText ?? ""
        case .toggleSwitch(let toggle):
            let isOn = shown.map { Self.isOn($0, toggle) } ?? false
            control = .toggleSwitch(isOn: isOn, trueValue: toggle.trueValue ?? .bool(true), falseValue: toggle.falseValue ?? .bool(false))
            display = isOn ? "ON" : "OFF"
        case .slider(let slider):
            control = .slider(
                minimum: slider.minimumValue, maximum: slider.maximumValue, minimumImage: slider.minimumValueImage,
                maximumImage: slider.maximumValueImage)
            var parts: [String] = []
            if let shown { parts.append(shown.displayText) }
            if let minimum = slider.minimumValue, let maximum = slider.maximumValue {
                parts.append("(\(PlistValue.format(minimum))–\(PlistValue.format(maximum)))")
            }
            display = parts.joined(separator: " ")
        case .multiValue(let choices):
            let options = self.options(choices, selected: shown, in: page)
            control = .multiValue(options: options)
            display = options.first(where: \.isSelected).map { $0.shortTitle ?? $0.title } ?? Self.notAChoice(shown)
        case .radioGroup(let choices, _):
            let options = self.options(choices, selected: shown, in: page)
            control = .radioGroup(options: options)
            display = options.first(where: \.isSelected)?.title ?? Self.notAChoice(shown)
        case .titleValue(let choices):
            control = .titleValue
            if let shown {
                display =
                    choices.index(of: shown).flatMap { index in
                        choices.titles.indices.contains(index) ? localized(choices.titles[index], in: page) : nil
                    } ?? shown.displayText
            }
        case .childPane(let child):
            var pane: PaneDescription?
            if let target = child.page, depth < Self.maximumNesting, described.insert(target).inserted {
                pane = describe(pane: target, title: title, depth: depth + 1, described: &described, lookup: lookup)
            }
            control = .childPane(file: child.page, pane: pane)
        case .group, .unknown:
            control = .unknown(raw: specifier.raw)
        }
        if isSecret { display = hasValue ? "••••" : "" }
        return PaneDescription.Row(
            location: specifier.location, type: specifier.type, key: specifier.key, suite: specifier.suite,
            title: title, value: value, defaultValue: rowDefault, control: control,
            displayValue: display)
    }

    /// What a multi-value or radio group shows for a value that is none of its choices (a
    /// `DefaultValue` missing from `Values`, or a value written by an app): flagged, never blank.
    static func notAChoice(_ value: PlistValue?) -> String {
        value.map { "\($0.quotedText) (not one of the choices)" } ?? ""
    }

    /// Settings shows a toggle ON when its value equals TrueValue, OFF when it equals FalseValue,
    /// and otherwise by the value's `boolValue` (`"YES"` is ON, `"NO"` OFF).
    static func isOn(_ value: PlistValue, _ toggle: Specifier.ToggleSwitch) -> Bool {
        if let on = toggle.trueValue, value.isSettingsEqual(on) { return true }
        if let off = toggle.falseValue, value.isSettingsEqual(off) { return false }
        return value.settingsBoolValue
    }

    private func options(_ choices: Specifier.Choices, selected: PlistValue?, in page: Page) -> [PaneDescription.Option]
    {
        let selectedIndex = selected.flatMap(choices.index(of:))
        var options = choices.values.enumerated().map { index, value in
            PaneDescription.Option(
                title: choices.titles.indices.contains(index)
                    ? localized(choices.titles[index], in: page) : value.displayText,
                shortTitle: choices.shortTitles.flatMap {
                    $0.indices.contains(index) ? localized($0[index], in: page) : nil
                },
                value: value, isSelected: index == selectedIndex)
        }
        if choices.displaySortedByTitle {
            // Settings sorts with the user's locale. The daemon carries no locale data (no ICU,
            // see ARCHITECTURE.md), so titles sort ignoring case, in Unicode order, ties by bundle order.
            options = options.enumerated().sorted { a, b in
                let (left, right) = (a.element.title.lowercased(), b.element.title.lowercased())
                return left != right ? left.unicodeScalars.lexicographicallyPrecedes(right.unicodeScalars) : a.offset < b.offset
            }.map(\.element)
        }
        return options
    }
}
