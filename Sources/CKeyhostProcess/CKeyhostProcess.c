#define _GNU_SOURCE
#include "CKeyhostProcess.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int khp_die_with_parent(void) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
    // The parent may have gone between fork and prctl: then nobody will send the signal.
    if (getppid() == 1) raise(SIGKILL);
    return 0;
}

int khp_die_with_parent_pid(pid_t parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
    if (getppid() != parent) raise(SIGKILL);
    return 0;
}

pid_t khp_fork(void) { return fork(); }

int khp_is_main_thread(void) { return gettid() == getpid(); }

int khp_thread_count(void) {
    FILE *f = fopen("/proc/self/status", "re");
    if (!f) return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "Threads:", 8) == 0) { n = atoi(line + 8); break; }
    }
    fclose(f);
    return n;
}

long khp_getrandom(void *buffer, unsigned long count) { return (long)getrandom(buffer, count, 0); }

int khp_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

static atomic_int khp_cancel = 0;

void khp_cancel_request(void) { atomic_store_explicit(&khp_cancel, 1, memory_order_relaxed); }
int khp_cancel_pending(void) { return atomic_load_explicit(&khp_cancel, memory_order_relaxed); }
void khp_cancel_clear(void) { atomic_store_explicit(&khp_cancel, 0, memory_order_relaxed); }
