import DefaultsCore
import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// The log level, shared by every logger so a reload can change it at once.
final class SharedLogLevel: Sendable {
    private let storage: Mutex<Logger.Level>
    init(_ level: Logger.Level) { storage = Mutex(level) }
    var level: Logger.Level {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

/// Writes one line per event to stderr in a form journald keeps well.
///
/// Under systemd (`JOURNAL_STREAM` is set) each line starts with its syslog priority (`<6>`),
/// which journald turns into the entry's priority, and carries no timestamp (journald adds one).
/// In a terminal each line starts with an ISO 8601 time and the level name.
/// swift-log's `StreamLogHandler` does neither, hence this handler.
struct DaemonLogHandler: LogHandler {
    let label: String
    let sharedLevel: SharedLogLevel
    let journal: Bool
    var metadata: Logger.Metadata = [:]

    var logLevel: Logger.Level {
        get { sharedLevel.level }
        set { sharedLevel.level = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line = journal ? "<\(DaemonLogHandler.priority(event.level))>" : "\(DaemonLogHandler.timestamp()) \(event.level.rawValue) "
        line += event.message.description
        var merged = event.metadata.map { metadata.merging($0) { $1 } } ?? metadata
        if let error = event.error { merged["error"] = "\(error)" }
        for key in merged.keys.sorted() {
            let value = "\(merged[key]!)"
            let needsQuotes = value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" })
            line += " \(key)=" + (needsQuotes ? "\"" + value.replacing("\"", with: "\\\"") + "\"" : value)
        }
        line = line.replacing("\n", with: "\\n") + "\n"
        line.withCString { pointer in _ = write(2, pointer, strlen(pointer)) }
    }

    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        let milliseconds = Int32(now.tv_nsec / 1_000_000)
        return SystemText.format(
            "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec, milliseconds)
    }
}
