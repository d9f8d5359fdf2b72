import DefaultsCore

/// The verdict on a proposed write: allowed, or refused with a message that names the specifier
/// and what it allows.
///
/// ```swift
/// bundle.validate(.integer(11), forKey: "warpFactor")
/// // .refused("warpFactor must be a number from 1 to 10 (PSSliderSpecifier \"Warp Factor\")")
/// ```
public enum WriteCheck: Sendable, Hashable {
    case ok
    case refused(String)

    public var isAllowed: Bool { self == .ok }

    /// The refusal message, nil when allowed.
    public var message: String? {
        if case .refused(let message) = self { return message }
        return nil
    }
}

extension SettingsBundle {
    /// Checks a value an app or a user wants to store under `key` (in `suite`, nil for the app's
    /// own domain) against the specifiers that describe that key, as the Settings app would
    /// constrain it:
    ///
    /// - toggle: its `TrueValue` or `FalseValue`, or a bool when it has neither;
    /// - multi-value and radio group: one of its `Values`;
    /// - slider: an integer or real from `MinimumValue` to `MaximumValue`;
    /// - text field: a string.
    ///
    /// Types must match what Settings would store (`"1"` is not `1`, `true` is not `1`); an integer
    /// and a real are both numbers and compare by value. Keys no specifier describes, title
    /// values, unknown specifiers and a multi-value without `Values` (filled in at run time)
    /// allow anything. When several specifiers describe the key, one accepting is enough.
    public func validate(_ value: PlistValue, forKey key: String, suite: DomainName? = nil) -> WriteCheck {
        var refusal: String?
        for specifier in (specifierIndicesByKey[key] ?? []).lazy.map({ specifiers[$0] })
        where specifier.suite == suite && specifier.hasUsableDomain
            && specifier.isVisible(on: options.idiom)
        {
            guard let rule = WriteRule(specifier) else { continue }
            if rule.accepts(value) { return .ok }
            if refusal == nil {
                let title = displayTitle(of: specifier).map { " \"\($0)\"" } ?? ""
                refusal = "\(key) must be \(rule.text) (\(specifier.type ?? "specifier")\(title))"
            }
        }
        return refusal.map(WriteCheck.refused) ?? .ok
    }
}

/// What one specifier allows.
private enum WriteRule {
    case string
    case oneOf([PlistValue], separator: String)
    case number(minimum: Double?, maximum: Double?)

    /// Nil when the specifier does not constrain its key.
    init?(_ specifier: Specifier) {
        switch specifier.kind {
        case .textField:
            self = .string
        case .toggleSwitch(let toggle):
            self = .oneOf([toggle.trueValue ?? .bool(true), toggle.falseValue ?? .bool(false)], separator: " or ")
        case .multiValue(let choices), .radioGroup(let choices, _):
            guard !choices.values.isEmpty else { return nil }
            self = .oneOf(choices.values, separator: ", ")
        case .slider(let slider):
            self = .number(minimum: slider.minimumValue, maximum: slider.maximumValue)
        case .titleValue, .group, .childPane, .unknown:
            return nil
        }
    }

    func accepts(_ value: PlistValue) -> Bool {
        switch self {
        case .string:
            return value.stringValue != nil
        case .oneOf(let allowed, _):
            return allowed.contains { $0.isSameSetting(as: value) }
        case .number(let minimum, let maximum):
            guard let number = value.sliderNumber else { return false }
            return number >= (minimum ?? -.infinity) && number <= (maximum ?? .infinity)
        }
    }

    var text: String {
        switch self {
        case .string:
            return PlistType.string.nameWithArticle
        case .oneOf(let allowed, let separator):
            let list = allowed.map(\.quotedText).joined(separator: separator)
            return separator == " or " ? list : "one of \(list)"
        case .number(let minimum?, let maximum?):
            return "a number from \(PlistValue.format(minimum)) to \(PlistValue.format(maximum))"
        case .number(let minimum?, nil):
            return "a number of at least \(PlistValue.format(minimum))"
        case .number(nil, let maximum?):
            return "a number of at most \(PlistValue.format(maximum))"
        case .number(nil, nil):
            return "a number"
        }
    }
}

extension PlistValue {
    /// Equality for writes: the same type and value, except that an integer and a real are both
    /// numbers (`5` matches `5.0`). A bool is never a number here, and a string never one.
    fileprivate func isSameSetting(as other: PlistValue) -> Bool {
        if let a = sliderNumber, let b = other.sliderNumber { return a == b }
        return self == other
    }
}
