import KeyhostTokens
import Testing
@testable import KeyhostPlayer

/// `TokenPolicy.minimumMemoryBytes`, the least memory an issuer may set, must be enough for a run of an empty
/// program (its state, the capability, the helpers), or a token issued at the minimum could never run.
@Suite struct MinimumMemoryTests {
    static func limits(memory: UInt64) -> RunLimits { RunLimits(instructions: 1_000_000, memoryBytes: memory, timeMillis: 5_000) }

    @Test func anEmptyProgramRunsAtTheMinimum() throws {
        for program in ["return", "local t = ...", "local t = ... t.emit { ok = true, h = t.hex.encode(t.hash.sha256(t.token.id)) }"] {
            let outcome = try TokenPlayerTests.run(program, limits: Self.limits(memory: TokenPolicy.minimumMemoryBytes))
            guard case .completed = outcome else { Issue.record("\(program.debugDescription) at the minimum: \(outcome)"); continue }
        }
    }

    @Test func sixtyFourBytesCannotRunAnything() throws {
        let outcome = try TokenPlayerTests.run("return", limits: Self.limits(memory: 64))
        guard case .failed(let kind, _) = outcome else { Issue.record("an empty run in 64 bytes: \(outcome)"); return }
        #expect(kind == "memory_limit" || kind == "setup", "\(kind)")
    }
}
