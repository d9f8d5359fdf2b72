import DefaultsCore
import FoundationEssentials

/// The pages of a bundle: the root chosen for the idiom, each child pane read once, and the
/// walk of the pane tree from the root.
extension BundleLoader {
    private var idiomSuffix: String { options.idiom.fileSuffix }

    /// `Root~iphone.plist` (for the idiom) or `Root.plist` at the top level; else the same inside
    /// the chosen language's `.lproj`, then any `.lproj` (NSBundle finds resources there too).
    mutating func chooseRoot() -> String? {
        for name in ["Root\(idiomSuffix).plist", "Root.plist"] where plists[name] != nil { return name }
        let folders = (language.map { [$0] } ?? []) + files.languages.filter { $0 != language }
        for folder in folders {
            for name in ["Root\(idiomSuffix).plist", "Root.plist"] where plists["\(folder).lproj/\(name)"] != nil {
                diagnostics.append(
                    Diagnostic(
                        .warning, .rootOnlyInLproj, file: "\(folder).lproj/\(name)",
                        "no Root.plist at the top of the bundle; using the one in \(folder).lproj"))
                return "\(folder).lproj/\(name)"
            }
        }
        diagnostics.append(
            Diagnostic(.error, .noRoot, file: "Root.plist", "no Root.plist at the top of the bundle or in any .lproj"))
        return nil
    }

    /// Whether `file` was read and is a page; reports once why it is not.
    mutating func isPage(_ file: String, referencedFrom location: SpecifierLocation?) -> Bool {
        guard case .success(let read)? = plists[file] else { return false }
        let via = location.map { " (opened from \($0))" } ?? ""
        guard case .dictionary(let root) = read.value else {
            if reportedNonPages.insert(file).inserted {
                diagnostics.append(
                    Diagnostic(
                        .error, .pageNotDict, file: file,
                        "the root object is \(read.value.typeWithArticle), not \(PlistType.dictionary.nameWithArticle)\(via)"))
            }
            return false
        }
        guard root["PreferenceSpecifiers"]?.arrayValue != nil else {
            if reportedNonPages.insert(file).inserted {
                let keys = root.keys.sorted().prefix(6).joined(separator: ", ")
                diagnostics.append(
                    Diagnostic(
                        .error, .pageNoSpecifiers, file: file, "no PreferenceSpecifiers array (keys: \(keys))\(via)"))
            }
            return false
        }
        return true
    }

    /// Adds `root` and, in place after each child pane, the pages it leads to: a depth-first walk
    /// in document order, with an explicit stack so a deep chain of panes cannot exhaust the
    /// thread's stack. Each page is read once; a child pane leading back to a page on the current
    /// path is a cycle and stops there.
    mutating func walk(from root: String) {
        var stack: [(file: String, page: Page, next: Int)] = []
        func enter(_ file: String, _ loader: inout BundleLoader) {
            guard loader.expanded.insert(file).inserted, let page = loader.makePage(file) else { return }
            loader.pages[file] = page
            loader.pageOrder.append(file)
            stack.append((file, page, 0))
        }
        enter(root, &self)
        while let top = stack.last {
            guard top.next < top.page.specifiers.count else {
                stack.removeLast()
                continue
            }
            stack[stack.count - 1].next += 1
            let specifier = top.page.specifiers[top.next]
            walkOrder.append(specifier)
            guard case .childPane(let child) = specifier.kind, let target = child.page else { continue }
            references[target, default: 0] += 1
            let path = stack.map(\.file)
            if let start = path.firstIndex(of: target) {
                diagnostics.append(
                    Diagnostic(
                        .warning, .childCycle, at: specifier.location,
                        "File \"\(child.file ?? "")\" leads back to \(target): "
                            + (path[start...] + [target]).joined(separator: " → ") + "; not expanded again"))
            } else {
                enter(target, &self)
            }
        }
    }

