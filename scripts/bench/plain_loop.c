/* plain_loop.c: the bench's baseline (scripts/subject_bench.sh): the
 * example's tpb_validate_header called in a plain loop, in-process, on N
 * pseudo-random header-ish bundles; prints calls per second. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../examples/subjects/custom_op.c"

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 4000000;
    uint8_t *b = calloc(n, 64);
    if (!b) return 1;
    uint64_t s = 1;
    for (size_t i = 0; i < n; i++) {
        uint8_t *x = b + 64 * i;
        uint64_t r = splitmix(&s);
        if (r % 3 == 0) { /* raw bytes */
            for (int k = 0; k < 64; k += 8) {
                uint64_t w = splitmix(&s);
                memcpy(x + k, &w, 8);
            }
        } else { /* a header image, sometimes one byte changed */
            x[0] = 0x85; x[1] = 0x10; x[0x0C] = 3; x[0x0F] = 1;
            if (r % 3 == 1) x[(r >> 8) % 64] = (uint8_t)(r >> 16);
        }
    }
    struct timespec t0, t1;
    size_t valid = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; i < n; i++) {
        const char *f;
        tpb_validate_header(b + 64 * i, &f);
        valid += f == NULL;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("%.0f\n", (double)n / dt);
    fprintf(stderr, "plain loop: %zu calls, %zu valid, %.3f s\n", n, valid, dt);
    free(b);
    return 0;
}
