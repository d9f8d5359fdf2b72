/// The chosen language's tables, and the lookup every localised string goes through.
struct Localizer: Sendable, Hashable {
    /// Table name → entries, for the chosen language (a table of the top level of the bundle
    /// stands in when the language has none of that name). Abandoned tables are empty.
    var tables: [String: [String: String]]

    /// The localised text of `key`, or `key` itself when the table or the entry is missing.
    func string(_ key: String, table: String?) -> String {
        guard let table else { return key }
        return tables[table]?[key] ?? key
    }

    func hasTable(_ name: String) -> Bool { tables[name] != nil }
}
