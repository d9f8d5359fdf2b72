import DefaultsCore
import Foundation
import LineSocket
import WebDriver

/// The Settings app's live path, whole: a `set` on the daemon's socket → `didChange` → the app's
/// relay → a WebSocket notice → the page asks again and re-renders, in a real headless Chromium.
/// The page's own clock stamps the render that first shows each new value (a MutationObserver on
/// the view), against the wall clock at the `set`: both are the machine's clock.
enum SettingsPageLatency {
    static let domain = "com.example.BridgeControl"

    /// Latencies in seconds; nil when Chromium or `defaultsd-settings` is missing.
    static func measure(socket: String, directory: String, here: URL, changes: Int = 100) throws -> [Double]? {
        let app = here.appendingPathComponent("defaultsd-settings").path
        guard Chromium.isInstalled, FileManager.default.isExecutableFile(atPath: app) else { return nil }
        let bundle = FileManager.default.currentDirectoryPath + "/Tests/SettingsBundleTests/Fixtures/BridgeControl/Settings.bundle"
        let client = try LineSocket(path: socket)
        _ = try client.request(JSON.requestLine(.registerBundle, ["domain": .string(domain), "path": .string(bundle)]))

        let process = Process()
        process.executableURL = URL(fileURLWithPath: app)
        process.arguments = ["--port", "0", "--socket", socket]
        process.environment = ProcessInfo.processInfo.environment.merging(["XDG_RUNTIME_DIR": directory]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        // The printed line names the address once the app serves; the token, printed only to a
        // terminal, is in the address file beside the launch page.
        var printed = ""
        while !printed.hasSuffix("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw LineSocket.Failure(description: "defaultsd-settings printed no address") }
            printed += String(decoding: chunk, as: UTF8.self)
        }
        guard case .success(let file) = RegularFile.read(atPath: directory + "/defaultsd/settings-url", maximumBytes: 4096) else {
            throw LineSocket.Failure(description: "defaultsd-settings wrote no address file")
        }
        let address = String(decoding: file.data, as: UTF8.self)
        let page = address.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "/?token=", with: "/apps/\(domain)?token=")
        return try blocking {
            let browser = try await Chromium.start()
            defer { browser.quit() }
            try await browser.navigate(to: page)
            try await browser.wait(until: "return document.querySelector('#row-Root_plist-1-input') !== null", timeout: 10, "the pane")
            try await browser.run("""
                window.seen = {};
                new MutationObserver(() => {
                  const value = document.querySelector('#row-Root_plist-1-input')?.value;
                  if (value && !(value in window.seen)) window.seen[value] = performance.timeOrigin + performance.now();
                }).observe(document.getElementById('view'), { childList: true, subtree: true });
                """)
            let writer = try LineSocket(path: socket)
            var samples: [Double] = []
            for change in 0..<(changes + 5) {
                let value = "officer-\(change)"
                let sent = Date().timeIntervalSince1970 * 1000
                _ = try writer.request(JSON.requestLine(.set, ["domain": .string(domain), "key": "officer", "value": .string(value)]))
                var shown: Double?
                let deadline = Date(timeIntervalSinceNow: 5)
                while shown == nil {
                    shown = try await browser.run("return window.seen[arguments[0]] ?? null", [value]) as? Double
                    if shown == nil {
                        guard Date() < deadline else { throw LineSocket.Failure(description: "the page did not show \(value)") }
                        try await Task.sleep(for: .milliseconds(2))
                    }
                }
                if change >= 5, let shown { samples.append((shown - sent) / 1000) }  // the first few warm the page up
            }
            return samples
        }
    }

    /// Runs async WebDriver work from the benchmark's synchronous flow.
    private static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        nonisolated(unsafe) var result: Result<T, Error>?
        let done = DispatchSemaphore(value: 0)
        Task {
            do { result = .success(try await body()) } catch { result = .failure(error) }
            done.signal()
        }
        done.wait()
        guard let result else { throw LineSocket.Failure(description: "the browser's work ended without a result") }
        return try result.get()
    }
}
