/* The calling convention of compiled Tessera pipelines (C, shared by the JIT and by AOT headers).
 *
 *   int32_t <name>(void **args, tessera_error_t *error);
 *
 * args holds one pointer per argument of the pipeline, in its argument order (inputs, then
 * scalar parameters, then outputs): a tessera_buffer_t * for buffers, a pointer to the value for
 * scalars. Buffers must have dimension 0 dense (stride 1) and `version` TESSERA_ABI_VERSION. The
 * function returns 0, or one of the TESSERA_ERROR_* codes after filling *error (which may be
 * NULL).
 */
#ifndef TESSERA_CODEGEN_ABI_H
#define TESSERA_CODEGEN_ABI_H

#include <stdint.h>

#define TESSERA_MAX_DIMS 8
/* The layout of tessera_buffer_t below; compiled code rejects a descriptor of another version
 * (TESSERA_ERROR_ABI_VERSION), such as one from a program built against an older abi.h. */
#define TESSERA_ABI_VERSION 2

typedef struct tessera_dim_t {
    int64_t min, extent, stride; /* stride in elements */
} tessera_dim_t;

typedef struct tessera_buffer_t {
    uint8_t *host;   /* the element at the mins */
    uint64_t device; /* the buffer's device memory (a CUDA CUdeviceptr), 0 when it has none; CPU
                        code ignores it */
    int32_t version; /* TESSERA_ABI_VERSION */
    int32_t dimensions;
    tessera_dim_t dim[TESSERA_MAX_DIMS];
} tessera_buffer_t;

enum {
    TESSERA_OK = 0,
    TESSERA_ERROR_INPUT_TOO_SMALL = 1,   /* an input does not cover the region the pipeline reads */
    TESSERA_ERROR_OUTPUT_TOO_SMALL = 2,  /* an output's computation reaches outside its buffer */
    TESSERA_ERROR_NOT_DENSE = 3,         /* dimension 0 of a buffer has a stride other than 1 */
    TESSERA_ERROR_OUT_OF_MEMORY = 4,     /* an intermediate buffer could not be allocated */
    TESSERA_ERROR_SPECIALIZATION = 5,    /* sizes differ from the ones the code was specialized for */
    TESSERA_ERROR_BUFFER_RANGE = 6,      /* a buffer's coordinates [need_min, need_max] leave int32 */
    TESSERA_ERROR_REGION_RANGE = 7,      /* the region of array number `argument` (the pipeline's
                                            model) leaves int32 */
    TESSERA_ERROR_ALIASING = 8,          /* output `argument` shares memory with the buffer of
                                            argument need_min (compiled code does not work in place) */
    TESSERA_ERROR_ABI_VERSION = 9,       /* the descriptor of buffer `argument` has version need_min,
                                            not TESSERA_ABI_VERSION */
    TESSERA_ERROR_GPU = 10,              /* a kernel launch failed (the GPU runtime or emulator
                                            keeps the message) */
    TESSERA_ERROR_BOUND = 11             /* array number `argument` is needed over [need_min,
                                            need_max], outside its Func::bound [have_min, have_max] */
};

typedef struct tessera_error_t {
    int32_t code;
    int32_t argument; /* the argument concerned */
    int32_t dim;      /* its dimension */
    int32_t reserved;
    int64_t need_min, need_max; /* the range needed */
    int64_t have_min, have_max; /* the range given */
} tessera_error_t;

/* GPU targets. The host entry launches each kernel through the runtime a pipeline's module
 * names in its global `<function>_gpu_runtime` (a tessera_gpu_runtime_t *), set before the
 * first call. A kernel is `void kernel(int64_t *context, void *device)`: `context` holds the
 * `context_words` values it reads from the host (packed in 64 bits each; the runtime copies
 * them to device memory), `device` is what the target's device interface reads
 * (tessera_gpu_thread_t under the emulator; null on a GPU). `blocks` blocks of `threads`
 * threads each run it, with `shared_bytes` of shared memory per block. `fn` is the kernel's
 * host code (the emulator runs it; a GPU runtime finds kernel number `kernel` in its module).
 * The buffers a GPU program is given and the intermediates it allocates (`alloc`, `release`)
 * are in the device's memory. */
typedef struct tessera_gpu_runtime_t {
    int32_t (*launch)(void *state, int32_t kernel, void (*fn)(int64_t *, void *), int64_t blocks, int32_t threads,
                      int64_t shared_bytes, int64_t *context, int64_t context_words);
    void *(*alloc)(void *state, int64_t bytes); /* NULL when out of memory */
    void (*release)(void *state, void *memory);
    void *state;
} tessera_gpu_runtime_t;

/* One emulated GPU thread, as the emulator's device interface reads it. */
typedef struct tessera_gpu_thread_t {
    int32_t thread;       /* threadIdx.x */
    int32_t threads;      /* blockDim.x */
    int64_t block;        /* blockIdx.x */
    void *shared;         /* the block's shared memory */
    void (*barrier)(struct tessera_gpu_thread_t *); /* __syncthreads() */
    /* Called before every memory access of the kernel: its address, bytes, and
     * (site << 2) | (shared ? 2 : 0) | (store ? 1 : 0), where site numbers the access in the
     * kernel's code (the emulator's traffic model and bounds checks). */
    void (*access)(struct tessera_gpu_thread_t *, const void *address, int32_t bytes, int32_t site);
    /* Called where a thread loop starts (iteration -1) and at each of its iterations: the
     * emulator groups the accesses of one iteration of the threads of a warp into one
     * warp-wide access. */
    void (*step)(struct tessera_gpu_thread_t *, int64_t iteration);
} tessera_gpu_thread_t;

#endif
