import KeyhostRecord
import ArgumentParser
// FileManager from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostServices
import KeyhostCard
import KeyhostCrypto
import KeyhostFiles
#if canImport(Glibc)
import Glibc
#endif


struct CardInfo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "SELECT the card's applet and print what it tells about itself (a Keycard, else a Satochip or what the card holds).",
        discussion: "Instance UID, applet version, secure channel public key, free pairing slots, key UID, capabilities, and whether the card is initialised; on 4.x the identity public key and whether its certificate chains to a trusted CA (a warning on standard error when it does not: add --trusted-ca for a CA you trust). A card without a Keycard applet: its family, version and state; a Satochip's status, and with KEYHOST_PIN (or --pin-env) set its label and whether its device certificate chains to a trusted CA (never a prompt)."
            + "\n" + HelpExamples.text(
                "keyhost card info                                  # the first reader with a card",
                "keyhost card info --reader virtual --card-state c.json --json")
    )

    @OptionGroup var card: CardSessionOptions

    @Option(name: .long, help: ArgumentHelp("Wait up to this many seconds for a card to appear.", valueName: "seconds"))
    var wait: Double?

    @Flag(help: "Connect in exclusive mode: other applications wait until keyhost is done.")
    var exclusive = false

    @Option(name: .customLong("protocol"), help: ArgumentHelp("Transmission protocol: t0, t1 or any.", valueName: "protocol"))
    var transmissionProtocol: String = "any"

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        guard ["t0", "t=0", "t1", "t=1", "any"].contains(transmissionProtocol.lowercased()) else {
            throw ValidationError("--protocol must be t0, t1 or any")
        }
        if let wait, !(wait >= 0) { throw ValidationError("--wait needs a number of seconds, 0 or more") }
        if card.isVirtual && (wait != nil || exclusive) { throw ValidationError("--wait and --exclusive are for a card in a reader, not --reader virtual") }
    }

    func run() throws {
        try Failure.exitOnError {
            // The same connection as every other card command (reader choice, trace); a missing state file is
            // looked at without being created.
            let protocolName = transmissionProtocol.lowercased().replacing("=", with: "")
            let request = try card.openRequest(creates: true, lookOnly: true,
                                               connectOptions: CardConnectOptions(wait: wait, exclusive: exclusive,
                                                                                  transmissionProtocol: protocolName == "any" ? nil : protocolName))
            let frontEnd = card.options.frontEnd()
            let transport = try frontEnd.mapping(nil) { try CardOpener.transport(request, readers: [PCSCReaders()], frontEnd: frontEnd) }
            if let family = transport.virtualFamily, family != .keycard {
                return try CardInfo.printOther(family, transport, request, frontEnd: frontEnd, json: json)
            }
            let connection: CardConnection
            do {
                let session = try frontEnd.mapping(nil) { try CardOpener.open(request, transport: transport, frontEnd: frontEnd) }
                connection = try CardConnection(request, session: session, access: .selected, requirement: .anything)
            } catch let error as CardServiceError where error.statusWord == .fileNotFound && transport.virtualFamily == nil {
                // No Keycard applet: say what the card holds instead.
                return try CardInfo.printOther(nil, transport, request, frontEnd: frontEnd, json: json)
            }
            defer { connection.close() }
            let info = connection.selectInfo
            let trust = CardTrust(connection.card, info)
            let record = CardRecords.info(info, reader: connection.readerName, trust: trust)
            if json {
                print(record.json())
            } else {
                for line in CardInfo.lines(record, info) { print(TerminalText.escaped(line)) }  // the reader names itself
            }
            if let warning = CardInfo.trustWarning(info, trust) { _ = WriteAll.write(STDERR_FILENO, Array("keyhost: warning: \(warning)\n".utf8)) }
        }
    }

    /// The labels of the text output, in the record's order; a 3.x card's absent 4.x fields are left out.
    static let labels: [(key: String, label: String)] = [
        ("reader", "reader"), ("initialized", "initialized"), ("applet", "applet version"), ("secure_channel", "secure channel"),
        ("instance_uid", "instance UID"), ("secure_channel_public_key", "secure channel public key"),
        ("free_pairing_slots", "free pairing slots"), ("key_uid", "key UID"), ("capabilities", "capabilities"),
        ("pin_retries", "PIN tries left"), ("identity_public_key", "identity public key"), ("identity_ca_key", "identity CA key"),
        ("identity_trusted", "identity trusted"),
    ]

    static func lines(_ record: Record, _ info: ApplicationInfo) -> [String] {
        let v2 = info.secureChannelVersion == .v2
        return labels.compactMap { field in
            if !v2 && ["pin_retries", "identity_public_key", "identity_ca_key", "identity_trusted"].contains(field.key) { return nil }
            var text = record.text(field.key)
            switch field.key {
            case "applet" where record["applet"] == .null: text = "unknown (not initialized)"
            case "secure_channel": text = v2 ? "v2" : "v1"
            case "pin_retries" where record["pin_retries"] == .null: text = info.isInitialized ? "unknown" : "no PIN yet (not initialized)"
            case "identity_trusted" where record["identity_trusted"] == .bool(false): text = "NO (see the warning)"
            default: break
            }
            return "\(field.label): \(text)"
        }
    }

    /// The warning for a 4.x card whose identity certificate does not chain to a trusted CA: its identity key is only
    /// what the card claims, and the card may not be a genuine Keycard.
    static func trustWarning(_ info: ApplicationInfo, _ trust: CardTrust) -> String? {
        guard info.secureChannelVersion == .v2, !trust.isTrusted else { return nil }
        guard let ca = trust.caKey else {
            return "the card's identity certificate is missing or unreadable: it may not be a genuine Keycard, and its identity key is unverified"
        }
        let hex = Hex.encode(ca)
        return "the card's identity certificate is signed by an unknown certificate authority \(hex): it may not be a genuine Keycard, "
            + "and its identity public key is unverified; if you trust that CA, add --trusted-ca \(hex)"
    }
}
