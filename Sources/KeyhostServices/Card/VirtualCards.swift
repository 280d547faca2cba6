// URL and FileManager from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import KeyhostCard

/// The in-process software cards behind `reader = "virtual"`.
///
/// A card kept in a state file is shared by every session that opens that file (one `SoftKeycard` per path),
/// so sessions see each other's changes as on a real card and never overwrite each other's state.
/// A card without a file is new at each `card.open`.
public enum VirtualCards {
    /// A serial queue is the lock (as in KeyhostCrypto's BatchAddresses): NSLock would need Foundation.
    private static let lock = DispatchQueue(label: "keyhost.virtual-cards")
    nonisolated(unsafe) private static var byPath: [String: SoftKeycard] = [:]

    /// The software card of state file `path` (shared per path), or a new one without a file; `appletGiven`: refuse a
    /// state file holding another applet than `options` says.
    public static func open(state path: String?, options: SoftKeycardOptions, appletGiven: Bool) throws -> SoftKeycard {
        guard let path else { return try SoftKeycard(options: options) }
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        return try lock.sync { try openLocked(absolute, options: options, appletGiven: appletGiven) }
    }

    private static func openLocked(_ absolute: String, options: SoftKeycardOptions, appletGiven: Bool) throws -> SoftKeycard {
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
}
