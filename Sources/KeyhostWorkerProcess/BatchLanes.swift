#if canImport(Glibc)
import Glibc
#endif

/// How many lanes (each with its own fork server) a batch of token runs uses: one per CPU, at
/// most four, never more than the batch has tokens. A forked run is mostly CPU (the fork, the
/// child's page faults, the program), so lanes beyond the CPUs would only queue.
public enum BatchLanes {
    public static func count(for tokens: Int) -> Int {
        let cpus = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        return max(1, min(tokens, min(4, cpus)))
    }
}
