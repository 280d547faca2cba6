// The kernel's part of a token worker's isolation, under the Lua sandbox: should a program ever
// escape the interpreter (a Lua bug that reaches memory), the process it lands in cannot start
// programs, open sockets, write files or gain privileges.
#define _GNU_SOURCE
#include "CKeyhostProcess.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define KHP_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define KHP_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

int khp_no_new_privileges(void) { return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); }

#ifdef KHP_AUDIT_ARCH

#define KHP_ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

// What a run needs, and nothing that reaches outside the process. Reading requests and writing
// answers on the two pipes; memory (the Lua arena, malloc, the Swift runtime); the limits it sets on
// itself before each run (getrusage, prlimit64, and /proc/self/statm read-only); the clock; locks;
// signals to itself (abort); the lazily loaded libraries (libcrypto for SHA-512: read-only opens,
// fstat, mmap); getrandom (Swift's hashing seed). Everything else (execve, fork and clone, sockets,
// kill of another process, ptrace, mount, opens for writing, …) fails with EPERM, which the code
// on a run's path reports as an error rather than crashing on.
static const struct sock_filter khp_run_filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KHP_AUDIT_ARCH, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
    // The x32 ABI shares the architecture number: its calls carry this bit.
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
#endif
    // openat: read-only opens only (flags are the third argument).
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 4),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
#ifdef __NR_open
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_open, 0, 4),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
#endif
    KHP_ALLOW(__NR_read),
    KHP_ALLOW(__NR_readv),
    KHP_ALLOW(__NR_pread64),
    KHP_ALLOW(__NR_write),
    KHP_ALLOW(__NR_writev),
    KHP_ALLOW(__NR_close),
    KHP_ALLOW(__NR_lseek),
    KHP_ALLOW(__NR_fstat),
    KHP_ALLOW(__NR_newfstatat),
#ifdef __NR_statx
    KHP_ALLOW(__NR_statx),
#endif
    KHP_ALLOW(__NR_fcntl),
    KHP_ALLOW(__NR_mmap),
    KHP_ALLOW(__NR_munmap),
    KHP_ALLOW(__NR_mprotect),
    KHP_ALLOW(__NR_mremap),
    KHP_ALLOW(__NR_madvise),
    KHP_ALLOW(__NR_brk),
    KHP_ALLOW(__NR_futex),
    KHP_ALLOW(__NR_getrusage),
    KHP_ALLOW(__NR_prlimit64),
#ifdef __NR_getrlimit
    KHP_ALLOW(__NR_getrlimit),
#endif
#ifdef __NR_setrlimit
    KHP_ALLOW(__NR_setrlimit),
#endif
    KHP_ALLOW(__NR_clock_gettime),
    KHP_ALLOW(__NR_clock_getres),
    KHP_ALLOW(__NR_gettimeofday),
#ifdef __NR_time
    KHP_ALLOW(__NR_time),
#endif
    KHP_ALLOW(__NR_getrandom),
    KHP_ALLOW(__NR_getpid),
    KHP_ALLOW(__NR_gettid),
    KHP_ALLOW(__NR_getppid),
    KHP_ALLOW(__NR_sched_yield),
    KHP_ALLOW(__NR_sched_getaffinity),
    KHP_ALLOW(__NR_rt_sigreturn),
    KHP_ALLOW(__NR_rt_sigprocmask),
    KHP_ALLOW(__NR_rt_sigaction),
    KHP_ALLOW(__NR_sigaltstack),
    KHP_ALLOW(__NR_tgkill),
    KHP_ALLOW(__NR_restart_syscall),
    KHP_ALLOW(__NR_exit),
    KHP_ALLOW(__NR_exit_group),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
};

int khp_enter_run_sandbox(void) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    // No new processes even where seccomp is missing (RLIMIT_NPROC does not bind root, the filter does).
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_NPROC, &none);
    struct sock_fprog program = {
        .len = (unsigned short)(sizeof khp_run_filter / sizeof khp_run_filter[0]),
        .filter = (struct sock_filter *)khp_run_filter,
    };
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0);
}

#else

int khp_enter_run_sandbox(void) {
    errno = ENOSYS;
    return -1;
}

#endif

int khp_keep_only_descriptors(int input, int output) {
    if (input != 0 && dup2(input, 0) < 0) return -1;
    if (output != 1 && dup2(output, 1) < 0) return -1;
    if (close_range(3, ~0U, 0) != 0) {
        for (int fd = 3; fd < 65536; fd++) close(fd);
    }
    return 0;
}
