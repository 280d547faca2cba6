import KeyhostCard
import KeyhostCrypto
import KeyhostServices
import LuaRuntime

/// `keyhost.card.session`: a `CardSession` (one open connection to a card with the Keycard command set on top) as a
/// Lua object. Methods (CardSessionMethods.swift) convert arguments and results and raise structured errors
/// (`CardServiceError` tables); the session stays usable after any of them. Closing it drops the secure channel keys
/// and writes the recorded transcript, if any.
final class CardSessionObject: LuaObject {
    let session: CardSession

    init(session: CardSession) { self.session = session }

    static let luaTypeName = "keyhost.card.session"

    var readerName: String { session.readerName }
    var pinVerified: Bool { session.pinVerified }

    /// The command set, or an error once the session is closed.
    func live() throws -> KeycardCommandSet {
        guard let card = session.card else { throw BindingError("\(Self.luaTypeName) is closed") }
        return card
    }

    /// After a command that may have reset the card's secure channel, keeps the session's `pinVerified` honest.
    func noteChannel(_ card: KeycardCommandSet) { session.noteChannel(card) }

    var luaDescription: String {
        guard let card = session.card else { return "\(Self.luaTypeName) (closed)" }
        var parts = ["reader \(readerName)"]
        if let info = card.applicationInfo {
            parts.append(info.isInitialized ? "applet \(info.version)" : "not initialised")
            if let uid = info.instanceUID { parts.append("uid \(Hex.encode(uid.prefix(4)))…") }
            if let keyUID = info.keyUID { parts.append("key \(Hex.encode(keyUID.prefix(4)))…") }
        } else {
            parts.append("not selected")
        }
        if card.isSecureChannelOpen { parts.append(pinVerified ? "secure channel open, PIN verified" : "secure channel open") }
        if let pairing = card.pairing { parts.append("pairing slot \(pairing.index)") }
        return "\(Self.luaTypeName)(\(parts.joined(separator: ", ")))"
    }

    func luaClose() { session.close() }
}
