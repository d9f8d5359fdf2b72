/// The events the daemon sends to subscribers (docs/PROTOCOL.md), and the one rule by which
/// every client tells an event line from an answer: the daemon writes `"event"` as the first
/// member of every event and in no answer, so a line is an event exactly when it begins with
/// `{"event"`. Answers and events can then be told apart before, or without, parsing.
///
/// ```swift
/// EventName.isEvent(Array(#"{"event":"didChange","domain":"com.x"}"#.utf8))   // true
/// EventName(of: try JSONParser.parse(line))                                   // .didChange
/// ```
public enum EventName: String, CaseIterable, Sendable {
    /// Values of a domain changed: `domain`, `generation`, `changes`, `origin`.
    case didChange
    /// The Settings bundle defaults of `domain` changed; fetch them with `bundleDefaults`.
    case bundleDefaultsChanged

    /// How every event line begins.
    public static let linePrefix: [UInt8] = Array(#"{"event""#.utf8)

    /// Whether a line from the daemon is an event rather than an answer.
    public static func isEvent<Line: Collection<UInt8>>(_ line: Line) -> Bool { line.starts(with: linePrefix) }

    /// The event a parsed event line names; nil for an answer, or an event this build does not know.
    public init?(of event: JSON) {
        guard case .string(let name)? = event["event"], let known = EventName(rawValue: name) else { return nil }
        self = known
    }
}

extension JSONWriter {
    /// Opens an event's object with its `"event"` member first, as ``EventName/isEvent(_:)`` expects.
    public mutating func beginEvent(_ name: EventName) {
        beginObject()
        key(literal: "event")
        string(name.rawValue)
    }
}
