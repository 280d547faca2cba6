#define _GNU_SOURCE
#include "CKeyhostProcess.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

// The Swift runtime's crash report prints each register with the 16 bytes it points at: PIN digits,
// keys, whatever was on the stack. The runtime reads SWIFT_BACKTRACE once, in a library constructor
// before main, and no setting can be built into a binary. Two windows are too early or too late:
// a setenv in .preinit_array is undone when libc's own constructor resets environ to the original
// array, and a setenv in an early constructor moves environ off the stack, where the statically linked
// runtime looks for argv (CommandLine.arguments comes back empty). What works is editing the original
// array in place before anything reads it: a SWIFT_BACKTRACE that is there gets keyhost's limits
// appended (the runtime takes the last value of a key). When there is none, there is no slot to add
// one, and khp_quiet_crash_output takes the runtime's handlers away instead.

static const char forced_settings[] = "registers=none,images=none,interactive=no,sanitize=yes";
static char narrowed[8192];
static int narrowed_in_place = 0;

static void khp_narrow_backtrace_settings(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    static const char name[] = "SWIFT_BACKTRACE=";
    for (char **entry = envp; entry != NULL && *entry != NULL; entry++) {
        if (strncmp(*entry, name, sizeof name - 1) != 0) continue;
        int length = snprintf(narrowed, sizeof narrowed, "%s,%s", *entry, forced_settings);
        if (length > 0 && (size_t)length < sizeof narrowed) {
            *entry = narrowed;
            narrowed_in_place = 1;
        }
        return;
    }
}

// Runs before any library's constructor, the Swift runtime's included (dynamic or static).
__attribute__((section(".preinit_array"), used))
static void (*const khp_preinit_narrow)(int, char **, char **) = khp_narrow_backtrace_settings;

static void khp_write_number(char *out, size_t *at, int value) {
    char digits[12];
    int n = 0;
    do { digits[n++] = (char)('0' + value % 10); value /= 10; } while (value > 0 && n < 11);
    while (n > 0) out[(*at)++] = digits[--n];
}

// Async-signal-safe: a fixed line, then the default action (SA_RESETHAND already restored it).
static void khp_crash_report(int signal_number) {
    char line[256];
    size_t at = 0;
    const char *name = program_invocation_short_name;
    for (const char *p = name; *p && at < 64; p++) line[at++] = *p;
    static const char middle[] = ": crashed with signal ";
    memcpy(line + at, middle, sizeof middle - 1);
    at += sizeof middle - 1;
    khp_write_number(line, &at, signal_number);
    static const char tail[] = " (no memory contents are printed; SWIFT_BACKTRACE=enable=yes shows the function names)\n";
    memcpy(line + at, tail, sizeof tail - 1);
    at += sizeof tail - 1;
    ssize_t ignored = write(STDERR_FILENO, line, at);
    (void)ignored;
    raise(signal_number);
}

void khp_quiet_crash_output(void) {
    if (narrowed_in_place) return;
    struct sigaction illegal;
    if (sigaction(SIGILL, NULL, &illegal) != 0) return;
    void *runtime = (illegal.sa_flags & SA_SIGINFO) ? (void *)illegal.sa_sigaction : (void *)illegal.sa_handler;
    // No handler: the backtracer is off (a static binary finds no swift-backtrace beside it).
    if (runtime == (void *)SIG_DFL || runtime == (void *)SIG_IGN) return;
    struct sigaction quiet;
    memset(&quiet, 0, sizeof quiet);
    quiet.sa_handler = khp_crash_report;
    quiet.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&quiet.sa_mask);
    const int signals[] = {SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction current;
        if (sigaction(signals[i], NULL, &current) != 0) continue;
        void *handler = (current.sa_flags & SA_SIGINFO) ? (void *)current.sa_sigaction : (void *)current.sa_handler;
        // Only the runtime's: a sanitizer's handlers stay.
        if (handler == runtime) sigaction(signals[i], &quiet, NULL);
    }
}

void khp_failpoint_trap(const void *secret) {
    // The empty asm keeps `secret` live in a register up to the trap.
    __asm__ volatile("" : : "r"(secret) : "memory");
    __builtin_trap();
}
