// Output arrays whose memory comes from the runtime's buffer pool (tessera/runtime/buffer_pool.h)
// and goes back to it when the framework frees them.
//
//   capsule = tessera._tessera.pooled_output([1, 64, 56, 56], 2, 32)   # DLPack code, bits
//   out = torch.utils.dlpack.from_dlpack(capsule)                     # float32, C-ordered
//   del out                                        # its 802,816 bytes wait in the pool
//
// Why: a framework allocates every call's outputs anew. An output over glibc's mmap threshold is
// mapped fresh and its pages faulted in (and zeroed by the kernel) on first touch, and one just
// under it often lands at a new heap address while the previous call's block sits free: a conv
// layer's 800 KB output took 196 page faults a call, a third of the layer's 0.6 ms, over the
// first 4-8 calls of a process, and blur's 200 MB output 40 ms of faults every call. Through the
// pool, a call with the sizes of an earlier one gets memory whose pages are mapped.
//
// The capsule follows DLPack 0.8 (an unversioned "dltensor", which every torch version reads):
// the consumer that renames it "used_dltensor" owns the managed tensor and calls its deleter when
// the last tensor viewing the memory dies, on whichever thread that is; the deleter needs no GIL.
// A capsule nobody consumed frees its tensor itself.
#include "bindings.h"

#include <nanobind/stl/vector.h>

#include <tessera/runtime/buffer_pool.h>

#include <Python.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tessera::python {

namespace {

// DLPack 0.8's ABI (dlpack.h's DLManagedTensor), over nanobind's DLTensor.
struct ManagedTensor {
    nb::dlpack::dltensor tensor;
    void *manager_ctx;
    void (*deleter)(ManagedTensor *);
};

// The managed tensor and what it points to, in one allocation.
struct PooledOutput {
    ManagedTensor managed;
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;
    int64_t bytes = 0;  // as allocated from the pool
};

void delete_pooled_output(ManagedTensor *managed) {
    auto *owner = static_cast<PooledOutput *>(managed->manager_ctx);
    runtime::buffer_pool_free(owner->managed.tensor.data, owner->bytes);
    delete owner;
}

void delete_unconsumed_capsule(PyObject *capsule) {
    // A consumed capsule is renamed "used_dltensor": its tensor belongs to the consumer.
    if (!PyCapsule_IsValid(capsule, "dltensor")) return;
    auto *managed = static_cast<ManagedTensor *>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (managed && managed->deleter) managed->deleter(managed);
}

nb::object pooled_output(const std::vector<int64_t> &shape, int code, int bits) {
    if (code < 0 || code > 255 || (bits != 8 && bits != 16 && bits != 32 && bits != 64))
        user_error("pooled_output: unsupported element type (DLPack code ", code, ", ", bits,
                   " bits); pass an integer, float or bool type of 8, 16, 32 or 64 bits.");
    int64_t elements = 1;
    for (int64_t e : shape) {
        if (e < 0) user_error("pooled_output: negative extent ", e, " in the shape; pass extents of at least 0.");
        if (e > 0 && elements > (int64_t(1) << 50) / e)
            user_error("pooled_output: a shape of more than 2^50 elements; pass a smaller shape.");
        elements *= e;
    }
    auto *owner = new PooledOutput;
    owner->shape = shape;
    owner->strides.assign(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) owner->strides[i - 1] = owner->strides[i] * shape[i];
    // The pool takes multiples of 64 bytes; at least one block, so that the address is real.
    owner->bytes = std::max<int64_t>(64, (elements * (bits / 8) + 63) / 64 * 64);
    void *data = runtime::buffer_pool_alloc(owner->bytes);
    if (!data) {
        delete owner;
        throw std::bad_alloc();
    }
    nb::dlpack::dltensor &t = owner->managed.tensor;
    t.data = data;
    t.device = {int32_t(nb::device::cpu::value), 0};
    t.ndim = int32_t(shape.size());
    t.dtype = {uint8_t(code), uint8_t(bits), 1};
    t.shape = owner->shape.data();
    t.strides = owner->strides.data();
    t.byte_offset = 0;
    owner->managed.manager_ctx = owner;
    owner->managed.deleter = delete_pooled_output;
    PyObject *capsule = PyCapsule_New(&owner->managed, "dltensor", delete_unconsumed_capsule);
    if (!capsule) {
        delete_pooled_output(&owner->managed);
        throw nb::python_error();
    }
    return nb::steal(capsule);
}

} // namespace

void define_pooled_outputs(nb::module_ &m) {
    m.def("pooled_output", &pooled_output, nb::arg("shape"), nb::arg("code"), nb::arg("bits"),
          "A DLPack capsule of a new C-ordered host array (DLPack type code and bits) whose memory comes from "
          "the runtime's buffer pool and returns to it when the array is freed (for outputs large enough that "
          "first-touching fresh memory would cost page faults every call).");
    m.def("buffer_pool_stats",
          [] {
              runtime::BufferPoolStats s = runtime::buffer_pool_stats();
              nb::dict d;
              d["reused"] = s.reused;
              d["allocated"] = s.allocated;
              d["cached_bytes"] = s.cached_bytes;
              return d;
          },
          "The buffer pool's counts: allocations served from it (reused), pooled-size ones that were not "
          "(allocated), and the bytes it holds for reuse now (cached_bytes).");
    m.def("release_buffer_pool", [] { runtime::buffer_pool_release(); },
          "Frees every buffer the pool holds for reuse (freed outputs and scratchpads of compiled pipelines).");
    m.attr("POOLED_BYTES") = runtime::kPooledBytes;
}

} // namespace tessera::python
