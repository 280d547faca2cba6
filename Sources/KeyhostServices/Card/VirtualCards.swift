// URL and FileManager from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
import KeyhostCard

/// The in-process software cards behind `reader = "virtual"`.
///
/// A card kept in a state file is shared by every session that opens that file (one `SoftKeycard` per path),
/// so sessions see each other's changes as on a real card and never overwrite each other's state.
/// A card without a file is new at each `card.open`.
public enum VirtualCards {
    /// The cards opened so far, by absolute state-file path.
    private static let byPath = Mutex<[String: SoftKeycard]>([:])
    /// The other families' software cards opened so far, by absolute state-file path.
    private static let othersByPath = Mutex<[String: CardChannel]>([:])

    /// The software card of state file `path` (shared per path), or a new one without a file; `appletGiven`: refuse a
    /// state file holding another applet than `options` says.
    public static func open(state path: String?, options: SoftKeycardOptions, appletGiven: Bool) throws -> SoftKeycard {
        guard let path else { return try SoftKeycard(options: options) }
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        return try byPath.withLock { try openLocked(&$0, absolute, options: options, appletGiven: appletGiven) }
    }

    private static func openLocked(_ byPath: inout [String: SoftKeycard], _ absolute: String, options: SoftKeycardOptions,
                                   appletGiven: Bool) throws -> SoftKeycard {
        if let card = byPath[absolute], FileManager.default.fileExists(atPath: absolute) {
            try check(card, absolute, options, appletGiven)
            return card
        }
        let card = try SoftKeycard(store: SoftKeycardStore(url: URL(fileURLWithPath: absolute)), options: options)
        try check(card, absolute, options, appletGiven)
        byPath[absolute] = card
        return card
    }

    private static func check(_ card: SoftKeycard, _ path: String, _ options: SoftKeycardOptions, _ appletGiven: Bool) throws {
        if appletGiven && card.state.appletVersion != options.appletVersion {
            throw CardServiceError(kind: "invalid_argument",
                               "virtual card state \(path) holds applet \(card.state.appletVersion), not \(options.appletVersion); "
                               + "drop the 'applet' option or use another state file")
        }
    }

    /// The family of the software card `request` names: what its state file holds (a file not yet there, or none:
    /// the family asked for, by default a Keycard); a file of another family than the one asked for is refused.
    public static func family(_ request: CardOpenRequest) throws -> CardFamily {
        let asked = request.family ?? (request.applet != nil ? .keycard : nil)
        guard let path = request.state, FileManager.default.fileExists(atPath: path) else { return asked ?? .keycard }
        let held = SoftCardFile.family(path)
        if let asked, asked != held {
            throw CardServiceError(kind: "invalid_argument", "virtual card state \(path) holds a \(held), not a \(asked); "
                                   + "drop the card kind or use another state file")
        }
        return held
    }

    /// A software card of `family` other than Keycard, kept in the request's state file (shared per path) or new.
    static func open(_ family: CardFamily, _ request: CardOpenRequest) throws -> CardChannel {
        let seed = request.seed.map { Array("\(CardFrontEnd.SeedDomain.virtualCard)\($0)".utf8) }
        if request.applet != nil || request.pairingSlots != nil {
            throw CardServiceError(kind: "invalid_argument", "an applet version and a number of pairing slots are for a software Keycard, not a \(family)")
        }
        func make(_ path: String?) throws -> CardChannel {
            switch family {
            case .satochip:
                let options = SoftSatochipOptions(randomSeed: seed)
                return try path.map { try SoftSatochip(store: SoftSatochipStore(url: URL(fileURLWithPath: $0)), options: options) }
                    ?? SoftSatochip(options: options)
            case .tapsigner, .satscard:
                let options = SoftCKTapOptions(kind: family == .tapsigner ? .tapsigner : .satscard, randomSeed: seed)
                return try path.map { try SoftCKTap(store: SoftCKTapStore(url: URL(fileURLWithPath: $0)), options: options) }
                    ?? SoftCKTap(options: options)
            case .keycard, .seedkeeper:
                throw CardServiceError(kind: "unsupported", "there is no software \(family) in this build")
            }
        }
        guard let path = request.state else { return try make(nil) }
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        return try othersByPath.withLock { cards in
            if let card = cards[absolute], FileManager.default.fileExists(atPath: absolute) { return card }
            let card = try make(absolute)
            cards[absolute] = card
            return card
        }
    }
}
