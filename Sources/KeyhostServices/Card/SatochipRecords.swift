import KeyhostCard
import KeyhostRecord

/// The Satochip results `keyhost card info`, `card satochip status` and the other Satochip commands print, one shape
/// for text and `--json`. Absent values are null.
public enum SatochipRecords {
    /// What GET STATUS told, with the label and the certificate verdict when they were read (both need the PIN):
    /// `{reader, family, version, state, protocol_version, applet_version, setup_done, seeded, needs_2fa,
    /// needs_secure_channel, pin_retries, puk_retries, label, certificate_trusted, certificate_problem, device_public_key}`.
    public static func info(_ status: SatochipStatus, reader: String, label: String?, trust: SatochipTrust?) -> Record {
        .object([
            ("reader", .string(reader)),
            ("family", .string(CardFamily.satochip.rawValue)),
            ("version", .string(status.version)),
            ("state", .string(SatochipIdentity.state(status))),
            ("protocol_version", .string("\(status.protocolMajor).\(status.protocolMinor)")),
            ("applet_version", .string("\(status.appletMajor).\(status.appletMinor)")),
            ("setup_done", .bool(status.isSetupDone)),
            ("seeded", .bool(status.isSeeded)),
            ("needs_2fa", .bool(status.needs2FA)),
            ("needs_secure_channel", .bool(status.needsSecureChannel)),
            ("pin_retries", .integer(status.isSetupDone ? status.pinTriesLeft : nil)),
            ("puk_retries", .integer(status.isSetupDone ? status.pukTriesLeft : nil)),
            ("label", .string(label)),
            ("certificate_trusted", trust.map { Record.bool($0.isTrusted) } ?? Record.null),
            ("certificate_problem", .string(trust?.problem)),
            ("device_public_key", .bytes(trust?.deviceKey)),
        ])
    }

    /// The certificate verdict: `{trusted, device_public_key, ca_key, subject, problem}`.
    public static func certificate(_ trust: SatochipTrust, reader: String) -> Record {
        .object([
            ("reader", .string(reader)),
            ("trusted", .bool(trust.isTrusted)),
            ("device_public_key", .bytes(trust.deviceKey)),
            ("ca_key", .bytes(trust.caKey)),
            ("subject", .string(trust.subject)),
            ("problem", .string(trust.problem)),
        ])
    }
}
