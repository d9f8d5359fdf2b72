import DefaultsCore
import FoundationEssentials

/// Reads a bundle directory into a ``SettingsBundle``: lists its files, chooses the language and
/// the root page, reads every strings table and plist, walks the pane tree from the root and
/// gathers diagnostics and defaults. Owned by one ``SettingsBundle/load(at:options:)`` call.
struct BundleLoader {
    /// Larger files are not read: no settings page or table comes close.
    static let maximumFileSize = 16 << 20

    private let directory: URL
    private let options: LoadOptions
    private let files: BundleFiles
    private let language: String?
    private var diagnostics: [Diagnostic] = []
    private var stringsFiles: [String: StringsFile] = [:]
    private var plists: [String: Result<PlistReader.Read, PlistReader.Failure>] = [:]
    private var pages: [String: Page] = [:]
    private var walkOrder: [Specifier] = []
    private var expanded: Set<String> = []
    private var reportedNonPages: Set<String> = []
    private var references: [String: Int] = [:]
    /// Pages in the order the walk reached them.
    private var pageOrder: [String] = []
    /// Every file the root or a child pane named, page or not.
    private var referenced: Set<String> = []

    init(directory: URL, options: LoadOptions) throws(SettingsBundleError) {
        self.directory = directory
        self.options = options
        self.files = try BundleFiles(directory: directory)
        self.language = LanguageSelection.choose(preferred: options.languages, available: files.languages)
    }

    mutating func load() -> SettingsBundle {
        diagnostics += files.diagnostics
        readStringsFiles()
        readPlists()
        let rootFile = chooseRoot()
        if let rootFile { referenced.insert(rootFile) }
        if let rootFile, isPage(rootFile, referencedFrom: nil) {
            walk(from: rootFile)
        }
        reportTreeFindings()
        checkOtherPages()
        reportUnreferenced()
        return SettingsBundle(
            directory: directory, options: options, availableLanguages: files.languages, language: language,
            rootFile: rootFile.flatMap { pages[$0] == nil ? nil : $0 }, pages: pages, specifiers: walkOrder,
            stringsFiles: stringsFiles, diagnostics: diagnostics, defaults: gatherDefaults(), localizer: localizer())
    }

    // MARK: Files

    private mutating func readStringsFiles() {
        for path in files.paths where path.hasSuffix(".strings") {
            guard let data = files.contents(of: path, diagnostics: &diagnostics) else { continue }
            let (file, found) = StringsFile.read(data, path: path)
            stringsFiles[path] = file
            diagnostics += found
        }
    }

    private mutating func readPlists() {
        for path in files.paths where path.hasSuffix(".plist") {
            guard let data = files.contents(of: path, diagnostics: &diagnostics) else { continue }
            let result = PlistReader.read(data)
            plists[path] = result
            switch result {
            case .failure(let failure):
                diagnostics.append(Diagnostic(.error, .plistUnparseable, file: path, failure.message))
            case .success(let read):
                if let problem = read.prologProblem {
                    diagnostics.append(Diagnostic(.warning, .plistNonstandardProlog, file: path, problem))
                }
            }
        }
    }

    private func localizer() -> Localizer {
        var tables: [String: [String: String]] = [:]
        for (path, file) in stringsFiles {
            let parts = path.split(separator: "/")
            let isTopLevel = parts.count == 1
            let isChosen = parts.count == 2 && language.map { parts[0] == "\($0).lproj" } ?? false
            guard isTopLevel || isChosen else { continue }
            let name = String(parts.last!.dropLast(".strings".count))
            // The chosen language's table wins over a top-level one of the same name.
            if isTopLevel && tables[name] != nil { continue }
            tables[name] = file.entries ?? [:]
        }
        return Localizer(tables: tables)
    }

    // MARK: Pages

    private var idiomSuffix: String { options.idiom.fileSuffix }

    /// `Root~iphone.plist` (for the idiom) or `Root.plist` at the top level; else the same inside
    /// the chosen language's `.lproj`, then any `.lproj` (NSBundle finds resources there too).
    private mutating func chooseRoot() -> String? {
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
    private mutating func isPage(_ file: String, referencedFrom location: SpecifierLocation?) -> Bool {
        guard case .success(let read)? = plists[file] else { return false }
        let via = location.map { " (opened from \($0))" } ?? ""
        guard case .dictionary(let root) = read.value else {
            if reportedNonPages.insert(file).inserted {
                diagnostics.append(
                    Diagnostic(
                        .error, .pageNotDict, file: file,
                        "the root object is \(read.value.typeWithArticle), not a dictionary\(via)"))
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
    private mutating func walk(from root: String) {
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

    private mutating func makePage(_ file: String) -> Page? {
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
                    "StringsTable is \(other.typeWithArticle), not a string; the page is not localised"))
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
                    "ApplicationGroupContainerIdentifier is \(other.typeWithArticle), not a string"))
        }

        var specifiers: [Specifier] = []
        for (index, entry) in entries.enumerated() {
            let location = SpecifierLocation(file: file, index: index)
            guard case .dictionary(let raw) = entry else {
                diagnostics.append(
                    Diagnostic(
                        .error, .specNotDict, at: location, "\(entry.typeWithArticle), not a dictionary; skipped"))
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

    private func candidates(for name: String) -> [String] {
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

    // MARK: Tree findings

    private mutating func reportTreeFindings() {
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
    private mutating func reportUnreferenced() {
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
    private mutating func checkOtherPages() {
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
        guard parts.count == 1 || (parts.count == 2 && parts[0].hasSuffix(".lproj")) else { return false }
        return parts.last!.wholeMatch(of: #/Root(~[A-Za-z]+)?(\.inApp)?\.plist/#) != nil
    }

    /// The table InAppSettingsKit names after a page: its file name without directory, `.plist`,
    /// `.inApp` and `~device`.
    static func tableName(forPage file: String) -> String {
        let name = file.split(separator: "/").last.map(String.init) ?? file
        guard let suffix = name.firstMatch(of: #/(~[A-Za-z]+)?(\.inApp)?\.plist$/#) else { return name }
        return String(name[..<suffix.range.lowerBound])
    }

    // MARK: Defaults

    private func gatherDefaults() -> BundleDefaults {
        var defaults = BundleDefaults()
        for specifier in walkOrder
        where specifier.storesValue && specifier.isUsableKey && specifier.hasUsableDomain
            && specifier.isVisible(on: options.idiom)
        {
            guard let value = specifier.defaultValue, let key = specifier.key else { continue }
            defaults.register(value, forKey: key, suite: specifier.suite, from: specifier.location)
        }
        return defaults
    }
}
