// Single-steps a program between its first two getppid() system calls (the marks that
// `bench_cache_latency hit_marked` puts around one compile()) and prints, in the order first
// executed, every instruction address it ran there; then the program's memory map, each line
// prefixed "MAP ". scripts/hit_path_order.py builds and runs it. Linux x86-64 only.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define CAPACITY (1u << 22)
static unsigned long seen[CAPACITY];
static char used[CAPACITY];

// Whether `a` is new (and now remembered): open addressing over a fixed table.
static int remember(unsigned long a) {
    unsigned long h = (a * 0x9E3779B97F4A7C15ul) >> 42;
    while (used[h]) {
        if (seen[h] == a) return 0;
        h = (h + 1) & (CAPACITY - 1);
    }
    used[h] = 1;
    seen[h] = a;
    return 1;
}

static void stop_or_die(pid_t child) {
    int status;
    if (waitpid(child, &status, 0) < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
        fprintf(stderr, "steptrace: the program ended before its second mark\n");
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: steptrace program [arguments]\n");
        return 2;
    }
    pid_t child = fork();
    if (child == 0) {
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        execv(argv[1], argv + 1);
        _exit(127);
    }
    stop_or_die(child);
    struct user_regs_struct r;
    // To the first mark's entry, then past its exit.
    do {
        ptrace(PTRACE_SYSCALL, child, 0, 0);
        stop_or_die(child);
        ptrace(PTRACE_GETREGS, child, 0, &r);
    } while (r.orig_rax != SYS_getppid);
    ptrace(PTRACE_SYSCALL, child, 0, 0);
    stop_or_die(child);
    long steps = 0;
    for (;;) {
        ptrace(PTRACE_SINGLESTEP, child, 0, 0);
        stop_or_die(child);
        ptrace(PTRACE_GETREGS, child, 0, &r);
        steps++;
        if (remember(r.rip)) printf("%lx\n", (unsigned long)r.rip);
        // The second mark: a `syscall` instruction (0f 05) about to run getppid.
        if (r.rax == SYS_getppid && (ptrace(PTRACE_PEEKTEXT, child, (void *)r.rip, 0) & 0xffff) == 0x050f) break;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)child);
    FILE *maps = fopen(path, "r");
    char line[4096];
    while (maps && fgets(line, sizeof line, maps)) printf("MAP %s", line);
    if (maps) fclose(maps);
    fprintf(stderr, "steptrace: %ld instructions between the marks\n", steps);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return 0;
}
