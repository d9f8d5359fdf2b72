import Foundation

/// The GIO module `make gsettings-backend` builds, beside this checkout's other build products,
/// and GLib's own `gsettings` run on it.
public enum GIOModule {
    public static let folder = SharedData.repository.appendingPathComponent(".build/gio-modules").path

    public static var isAvailable: Bool {
        FileManager.default.fileExists(atPath: folder + "/libdefaultsdsettings.so")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/gsettings")
            && FileManager.default.fileExists(atPath: "/usr/share/glib-2.0/schemas/org.gnome.desktop.interface.gschema.xml")
    }

    /// `base` with the module chosen: GIO loads it from its folder, and GSettings uses it.
    public static func environment(_ base: [String: String]) -> [String: String] {
        base.merging(["GIO_EXTRA_MODULES": folder, "GSETTINGS_BACKEND": "defaultsd"]) { $1 }
    }

    public struct Run: Sendable {
        public var out: String
        public var err: String
        public var status: Int32
    }

    /// `gsettings` with `arguments`, in `base` with the module chosen.
    public static func gsettings(_ arguments: [String], environment base: [String: String]) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gsettings")
        process.arguments = arguments
        process.environment = environment(base)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(out: String(decoding: outData, as: UTF8.self), err: String(decoding: errData, as: UTF8.self), status: process.terminationStatus)
    }
}
