import CKeyhostProcess
import Glibc
import KeyhostFiles

/// Where worker processes are started from.
///
/// A worker asks for SIGKILL when its parent dies (PR_SET_PDEATHSIG), so that no run goes on that
/// nobody waits for. Linux sends that signal when the *thread* that started the child ends, not the
/// process: a worker started from a batch's lane thread died when the batch ended, and one started
/// from a Dispatch thread died when Dispatch retired that thread; the next run then failed as a
/// crash, or paid for a new worker. So a worker is started from the main thread when the caller is on it,
/// and otherwise from one thread kept for the purpose, which ends only with the process.
enum SpawningThread {
    /// `body`'s result, with `body` run on a thread that lives as long as the process.
    static func run<T>(_ body: () -> T) -> T {
        if khp_is_main_thread() == 1 { return body() }
        return withoutActuallyEscaping(body) { body in
            var result: T?
            let ran = Spawner.shared.perform { result = body() }
            // No thread to be had (a thread limit): the old way, on the caller's thread.
            return ran ? result! : body()
        }
    }

    /// The kept thread and its one-job-at-a-time hand-over.
    private final class Spawner: @unchecked Sendable {
        static let shared = Spawner()

        private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        // Guarded by `mutex`:
        private var job: (() -> Void)?
        private var finished = 0
        private var thread: WorkerThread?

        private init() {
            pthread_mutex_init(mutex, nil)
            pthread_cond_init(changed, nil)
        }

        /// Runs `job` on the kept thread and waits for it; false when that thread cannot be started.
        func perform(_ job: @escaping () -> Void) -> Bool {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            if thread == nil { thread = startBackgroundThread { [self] in serve() } }
            guard thread != nil else { return false }
            // One job at a time: a caller waits for the slot, then for its own job to finish.
            while self.job != nil { pthread_cond_wait(changed, mutex) }
            self.job = job
            let ticket = finished + 1
            pthread_cond_broadcast(changed)
            while finished < ticket { pthread_cond_wait(changed, mutex) }
            return true
        }

        private func serve() {
            pthread_mutex_lock(mutex)
            while true {
                guard let job else {
                    pthread_cond_wait(changed, mutex)
                    continue
                }
                pthread_mutex_unlock(mutex)
                job()
                pthread_mutex_lock(mutex)
                // The caller's closure must be gone before it is told (`withoutActuallyEscaping`
                // checks): this binding ends before the mutex is released in the next wait.
                self.job = nil
                finished += 1
                pthread_cond_broadcast(changed)
            }
        }
    }
}
