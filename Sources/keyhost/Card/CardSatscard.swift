import ArgumentParser
import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

/// `keyhost card satscard …`: a SATSCARD's slots (read, unseal, start the next).
struct CardSatscard: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "satscard",
        abstract: "A Coinkite SATSCARD: status, slots, read, unseal, new.",
        discussion: """
            Slots are numbered as the card numbers them, from 0. Reading needs no CVC; unseal and new take the CVC printed on \
            the card's back from KEYHOST_CVC (or the variable --cvc-env names), else a prompt that does not echo. After three \
            wrong CVCs the card imposes a back-off: commands fail with its seconds left (kind rate_limited), or wait it out \
            with --wait-backoff.
            """,
        subcommands: [SatscardStatus.self, SatscardSlots.self, SatscardRead.self, SatscardUnseal.self, SatscardNew.self]
    )
}

struct SatscardStatus: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "The card's status (no CVC needed).",
                                                    discussion: "JSON: {product, version, card_ident, testnet, state, auth_delay, active_slot, num_slots, addr}.")
    @OptionGroup var card: CardOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try runTapCommand(card, product: .satscard, json: json, human: { [tapStatusLine($0)] }) { session in
            TapCardRecords.status(try session.mapping("status") { try session.card.getStatus() })
        }
    }
}

struct SatscardSlots: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "slots", abstract: "Every slot's state and address (no CVC needed).",
                                                    discussion: "JSON: {active_slot, slots: [{slot, state, address, public_key, tampered}]}; a sealed slot's address is blanked in its middle.")
    @OptionGroup var card: CardOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try runTapCommand(card, product: .satscard, json: json, human: { record in
            guard case .array(let slots)? = record["slots"] else { return [] }
            return slots.map { "slot \($0.text("slot")): \($0.text("state"))" + ($0["address"] == .null ? "" : " \($0.text("address"))") }
        }) { session in
            guard let status = session.status else { throw Failure.kind("failed", "no status") }
            let slots = try (0..<status.numSlots).map { index in try session.mapping("dump") { try session.card.dump(slot: index) } }
            return .object([("active_slot", .integer(Int64(status.activeSlot))), ("slots", .array(slots.map(TapCardRecords.slot)))])
        }
    }
}

struct SatscardRead: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read", abstract: "The active slot's address: its key proven by the card, the address checked against the one status shows.",
        discussion: "JSON: {slot, address, public_key}.")
    @OptionGroup var card: CardOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try runTapCommand(card, product: .satscard, json: json, human: { [$0.text("address")] }) { session in
            guard let status = session.status, status.blankedAddress != nil else {
                throw Failure.kind("no_key", "the SATSCARD's active slot is unused; start it with keyhost card satscard new")
            }
            let slot = try session.mapping("read") { try session.card.readSlot() }
            return .object([("slot", .integer(Int64(status.activeSlot))), ("address", .string(slot.address)),
                            ("public_key", .bytes(slot.publicKey.compressed))])
        }
    }
}

struct SatscardUnseal: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unseal",
        abstract: "Unseal the active slot: the card reveals its private key for good (sweep the funds at once).",
        discussion: """
            Asks for confirmation on the terminal unless --yes. The private key (WIF) is printed only with --show-key, or \
            written to a new 0600 file with --key-out FILE; it is checked against the slot's public key and address first. \
            JSON: {slot, address, public_key, wif?, key_out?}.
            """)
    @OptionGroup var card: CardOptions
    @Option(help: ArgumentHelp("The slot to unseal: the active one (the card unseals no other).", valueName: "n")) var slot: Int
    @Flag(help: "Do not ask for confirmation.") var yes = false
    @Flag(help: "Print the private key (WIF).") var showKey = false
    @Option(help: ArgumentHelp("Write the private key (WIF) to this new file (0600).", valueName: "file")) var keyOut: String?
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try runTapCommand(card, product: .satscard, json: json, human: { record in
            ["unsealed slot \(record.text("slot")): \(record.text("address"))"]
                + (record["wif"] == nil ? [] : ["private key \(record.text("wif"))"])
                + (record["key_out"] == nil ? [] : ["private key written to \(record.text("key_out"))"])
        }) { session in
            guard let status = session.status else { throw Failure.kind("failed", "no status") }
            guard slot == status.activeSlot else {
                throw Failure.kind("invalid_argument", "slot \(slot) is not the active slot \(status.activeSlot); a SATSCARD unseals only its active slot")
            }
            let current = try session.mapping("dump") { try session.card.dump(slot: slot) }
            guard current.state == .sealed else {
                throw Failure.kind("invalid_state", "slot \(slot) is \(current.state.rawValue), not sealed; nothing to unseal")
            }
            if !yes {
                switch TerminalQuestion.ask("Unsealing slot \(slot) of the SATSCARD in \(session.readerName) reveals its private key for good. Type yes to unseal: ") {
                case nil:
                    throw Failure.kind("not_confirmed", "unseal needs confirmation: run it on a terminal to be asked, or pass --yes; nothing was unsealed")
                case let answer? where answer.lowercased() == "yes":
                    break
                default:
                    throw Failure.kind("not_confirmed", "not confirmed; nothing was unsealed")
                }
            }
            let cvc = try session.cvc()
            let unsealed = try session.mapping("unseal") { try session.card.unseal(cvc: cvc) }
            var fields: [(String, Record)] = [("slot", .integer(Int64(unsealed.slot))), ("address", .string(unsealed.address)),
                                              ("public_key", .bytes(unsealed.privateKey.publicKey.compressed))]
            let coin: Coin = (session.status?.isTestnet ?? false) ? .bitcoinTestnet : .bitcoin
            if showKey || keyOut != nil {
                let wif = try unsealed.privateKey.wif(coin: coin, compressed: true)
                if let keyOut {
                    try OutputFile.create(keyOut, text: wif + "\n")
                    fields.append(("key_out", .string(keyOut)))
                }
                if showKey { fields.append(("wif", .string(wif))) }
            }
            return .object(fields)
        }
    }
}

struct SatscardNew: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new", abstract: "Start the next slot (after the active one was unsealed): a new key mixed with your entropy.",
        discussion: "JSON: {slot, address} of the new active slot.")
    @OptionGroup var card: CardOptions
    @OptionGroup var entropy: TapEntropyOptions
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        try runTapCommand(card, product: .satscard, json: json, human: { ["slot \($0.text("slot")): \($0.text("address"))"] }) { session in
            let cvc = try session.cvc()
            var chainCode = try entropy.bytes()
            defer { zero(&chainCode) }
            let slot = try session.mapping("new") { try session.card.newSlot(chainCode: chainCode, cvc: cvc) }
            let read = try session.mapping("read") { try session.card.readSlot() }
            return .object([("slot", .integer(Int64(slot))), ("address", .string(read.address))])
        }
    }
}
