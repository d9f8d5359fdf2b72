import DaemonTestSupport
import Foundation
import LineSocket

@testable import SettingsApp

/// A copy of Bridge Control registered with a test's daemon, whose folder holds one image to
/// serve and four that must never be read: a FIFO (a blocking open would wait for a writer
/// forever), a link to `/dev/zero` (a read would never end), a folder, and a sparse file one
/// byte past the cap.
enum HostileBundle {
    static let domain = "com.example.Hostile"
    static let image = (name: "turtle.png", text: "a turtle, as a PNG would be")
    static let refused = ["fifo.png", "zero.png", "folder.png", "huge.png"]

    /// Lays the bundle out in the daemon's directory and registers it; its folder.
    @discardableResult
    static func install(on daemon: DaemonProcess) throws -> String {
        let folder = daemon.directory + "/Hostile.bundle"
        try FileManager.default.copyItem(atPath: SharedData.bridgeControlBundle, toPath: folder)
        try Data(image.text.utf8).write(to: URL(fileURLWithPath: folder + "/" + image.name))
        try FileManager.default.createSymbolicLink(atPath: folder + "/zero.png", withDestinationPath: "/dev/zero")
        try FileManager.default.createDirectory(atPath: folder + "/folder.png", withIntermediateDirectories: false)
        guard mkfifo(folder + "/fifo.png", 0o600) == 0, FileManager.default.createFile(atPath: folder + "/huge.png", contents: nil),
            truncate(folder + "/huge.png", off_t(SettingsAPI.maximumImageBytes + 1)) == 0
        else { throw LineSocket.Failure(description: "cannot lay out \(folder): \(String(cString: strerror(errno)))") }
        let answer = try daemon.connect().request(#"{"op":"registerBundle","domain":"\#(domain)","path":"\#(folder)"}"#)
        guard answer.contains(#""ok":true"#) else { throw LineSocket.Failure(description: answer) }
        return folder
    }
}
