import DefaultsCore
import FoundationEssentials
import Glibc

/// This machine's id, which names its by-host domain files, read from `/etc/machine-id` as
/// systemd writes it (32 lowercase hexadecimal digits; machine-id(5)).
enum MachineID {
    static let defaultPath = "/etc/machine-id"

    /// The refusal of a write to a by-host domain on a machine without an id.
    static func refusal(writing domain: DomainName) -> DefaultsError {
        DefaultsError(
            .noMachineID,
            "\(domain) cannot be written: by-host domains need a machine id, and none was found (systemd-machine-id-setup writes /etc/machine-id)")
    }

    /// The id in the file at `path`; nil when the file is missing, empty or not an id (as in a
    /// container built without one, or in the first boot's `uninitialized` state).
    static func read(path: String = defaultPath) -> String? {
        guard case .success(let file) = RegularFile.read(atPath: path, maximumBytes: 4096) else { return nil }
        let id = SystemText.trimmingWhitespace(String(decoding: file.data, as: UTF8.self))
        let isID = id.utf8.count == 32 && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        return isID ? id : nil
    }
}
