import KeyhostCrypto

/// The secrets `keyhost card …` commands need. Each comes from its environment variable, else a prompt on the
/// terminal with echo off (asked twice for a value being set); never from the command line.
public enum CardSecret: CaseIterable, Sendable {
    case pin, puk, pairingPassword, newPIN, newPUK, newPairingPassword, duressPIN, mnemonic, passphrase

    /// The environment variable: `KEYHOST_PIN`, `KEYHOST_NEW_PIN`, …
    public var environment: String { input.environment }

    /// Where this secret comes from: its environment variable, else the prompt.
    public var input: SecretInput {
        switch self {
        case .pin: return SecretInput.pin.forCommandLine
        case .pairingPassword: return SecretInput.pairingPassword.forCommandLine
        case .puk: return SecretInput(what: "PUK", option: nil, environment: "KEYHOST_PUK")
        case .newPIN: return SecretInput(what: "new PIN", option: nil, environment: "KEYHOST_NEW_PIN", confirm: true)
        case .newPUK: return SecretInput(what: "new PUK", option: nil, environment: "KEYHOST_NEW_PUK", confirm: true)
        case .newPairingPassword:
            return SecretInput(what: "new pairing password", option: nil, environment: "KEYHOST_NEW_PAIRING_PASSWORD", confirm: true)
        case .duressPIN: return SecretInput(what: "duress PIN", option: nil, environment: "KEYHOST_DURESS_PIN", confirm: true)
        case .mnemonic: return SecretInput(what: "BIP39 mnemonic", option: nil, environment: "KEYHOST_MNEMONIC", maximumLength: 4096)
        case .passphrase: return SecretInput(what: "BIP39 passphrase", option: nil, environment: "KEYHOST_PASSPHRASE", maximumLength: 4096)
        }
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
