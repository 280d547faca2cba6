#define _GNU_SOURCE
#include "CKeyhostProcess.h"

#include <signal.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <unistd.h>

int khp_die_with_parent(void) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
    // The parent may have gone between fork and prctl: then nobody will send the signal.
    if (getppid() == 1) raise(SIGKILL);
    return 0;
}

int khp_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
