// The child side of a worker forked (not exec'd) from keyhost: it must end up as bare as an exec'd
// worker, which starts with descriptors 0-2 only, default signal handling and no environment.
#define _GNU_SOURCE
#include "CKeyhostProcess.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int khp_become_worker_child(int input, int output, pid_t parent) {
    if (khp_die_with_parent_pid(parent) != 0) return -1;
    // The environment may name secrets (KEYHOST_PIN): wipe this copy's strings, not only the list.
    if (environ != NULL) {
        for (char **entry = environ; *entry != NULL; entry++) explicit_bzero(*entry, strlen(*entry));
    }
    clearenv();
    // Handlers the parent installed (Ctrl-C's cancellation) are the parent's: an exec'd worker would
    // start with the defaults and nothing blocked.
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    // Descriptors last, so that one holding only 0-2 has done all of the above.
    if (dup2(input, 0) < 0 || dup2(output, 1) < 0) return -1;
    int null = open("/dev/null", O_WRONLY);
    if (null < 0 || dup2(null, 2) < 0) return -1;
    // Whatever the parent had open (a wallet, a card's socket, a log) is not the worker's.
    if (close_range(3, ~0U, 0) != 0) {
        for (int fd = 3; fd < 65536; fd++) close(fd);
    }
    return 0;
}
