// What the stand-in NVIDIA driver (fake_cuda.cpp) recorded: fakeCudaRecord() in the library.
#pragma once

extern "C" {
struct FakeCudaRecord {
    int modules_loaded, functions, launches, shared_opt_ins;
    long long allocations, frees, live_allocations, bytes_to_device, bytes_to_host;
    unsigned last_grid, last_block, last_shared;
    long long last_context_words;
    int last_context_by_value;  // the context was the kernel's parameter, not in device memory
    const char *last_function;
};
}
