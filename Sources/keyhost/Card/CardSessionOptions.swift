import ArgumentParser
// FileManager from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

/// `--reader`, `--card-state`, `--applet`: which card a `keyhost card …` command talks to. Every command opens it
/// through `CardConnection`, the card services the Lua binding uses too (stored pairings, secrets, errors).
struct CardSessionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The reader: its name (or a unique part of it), its number in 'keyhost card list', or 'virtual' for the software card. Default: the first reader with a card.", valueName: "reader"))
    var reader: String?

    @Option(help: ArgumentHelp("With --reader virtual: the software card's state file (JSON, 0600). 'keyhost card init' creates it when missing.", valueName: "file"))
    var cardState: String?

    @Option(help: ArgumentHelp("With --reader virtual: the applet of a new software card, 3.2 (secure channel v1) or 4.0 (v2); used when the state file does not exist yet, and checked against it otherwise. Default 3.2.", valueName: "version"))
    var applet: String?

    @OptionGroup var trust: TrustedCAOptions

    static let virtualHint = "--reader virtual --card-state FILE"

    var isVirtual: Bool { reader?.lowercased() == "virtual" }

    func validate() throws {
        if cardState != nil && !isVirtual { throw ValidationError("--card-state goes with --reader virtual") }
        if applet != nil && !isVirtual { throw ValidationError("--applet goes with --reader virtual (it picks the software card's applet)") }
        _ = try appletVersion()
    }

    func appletVersion() throws -> AppletVersion? {
        switch applet {
        case nil: return nil
        case "3.2", "3": return .v3_2
        case "4.0", "4": return .v4_0
        case let other?: throw ValidationError("--applet must be 3.2 or 4.0, not \(other)")
        }
    }

    /// Opens the card as far as `access`; a missing state file is refused unless the command `creates` a card.
    func connect(access: CardAccess, requirement: CardRequirement, creates: Bool = false,
                 connectOptions: CardConnectOptions = CardConnectOptions()) throws -> CardConnection {
        if let cardState, !creates, !FileManager.default.fileExists(atPath: cardState) {
            throw Failure.kind("not_found", "no software card state at \(cardState); create one with "
                               + "keyhost card init --reader virtual --card-state \(cardState) [--applet 3.2|4.0]")
        }
        do {
            return try CardConnection(reader: reader, cardState: cardState, newCardApplet: try appletVersion(), readers: [PCSCReaders()],
                                      connectOptions: connectOptions, pin: nil, pairingPassword: nil, trustedCAKeys: try trust.keys(),
                                      virtualHint: Self.virtualHint, access: access, requirement: requirement, commandLine: true)
        } catch let error as CardSetupError {
            // No reader, no such reader, several matching: the kind Lua's card.open uses for them.
            throw Failure.kind(error.kind, error.description)
        }
    }
}

/// The help paragraph on where a command's secrets come from.
func secretsHelp(_ variables: [String], extra: String = "") -> String {
    "Secrets are never taken on the command line: \(variables.joined(separator: ", ")) "
        + "\(variables.count == 1 ? "is" : "are") read from the environment, else asked on the terminal without echo."
        + (extra.isEmpty ? "" : " " + extra)
}

/// Runs one card command: connect, do `body`, print its result (JSON with `--json`, else `human`), close the card.
/// Errors go through `Failure.exitOnError` (structured kinds with `--json`).
func runCardCommand(_ options: CardSessionOptions, json: Bool, access: CardAccess, requirement: CardRequirement,
                    creates: Bool = false, human: @escaping (Record) -> [String],
                    _ body: (CardConnection) throws -> Record) throws {
    try Failure.exitOnError {
        let connection = try options.connect(access: access, requirement: requirement, creates: creates)
        defer { connection.close() }
        let result = try body(connection)
        if json {
            print(result.json())
        } else {
            for line in human(result) { print(line) }
        }
    }
}

extension Record {
    /// A field as text for the human output: bytes in hex, absent values as "none", lists joined by ", ".
    func text(_ name: String) -> String {
        switch self[name] {
        case nil, .null?: return "none"
        case .bool(let value)?: return value ? "yes" : "no"
        case .integer(let value)?: return "\(value)"
        case .number(let value)?: return "\(value)"
        case .string(let value)?: return value
        case .bytes(let value)?: return Hex.encode(value)
        case .array(let items)?: return items.map { Record.object([("item", $0)]).text("item") }.joined(separator: ", ")
        case .object?: return "…"
        }
    }
}
