import Glibc

/// Gives back the mappings of code and constants the daemon ran only while starting.
///
/// A page of the executable that the daemon touches once, parsing its arguments and
/// configuration or setting up its event loop, stays mapped for the life of the process. The
/// kernel also maps the cached pages around every page touched ("fault-around", 64 KiB), so a
/// start-up that runs a little code in each of the linked libraries leaves most of the
/// executable's code resident, several MiB, for a daemon that then idles all day (PERFORMANCE.md,
/// "Where the memory goes"). Dropping those mappings once the daemon is ready leaves only what it goes
/// on to use; the pages stay in the page cache, and a page needed again comes back by a minor
/// fault.
///
/// Only segments the program never writes are released (those without `PF_W`, read through
/// `AT_PHDR`): there a dropped page is reread from the file unchanged. Writable segments, the
/// relocated read-only data among them, hold the process's own copies and are never touched.
enum StartupCode {
    /// How long after readiness the start-up's last work (signal handling, the first clients'
    /// connections) is taken to be done.
    static let settleTime = Duration.seconds(1)

    /// Called once, when the daemon is ready. Returns the bytes of address space released.
    @discardableResult
    static func release() -> Int {
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let auxiliary = auxiliaryVector()
        guard let address = auxiliary[3], let headers = UnsafeRawPointer(bitPattern: UInt(address)),  // AT_PHDR
            let count = auxiliary[5].map(Int.init)  // AT_PHNUM
        else { return 0 }
        let entrySize = 56  // sizeof(Elf64_Phdr)
        func header(_ index: Int) -> (type: UInt32, flags: UInt32, address: Int, size: Int) {
            let entry = headers + index * entrySize
            return (
                entry.load(fromByteOffset: 0, as: UInt32.self), entry.load(fromByteOffset: 4, as: UInt32.self),
                Int(entry.load(fromByteOffset: 16, as: UInt64.self)), Int(entry.load(fromByteOffset: 40, as: UInt64.self))
            )
        }
        let loadType: UInt32 = 1, writable: UInt32 = 2  // PT_LOAD, PF_W
        let segments = (0..<count).map(header)
        guard let bias = loadBias(headers: headers, segments: segments) else { return 0 }
        var released = 0
        for segment in segments {
            guard segment.type == loadType, segment.flags & writable == 0 else { continue }
            // Whole pages inside the segment only: a page shared with a neighbouring segment stays.
            let start = (bias + segment.address + pageSize - 1) / pageSize * pageSize
            let end = (bias + segment.address + segment.size) / pageSize * pageSize
            guard end > start, madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, MADV_DONTNEED) == 0
            else { continue }
            released += end - start
        }
        return released
    }

    /// Where the executable was loaded: the program header table's address in memory less its
    /// address as linked. A static executable has no `PT_PHDR` entry; there the table follows the
    /// ELF header at the start of the first segment, which is checked by its magic number.
    private static func loadBias(
        headers: UnsafeRawPointer, segments entries: [(type: UInt32, flags: UInt32, address: Int, size: Int)]
    ) -> Int? {
        let programHeaderType: UInt32 = 6, loadType: UInt32 = 1  // PT_PHDR, PT_LOAD
        if let table = entries.first(where: { $0.type == programHeaderType }) {
            return Int(bitPattern: headers) - table.address
        }
        let elfHeaderSize = 64  // sizeof(Elf64_Ehdr), where linkers place the table
        let elfHeader = headers - elfHeaderSize
        guard elfHeader.load(as: UInt32.self) == 0x464C_457F,  // 0x7F "ELF", little-endian
            elfHeader.load(fromByteOffset: 32, as: UInt64.self) == UInt64(elfHeaderSize),  // e_phoff
            let first = entries.first(where: { $0.type == loadType })
        else { return nil }
        return Int(bitPattern: elfHeader) - first.address
    }

    /// The kernel's auxiliary vector (`/proc/self/auxv`: pairs of type and value), since the
    /// Glibc module does not bring `getauxval`.
    private static func auxiliaryVector() -> [UInt64: UInt64] {
        let fd = open("/proc/self/auxv", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [:] }
        defer { close(fd) }
        var words = [UInt64](repeating: 0, count: 128)
        let count = words.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return [:] }
        var vector: [UInt64: UInt64] = [:]
        for pair in stride(from: 0, to: count / 8 - 1, by: 2) where words[pair] != 0 { vector[words[pair]] = words[pair + 1] }
        return vector
    }
}
