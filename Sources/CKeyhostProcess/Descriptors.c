#define _GNU_SOURCE
#include "CKeyhostProcess.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

int khp_spawn_close_other_descriptors(posix_spawn_file_actions_t *actions) {
    return posix_spawn_file_actions_addclosefrom_np(actions, 3);
}

int khp_cloexec_other_descriptors(void) {
    if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return 0;
    // Kernels before 5.11 lack the flag: mark each open descriptor instead.
    DIR *dir = opendir("/proc/self/fd");
    if (dir == NULL) return -1;
    int own = dirfd(dir);
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        char *end;
        long fd = strtol(entry->d_name, &end, 10);
        if (*end != '\0' || end == entry->d_name || fd < 3 || fd == own) continue;
        int flags = fcntl((int)fd, F_GETFD);
        if (flags >= 0) fcntl((int)fd, F_SETFD, flags | FD_CLOEXEC);
    }
    closedir(dir);
    return 0;
}
