import DefaultsCore
import FoundationEssentials

/// What the walk of the pane tree finds wrong as a whole: keys used twice, and the like.
extension BundleLoader {
    mutating func reportTreeFindings() {
        reportDuplicateKeys()
        for (target, count) in references.sorted(by: { $0.key < $1.key }) where count > 1 {
            diagnostics.append(
                Diagnostic(.info, .childReferencedMultiple, file: target, "opened by \(count) child panes"))
        }
        for file in pageOrder {
            if let page = pages[file] { reportStringsTable(of: page) }
        }
    }

    private mutating func reportDuplicateKeys() {
        struct Slot: Hashable {
            var group: String?
            var key: String
        }
        var first: [Slot: Specifier] = [:]
        for specifier in walkOrder where specifier.storesValue {
            guard let key = specifier.key, !key.isEmpty else { continue }
            let slot = Slot(group: specifier.applicationGroup, key: key)
            guard let earlier = first[slot] else {
                first[slot] = specifier
                continue
            }
            let consequence: String
            if let a = earlier.supportedIdioms, let b = specifier.supportedIdioms, Set(a).isDisjoint(with: b) {
                consequence = "for other idioms (\(a.joined(separator: "/")) there, \(b.joined(separator: "/")) here)"
            } else {
                consequence = "the later DefaultValue wins"
            }
            diagnostics.append(
                Diagnostic(
                    .warning, .keyDuplicate, at: specifier.location,
                    "\"\(key)\" is also declared at \(earlier.location); \(consequence)"))
        }
    }

    private mutating func reportStringsTable(of page: Page) {
        let folders = files.languages
        func has(_ table: String, in folder: String) -> Bool { stringsFiles["\(folder).lproj/\(table).strings"] != nil }
        if let table = page.stringsTable {
            let present = folders.filter { has(table, in: $0) }
            if present.isEmpty && stringsFiles["\(table).strings"] == nil {
                diagnostics.append(
                    Diagnostic(
                        .warning, .stringsTableMissing, file: page.file,
                        "StringsTable \"\(table)\": no \(table).strings in any .lproj; titles show as written"))
            } else if !present.isEmpty && present.count < folders.count {
                let missing = folders.filter { !has(table, in: $0) }
                diagnostics.append(
                    Diagnostic(
                        .info, .stringsTablePartial, file: page.file,
                        "StringsTable \"\(table)\" is missing in \(missing.map { "\($0).lproj" }.joined(separator: ", "))"
                    ))
            }
        } else if options.stringsTablePolicy == .apple {
            let name = Self.tableName(forPage: page.file)
            let present = folders.filter { has(name, in: $0) }
            if !present.isEmpty {
                diagnostics.append(
                    Diagnostic(
                        .info, .noStringsTableButFileNamedTableExists, file: page.file,
                        "no StringsTable, so Settings does not localise this page, although \(name).strings exists in "
                            + "\(present.count) .lproj (InAppSettingsKit would use it)"))
            }
        }
    }

    /// Reports plists no root reaches. Pages reached only from other roots (the other idiom's
    /// `Root~ipad.plist`, InAppSettingsKit's `Root.inApp.plist`, other languages' roots) are not orphans.
    mutating func reportUnreferenced() {
        var reachable = expanded.union(referenced)
        var queue = plists.keys.filter(Self.isRootVariant).sorted()
        while let file = queue.popLast() {
            guard reachable.insert(file).inserted,
                case .success(let read)? = plists[file], case .dictionary(let root) = read.value,
                let entries = root["PreferenceSpecifiers"]?.arrayValue
            else { continue }
            for case .dictionary(let raw) in entries {
                guard let name = raw["File"]?.stringValue, !name.isEmpty, BundleFiles.staysInside(name) else {
                    continue
                }
                if let target = candidates(for: name).first(where: { plists[$0] != nil }), !reachable.contains(target) {
                    queue.append(target)
                }
            }
        }
        for file in plists.keys.sorted() where !reachable.contains(file) {
            guard case .success(let read)? = plists[file] else { continue }
            let what: String
            if case .dictionary(let root) = read.value, root["PreferenceSpecifiers"]?.arrayValue != nil {
                what = "a page no child pane leads to"
            } else if case .dictionary(let root) = read.value {
                what = "not a settings page (keys: \(root.keys.sorted().prefix(6).joined(separator: ", ")))"
            } else {
                what = "not a settings page (\(read.value.typeWithArticle))"
            }
            diagnostics.append(Diagnostic(.info, .plistUnreferenced, file: file, what))
        }
    }

    /// Every page file outside the tree (other idioms' and InAppSettingsKit's roots and what they
    /// open, orphans) gets the same specifier checks, so a bundle is checked whole; only the tree
    /// being shown gets the tree-wide ones (duplicate keys, strings tables) and gives defaults.
    mutating func checkOtherPages() {
        for file in plists.keys.sorted() where !expanded.contains(file) {
            guard case .success(let read)? = plists[file], case .dictionary(let root) = read.value,
                root["PreferenceSpecifiers"]?.arrayValue != nil
            else { continue }
            _ = makePage(file)
        }
    }

    /// `Root.plist`, `Root~ipad.plist`, `Root.inApp.plist`, ... at the top or in an `.lproj`.
    private static func isRootVariant(_ file: String) -> Bool {
        let parts = file.split(separator: "/")
        guard parts.count == 1 || (parts.count == 2 && parts[0].hasSuffix(".lproj")), let name = parts.last else { return false }
        return name.wholeMatch(of: #/Root(~[A-Za-z]+)?(\.inApp)?\.plist/#) != nil
    }

    /// The table InAppSettingsKit names after a page: its file name without directory, `.plist`,
    /// `.inApp` and `~device`.
    static func tableName(forPage file: String) -> String {
        let name = file.split(separator: "/").last.map(String.init) ?? file
        guard let suffix = name.firstMatch(of: #/(~[A-Za-z]+)?(\.inApp)?\.plist$/#) else { return name }
        return String(name[..<suffix.range.lowerBound])
    }
}
