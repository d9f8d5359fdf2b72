import DefaultsClient
import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import LocalServices
import Synchronization
import Testing

struct TestTimeout: Error, CustomStringConvertible {
    var description: String
}

/// Collects what observers report and lets a test wait, with a timeout, until it has seen enough.
/// Appended to from any thread (observers run on the client's delivery queue).
final class Recorder<Element: Sendable>: Sendable {
    private struct Waiter {
        let predicate: @Sendable ([Element]) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var items: [Element] = []
        var waiters: [Int: Waiter] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    var items: [Element] { state.withLock { $0.items } }

    func append(_ item: Element) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.items.append(item)
            var ready: [CheckedContinuation<Bool, Never>] = []
            for (id, waiter) in state.waiters where waiter.predicate(state.items) {
                ready.append(waiter.continuation)
                state.waiters[id] = nil
            }
            return ready
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    /// True once `predicate` holds for everything recorded so far; false after `timeout` seconds.
    func wait(timeout: Double = 10, until predicate: @escaping @Sendable ([Element]) -> Bool) async -> Bool {
        await withCheckedContinuation { continuation in
            let id: Int? = state.withLock { state in
                if predicate(state.items) { return nil }
                state.nextID += 1
                state.waiters[state.nextID] = Waiter(predicate: predicate, continuation: continuation)
                return state.nextID
            }
            guard let id else {
                continuation.resume(returning: true)
                return
            }
            Task {
                try? await Task.sleep(for: .seconds(timeout))
                let waiter = self.state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.continuation.resume(returning: false)
            }
        }
    }

    /// Waits for an element matching `predicate` and returns the first one.
    func first(timeout: Double = 10, where predicate: @escaping @Sendable (Element) -> Bool) async throws -> Element {
        guard await wait(timeout: timeout, until: { $0.contains(where: predicate) }) else {
            throw TestTimeout(description: "no matching element within \(timeout) s; got \(items)")
        }
        return items.first(where: predicate)!
    }
}

extension Recorder {
    /// Records every element of `stream` from a task.
    static func of(_ stream: AsyncStream<Element>) -> (Recorder, Task<Void, Never>) {
        let recorder = Recorder()
        let task = Task {
            for await element in stream { recorder.append(element) }
        }
        return (recorder, task)
    }
}

/// What a `didChangeNotification` said, kept as Sendable values.
struct PostedChange: Sendable {
    var isFromObject: Bool
    var keys: [String]
    var domain: String?
    var origin: ChangeOrigin?
}

/// Records `UserDefaults.didChangeNotification` posted with `object`.
final class NotificationRecorder: @unchecked Sendable {
    let recorder = Recorder<PostedChange>()
    private var token: NSObjectProtocol?

    init(object: AnyObject) {
        let recorder = recorder
        nonisolated(unsafe) let expected = object
        token = NotificationCenter.default.addObserver(
            forName: UserDefaults.didChangeNotification, object: object, queue: nil
        ) { note in
            recorder.append(PostedChange(
                isFromObject: (note.object as AnyObject?) === expected,
                keys: note.userInfo?[SharedDefaults.changedKeysKey] as? [String] ?? [],
                domain: note.userInfo?[SharedDefaults.changedDomainKey] as? String,
                origin: note.userInfo?[SharedDefaults.changeOriginKey] as? ChangeOrigin))
        }
    }

    deinit { if let token { NotificationCenter.default.removeObserver(token) } }
}

/// A client configuration for a test daemon.
func configuration(_ daemon: DaemonProcess, appDomain: String = "com.example.BridgeControl") -> DefaultsConfiguration {
    DefaultsConfiguration(
        socketPath: daemon.socketPath, appDomain: appDomain, clientName: "DefaultsClientTests",
        loadTimeout: .seconds(10), synchronizeTimeout: .seconds(10),
        reconnectDelay: .milliseconds(10) ... .milliseconds(200))
}

/// `defaults` with this daemon, run to completion: another process, as a person runs it.
func defaultsCommand(_ daemon: DaemonProcess, _ arguments: String...) throws -> FinishedRun {
    let binary = URL(fileURLWithPath: DaemonProcess.binary).deletingLastPathComponent().appendingPathComponent("defaults").path
    return try FinishedRun.run(binary, arguments, environment: daemon.clientEnvironment)
}

/// A raw protocol connection: another client of the daemon, written to line by line.
func rawRequest(_ daemon: DaemonProcess, _ lines: String...) throws -> [String] {
    let socket = try daemon.connect()
    return try lines.map { try socket.request($0) }
}

/// The BridgeControl example (a second process), its output gathered line by line.
final class BridgeControlProcess: @unchecked Sendable {
    static let binary: String = URL(fileURLWithPath: DaemonProcess.binary).deletingLastPathComponent()
        .appendingPathComponent("BridgeControl").path

    let process = Process()
    let lines = Recorder<String>()
    private final class PartialLine: Sendable { let text = Mutex("") }
    private let buffer = PartialLine()

    init(_ daemon: DaemonProcess, _ arguments: [String], appDomain: String = "com.example.BridgeControl") throws {
        process.executableURL = URL(fileURLWithPath: BridgeControlProcess.binary)
        process.arguments = arguments
        var environment = daemon.clientEnvironment
        environment["DEFAULTSD_APP_DOMAIN"] = appDomain
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let lines = lines
        let buffer = buffer
        output.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            if chunk.isEmpty {
                handle.readabilityHandler = nil
                return
            }
            let complete: [String] = buffer.text.withLock { text in
                text += String(decoding: chunk, as: UTF8.self)
                var parts = text.components(separatedBy: "\n")
                text = parts.removeLast()
                return parts
            }
            for line in complete { lines.append(line) }
        }
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// Waits for the process to end and returns its status.
    func exitStatus(timeout: Double = 20) async throws -> Int32 {
        let done = Recorder<Int32>()
        let process = self.process
        Thread.detachNewThread {
            process.waitUntilExit()
            done.append(process.terminationStatus)
        }
        return try await done.first(timeout: timeout) { _ in true }
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}
