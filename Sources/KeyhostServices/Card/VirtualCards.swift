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
}
