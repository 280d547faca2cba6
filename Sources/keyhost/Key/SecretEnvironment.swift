import KeyhostServices
import KeyhostCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Secrets for every command that takes a mnemonic (`MnemonicOptions` applies the policy): a mnemonic or passphrase
/// from an environment variable, else typed at the terminal
/// with echo off. Values are copied straight from the environment block into wiped-on-release storage (not
/// through ProcessInfo, whose dictionary of Strings lives for the whole process). Messages name the variable,
/// never the value.
enum SecretEnvironment {
    /// Where the mnemonic is looked for when no --mnemonic-env is given.
    static let defaultMnemonicVariable = "KEYHOST_MNEMONIC"

    /// The variable a command reads its mnemonic from: `given` (--mnemonic-env), else KEYHOST_MNEMONIC
    /// when it is set and no other key source (--card, --xpub) was named. The same rule for every
    /// command that takes a key source.
    static func mnemonicVariable(_ given: String?, otherSource: Bool) -> String? {
        if let given { return given }
        guard !otherSource, let value = getenv(defaultMnemonicVariable), value.pointee != 0 else { return nil }
        return defaultMnemonicVariable
    }

    /// The longest phrase typed at the prompt: the mnemonic limit, so a long 24-word phrase is never cut short.
    static let promptCapacity = InputLimit.mnemonic

    /// The value of `variable`, or nil when it is unset or empty.
    static func value(_ variable: String) -> SecretBytes? {
        guard let pointer = getenv(variable) else { return nil }
        let count = strlen(pointer)
        guard count > 0 else { return nil }
        return SecretBytes(count: count) { $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: count)) }
    }

    /// The mnemonic and where it came from (for messages): from `variable` when one is named (it must then be
    /// set), else KEYHOST_MNEMONIC when set, else the terminal.
    static func mnemonic(variable: String?, alternatives: String) throws -> (phrase: SecretBytes, origin: String) {
        if let variable {
            guard let secret = value(variable) else {
                throw Failure.kind("no_secret", "the environment variable \(variable) (the mnemonic, from --mnemonic-env) is not set or empty; export \(variable)=\"word1 word2 ...\"")
            }
            return (secret, "in \(variable)")
        }
        if let secret = value(defaultMnemonicVariable) { return (secret, "in \(defaultMnemonicVariable)") }
        if let typed = try TerminalSecret.read(prompt: "BIP39 mnemonic (not echoed): ", capacity: promptCapacity) { return (typed, "typed at the prompt") }
        throw Failure.kind("no_secret", "no mnemonic given: export \(defaultMnemonicVariable)=\"word1 word2 ...\", name another variable with --mnemonic-env VAR, "
            + "or run keyhost on a terminal to be asked\(alternatives)")
    }

    /// The BIP39 passphrase from `variable` (which must be set), typed at the terminal with `prompt`, or "" without one.
    static func passphrase(variable: String?, prompt: Bool = false) throws -> SecretBytes {
        if prompt {
            guard let typed = try TerminalSecret.read(prompt: "BIP39 passphrase (not echoed): ", capacity: promptCapacity) else {
                throw Failure.kind("no_secret", "--passphrase-prompt needs a terminal to ask on; put the passphrase in a variable and use --passphrase-env VAR")
            }
            return typed
        }
        guard let variable else { return SecretBytes([UInt8]()) }
        guard let secret = value(variable) else {
            throw Failure.kind("no_secret", "the environment variable \(variable) (the BIP39 passphrase, from --passphrase-env) is not set or empty; export it, or give --no-passphrase for none")
        }
        return secret
    }

    /// The mnemonic parsed, with an error that names where it came from and never any of its words.
    static func parse(_ phrase: SecretBytes, origin: String) throws -> Mnemonic {
        do {
            return try Mnemonic(phrase: phrase.text)
        } catch let error as MnemonicError {
            throw Failure.kind("invalid_mnemonic", "the mnemonic \(origin) is not valid: \(error)")
        }
    }
}

