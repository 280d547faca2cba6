import KeyhostDiscovery
import KeyhostRecord

/// One wallet's entry in a job's report, the same for `keyhost discover --jobs --json` (a JSON line) and Lua's
/// `discovery.scan_jobs` (a table): `{id, ok = true, resumed, result}`, `{id, ok = false, error = {kind, message}}`,
/// or for a wallet Ctrl-C stopped while it ran `{id, ok = false, error = {kind = "interrupted", …}}`: neither the
/// wallet nor the source failed, and a rerun scans it again.
public enum DiscoveryJobReport {
    public static func record(_ wallet: JobWallet, _ outcome: JobOutcome) -> Record {
        let id = ("id", Record.string(wallet.id))
        switch outcome {
        case .finished(let result, let resumed):
            return .object([id, ("ok", .bool(true)), ("resumed", .bool(resumed)), ("result", result.record)])
        case .failed(let error):
            let record = (error as? StructuredError)?.errorRecord
                ?? .object([("kind", .string("failed")), ("message", .string(String(describing: error)))])
            return .object([id, ("ok", .bool(false)), ("error", record)])
        case .interrupted:
            return .object([id, ("ok", .bool(false)), ("error", .object([("kind", .string("interrupted")), ("message", .string(interruptedMessage))]))])
        }
    }

    /// What an interrupted wallet's entry says.
    public static let interruptedMessage = "interrupted by Ctrl-C before the wallet finished; run the job again to scan it"
}
