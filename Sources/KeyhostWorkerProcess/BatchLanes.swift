#if canImport(Glibc)
import Glibc
#endif

/// How many lanes (each a warm worker) a batch of token runs uses: one per CPU, at most four, never
/// more than the batch has tokens. A run is mostly CPU (the program, the receipt's signature), so
/// lanes beyond the CPUs would only queue. Measured with 25 tokens per process on 2 CPUs, one lane
/// instead of two saved a worker's start but lost more by running the tokens one after another.
public enum BatchLanes {
    public static func count(for tokens: Int) -> Int {
        let cpus = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        return max(1, min(tokens, min(4, cpus)))
    }
}
