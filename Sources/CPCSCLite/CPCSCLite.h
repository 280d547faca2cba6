#include <winscard.h>
#include <reader.h>
