#include <stdio.h>
#include <wchar.h>
#include <histedit.h>

// libedit's native API, used wide-character throughout. The readline compatibility layer is not used:
// its rl_complete writes through rl_line_buffer after a longer line has reallocated that buffer
// (Debian libedit 3.1-20221030), and the narrow el_gets/el_line go through ct_encode_string.
//
// el_wset and history_w are variadic, which Swift cannot call: each option keyhost uses gets one
// fixed-signature wrapper, declared here and defined in CKeyhostLoader/EditLine.c, because libedit
// is loaded on first use (the REPL) rather than at every start.

typedef wchar_t *(*kh_el_prompt_fn)(EditLine *);
typedef unsigned char (*kh_el_command_fn)(EditLine *, int);

EditLine *kh_el_init(const char *program);
int kh_el_set_prompt(EditLine *el, kh_el_prompt_fn prompt);
int kh_el_set_editor(EditLine *el, const wchar_t *mode);
int kh_el_set_signal(EditLine *el, int on);
int kh_el_prep_term(EditLine *el, int on);
int kh_el_set_history(EditLine *el, HistoryW *history);
int kh_el_add_function(EditLine *el, const wchar_t *name, const wchar_t *help, kh_el_command_fn fn);
int kh_el_bind(EditLine *el, const wchar_t *key, const wchar_t *command);
int kh_history_set_size(HistoryW *history, int size);
int kh_history_enter(HistoryW *history, const wchar_t *line);
int kh_history_load(HistoryW *history, const char *path);
int kh_history_save(HistoryW *history, const char *path);
/// The entry after (or, with `first`, the oldest) in load order; NULL past the newest.
const wchar_t *kh_history_step(HistoryW *history, int first);
