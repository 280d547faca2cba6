/// The re-runs that check links `links` of one chain (`TransferRuns`), asked of a worker in one
/// request: it sends the chain once and gets one answer per run, in order, with no round trip in
/// between. Each run is the one the link's holder made: the chain before the link, the link's
/// arguments, its time as `now`, its key as the one the program must hand the token to.
public struct LinkRunsRequest: Equatable, Sendable {
    public var chain: TokenChain
    /// Positions in `chain.transfers`.
    public var links: Range<Int>
    /// Each run's limits (already capped by the token's policy).
    public var limits: RunLimits
    public var bytecodeAllowed: Bool

    public init(chain: TokenChain, links: Range<Int>, limits: RunLimits, bytecodeAllowed: Bool) {
        self.chain = chain
        self.links = links
        self.limits = limits
        self.bytecodeAllowed = bytecodeAllowed
    }

    /// The run that must have made link `index`.
    public func run(for index: Int) -> RunRequest {
        let link = chain.transfers[index]
        return RunRequest(token: chain.token, arguments: link.arguments, now: link.time, limits: limits, bytecodeAllowed: bytecodeAllowed,
                          transfers: Array(chain.transfers[..<index]), transferTo: link.to)
    }

    /// Whether an answer ends the request: a run that failed or did not hand the token on refuses
    /// the link, so the runs after it are not needed.
    public static func isLast(_ outcome: RunOutcome) -> Bool {
        if case .completed(_, true) = outcome { return false }
        return true
    }

    /// The outcomes of the runs one at a time through `runner`, in order, up to the first that ends it.
    public func runEach(_ runner: (RunRequest) -> RunOutcome) -> [RunOutcome] {
        var outcomes: [RunOutcome] = []
        for index in links {
            let outcome = runner(run(for: index))
            outcomes.append(outcome)
            if Self.isLast(outcome) { break }
        }
        return outcomes
    }

    public var encoded: [UInt8] {
        CBOREncoder.encode(.map([
            CBORPair(.text("chain"), .bytes(chain.encoded)),
            CBORPair(.text("links"), .array([.unsigned(UInt64(links.lowerBound)), .unsigned(UInt64(links.upperBound))])),
            CBORPair(.text("instructions"), .unsigned(limits.instructions)),
            CBORPair(.text("memory"), .unsigned(limits.memoryBytes)),
            CBORPair(.text("time_ms"), .unsigned(limits.timeMillis)),
            CBORPair(.text("bytecode"), .bool(bytecodeAllowed)),
        ]))
    }

    /// Whether a worker's request is one of these (it names `links`) rather than a `RunRequest`.
    public static func isLinkRuns(_ value: CBORValue) -> Bool { value["links"] != nil }

    public init(encoded bytes: [UInt8]) throws {
        try self.init(cbor: try RunRequest.decodeWorkerRequest(bytes))
    }

    public init(cbor value: CBORValue) throws {
        guard case .map(let pairs) = value, pairs.count == 6, case .bytes(let chainBytes)? = value["chain"],
              case .array(let bounds)? = value["links"], bounds.count == 2,
              case .unsigned(let first) = bounds[0], case .unsigned(let end) = bounds[1], first <= end,
              case .unsigned(let instructions)? = value["instructions"], case .unsigned(let memory)? = value["memory"],
              case .unsigned(let time)? = value["time_ms"], case .bool(let bytecode)? = value["bytecode"]
        else { throw TokenError("encoding", "malformed link runs request") }
        let chain = try TokenChain(encoded: chainBytes)
        guard end <= UInt64(chain.transfers.count) else { throw TokenError("encoding", "malformed link runs request: links beyond the chain") }
        self.init(chain: chain, links: Int(first)..<Int(end), limits: RunLimits(instructions: instructions, memoryBytes: memory, timeMillis: time),
                  bytecodeAllowed: bytecode)
    }
}
