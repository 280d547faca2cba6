/// Why a discovery job cannot start, go on, or resume. Every case carries what a user needs to fix it
/// (the parameter, the path, the URL, the address), because a discovery job is often a recovery job run
/// by someone who cannot read the code.
public enum DiscoveryError: Error, Equatable, CustomStringConvertible {
    /// A gap limit of 0 would stop before looking at anything; `chain` names which limit ("receive", "change", "account").
    case invalidGapLimit(chain: String, value: Int)
    /// An empty or inverted account or index range.
    case invalidRange(what: String, detail: String)
    /// A batch size or parallelism that cannot work.
    case invalidOption(name: String, detail: String)
    /// A custom path template that does not parse.
    case malformedTemplate(template: String, detail: String)
    /// The scheme does not fit the coin (e.g. a P2TR scheme on a coin without segwit).
    case unsupportedScheme(String)
    /// The key source cannot give the key the scheme needs (e.g. an xpub asked for another account).
    case keySource(path: String, detail: String)
    /// The key source failed (card error, bad export) at `path`.
    case keySourceFailed(path: String, underlying: String)
    /// An address could not be derived.
    case derivation(path: String, underlying: String)
    /// The usage source answered a different number of results than addresses asked.
    case usageCountMismatch(source: String, asked: Int, answered: Int)
    /// The usage source failed; the scan stops because an unknown address must never count as unused.
    case usageSourceFailed(source: String, underlying: String)
    /// An index file that cannot be read or parsed.
    case indexFile(path: String, detail: String)
    /// An index file entry that is not an address of the coin scanned; `location` is "file:line" or "file item #n".
    case indexEntry(location: String, detail: String)
    /// An HTTP source could not be reached (connection refused, timeout) after its retries.
    case unreachable(url: String, address: String, detail: String)
    /// An HTTP source answered with an error status after its retries.
    case httpStatus(url: String, address: String, status: Int, body: String)
    /// An HTTP source answered something that is not what its protocol promises (malformed JSON, wrong shape).
    case malformedResponse(url: String, address: String, detail: String)
    /// The service said no (JSON-RPC error object, Etherscan NOTOK) for this address.
    case serviceError(url: String, address: String, detail: String)
    /// An environment variable that should hold an API key is not set.
    case missingAPIKey(variable: String)
    /// The scan checked `limit` addresses (`DiscoveryOptions.maxAddresses`) and still had more to check.
    case addressCapReached(limit: Int)
    /// A checkpoint file that cannot be read, written or parsed.
    case checkpoint(path: String, detail: String)
    /// A checkpoint written by a job with other parameters; resuming would mix two jobs' results.
    case checkpointMismatch(path: String, differences: [String])

    public var description: String {
        switch self {
        case .invalidGapLimit(let chain, let value):
            return "invalid \(chain) gap limit \(value): the gap limit is how many consecutive unused "
                + (chain == "account" ? "accounts" : "addresses") + " end the scan and must be at least 1"
                + (chain == "account" ? " (1 = stop at the first empty account, as BIP44)" : " (BIP44 uses 20)")
        case .invalidRange(let what, let detail):
            return "invalid \(what) range: \(detail)"
        case .invalidOption(let name, let detail):
            return "invalid \(name): \(detail)"
        case .malformedTemplate(let template, let detail):
            return "malformed path template \"\(template)\": \(detail); write it like m/44'/60'/{account}'/0/{index}"
        case .unsupportedScheme(let detail):
            return "unsupported discovery scheme: \(detail)"
        case .keySource(let path, let detail):
            return "the key source cannot give the key at \(path): \(detail)"
        case .keySourceFailed(let path, let underlying):
            return "the key source failed at \(path): \(underlying)"
        case .derivation(let path, let underlying):
            return "cannot derive addresses at \(path): \(underlying)"
        case .usageCountMismatch(let source, let asked, let answered):
            return "usage source \(source) answered \(answered) results for \(asked) addresses; it must answer one per address"
        case .usageSourceFailed(let source, let underlying):
            return "usage source \(source) failed: \(underlying); the scan stops rather than count unknown addresses as unused"
        case .indexFile(let path, let detail):
            return "index file \(path): \(detail)"
        case .indexEntry(let location, let detail):
            return "index file \(location): \(detail); "
                + (location.contains(" item #") ? "fix or remove that item" : "fix or remove that line (# starts a comment)")
        case .unreachable(let url, let address, let detail):
            return "cannot reach \(url) (checking \(address)): \(detail)"
        case .httpStatus(let url, let address, let status, let body):
            return "\(url) answered HTTP \(status) for \(address)" + (body.isEmpty ? "" : ": \(body)")
        case .malformedResponse(let url, let address, let detail):
            return "\(url) answered nonsense for \(address): \(detail)"
        case .serviceError(let url, let address, let detail):
            return "\(url) refused the query for \(address): \(detail)"
        case .missingAPIKey(let variable):
            return "the API key environment variable \(variable) is not set (or empty); export \(variable)=<your key>"
        case .addressCapReached(let limit):
            return "the scan stopped after checking \(limit) addresses, the cap for one scan, with gaps still open "
                + "(a source that reports every address as used never closes a gap); if the wallet really has more, "
                + "raise the cap with --max-addresses N (max_addresses = N in Lua); with a checkpoint the rerun resumes"
        case .checkpoint(let path, let detail):
            return "checkpoint \(path): \(detail)"
        case .checkpointMismatch(let path, let differences):
            return "checkpoint \(path) belongs to a job with other parameters (\(differences.joined(separator: "; "))); "
                + "rerun with the same parameters, or use another checkpoint file"
        }
    }
}
