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
    /// The environment variable consulted next ("KEYHOST_PIN", or the one named by `--pin-env VAR`).
    public var environment: String
    /// How to supply the secret, said when none was found (the front end words it: `CardFrontEnd`).
    public var hint: String
    /// The variable was named explicitly: when it is unset, say so rather than fall back to the prompt.
    public var required: Bool
    /// A secret being set (a new PIN): a prompt asks for it twice.
    public var confirm = false
    /// The longest answer a prompt takes (a 24-word mnemonic needs more than a PIN).
    public var maximumLength = 256
    /// The device the prompt names ("Keycard", "tap card").
    public var device = "Keycard"

    /// A secret called `what`, read from `environment` or the terminal; `hint` says how to supply it.
    public init(what: String, environment: String, hint: String, required: Bool = false, confirm: Bool = false, maximumLength: Int = 256,
                device: String = "Keycard") {
        self.what = what
        self.environment = environment
        self.hint = hint
        self.required = required
        self.confirm = confirm
        self.maximumLength = maximumLength
        self.device = device
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
        if required {
            throw CardServiceError(kind: "no_secret", "no \(what) given: the environment variable \(environment) is unset or empty; \(hint)")
        }
        if let typed = try SecretInput.prompt("\(device) \(what): ", maximumLength: maximumLength) {
            guard confirm else { return typed }
            guard let again = try SecretInput.prompt("\(device) \(what) again: ", maximumLength: maximumLength), again == typed else {
                throw CardServiceError(kind: "no_secret", "the two \(what) entries differ; nothing was changed, try again")
            }
            return typed
        }
        throw CardServiceError(kind: "no_secret", "no \(what) given: \(hint)")
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

