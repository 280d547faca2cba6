import CKeyhostProcess
import KeyhostTokens
import KeyhostWorkerProcess
import LuaRuntime

#if canImport(Glibc)
import Glibc
#endif

/// The worker side: `keyhost token _worker` reads one run request on standard input, puts
/// kernel limits on itself, runs the program and writes the outcome on standard output. It has
/// no store, no keys and no environment, so whatever a program does to it ends with it.
public enum TokenWorker {
    /// Serves one request, or with `serving` every request until its input ends; returns the
    /// process exit status.
    public static func serve(player: TokenPlayer, serving: Bool = false) -> Int32 {
        // Die with the wallet: a run nobody waits for must not go on.
        _ = khp_die_with_parent()
        set(RLIMIT_CORE, 0)
        set(RLIMIT_FSIZE, 0)
        repeat {
            let request: RunRequest
            do {
                guard let bytes = try WorkerFraming.read(from: 0, limit: RunRequest.maxEncodedBytes) else { return serving ? 0 : 2 }
                request = try RunRequest(encoded: bytes)
            } catch {
                return answer(.failed(kind: "setup", message: "the worker could not read its request: \(error)"))
            }
            limitSelf(request.limits)
            let status = answer(player.run(request))
            if status != 0 { return status }
        } while serving
        return 0
    }

    private static func answer(_ outcome: RunOutcome) -> Int32 {
        do { try WorkerFraming.write(outcome.encoded, to: 1) } catch { return 3 }
        return 0
    }

    /// Kernel-enforced limits under the Lua ones, set before each run: address space (what the
    /// process has now plus twice the run's memory, the state's object arena and slack for the runtime) and CPU seconds
    /// (counted from what the process has used so far, since RLIMIT_CPU counts the whole process).
    /// Only soft limits move, so a warm worker can set them again for its next run.
    static func limitSelf(_ limits: RunLimits) {
        let page = UInt64(sysconf(Int32(_SC_PAGESIZE)))
        var current: UInt64 = 0
        if let statm = fopen("/proc/self/statm", "r") {
            var size: UInt = 0
            if withUnsafeMutablePointer(to: &size, { fscanfSize(statm, $0) }) { current = UInt64(size) * page }
            fclose(statm)
        }
        if current > 0 {
            let arena = UInt64(SandboxLimits.addressSpaceReserved(memoryBytes: Int(clamping: limits.memoryBytes)))
            set(RLIMIT_AS, current + limits.memoryBytes * 2 + arena + (256 << 20), soft: true)
        }
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let used = UInt64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        set(RLIMIT_CPU, used + (limits.timeMillis + 999) / 1000 + 1, soft: true)
    }

    private static func fscanfSize(_ file: UnsafeMutablePointer<FILE>, _ out: UnsafeMutablePointer<UInt>) -> Bool {
        var line = [CChar](repeating: 0, count: 128)
        guard fgets(&line, Int32(line.count), file) != nil else { return false }
        let text = String(cString: line)
        guard let first = text.split(separator: " ").first, let pages = UInt(first) else { return false }
        out.pointee = pages
        return true
    }

    private static func set(_ resource: __rlimit_resource, _ value: UInt64, soft: Bool = false) {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(resource.rawValue), &limit)
        limit.rlim_cur = rlim_t(value)
        if !soft || limit.rlim_max < limit.rlim_cur { limit.rlim_max = rlim_t(value) }
        _ = setrlimit(__rlimit_resource_t(resource.rawValue), &limit)
    }
}
