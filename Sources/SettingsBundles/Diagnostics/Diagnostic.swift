/// One finding about a bundle: where it is, how serious it is, and what it means.
///
/// Diagnostics never stop a load: a bad specifier, page or strings file is reported and the
/// rest of the bundle is still read.
///
/// ```swift
/// for d in bundle.diagnostics where d.severity == .error { print(d) }
/// // Root.plist[4]: error KEY_EMPTY: PSTextFieldSpecifier has an empty Key
/// ```
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable, Comparable, CaseIterable {
        /// Worth knowing; Settings behaves as the author most likely meant.
        case info
        /// Suspicious; Settings may not behave as the author meant.
        case warning
        /// Against Apple's schema; the element is ignored, or behaves differently than written.
        case error

        private var rank: Int {
            switch self {
            case .info: 0
            case .warning: 1
            case .error: 2
            }
        }

        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
    }

    public var severity: Severity
    public var code: DiagnosticCode
    /// The file, relative to the bundle directory (`Root.plist`, `en.lproj/Root.strings`).
    public var file: String
    /// The specifier's index in the page's `PreferenceSpecifiers`, when the finding is about one.
    public var index: Int?
    /// The 1-based line, for findings inside a `.strings` file.
    public var line: Int?
    public var message: String

    public init(
        _ severity: Severity, _ code: DiagnosticCode, file: String, index: Int? = nil, line: Int? = nil,
        _ message: String
    ) {
        self.severity = severity
        self.code = code
        self.file = file
        self.index = index
        self.line = line
        self.message = message
    }

    /// `Root.plist[3]`, `en.lproj/Chat.strings:6` or `Root.plist`.
    public var place: String {
        if let index { return "\(file)[\(index)]" }
        if let line { return "\(file):\(line)" }
        return file
    }

    public var description: String { "\(place): \(severity.rawValue) \(code.rawValue): \(message)" }
}

extension Diagnostic {
    init(_ severity: Severity, _ code: DiagnosticCode, at location: SpecifierLocation, _ message: String) {
        self.init(severity, code, file: location.file, index: location.index, message)
    }
}

extension Array where Element == Diagnostic {
    /// The diagnostics with the given code, in order.
    public func with(_ code: DiagnosticCode) -> [Diagnostic] { filter { $0.code == code } }

    /// The diagnostics of at least the given severity, in order.
    public func atLeast(_ severity: Diagnostic.Severity) -> [Diagnostic] { filter { $0.severity >= severity } }
}
