// libedit, loaded when the REPL first needs it (see CKeyhostLoader.h).
#include "Loader.h"
#include "../CEditLine/CEditLine.h"

static kh_library edit = {"libedit.so.2", "libedit2", NULL};

KH_FORWARD(edit, EditLine *, el_init, (const char *prog, FILE *fin, FILE *fout, FILE *ferr), (prog, fin, fout, ferr))
KH_FORWARD_VOID(edit, el_end, (EditLine *el), (el))
KH_FORWARD(edit, int, el_source, (EditLine *el, const char *file), (el, file))
KH_FORWARD(edit, const wchar_t *, el_wgets, (EditLine *el, int *count), (el, count))
KH_FORWARD(edit, const LineInfoW *, el_wline, (EditLine *el), (el))
KH_FORWARD(edit, int, el_winsertstr, (EditLine *el, const wchar_t *str), (el, str))
KH_FORWARD(edit, HistoryW *, history_winit, (void), ())
KH_FORWARD_VOID(edit, history_wend, (HistoryW *h), (h))

// The variadic calls: each wrapper passes a fixed argument list, so calling through the variadic
// pointer is the same call the header's declaration would make.
#define wset(...) KH_RESOLVE(edit, el_wset)(__VA_ARGS__)
#define hist(...) KH_RESOLVE(edit, history_w)(__VA_ARGS__)

EditLine *kh_el_init(const char *program) { return el_init(program, stdin, stdout, stderr); }

int kh_el_set_prompt(EditLine *el, kh_el_prompt_fn prompt) { return wset(el, EL_PROMPT, prompt); }

int kh_el_set_editor(EditLine *el, const wchar_t *mode) { return wset(el, EL_EDITOR, mode); }

int kh_el_set_signal(EditLine *el, int on) { return wset(el, EL_SIGNAL, on); }

int kh_el_prep_term(EditLine *el, int on) { return wset(el, EL_PREP_TERM, on); }

int kh_el_set_history(EditLine *el, HistoryW *history) {
    return wset(el, EL_HIST, KH_RESOLVE(edit, history_w), history);  // libedit calls it back: it must be libedit's own history_w
}

int kh_el_add_function(EditLine *el, const wchar_t *name, const wchar_t *help, kh_el_command_fn fn) {
    return wset(el, EL_ADDFN, name, help, fn);
}

int kh_el_bind(EditLine *el, const wchar_t *key, const wchar_t *command) {
    return wset(el, EL_BIND, key, command, (const wchar_t *)NULL);
}

int kh_history_set_size(HistoryW *history, int size) {
    HistEventW event;
    return hist(history, &event, H_SETSIZE, size);
}

int kh_history_enter(HistoryW *history, const wchar_t *line) {
    HistEventW event;
    return hist(history, &event, H_ENTER, line);
}

int kh_history_load(HistoryW *history, const char *path) {
    HistEventW event;
    return hist(history, &event, H_LOAD, path);
}

int kh_history_save(HistoryW *history, const char *path) {
    HistEventW event;
    return hist(history, &event, H_SAVE, path);
}

/// The entry after (or, with `first`, the oldest) in load order; NULL past the newest.
const wchar_t *kh_history_step(HistoryW *history, int first) {
    HistEventW event;
    // libedit keeps the newest entry first: H_LAST is the oldest, and H_PREV steps towards newer ones.
    if (hist(history, &event, first ? H_LAST : H_PREV) == -1) return NULL;
    return event.str;
}
