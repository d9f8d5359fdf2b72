import DefaultsCore
import FoundationEssentials

/// Reads a bundle directory into a ``SettingsBundle``: lists its files, chooses the language and
/// the root page, reads every strings table and plist, walks the pane tree from the root and
/// gathers diagnostics and defaults. Owned by one ``SettingsBundle/load(at:options:)`` call.
struct BundleLoader {
    let directory: URL
    let options: LoadOptions
    var files: BundleFiles
    let language: String?
    var diagnostics: [Diagnostic] = []
    var stringsFiles: [String: StringsFile] = [:]
    var plists: [String: Result<PlistReader.Read, PlistReader.Failure>] = [:]
    var pages: [String: Page] = [:]
    var walkOrder: [Specifier] = []
    var expanded: Set<String> = []
    var reportedNonPages: Set<String> = []
    var references: [String: Int] = [:]
    /// Pages in the order the walk reached them.
    var pageOrder: [String] = []
    /// Every file the root or a child pane named, page or not.
    var referenced: Set<String> = []

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
            guard isTopLevel || isChosen, let fileName = parts.last else { continue }
            let name = String(fileName.dropLast(".strings".count))
            // The chosen language's table wins over a top-level one of the same name.
            if isTopLevel && tables[name] != nil { continue }
            tables[name] = file.entries ?? [:]
        }
        return Localizer(tables: tables)
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
