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
import KeyhostFiles
#if canImport(Glibc)
import Glibc
#endif

/// `--reader`, `--card-state`, `--trusted-ca`, `--pin-env`, `--pairing-password-env`: which card a command opens and
/// where its secrets come from. One group on every command that opens a card (`keyhost card …` through
/// `CardSessionOptions`, and `--card` of `key`, `psbt`, `eth`, `token`), so they all spell and default it alike. Any of
/// them implies `--card`. The card is opened by `CardOpener`, as Lua's `card.open{}` opens it.
struct CardOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The reader: its name (or a unique part of it), its number in 'keyhost card list', or 'virtual' for the software card. Default: $\(CardDefaults.readerVariable), else the first reader with a card.", valueName: "reader"))
    var reader: String?

    @Option(help: ArgumentHelp("The software card's state file (JSON, 0600); implies --reader virtual. Default with the virtual reader: $\(CardDefaults.stateVariable).", valueName: "file"))
    var cardState: String?

    @OptionGroup var trust: TrustedCAOptions

    @Option(help: ArgumentHelp("Read the card PIN from environment variable VAR (default KEYHOST_PIN, else a prompt on the terminal that does not echo).", valueName: "var"))
    var pinEnv: String?

    @Option(help: ArgumentHelp("Read a new pairing's password from environment variable VAR (default KEYHOST_PAIRING_PASSWORD, else a prompt).", valueName: "var"))
    var pairingPasswordEnv: String?

    @Option(help: ArgumentHelp("TAPSIGNER/SATSCARD: read the CVC from environment variable VAR (default KEYHOST_CVC, else a prompt on the terminal that does not echo).", valueName: "var"))
    var cvcEnv: String?

    @Flag(help: "TAPSIGNER/SATSCARD: when the card is in its CVC back-off after wrong CVCs, wait it out (one 'wait' a second) instead of failing.")
    var waitBackoff = false

    /// Some card option was given.
    var given: Bool { selectsCard || trust.given || pinEnv != nil || pairingPasswordEnv != nil || cvcEnv != nil || waitBackoff }

    /// `--reader` or `--card-state` names a card: the command uses it even without `--card`.
    var selectsCard: Bool { reader != nil || cardState != nil }

    /// For a command with a `--card` flag: the options that only say how to open a card need one.
    func requireCard(_ usesCard: Bool) throws {
        guard given && !usesCard else { return }
        throw ValidationError("--pin-env, --pairing-password-env, --cvc-env, --wait-backoff and --trusted-ca go with --card (or --reader / --card-state, which imply it)")
    }

    func validate() throws {
        if cardState != nil, let reader, reader.lowercased() != CardReaders.virtual {
            throw ValidationError("--card-state is the software card's state file: it goes with --reader virtual (or without --reader), not --reader \(reader)")
        }
        for (option, variable) in [("--pin-env", pinEnv), ("--pairing-password-env", pairingPasswordEnv), ("--cvc-env", cvcEnv)] {
            guard let variable else { continue }
            try SecretArguments.refuse([(option, variable)])
            guard !variable.isEmpty, variable.utf8.allSatisfy({ $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else {
                throw ValidationError("\(option) takes the name of an environment variable (letters, digits, _), not \(variable.debugDescription); "
                                      + "the secret itself is never taken on the command line")
            }
        }
    }

    /// The reader to open: --reader, else the software card when --card-state names its file, else KEYHOST_READER,
    /// else nil (the first reader with a card).
    var readerChoice: String? {
        if let reader { return reader }
        if cardState != nil { return CardReaders.virtual }
        return CardDefaults.reader
    }

    var isVirtual: Bool { readerChoice?.trimmingWhitespace().lowercased() == CardReaders.virtual }

    /// The software card's state file: --card-state, else KEYHOST_CARD_STATE with the virtual reader.
    var stateChoice: String? { cardState ?? (isVirtual ? CardDefaults.state : nil) }

    /// The request these options make.
    func request(applet: AppletVersion? = nil, connect: CardConnectOptions = CardConnectOptions()) throws -> CardOpenRequest {
        var request = CardOpenRequest(reader: readerChoice)
        request.state = isVirtual ? stateChoice : nil
        request.applet = applet
        request.connect = connect
        request.trustedCAKeys = try trust.keys()
        return request
    }

    /// The command line's wording, with the secrets' variables these options name, and notices on standard error.
    func frontEnd(virtualCard: String = CardSessionOptions.virtualHint) -> CardFrontEnd {
        var frontEnd = CardFrontEnd.commandLine(virtualCard: virtualCard, pinVariable: pinEnv, pairingPasswordVariable: pairingPasswordEnv,
                                                cvcVariable: cvcEnv)
        frontEnd.waitBackoff = waitBackoff
        frontEnd.notice = { _ = WriteAll.write(STDERR_FILENO, Array("keyhost: \($0)\n".utf8)) }
        return frontEnd
    }

    /// The card, ready to sign whatever its family (a Keycard: secure channel open and PIN verified, the PIN from
    /// --pin-env's variable, KEYHOST_PIN or a prompt).
    func openSigner() throws -> SigningCard {
        try CardOpener.openSigner(existingCardRequest(), readers: [PCSCReaders()], frontEnd: frontEnd())
    }

    /// The request, refused when it names a software card state file that is not there: only `keyhost card init`
    /// makes a software card.
    private func existingCardRequest() throws -> CardOpenRequest {
        let request = try request()
        if let state = request.state, !FileManager.default.fileExists(atPath: state) {
            throw Failure.kind("not_found", "no software card state at \(state); create one with "
                               + "keyhost card init --reader virtual --card-state \(state) [--applet 3.2|4.0]")
        }
        return request
    }
}

/// The environment's defaults for the card options, shown in their help.
enum CardDefaults {
    static let readerVariable = "KEYHOST_READER"
    static let stateVariable = "KEYHOST_CARD_STATE"

    static var reader: String? { value(readerVariable) }
    static var state: String? { value(stateVariable) }

    private static func value(_ name: String) -> String? {
        guard let raw = getenv(name) else { return nil }
        let text = String(cString: raw).trimmingWhitespace()
        return text.isEmpty ? nil : text
    }
}

/// `--card virtual` where `--card` is a flag (`key`, `psbt`, `eth`, `token`): the software card, as `discover --card
/// virtual` names it; rewritten to `--card --reader virtual` before parsing. Only the word `virtual` is taken this way:
/// a reader's name or number could be these commands' positional argument (a message), so it goes with --reader.
enum CardFlagArguments {
    static let commands: Set<String> = ["key", "psbt", "eth", "token"]

    static func normalize(_ arguments: [String]) -> [String] {
        guard let first = arguments.first, commands.contains(first) else { return arguments }
        var out: [String] = []
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            if argument == "--" { out += arguments[i...]; break }
            out.append(argument)
            if argument == "--card", i + 1 < arguments.count, arguments[i + 1].lowercased() == CardReaders.virtual {
                out += ["--reader", arguments[i + 1]]
                i += 1
            }
            i += 1
        }
        return out
    }
}

