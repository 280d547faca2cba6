/// Which tap-card answers carry secrets, for `APDURedaction`: every tap command is INS CB, so the command's
/// CBOR `cmd` says. The CVC itself never crosses the wire (only `xcvc`, masked with the session key).
enum CKTapRedaction {
    /// Commands whose answer holds key material: `unseal` (the slot's key, masked, and its master key in clear),
    /// `dump` (an unsealed slot's keys), `backup` (the master key under the key printed on the card).
    static let secretAnswers: Set<String> = ["unseal", "dump", "backup"]

    /// Whether `apdu` is a tap command whose answer is secret; a command data that is no CBOR map is not one.
    static func redactsResponse(to apdu: CommandAPDU) -> Bool {
        guard apdu.cla == CKTap.cla, apdu.ins == CKTap.ins, !apdu.data.isEmpty,
              let command = (try? CKTapCBORCoding.decode(apdu.data))?["cmd"]?.textString else { return false }
        return secretAnswers.contains(command)
    }
}
