import KeyhostCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Where a card secret (PIN, PUK, pairing password) comes from: the script's argument, else an environment
/// variable, else a prompt on the controlling terminal with echo off. Without any of them the call fails
/// with a message saying how to supply it; the secret itself never appears in a message.
public struct SecretInput: Sendable {
    /// What the secret is called in messages and prompts ("PIN").
    public let what: String
    /// The Lua argument or option that could have carried it ("pin"); nil for the command line, which never takes secrets.
    public var option: String?
    /// The environment variable consulted next ("KEYHOST_PIN").
    public let environment: String
    /// A secret being set (a new PIN): a prompt asks for it twice.
    public var confirm = false
    /// The longest answer a prompt takes (a 24-word mnemonic needs more than a PIN).
    public var maximumLength = 256

    /// A secret called `what`, passed as Lua's `option` (nil on the command line), else read from `environment` or the terminal.
    public init(what: String, option: String?, environment: String, confirm: Bool = false, maximumLength: Int = 256) {
        self.what = what
        self.option = option
        self.environment = environment
        self.confirm = confirm
        self.maximumLength = maximumLength
    }

    /// The PIN: `pin`, `KEYHOST_PIN`, the prompt.
    public static let pin = SecretInput(what: "PIN", option: "pin", environment: "KEYHOST_PIN")
    /// The pairing password: `pairing_password`, `KEYHOST_PAIRING_PASSWORD`, the prompt.
    public static let pairingPassword = SecretInput(what: "pairing password", option: "pairing_password", environment: "KEYHOST_PAIRING_PASSWORD")

    /// The same secret for a command-line command: the hint names the environment variable and the prompt only.
    public var forCommandLine: SecretInput {
        var copy = self
        copy.option = nil
        return copy
    }

    /// The terminal device prompts use; tests point it elsewhere.
    nonisolated(unsafe) public static var terminalPath = "/dev/tty"

    /// The secret: `given` when the caller passed it, else the environment variable, else the prompt; throws `no_secret`.
    public func resolve(_ given: [UInt8]?) throws -> SecretBytes {
        if let given { return SecretBytes(given) }
        if let value = getenv(environment) {
            let count = strlen(value)
            if count > 0 {
                return SecretBytes(count: count) { buffer in
                    buffer.copyMemory(from: UnsafeRawBufferPointer(start: value, count: count))
                }
            }
        }
        if let typed = try SecretInput.prompt("Keycard \(what): ", maximumLength: maximumLength) {
            guard confirm else { return typed }
            guard let again = try SecretInput.prompt("Keycard \(what) again: ", maximumLength: maximumLength), again == typed else {
                throw CardServiceError(kind: "no_secret", "the two \(what) entries differ; nothing was changed, try again")
            }
            return typed
        }
        if let option {
            throw CardServiceError(kind: "no_secret",
                               "no \(what) given: pass \(option) = ..., set \(environment), or run keyhost on a terminal to be asked")
        }
        throw CardServiceError(kind: "no_secret",
                           "no \(what) given: set the environment variable \(environment) (secrets are never taken on the command line), "
                           + "or run keyhost on a terminal to be asked")
    }

    /// Reads one line from the terminal with echo off; nil when there is no terminal.
    public static func prompt(_ text: String, maximumLength: Int = 256) throws -> SecretBytes? {
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
        var line = [UInt8](repeating: 0, count: max(1, maximumLength))
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
            throw CardServiceError(kind: "no_secret", "nothing was typed at the \(text.trimming { $0 == ":" || $0 == " " }) prompt")
        }
        return SecretBytes(line[0..<length])
    }
}