/// `--reader`, `--card-state`, `--applet` and the rest of `CardOptions`: which card a `keyhost card …` command talks to.
struct CardSessionOptions: ParsableArguments {
    @OptionGroup var options: CardOptions

    @Option(help: ArgumentHelp("With --reader virtual: the applet of a new software card, 3.2 (secure channel v1) or 4.0 (v2); used when the state file does not exist yet, and checked against it otherwise. Default 3.2.", valueName: "version"))
    var applet: String?

    static let virtualHint = "--reader virtual --card-state FILE"

    var reader: String? { options.reader }
    var cardState: String? { options.stateChoice }
    var isVirtual: Bool { options.isVirtual }

    func validate() throws {
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

    /// Opens the card as far as `access`; a missing state file is refused unless the command `creates` a card, or only
    /// looks (`lookOnly`: a new software card, nothing written).
    func connect(access: CardAccess, requirement: CardRequirement, creates: Bool = false, lookOnly: Bool = false,
                 connectOptions: CardConnectOptions = CardConnectOptions()) throws -> CardConnection {
        let request = try openRequest(creates: creates, lookOnly: lookOnly, connectOptions: connectOptions)
        return try CardConnection(request, readers: [PCSCReaders()], frontEnd: options.frontEnd(), access: access, requirement: requirement)
    }

    /// The request `connect` opens, whatever the card's family (`card info` looks at any card).
    func openRequest(creates: Bool = false, lookOnly: Bool = false, connectOptions: CardConnectOptions = CardConnectOptions()) throws -> CardOpenRequest {
        var request = try options.request(applet: try appletVersion(), connect: connectOptions)
        if !creates, let state = request.state, !FileManager.default.fileExists(atPath: state) {
            throw Failure.kind("not_found", "no software card state at \(state); create one with "
                               + "keyhost card init --reader virtual --card-state \(state) [--applet 3.2|4.0]")
        }
        // `card info` looks at a software card whose file does not exist yet without creating the file.
        if lookOnly, let state = request.state, !FileManager.default.fileExists(atPath: state) { request.state = nil }
        return request
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
