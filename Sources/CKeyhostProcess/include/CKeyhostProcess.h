#ifndef CKEYHOST_PROCESS_H
#define CKEYHOST_PROCESS_H

// Process controls Swift's Glibc module does not import (sys/prctl.h).

// Makes the kernel send SIGKILL to this process when its parent exits. Returns 0 or -1 (errno).
int khp_die_with_parent(void);

// pipe2(fds, O_CLOEXEC): a pipe no other child inherits (pipe2 needs _GNU_SOURCE). Returns 0 or -1.
int khp_pipe_cloexec(int fds[2]);

#endif
