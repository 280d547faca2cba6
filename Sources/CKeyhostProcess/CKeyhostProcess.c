#define _GNU_SOURCE
#include "CKeyhostProcess.h"

#include <signal.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdatomic.h>

int khp_die_with_parent(void) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
    // The parent may have gone between fork and prctl: then nobody will send the signal.
    if (getppid() == 1) raise(SIGKILL);
    return 0;
}

int khp_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

static atomic_int khp_cancel = 0;

void khp_cancel_request(void) { atomic_store_explicit(&khp_cancel, 1, memory_order_relaxed); }
int khp_cancel_pending(void) { return atomic_load_explicit(&khp_cancel, memory_order_relaxed); }
void khp_cancel_clear(void) { atomic_store_explicit(&khp_cancel, 0, memory_order_relaxed); }
