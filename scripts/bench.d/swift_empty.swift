// An empty Swift program, built as keyhost is installed (Swift runtime linked in, stripped): the
// floor under keyhost's start-up that no change inside keyhost can go below.
