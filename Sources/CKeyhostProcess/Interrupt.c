// keyhost's one SIGINT handler. Every command that lets Ctrl-C stop long work (`run`, `eval`, the REPL's
// evaluations and its prompt, `discover`, discovery jobs) installs it here for the length of that work:
// the first Ctrl-C sets the cancel request that Swift loops check (khp_cancel_pending) and calls the
// caller's notifier (a Lua state's hook); a second one, before the first was noticed, ends the process
// with 130 as a shell expects, unless the caller keeps the process (the REPL's prompt, where Ctrl-C only
// drops the line being typed).
#include "CKeyhostProcess.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static khp_interrupt_notify volatile khp_notify = NULL;
static void *volatile khp_notify_context = NULL;
static volatile sig_atomic_t khp_second_exits = 1;
static struct sigaction khp_previous;

static void khp_on_sigint(int sig) {
    (void)sig;
    if (khp_second_exits && khp_cancel_pending()) _exit(130);
    khp_cancel_request();
    khp_interrupt_notify notify = khp_notify;
    if (notify != NULL) notify(khp_notify_context);
}

void khp_interrupt_begin(int flags, khp_interrupt_notify notify, void *context) {
    khp_cancel_clear();
    khp_second_exits = (flags & KHP_INTERRUPT_SECOND_EXITS) != 0;
    khp_notify_context = context;
    khp_notify = notify;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = khp_on_sigint;
    sigemptyset(&action.sa_mask);
    // Without KHP_INTERRUPT_RESTART a blocking read returns EINTR (the prompt drops its line, a Lua script's
    // io.read returns and the hook raises "interrupted"); with it, work in Swift goes on to its next check.
    if (flags & KHP_INTERRUPT_RESTART) action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, &khp_previous);
}

void khp_interrupt_end(void) {
    sigaction(SIGINT, &khp_previous, NULL);
    khp_notify = NULL;
    khp_notify_context = NULL;
    khp_cancel_clear();
}
