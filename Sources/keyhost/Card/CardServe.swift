import ArgumentParser
// URL from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostCard
import KeyhostVPCD

#if canImport(Glibc)
import Glibc
#endif

struct CardServe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a software Keycard, Satochip, SeedKeeper, TAPSIGNER or SATSCARD to the vpcd virtual reader of a running pcscd until stopped.",
        discussion: """
            Start the reader first (scripts/virtual-reader start). The card connects to vpcd at HOST:PORT \
            (default 127.0.0.1:35963, reader "Virtual PCD 00 00"; port 35964 is "Virtual PCD 00 01") and \
            reconnects when pcscd restarts. With --card-state the card lives in FILE (created when missing, saved \
            after every command); without it the card exists in memory only. Stop with Ctrl-C or SIGTERM.
            --applet tapsigner or satscard serves a Coinkite tap card instead (ATR as cktap expects); a new one's CVC \
            is read from the environment variable named by --cvc-env, else it is 123456 as on Coinkite's emulator. \
            Its certificates lead to keyhost's test factory root, which cktap calls counterfeit.
            """
    )

    @Flag(name: .customLong("vpcd"), help: "Serve to vsmartcard's vpcd (the only transport so far).")
    var vpcd = false

    @Argument(help: ArgumentHelp("Where vpcd listens (after --vpcd).", valueName: "host:port"))
    var address: String?

    @Option(help: ArgumentHelp("Keep the card in FILE (JSON, mode 0600; the test card's secrets are in clear), as --card-state of every other card command names it.", valueName: "file"))
    var cardState: String?

    /// The option's earlier name, still taken.
    @Option(name: .customLong("state"), help: .hidden)
    var legacyState: String?

    var state: String? { cardState ?? legacyState }

    @Option(help: ArgumentHelp("Card to emulate: Keycard 3.2 (secure channel v1) or 4.0 (secure channel v2), satochip (a Satochip, protocol 0.12), seedkeeper (a SeedKeeper, protocol 0.2), tapsigner or satscard.", valueName: "applet"))
    var applet: String = "3.2"

    @Option(help: ArgumentHelp("TAPSIGNER/SATSCARD: take a new card's CVC (6 to 32 digits) from environment variable VAR (default 123456).", valueName: "VAR"))
    var cvcEnv: String?

    @Option(help: ArgumentHelp("Pairing slots of a new card.", valueName: "n"))
    var pairingSlots: Int = 10

    @Option(help: ArgumentHelp("Make every random byte of a new card reproducible (tests only).", valueName: "seed"))
    var seed: String?

    @Flag(inversion: .prefixedNo,
          help: "Applet 4.0: write SELECT's outer A4 length one byte short, as the real 4.0 applet does.")
    var selectLengthQuirk = true

    func validate() throws {
        guard vpcd else { throw ValidationError("say where to serve the card: --vpcd [HOST:PORT]") }
        _ = try endpoint()
        if !isSatochip && !isSeedKeeper && tapKind == nil { _ = try appletVersion() }
        if cvcEnv != nil && tapKind == nil { throw ValidationError("--cvc-env is for --applet tapsigner or satscard") }
        guard (1...255).contains(pairingSlots) else { throw ValidationError("--pairing-slots must be 1...255") }
        if cardState != nil && legacyState != nil { throw ValidationError("give the state file once: --card-state FILE (--state is its old name)") }
    }

    func endpoint() throws -> VPCDEndpoint {
        guard let address else { return .default }
        do { return try VPCDEndpoint(parsing: address) } catch { throw ValidationError("\(error)") }
    }

    var isSatochip: Bool { applet.lowercased() == "satochip" }
    var isSeedKeeper: Bool { applet.lowercased() == "seedkeeper" }

    func appletVersion() throws -> AppletVersion {
        switch applet {
        case "3.2", "3": return .v3_2
        case "4.0", "4": return .v4_0
        default: throw ValidationError("--applet must be 3.2 or 4.0 (Keycard), satochip, seedkeeper, tapsigner or satscard, not \(applet)")
        }
    }

    /// The tap card asked for, or nil for a Keycard.
    var tapKind: SoftCKTapState.Kind? { SoftCKTapState.Kind(rawValue: applet) }

    func run() throws {
        if isSatochip { return try runSatochip() }
        if isSeedKeeper { return try runSeedKeeper() }
        try Failure.exitOnError {
            if let kind = tapKind { return try serveTapCard(kind) }
            let options = SoftKeycardOptions(appletVersion: try appletVersion(), pairingSlots: pairingSlots,
                                             randomSeed: seed.map { Array($0.utf8) },
                                             selectLengthQuirk: selectLengthQuirk)
            let card: SoftKeycard
            if let state {
                card = try SoftKeycard(store: SoftKeycardStore(url: URL(fileURLWithPath: state)), options: options)
            } else {
                card = try SoftKeycard(options: options)
            }
            try serve { SoftCardVPCDCard(card: card, log: $0) }
        }
    }

    func runSatochip() throws {
        try Failure.exitOnError {
            let options = SoftSatochipOptions(randomSeed: seed.map { Array($0.utf8) })
            let card: SoftSatochip
            if let state {
                card = try SoftSatochip(store: SoftSatochipStore(url: URL(fileURLWithPath: state)), options: options)
            } else {
                card = try SoftSatochip(options: options)
            }
            try serve { SoftCardVPCDCard(card: card, log: $0) }
        }
    }

    /// A software TAPSIGNER or SATSCARD served the same way.
    private func serveTapCard(_ kind: SoftCKTapState.Kind) throws {
        var cvc = SoftCKTapOptions.defaultCVC
        if let cvcEnv {
            guard let value = getenv(cvcEnv).map({ String(cString: $0) }) else {
                throw ValidationError("--cvc-env \(cvcEnv): the environment variable is not set")
            }
            let digits = Array(value.utf8)
            guard CKTap.cvcLengths.contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }) else {
                throw ValidationError("--cvc-env \(cvcEnv): a CVC is 6 to 32 digits")
            }
            cvc = digits
        }
        let options = SoftCKTapOptions(kind: kind, cvc: cvc, randomSeed: seed.map { Array($0.utf8) })
        let card: SoftCKTap
        if let state {
            card = try SoftCKTap(store: SoftCKTapStore(url: URL(fileURLWithPath: state)), options: options)
        } else {
            card = try SoftCKTap(options: options)
        }
        try serve { SoftCardVPCDCard(card: card, atr: CKTap.atr, log: $0) }
    }

    /// Serves the card `make` builds (given where to log what it cannot answer) until stopped.
    private func serve(_ make: (@escaping (String) -> Void) -> VPCDCard) throws {
        let log: (String) -> Void = { line in fputs("keyhost card serve: \(line)\n", stderr) }
        let served = make(log)
        VPCDStopSignal.install()
        VPCDClient(card: served, endpoint: try endpoint(), log: log).run()
    }

    /// A software SeedKeeper served the same way.
    func runSeedKeeper() throws {
        try Failure.exitOnError {
            let options = SoftSeedKeeperOptions(randomSeed: seed.map { Array($0.utf8) })
            let card: SoftSeedKeeper
            if let state {
                card = try SoftSeedKeeper(store: SoftSeedKeeperStore(url: URL(fileURLWithPath: state)), options: options)
            } else {
                card = try SoftSeedKeeper(options: options)
            }
            try serve { SoftCardVPCDCard(card: card, log: $0) }
        }
    }
}
