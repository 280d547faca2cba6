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


struct CardInfo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "SELECT the Keycard applet and print what it tells about itself.",
        discussion: "Instance UID, applet version, secure channel public key, free pairing slots, key UID, capabilities, and whether the card is initialised."
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
            var options = card
            if let path = options.cardState, !FileManager.default.fileExists(atPath: path) { options.cardState = nil }
            let protocolName = transmissionProtocol.lowercased().replacing("=", with: "")
            let connection = try options.connect(access: .selected, requirement: .anything, creates: true,
                                                 connectOptions: CardConnectOptions(wait: wait, exclusive: exclusive,
                                                                                    transmissionProtocol: protocolName == "any" ? nil : protocolName))
            defer { connection.close() }
            let fields = CardInfo.fields(connection.selectInfo, reader: connection.readerName)
            if json {
                print(Record.object(fields.map { ($0.key, $0.json) }).json())
            } else {
                for field in fields { print("\(field.label): \(TerminalText.escaped(field.text))") }  // the reader names itself
            }
        }
    }

    struct Field {
        var key: String
        var label: String
        var json: Record
        var text: String
    }

    static func capabilityNames(_ caps: Capabilities) -> [String] {
        let names: [(Capabilities, String)] = [
            (.secureChannel, "secure_channel"), (.keyManagement, "key_management"),
            (.credentialsManagement, "credentials_management"), (.ndef, "ndef"), (.factoryReset, "factory_reset"),
        ]
        return names.filter { caps.contains($0.0) }.map(\.1)
    }

    static func fields(_ info: ApplicationInfo, reader: String) -> [Field] {
        func optional(_ value: [UInt8]?) -> (Record, String) {
            value.map { (.bytes($0), Hex.encode($0)) } ?? (.null, "none")
        }
        let knownVersion = info.version.major != 0 || info.version.minor != 0
        let uid = optional(info.instanceUID)
        let scKey = optional(info.secureChannelPublicKey?.uncompressed)
        let keyUID = optional(info.keyUID)
        let identity = optional(info.identityCertificate?.identityKey.compressed)
        let caps = capabilityNames(info.capabilities)
        var fields = [
            Field(key: "reader", label: "reader", json: .string(reader), text: reader),
            Field(key: "initialized", label: "initialized", json: .bool(info.isInitialized), text: info.isInitialized ? "yes" : "no"),
            Field(key: "applet_version", label: "applet version", json: knownVersion ? .string("\(info.version)") : .null,
                  text: knownVersion ? "\(info.version)" : "unknown (not initialized)"),
            Field(key: "secure_channel", label: "secure channel", json: info.secureChannelVersion == .v2 ? 2 : 1,
                  text: info.secureChannelVersion == .v2 ? "v2" : "v1"),
            Field(key: "instance_uid", label: "instance UID", json: uid.0, text: uid.1),
            Field(key: "secure_channel_public_key", label: "secure channel public key", json: scKey.0, text: scKey.1),
            Field(key: "free_pairing_slots", label: "free pairing slots", json: .integer(info.freePairingSlots),
                  text: info.freePairingSlots.map { "\($0)" } ?? "none"),
            Field(key: "key_uid", label: "key UID", json: keyUID.0, text: keyUID.1),
            Field(key: "capabilities", label: "capabilities", json: .strings(caps), text: caps.joined(separator: ", ")),
        ]
        if info.secureChannelVersion == .v2 {
            fields.append(Field(key: "pin_retries", label: "PIN tries left", json: .integer(info.pinRetries),
                                text: info.pinRetries.map { "\($0)" } ?? (info.isInitialized ? "unknown" : "no PIN yet (not initialized)")))
            fields.append(Field(key: "identity_public_key", label: "identity public key", json: identity.0, text: identity.1))
        }
        return fields
    }
}
