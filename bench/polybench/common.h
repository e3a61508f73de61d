/* Shared by the PolyBench 4.2 kernels of bench/run_polybench_benchmark.py: a timer and the
 * driver. Each kernel file defines init() (deterministic inputs, re-run before every timed run,
 * outside the timing), kernel() (PolyBench's loop nest over static arrays with compile-time
 * sizes, so that Polly sees constant bounds) and checksum() (the sum of the outputs), then
 * includes this header at its end. Prints one JSON object:
 *
 *   {"run_ms": [t1, t2, ...], "checksum": <sum of the outputs after the first run>}
 *
 * Usage: <kernel> [runs]   (default 5)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void init(void);
static void kernel(void);
static double checksum(void);

/* A checksum is taken after every run (outside the timing) so that no run's results are dead;
 * the first run's is printed. */
static volatile double sink;

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    if (runs < 1) runs = 1;
    double first = 0;
    printf("{\"run_ms\": [");
    for (int r = 0; r < runs; r++) {
        init();
        double t0 = now_ms();
        kernel();
        double t = now_ms() - t0;
        printf("%s%.4f", r ? ", " : "", t);
        double c = checksum();
        if (r == 0) first = c;
        sink = c;
    }
    printf("], \"checksum\": %.17g}\n", first);
    return 0;
}
