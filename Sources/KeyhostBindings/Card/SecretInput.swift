import Foundation
import KeyhostCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Where a card secret (PIN, PUK, pairing password) comes from: the script's argument, else an environment
/// variable, else a prompt on the controlling terminal with echo off. Without any of them the call fails
/// with a message saying how to supply it; the secret itself never appears in a message.
struct SecretInput {
    /// What the secret is called in messages and prompts ("PIN").
    let what: String
    /// The Lua argument or option that could have carried it ("pin").
    let option: String
    /// The environment variable consulted next ("KEYHOST_PIN").
    let environment: String

    static let pin = SecretInput(what: "PIN", option: "pin", environment: "KEYHOST_PIN")
    static let pairingPassword = SecretInput(what: "pairing password", option: "pairing_password", environment: "KEYHOST_PAIRING_PASSWORD")

    /// The terminal device prompts use; tests point it elsewhere.
    nonisolated(unsafe) static var terminalPath = "/dev/tty"

    func resolve(_ given: [UInt8]?) throws -> SecretBytes {
        if let given { return SecretBytes(given) }
        if let value = getenv(environment) {
            let count = strlen(value)
            if count > 0 {
                return SecretBytes(count: count) { buffer in
                    buffer.copyMemory(from: UnsafeRawBufferPointer(start: value, count: count))
                }
            }
        }
        if let typed = try SecretInput.prompt("Keycard \(what): ") { return typed }
        throw CardLuaError(kind: "no_secret",
                           "no \(what) given: pass \(option) = ..., set \(environment), or run keyhost on a terminal to be asked")
    }

    /// Reads one line (at most `capacity` bytes) from the terminal with echo off; nil when there is no terminal.
    static func prompt(_ text: String, capacity: Int = 256) throws -> SecretBytes? {
        let fd = open(terminalPath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard isatty(fd) != 0 else { return nil }
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else { return nil }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO | ECHONL)
        quiet.c_lflag |= tcflag_t(ICANON)
        _ = tcsetattr(fd, TCSAFLUSH, &quiet)
        defer {
            _ = tcsetattr(fd, TCSAFLUSH, &saved)
            _ = "\n".withCString { write(fd, $0, 1) }
        }
        _ = text.withCString { write(fd, $0, strlen($0)) }
        var line = [UInt8](repeating: 0, count: max(capacity, 1))
        defer { zero(&line) }
        var length = 0
        while length < line.count {
            var byte: UInt8 = 0
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == 0x0A || byte == 0x0D { break }
            line[length] = byte
            length += 1
        }
        guard length > 0 else {
            throw CardLuaError(kind: "no_secret", "nothing was typed at the \(text.trimmingCharacters(in: CharacterSet(charactersIn: ": "))) prompt")
        }
        return SecretBytes(line[0..<length])
    }
}

extension SecretBytes {
    /// The secret as text for APIs that take `String` (PINs are ASCII digits). The String cannot be wiped;
    /// it lives only for the call.
    var text: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}
