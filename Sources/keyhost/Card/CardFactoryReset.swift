import ArgumentParser
import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

#if canImport(Glibc)
import Glibc
#endif

struct CardFactoryReset: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "factory-reset",
        abstract: "FACTORY RESET: erase the card's keys, PIN, PUK and pairings (it becomes blank). Irreversible.",
        discussion: """
            Needs confirmation: on a terminal keyhost asks for it; scripts pass --confirm with the card's instance UID \
            (3.x) or identity public key (4.x cards have no instance UID), as 'keyhost card info' prints them, which must \
            match the card in the reader. Without either it refuses. A 4.x card must prove that identity key first: its \
            certificate must chain to a trusted CA (Status', or one named with --trusted-ca) and it must hold the key; an \
            untrusted card is refused (kind untrusted_card). No PIN is needed: the card accepts FACTORY RESET \
            from anyone holding it. JSON: {instance_uid, identity_public_key, initialized}.
            """
    )

    @OptionGroup var card: CardSessionOptions

    @Option(help: ArgumentHelp("The card to erase: its instance UID, or on 4.x its identity public key (hex, from 'keyhost card info'); no question is asked.", valueName: "id"))
    var confirm: String?

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try runCardCommand(card, json: json, access: .selected, requirement: .initialized, human: { result in
            ["factory reset the card: it is blank now"]
        }) { connection in
            guard let id = connection.cardIdentifier else {
                throw Failure.kind("failed", "the card in \(connection.readerName) tells neither an instance UID nor an identity key to confirm with")
            }
            let what = connection.selectInfo.instanceUID == nil ? "identity public key" : "instance UID"
            // A 4.x card is confirmed by its identity key, which SELECT shows but does not prove: the card must prove it
            // (trusted certificate, handshake) before the key is compared with --confirm or shown at the question.
            try connection.frontEnd.mapping("OPEN SECURE CHANNEL") { try connection.session.proveIdentity(connection.card) }
            if let confirm {
                guard confirm.lowercased() == id else {
                    throw Failure.kind("not_confirmed", "--confirm \(confirm) is not the \(what) of the card in \(connection.readerName) "
                                       + "(\(id)); nothing was erased")
                }
            } else {
                switch TerminalQuestion.ask("Factory reset erases the keys, PIN, PUK and pairings of the Keycard with \(what) \(id) in \(connection.readerName). "
                                            + "Type yes to erase it: ") {
                case nil:
                    throw Failure.kind("not_confirmed", "factory reset needs confirmation: run keyhost card factory-reset on a terminal to be asked, "
                                       + "or pass --confirm <instance UID> (on 4.x: <identity public key>; keyhost card info prints them); nothing was erased")
                case let answer? where answer.lowercased() == "yes":
                    break
                default:
                    throw Failure.kind("not_confirmed", "not confirmed; nothing was erased")
                }
            }
            return try connection.factoryReset()
        }
    }
}

/// A question on the controlling terminal, answer echoed (not for secrets: those go through the card binding's no-echo prompt).
enum TerminalQuestion {
    /// The answer line, or nil when there is no terminal.
    static func ask(_ question: String) -> String? {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard isatty(fd) != 0 else { return nil }
        _ = question.withCString { write(fd, $0, strlen($0)) }
        var line: [UInt8] = []
        while line.count < 256 {
            var byte: UInt8 = 0
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || byte == 0x0A || byte == 0x0D { break }
            line.append(byte)
        }
        return String(decoding: line, as: UTF8.self).trimmingWhitespace()
    }
}
