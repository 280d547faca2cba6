import KeyhostCrypto
import KeyhostServices

/// The secrets `keyhost card …` commands need. Each comes from its environment variable, else a prompt on the
/// terminal with echo off (asked twice for a value being set); never from the command line.
enum CardSecret: CaseIterable, Sendable {
    case pin, puk, pairingPassword, newPIN, newPUK, newPairingPassword, duressPIN, mnemonic, passphrase

    /// The environment variable: `KEYHOST_PIN`, `KEYHOST_NEW_PIN`, …
    public var environment: String { input.environment }

    /// Where this secret comes from: its environment variable, else the prompt.
    public var input: SecretInput {
        switch self {
        case .pin: return CardFrontEnd.commandLine().pin
        case .pairingPassword: return CardFrontEnd.commandLine().pairingPassword
        case .puk: return Self.input("PUK", "KEYHOST_PUK")
        case .newPIN: return Self.input("new PIN", "KEYHOST_NEW_PIN", confirm: true)
        case .newPUK: return Self.input("new PUK", "KEYHOST_NEW_PUK", confirm: true)
        case .newPairingPassword: return Self.input("new pairing password", "KEYHOST_NEW_PAIRING_PASSWORD", confirm: true)
        case .duressPIN: return Self.input("duress PIN", "KEYHOST_DURESS_PIN", confirm: true)
        case .mnemonic: return Self.input("BIP39 mnemonic", "KEYHOST_MNEMONIC", maximumLength: 4096)
        case .passphrase: return Self.input("BIP39 passphrase", "KEYHOST_PASSPHRASE", maximumLength: 4096)
        }
    }

    private static func input(_ what: String, _ environment: String, confirm: Bool = false, maximumLength: Int = 256) -> SecretInput {
        SecretInput(what: what, environment: environment,
                    hint: "set the environment variable \(environment) (secrets are never taken on the command line), or run keyhost on a terminal to be asked",
                    confirm: confirm, maximumLength: maximumLength)
    }

    /// The same secret while a card is being initialised: PIN, PUK and pairing password are then being set.
    public var settingInput: SecretInput {
        var input = self.input
        input.confirm = true
        return input
    }

    /// The secret from its environment variable or the prompt (asked twice when `setting`).
    public func resolve(setting: Bool = false) throws -> SecretBytes {
        try (setting ? settingInput : input).resolve(nil)
    }
}

extension SecretInput {
    /// The same secret being set (INIT, a new PIN): a prompt asks for it twice.
    var setting: SecretInput {
        var copy = self
        copy.confirm = true
        return copy
    }
}
