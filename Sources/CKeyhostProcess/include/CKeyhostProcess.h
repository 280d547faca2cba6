#ifndef CKEYHOST_PROCESS_H
#define CKEYHOST_PROCESS_H

// Process controls Swift's Glibc module does not import (sys/prctl.h).

// Makes the kernel send SIGKILL to this process when its parent exits. Returns 0 or -1 (errno).
int khp_die_with_parent(void);

// pipe2(fds, O_CLOEXEC): a pipe no other child inherits (pipe2 needs _GNU_SOURCE). Returns 0 or -1.
int khp_pipe_cloexec(int fds[2]);

// Ctrl-C for long work in Swift (a million addresses, a PBKDF2 of a billion rounds): the SIGINT handler asks,
// loops check and stop. An atomic, so it is safe from a signal handler and from worker threads alike.
void khp_cancel_request(void);
int khp_cancel_pending(void);
void khp_cancel_clear(void);

#endif
