// Buffers: dense or strided arrays of one scalar type with per-dimension min, extent and
// stride (dimension 0 innermost). A Buffer is a reference-counted handle: copies share data.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/expr.h"

namespace tessera {

// The most dimensions a Buffer, InputBuffer or Func may have: the interpreter's accessors and
// the compiled code's buffer descriptors (TESSERA_MAX_DIMS in codegen/abi.h) hold this many.
constexpr int kMaxDimensions = 8;

namespace detail {
// Throws a UserError naming `what` when `dimensions` exceeds kMaxDimensions.
void check_dimension_count(const std::string &what, int dimensions);
} // namespace detail

struct BufferDim {
    int64_t min = 0;
    int64_t extent = 0;
    int64_t stride = 0;  // in elements
};

// A copy of a buffer's elements in a GPU's memory. The runtime makes one per device API (CUDA:
// runtime/src/cuda_runtime.cpp); the buffer frees it, and its device memory, when it goes.
class DeviceCopy {
public:
    DeviceCopy(const void *api, int64_t span_lo, int64_t span_bytes) : api(api), span_lo(span_lo), span_bytes(span_bytes) {}
    virtual ~DeviceCopy() = default;
    DeviceCopy(const DeviceCopy &) = delete;
    DeviceCopy &operator=(const DeviceCopy &) = delete;
    // The device address of the first byte of the span.
    virtual uint64_t address() const = 0;
    // Copies the span between the device and the host (`span` is the host's first byte of it).
    virtual void copy_to_host(uint8_t *span) const = 0;
    virtual void copy_to_device(const uint8_t *span) const = 0;

    const void *api;          // the device API that made it: a copy is used only by its own
    const int64_t span_lo;    // it mirrors the host bytes [host + span_lo, host + span_lo + span_bytes)
    const int64_t span_bytes;
};

// Where a buffer's current elements are, when it has a copy on a GPU: which side is newer.
// Shared by every handle of the same elements (a Buffer read in a definition is bound through a
// handle of its own), so that a write through one is seen through all.
struct BufferResidency {
    std::shared_ptr<DeviceCopy> device;  // null: the elements live on the host only
    bool host_dirty = false;             // the host's elements are newer than the device's
    bool device_dirty = false;           // the device's elements are newer than the host's
};

struct BufferImpl {
    Type type;
    std::vector<BufferDim> dims;
    uint8_t *host = nullptr;             // address of the element at the mins
    std::shared_ptr<uint8_t> allocation; // null when wrapping external memory
    std::string name;
    std::shared_ptr<InputContents> input; // identity of this buffer inside Exprs (made on use)
    std::shared_ptr<BufferResidency> residency = std::make_shared<BufferResidency>();

    // `host`, holding the current elements: those of the device copy are copied back first when
    // they are newer. For code that only reads them.
    uint8_t *host_for_read();
    // The same for code that may write them: the device copy, if any, becomes stale.
    uint8_t *host_for_write();
};

template <typename T = void>
class Buffer;

// A buffer of a type known at run time (Buffer<>).
template <>
class Buffer<void> {
public:
    Buffer() = default;
    // Allocates a dense, zero-filled buffer with mins 0.
    Buffer(Type type, const std::vector<int> &sizes, const std::string &name = "");
    // Wraps memory owned by the caller, without copying. `data` points at the element whose
    // coordinates are the mins; strides are in elements and may be any non-zero values.
    Buffer(Type type, void *data, const std::vector<BufferDim> &dims, const std::string &name = "");

    bool defined() const { return impl_ != nullptr; }
    Type type() const;
    int dimensions() const;
    const BufferDim &dim(int i) const;
    int64_t min(int i) const { return dim(i).min; }
    int64_t extent(int i) const { return dim(i).extent; }
    int64_t stride(int i) const { return dim(i).stride; }
    // Extents of dimensions 0, 1, 2 (1 when the buffer has fewer dimensions).
    int width() const;
    int height() const;
    int channels() const;
    int64_t number_of_elements() const;
    // The host's elements. Like every host access below (data(), operator(), address_of, fill,
    // copy, copy_from), it first brings back elements a GPU computed (see "GPU residency").
    uint8_t *raw_data() const;
    const std::string &name() const;
    void set_name(const std::string &name);
    // Shifts the coordinate system so that dimension i starts at mins[i].
    void set_min(const std::vector<int64_t> &mins);
    // Address of the element at the given coordinates (checked against the bounds).
    void *address_of(const std::vector<int64_t> &coords) const;
    bool contains(const std::vector<int64_t> &coords) const;
    // A dense copy with the same mins and extents.
    Buffer<void> copy() const;
    // Copies every element of `from` (same type; its region must lie inside this buffer's).
    void copy_from(const Buffer<void> &from) const;

    // Calls f(coords) for every element, dimension 0 fastest.
    template <typename F>
    void for_each_coordinate(F &&f) const {
        int d = dimensions();
        std::vector<int64_t> c(static_cast<size_t>(d));
        for (int i = 0; i < d; ++i) {
            if (extent(i) <= 0) return;
            c[size_t(i)] = min(i);
        }
        while (true) {
            f(c);
            int i = 0;
            for (; i < d; ++i) {
                if (++c[size_t(i)] < min(i) + extent(i)) break;
                c[size_t(i)] = min(i);
            }
            if (i == d) return;
        }
    }

