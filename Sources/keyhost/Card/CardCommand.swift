import ArgumentParser

/// `keyhost card …`: smart cards through PC/SC, and a software Keycard served to the virtual reader.
struct CardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "card",
        abstract: "Use a Keycard (PC/SC reader or the software card): set it up, pair, PINs, keys, signatures; a Satochip with 'card satochip'.",
        discussion: """
            Every command takes --reader (a name, a number from 'keyhost card list', or 'virtual' with --card-state FILE \
            for the software card) and --json (one object whose names are the Lua result tables'; errors as \
            {"error": {"kind", "message", …}} on standard error). Secrets (PIN, PUK, passwords, mnemonic) come from \
            KEYHOST_* environment variables or a prompt without echo, never from the command line.
            """,
        subcommands: [CardServe.self, CardList.self, CardInfo.self, CardStatus.self, CardInit.self, CardPair.self, CardUnpair.self,
                      CardVerifyPIN.self, CardChangePIN.self, CardChangePUK.self, CardChangePairingPassword.self, CardUnblockPIN.self,
                      CardLoadSeed.self, CardGenerateKey.self, CardGenerateMnemonic.self, CardRemoveKey.self, CardExportKey.self,
                      CardSign.self, CardSetPinlessPath.self, CardGetData.self, CardStoreData.self, CardFactoryReset.self,
                      CardSatochip.self,
                      CardTapsigner.self,
                      CardSatscard.self]
    )
}
