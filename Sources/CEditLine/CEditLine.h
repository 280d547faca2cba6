#include <stdio.h>
#include <wchar.h>
#include <histedit.h>

// libedit's native API, used wide-character throughout. The readline compatibility layer is not used:
// its rl_complete writes through rl_line_buffer after a longer line has reallocated that buffer
// (Debian libedit 3.1-20221030), and the narrow el_gets/el_line go through ct_encode_string.
//
// el_wset and history_w are variadic, which Swift cannot call: each option keyhost uses gets one
// fixed-signature wrapper here.

typedef wchar_t *(*kh_el_prompt_fn)(EditLine *);
typedef unsigned char (*kh_el_command_fn)(EditLine *, int);

static inline EditLine *kh_el_init(const char *program) { return el_init(program, stdin, stdout, stderr); }

static inline int kh_el_set_prompt(EditLine *el, kh_el_prompt_fn prompt) { return el_wset(el, EL_PROMPT, prompt); }

static inline int kh_el_set_editor(EditLine *el, const wchar_t *mode) { return el_wset(el, EL_EDITOR, mode); }

static inline int kh_el_set_signal(EditLine *el, int on) { return el_wset(el, EL_SIGNAL, on); }

static inline int kh_el_set_history(EditLine *el, HistoryW *history) { return el_wset(el, EL_HIST, history_w, history); }

static inline int kh_el_add_function(EditLine *el, const wchar_t *name, const wchar_t *help, kh_el_command_fn fn) {
    return el_wset(el, EL_ADDFN, name, help, fn);
}

static inline int kh_el_bind(EditLine *el, const wchar_t *key, const wchar_t *command) {
    return el_wset(el, EL_BIND, key, command, (const wchar_t *)NULL);
}

static inline int kh_history_set_size(HistoryW *history, int size) {
    HistEventW event;
    return history_w(history, &event, H_SETSIZE, size);
}

static inline int kh_history_enter(HistoryW *history, const wchar_t *line) {
    HistEventW event;
    return history_w(history, &event, H_ENTER, line);
}

static inline int kh_history_load(HistoryW *history, const char *path) {
    HistEventW event;
    return history_w(history, &event, H_LOAD, path);
}

static inline int kh_history_save(HistoryW *history, const char *path) {
    HistEventW event;
    return history_w(history, &event, H_SAVE, path);
}

/// The entry after (or, with `first`, the oldest) in load order; NULL past the newest.
static inline const wchar_t *kh_history_step(HistoryW *history, int first) {
    HistEventW event;
    // libedit keeps the newest entry first: H_LAST is the oldest, and H_PREV steps towards newer ones.
    if (history_w(history, &event, first ? H_LAST : H_PREV) == -1) return NULL;
    return event.str;
}
