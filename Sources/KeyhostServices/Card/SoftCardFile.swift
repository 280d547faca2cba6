// JSONDecoder from FoundationEssentials: Foundation proper would link ICU into keyhost.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import KeyhostCard
import KeyhostFiles

/// Tells which family a software card's state file holds, from the fields only that family writes, so that
/// `--card-state FILE` (and Lua's `state`) open the right twin without being told. A file it cannot tell is taken
/// for a Keycard's, whose store then says what is wrong with it (as it always has).
enum SoftCardFile {
    /// The fields that tell the families' state files apart.
    private struct Marks: Decodable {
        var appletVersion: AppletVersion?
        var authentikey: [UInt8]?
        var kind: String?
        var cardKey: [UInt8]?
    }

    static func family(_ path: String) -> CardFamily {
        guard let bytes = try? BoundedFile.read(path, limit: BoundedFile.mebibyte, regularOnly: true),
              let marks = try? JSONDecoder().decode(Marks.self, from: Data(bytes)) else { return .keycard }
        if marks.appletVersion == nil && marks.authentikey != nil { return .satochip }
        if marks.appletVersion == nil && marks.cardKey != nil, let kind = marks.kind.flatMap(SoftCKTapState.Kind.init(rawValue:)) {
            return kind == .tapsigner ? .tapsigner : .satscard
        }
        return .keycard
    }
}
