import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every file a user names is read with a size limit checked while reading, and OS errors come back as
/// strerror text: /dev/zero must end in an error with exit status 1, never an allocation crash.
@Suite(.serialized)
struct InputFileLimitTests {
    static let words = DiscoverCommandTests.words

    @Test(arguments: [
        (["run", "/dev/zero"], "keyhost: cannot read /dev/zero: file is larger than the limit of 16 MiB\n"),
        (["discover", "--mnemonic-env", "W", "--source", "lua:/dev/zero"],
         "keyhost: --source lua: cannot read the script /dev/zero: file is larger than the limit of 16 MiB\n"),
        (["discover", "--mnemonic-env", "W", "--source", "index:/dev/zero"],
         "keyhost: index file /dev/zero: cannot be read: file is larger than the limit of 256 MiB\n"),
        (["token", "inspect", "/dev/zero"], "keyhost: cannot read /dev/zero: file is larger than the limit of 16 MiB\n"),
    ])
    func endlessFilesStopAtTheLimit(arguments: [String], message: String) throws {
        let run = try Keyhost.run(arguments, environment: ["W": Self.words])
        #expect(run.status == 1)
        #expect(run.stderr == message)
        #expect(run.stdout.isEmpty)
    }

    @Test func aRegularFileOneByteOverTheLimitIsRefused() throws {
        let dir = try Keyhost.scratch([:])
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("big.lua").path
        try Data(repeating: UInt8(ascii: "\n"), count: 16 << 20).write(to: URL(fileURLWithPath: path))
        let fits = try Keyhost.run(["run", path])
        #expect(fits.status == 0, "\(fits.stderr)")
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("\n".utf8))
        try handle.close()
        let over = try Keyhost.run(["run", path])
        #expect(over.status == 1)
        #expect(over.stderr == "keyhost: cannot read \(path): file is larger than the limit of 16 MiB\n")
    }

    @Test func osErrorsAreStrerrorTextNotFoundationText() throws {
        let missing = try Keyhost.run(["discover", "--mnemonic-env", "W", "--source", "index:/nonexistent/used.txt"], environment: ["W": Self.words])
        #expect(missing.status == 1)
        #expect(missing.stderr == "keyhost: index file /nonexistent/used.txt: cannot be read: No such file or directory\n")
        let directory = try Keyhost.run(["discover", "--mnemonic-env", "W", "--source", "index:/tmp"], environment: ["W": Self.words])
        #expect(directory.status == 1)
        #expect(directory.stderr == "keyhost: index file /tmp: cannot be read: is a directory, not a file\n")
        let checkpoint = try Keyhost.run(["discover", "--mnemonic-env", "W", "--source", "index:/dev/null", "--checkpoint", "/dev/zero"],
                                         environment: ["W": Self.words])
        #expect(checkpoint.status == 1)
        #expect(checkpoint.stderr == "keyhost: checkpoint /dev/zero: cannot be read: is a character device, not a regular file: name a file (or a path where none exists yet) for keyhost to keep it in\n")
        for run in [missing, directory, checkpoint] {
            #expect(!run.stderr.contains("NSCocoaErrorDomain") && !run.stderr.contains("permission"))
        }
    }

    @Test func aFIFOIsReadToItsEnd() throws {
        let dir = try Keyhost.scratch([:])
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("script.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = Thread {
            let fd = open(fifo, O_WRONLY)
            let text = Array("print('from a fifo')\n".utf8)
            _ = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        writer.start()
        let run = try Keyhost.run(["run", fifo])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "from a fifo\n")
    }
}
