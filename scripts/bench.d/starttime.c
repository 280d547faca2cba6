// Process start-up timer: runs several commands round-robin (so load drifts hit all alike) with
// fork/exec, standard output and error to /dev/null, and prints each one's median wall time.
//
//   starttime RUNS -- cmd1 args... -- cmd2 args... [-- ...]
//
// Output: one line per command, "<index> <median µs> <min µs>". Exits 1 if any run fails.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double run(char **argv) {
    double t0 = now_us();
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); exit(1); }
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0) { perror("waitpid"); exit(1); }
    double t = now_us() - t0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "starttime: %s failed (status %d)\n", argv[0], status);
        exit(1);
    }
    return t;
}

int main(int argc, char **argv) {
    if (argc < 4 || strcmp(argv[2], "--") != 0) {
        fprintf(stderr, "usage: starttime RUNS -- cmd args... [-- cmd args...]\n");
        return 2;
    }
    int runs = atoi(argv[1]);
    char **cmds[16];
    int ncmd = 0;
    for (int i = 2; i < argc && ncmd < 16; i++) {
        if (strcmp(argv[i], "--") == 0) {
            argv[i] = NULL;  // terminates the previous command's argv
            if (i + 1 < argc) cmds[ncmd++] = &argv[i + 1];
        }
    }
    double *times = calloc((size_t)runs * ncmd, sizeof(double));
    for (int c = 0; c < ncmd; c++)  // warm the page cache and the dynamic loader's caches
        for (int w = 0; w < 3; w++) run(cmds[c]);
    for (int r = 0; r < runs; r++)
        for (int c = 0; c < ncmd; c++) times[c * runs + r] = run(cmds[c]);
    for (int c = 0; c < ncmd; c++) {
        qsort(times + c * runs, runs, sizeof(double), cmp);
        double *t = times + c * runs;
        double median = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
        printf("%d %.1f %.1f\n", c, median, t[0]);
    }
    return 0;
}
