import ArgumentParser

/// `keyhost key …`: one-line derivation and signing for scripts (like foundry's `cast wallet` and libbitcoin's `bx`).
struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Derive addresses and extended keys, sign and verify messages, make and check mnemonics.",
        discussion: """
            Keys come from a BIP39 mnemonic, an extended public key (--xpub) or a Keycard (--card). The mnemonic is \
            read from the environment variable KEYHOST_MNEMONIC (or the one --mnemonic-env names), else typed at a \
            prompt that does not echo; it is never taken on the command line. A BIP39 passphrase comes from \
            KEYHOST_PASSPHRASE when it is set (as for every command that takes a mnemonic: psbt, eth, discover, card \
            load-seed), the variable --passphrase-env names, or a prompt with --passphrase-prompt; --no-passphrase uses \
            none even when KEYHOST_PASSPHRASE is set. A card's PIN and pairing password come from KEYHOST_PIN and \
            KEYHOST_PAIRING_PASSWORD, else prompts.
            Examples:
              KEYHOST_MNEMONIC="$(cat words.txt)" keyhost key address --count 5
              keyhost key address --xpub zpub6r… --path 0/0 --count 20
              keyhost key sign-message --coin eth --card "hello"
            """,
        subcommands: [KeyAddress.self, KeyXpub.self, KeySignMessage.self, KeyVerifyMessage.self, KeyMnemonic.self]
    )
}
