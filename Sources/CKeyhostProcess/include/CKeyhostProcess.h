#ifndef CKEYHOST_PROCESS_H
#define CKEYHOST_PROCESS_H

// Process controls Swift's Glibc module does not import (sys/prctl.h, sys/random.h, glibc's _np spawn actions).

#include <spawn.h>

// Makes the kernel send SIGKILL to this process when its parent exits. Returns 0 or -1 (errno).
int khp_die_with_parent(void);

// For a child forked by a process that may itself die: SIGKILL when the parent exits, and at once if
// `parent` is already gone (fork and prctl race). Returns 0 or -1 (errno).
int khp_die_with_parent_pid(pid_t parent);

// fork() for the token worker's fork server (Swift's Glibc hides fork). Only for a single-threaded
// process: the child runs Swift code, so no other thread may have held a lock at the fork.
pid_t khp_fork(void);

// In a child forked to be a token worker: dies with `parent`, takes `input` and `output` as its
// standard input and output and /dev/null as its error, closes every other descriptor, restores
// default signal handling and wipes and clears the environment. Returns 0 or -1 (errno).
int khp_become_worker_child(int input, int output, pid_t parent);

// PR_SET_NO_NEW_PRIVS: nothing this process or its children exec can gain privileges. Returns 0 or -1.
int khp_no_new_privileges(void);

// What a process that runs token programs does before its first run: no new privileges, no new
// processes (RLIMIT_NPROC 0) and a seccomp filter that allows only what a run needs (the list is in
// WorkerSandbox.c; anything else fails with EPERM). Irreversible. Returns 0 or -1 (errno).
int khp_enter_run_sandbox(void);

// In a forked child: `input` and `output` become descriptors 0 and 1, and every descriptor from 3 up
// is closed (those of other children the parent had open at the fork included). Returns 0 or -1.
int khp_keep_only_descriptors(int input, int output);

// The number of threads in this process (from /proc/self/status), or -1 when it cannot be read.
int khp_thread_count(void);
// 1 when the calling thread is the process's main thread (its thread id is the process id).
int khp_is_main_thread(void);

// getrandom(2) with flags 0: fills `buffer` from the kernel's CSPRNG. Returns the bytes written or -1 (errno).
long khp_getrandom(void *buffer, unsigned long count);

// pipe2(fds, O_CLOEXEC): a pipe no other child inherits (pipe2 needs _GNU_SOURCE). Returns 0 or -1.
int khp_pipe_cloexec(int fds[2]);

// Ctrl-C for long work in Swift (a million addresses, a PBKDF2 of a billion rounds): the SIGINT handler asks,
// loops check and stop. An atomic, so it is safe from a signal handler and from worker threads alike.
void khp_cancel_request(void);
int khp_cancel_pending(void);
void khp_cancel_clear(void);

// The one SIGINT handler (Interrupt.c): from khp_interrupt_begin to khp_interrupt_end, Ctrl-C sets the
// cancel request above and calls `notify(context)` (NULL for none; it runs in the signal handler, so it
// may only do async-signal-safe work). Flags: KHP_INTERRUPT_SECOND_EXITS, a second Ctrl-C before the
// request was cleared ends the process with status 130; KHP_INTERRUPT_RESTART, system calls the signal
// lands in are restarted (SA_RESTART) rather than failing with EINTR. Begin and end clear the request;
// calls do not nest.
#define KHP_INTERRUPT_SECOND_EXITS 1
#define KHP_INTERRUPT_RESTART 2
typedef void (*khp_interrupt_notify)(void *context);
void khp_interrupt_begin(int flags, khp_interrupt_notify notify, void *context);
void khp_interrupt_end(void);

// Every child keyhost starts gets descriptors 0-2 only: adds "close every descriptor from 3 up" to
// `actions`, after the dup2s that set up 0-2 (glibc 2.34's posix_spawn_file_actions_addclosefrom_np).
// A descriptor opened without O_CLOEXEC (by a Lua script, a library, or inherited from the shell)
// would otherwise reach the child. Returns 0 or an errno value.
int khp_spawn_close_other_descriptors(posix_spawn_file_actions_t *actions);

// For an execve in this process's place: marks every descriptor from 3 up close-on-exec, so the
// new program gets 0-2 only while this process keeps its descriptors should the exec fail. Returns 0 or -1.
int khp_cloexec_other_descriptors(void);

// Crash output holds no memory: call first thing in main. When SWIFT_BACKTRACE was set, keyhost already
// narrowed it (before the Swift runtime read it) to frames only; otherwise the runtime's backtracer,
// which prints registers and the memory they point at, is replaced by a one-line report.
void khp_quiet_crash_output(void);

// Test builds' crash failpoint: traps with `secret`'s address in the first argument register, where a
// crash report that shows what registers point at would print it. Never returns.
__attribute__((noreturn)) void khp_failpoint_trap(const void *secret);

#endif