    mutating func makePage(_ file: String) -> Page? {
        guard case .success(let read)? = plists[file], case .dictionary(let root) = read.value,
            let entries = root["PreferenceSpecifiers"]?.arrayValue
        else { return nil }
        for name in root.keys.sorted() where !SpecifierSchema.rootKeys.contains(name) {
            if let intended = KeySpelling.suggestion(for: name, among: SpecifierSchema.rootKeys), root[intended] == nil
            {
                diagnostics.append(
                    Diagnostic(
                        .warning, .rootUnknownKey, file: file,
                        "\"\(name)\" looks like a misspelling of \"\(intended)\"; Settings ignores it"))
            } else {
                diagnostics.append(
                    Diagnostic(
                        .info, .rootUnknownKey, file: file, "undocumented root key \"\(name)\"; Settings ignores it"))
            }
        }
        var stringsTable: String?
        switch root["StringsTable"] {
        case nil: break
        case .string(let name): stringsTable = name
        case let other?:
            diagnostics.append(
                Diagnostic(
                    .error, .stringsTableNotString, file: file,
                    "StringsTable is \(other.typeWithArticle), not \(PlistType.string.nameWithArticle); the page is not localised"))
        }
        var applicationGroup: String?
        switch root["ApplicationGroupContainerIdentifier"] {
        case nil: break
        case .string(let group):
            applicationGroup = group
            if (try? DomainName(group)) == nil {
                diagnostics.append(
                    Diagnostic(
                        .error, .suiteInvalid, file: file,
                        "ApplicationGroupContainerIdentifier \"\(group)\" is not a valid domain name; "
                            + "the page's values are ignored"))
            }
        case let other?:
            diagnostics.append(
                Diagnostic(
                    .warning, .keyWrongType, file: file,
                    "ApplicationGroupContainerIdentifier is \(other.typeWithArticle), not \(PlistType.string.nameWithArticle)"))
        }

        var specifiers: [Specifier] = []
        for (index, entry) in entries.enumerated() {
            let location = SpecifierLocation(file: file, index: index)
            guard case .dictionary(let raw) = entry else {
                diagnostics.append(
                    Diagnostic(
                        .error, .specNotDict, at: location, "\(entry.typeWithArticle), not \(PlistType.dictionary.nameWithArticle); skipped"))
                continue
            }
            diagnostics += SpecifierChecks.check(raw, at: location)
            var childPage: String?
            if raw["Type"] == .string(SpecifierSchema.childPane), let name = raw["File"]?.stringValue {
                childPage = resolveChild(name, raw: raw, at: location)
            }
            specifiers.append(
                Specifier(raw: raw, location: location, pageApplicationGroup: applicationGroup, childPage: childPage))
        }
        return Page(
            file: file, format: read.format, stringsTable: stringsTable, applicationGroup: applicationGroup,
            title: root["Title"]?.stringValue, specifiers: specifiers)
    }

    /// The page a child pane's `File` names: `File` + `.plist` (never replacing an extension,
    /// since names such as `com.mono0926.LicensePlist` contain dots), relative to the bundle,
    /// sub-directories allowed; the idiom variant first; then the chosen `.lproj`. A `File` that
    /// already ends in `.plist` is also tried as written.
    private mutating func resolveChild(_ name: String, raw: [String: PlistValue], at location: SpecifierLocation)
        -> String?
    {
        if name.isEmpty {
            diagnostics.append(Diagnostic(.error, .childFileMissing, at: location, "File is empty"))
            return nil
        }
        guard BundleFiles.staysInside(name) else {
            diagnostics.append(
                Diagnostic(
                    .error, .childFileOutsideBundle, at: location,
                    "File \"\(name)\" is absolute or leaves the bundle; not followed"))
            return nil
        }
        guard let target = candidates(for: name).first(where: { plists[$0] != nil }) else {
            if let iask = raw.keys.sorted().first(where: SpecifierSchema.isInAppSettingsKit) {
                diagnostics.append(
                    Diagnostic(
                        .info, .childFileNotPlistIASK, at: location,
                        "File \"\(name)\" is not a page; InAppSettingsKit opens it (\(iask))"))
            } else {
                diagnostics.append(
                    Diagnostic(
                        .error, .childFileMissing, at: location, "File \"\(name)\": no \(name).plist in the bundle"))
            }
            return nil
        }
        referenced.insert(target)
        return isPage(target, referencedFrom: location) ? target : nil
    }

    func candidates(for name: String) -> [String] {
        var bases = [name]
        if name.hasSuffix(".plist") { bases.append(String(name.dropLast(".plist".count))) }
        var result: [String] = []
        for base in bases {
            result += ["\(base)\(idiomSuffix).plist", "\(base).plist"]
        }
        if let language {
            for base in bases {
                result += ["\(language).lproj/\(base)\(idiomSuffix).plist", "\(language).lproj/\(base).plist"]
            }
        }
        return result
    }
}