    // GPU residency (Target::cuda, docs/gpu.md), as Halide's buffers have it. A pipeline run on a
    // GPU leaves its outputs in the GPU's memory (device_dirty) and copies an input there only
    // when the device has no current copy of it, so that pipelines called one after another keep
    // their data on the GPU. A host access copies a GPU's newer elements back first and, as it
    // may write, makes the host's elements the newer ones (host_dirty): the next GPU run copies
    // them again. Two Buffers that wrap the same memory do not know about each other's copies.
    bool has_device_allocation() const;
    bool host_dirty() const;
    bool device_dirty() const;
    // For writes the buffer cannot see: through a pointer kept from an earlier raw_data().
    void set_host_dirty(bool dirty = true) const;
    // Copies the device's elements back when they are newer (nothing to do otherwise).
    void copy_to_host() const;
    // Copies newer device elements back, then frees the device copy.
    void device_free() const;
    // The device address of the element at the mins (a CUdeviceptr), 0 without a device copy.
    uint64_t device_handle() const;

    // An expression reading this buffer at the given coordinates, for use in definitions.
    Expr operator()(std::vector<Expr> args) const;
    template <typename... Args,
              std::enable_if_t<(sizeof...(Args) > 0) && !(std::is_integral_v<std::decay_t<Args>> && ...), int> = 0>
    Expr operator()(Args &&...args) const {
        return (*this)(std::vector<Expr>{Expr(args)...});
    }

    const std::shared_ptr<BufferImpl> &impl() const { return impl_; }
    std::shared_ptr<InputContents> as_input() const;

protected:
    explicit Buffer(std::shared_ptr<BufferImpl> impl) : impl_(std::move(impl)) {}
    void check_defined(const char *what) const;
    // The byte offset from the element at the mins to the one at `coords` (checked).
    int64_t byte_offset_of(const std::vector<int64_t> &coords) const;
    std::shared_ptr<BufferImpl> impl_;
};

template <typename T>
class Buffer : public Buffer<void> {
    static_assert(!std::is_void_v<T>);

public:
    Buffer() = default;
    template <typename... Ints,
              std::enable_if_t<(sizeof...(Ints) > 0) && (std::is_integral_v<Ints> && ...), int> = 0>
    explicit Buffer(Ints... sizes) : Buffer<void>(type_of<T>(), std::vector<int>{int(sizes)...}) {}
    explicit Buffer(const std::vector<int> &sizes, const std::string &name = "")
        : Buffer<void>(type_of<T>(), sizes, name) {}
    // The same from a braced list of variables: `Buffer<double>({w, h})` would otherwise be
    // ambiguous (a copy of the Buffer<T>(w, h) it also names).
    explicit Buffer(std::initializer_list<int> sizes, const std::string &name = "")
        : Buffer<void>(type_of<T>(), std::vector<int>(sizes), name) {}
    // Wraps caller-owned memory with explicit mins, extents and strides (no copy).
    Buffer(T *data, const std::vector<BufferDim> &dims, const std::string &name = "")
        : Buffer<void>(type_of<T>(), data, dims, name) {}
    // Wraps dense caller-owned memory (dimension 0 innermost, mins 0).
    Buffer(T *data, const std::vector<int> &sizes, const std::string &name = "")
        : Buffer<void>(type_of<T>(), data, dense_dims(sizes), name) {}
    // The same from a braced list of sizes: `Buffer<double>(p, {n})` would otherwise be ambiguous
    // (a vector of n BufferDims through vector's explicit size constructor).
    Buffer(T *data, std::initializer_list<int> sizes, const std::string &name = "")
        : Buffer(data, std::vector<int>(sizes), name) {}
    // Views an untyped buffer; throws if the element types differ.
    Buffer(const Buffer<void> &b) : Buffer<void>(b) { check_type(); }

    T *data() const { return reinterpret_cast<T *>(raw_data()); }

    template <typename... Ints, std::enable_if_t<(std::is_integral_v<std::decay_t<Ints>> && ...), int> = 0>
    T &operator()(Ints... coords) const {
        return *static_cast<T *>(address_of(std::vector<int64_t>{int64_t(coords)...}));
    }
    using Buffer<void>::operator();

    void fill(T value) const {
        for_each_coordinate([&](const std::vector<int64_t> &c) { *static_cast<T *>(address_of(c)) = value; });
    }


private:
    static std::vector<BufferDim> dense_dims(const std::vector<int> &sizes) {
        std::vector<BufferDim> d;
        int64_t stride = 1;
        for (int s : sizes) {
            d.push_back({0, s, stride});
            stride *= s;
        }
        return d;
    }
    void check_type() const;
};

namespace detail {
[[noreturn]] void buffer_type_mismatch(const std::string &name, Type have, Type want);
}

template <typename T>
void Buffer<T>::check_type() const {
    if (defined() && type() != type_of<T>()) detail::buffer_type_mismatch(name(), type(), type_of<T>());
}

} // namespace tessera
