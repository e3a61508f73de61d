#include "tessera/buffer.h"

#include <cstdlib>

#include "tessera/ir.h"
#include "tessera/var.h"

#include "input_call.h"

namespace tessera {

namespace detail {
void buffer_type_mismatch(const std::string &name, Type have, Type want) {
    user_error("Buffer ", name.empty() ? std::string("<unnamed>") : name, " holds ", have,
               " elements but is viewed as Buffer<", want, ">. Use a Buffer of the matching element type.");
}

void check_dimension_count(const std::string &what, int dimensions) {
    if (dimensions > kMaxDimensions)
        user_error(what, " has ", dimensions, " dimensions; at most ", kMaxDimensions,
                   " are supported. Merge dimensions (e.g. index y * width + x) to use fewer.");
}
} // namespace detail

Buffer<void>::Buffer(Type type, const std::vector<int> &sizes, const std::string &name) {
    impl_ = std::make_shared<BufferImpl>();
    impl_->type = type;
    impl_->name = name.empty() ? detail::unique_name("buffer") : name;
    detail::check_dimension_count("Buffer " + impl_->name, int(sizes.size()));
    int64_t stride = 1;
    for (size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] < 0) user_error("Buffer ", impl_->name, ": size ", sizes[i], " of dimension ", i, " is negative.");
        impl_->dims.push_back({0, sizes[i], stride});
        stride *= sizes[i];
    }
    size_t bytes = size_t(stride) * size_t(type.bytes());
    // 64-byte alignment so that compiled code can use aligned vector loads.
    size_t padded = (bytes + 63) / 64 * 64 + 64;
    void *p = std::aligned_alloc(64, padded);
    if (!p) user_error("Buffer ", impl_->name, ": could not allocate ", bytes, " bytes.");
    std::memset(p, 0, padded);
    impl_->allocation = std::shared_ptr<uint8_t>(static_cast<uint8_t *>(p), [](uint8_t *q) { std::free(q); });
    impl_->host = impl_->allocation.get();
}

Buffer<void>::Buffer(Type type, void *data, const std::vector<BufferDim> &dims, const std::string &name) {
    impl_ = std::make_shared<BufferImpl>();
    impl_->type = type;
    impl_->name = name.empty() ? detail::unique_name("buffer") : name;
    if (!data) user_error("Buffer ", impl_->name, ": wrapping a null pointer.");
    detail::check_dimension_count("Buffer " + impl_->name, int(dims.size()));
    for (size_t i = 0; i < dims.size(); ++i)
        if (dims[i].extent < 0)
            user_error("Buffer ", impl_->name, ": extent ", dims[i].extent, " of dimension ", i, " is negative.");
    impl_->dims = dims;
    impl_->host = static_cast<uint8_t *>(data);
}

void Buffer<void>::check_defined(const char *what) const {
    if (!impl_) user_error("Buffer::", what, ": the buffer is undefined (default-constructed).");
}

Type Buffer<void>::type() const {
    check_defined("type");
    return impl_->type;
}

int Buffer<void>::dimensions() const {
    check_defined("dimensions");
    return int(impl_->dims.size());
}

const BufferDim &Buffer<void>::dim(int i) const {
    check_defined("dim");
    if (i < 0 || i >= dimensions())
        user_error("Buffer ", impl_->name, ": dimension ", i, " does not exist (it has ", dimensions(), ").");
    return impl_->dims[size_t(i)];
}

int Buffer<void>::width() const { return dimensions() > 0 ? int(extent(0)) : 1; }
int Buffer<void>::height() const { return dimensions() > 1 ? int(extent(1)) : 1; }
int Buffer<void>::channels() const { return dimensions() > 2 ? int(extent(2)) : 1; }

int64_t Buffer<void>::number_of_elements() const {
    int64_t n = 1;
    for (int i = 0; i < dimensions(); ++i) n *= extent(i);
    return n;
}

uint8_t *BufferImpl::host_for_read() {
    BufferResidency &r = *residency;
    if (r.device_dirty) {
        r.device->copy_to_host(host + r.device->span_lo);
        r.device_dirty = false;
    }
    return host;
}

uint8_t *BufferImpl::host_for_write() {
    host_for_read();
    if (residency->device) residency->host_dirty = true;
    return host;
}

uint8_t *Buffer<void>::raw_data() const {
    check_defined("data");
    return impl_->host_for_write();
}

bool Buffer<void>::has_device_allocation() const { return impl_ && impl_->residency->device; }
bool Buffer<void>::host_dirty() const { return impl_ && impl_->residency->host_dirty; }
bool Buffer<void>::device_dirty() const { return impl_ && impl_->residency->device_dirty; }

void Buffer<void>::set_host_dirty(bool dirty) const {
    check_defined("set_host_dirty");
    if (dirty && impl_->residency->device_dirty)
        user_error("Buffer ", impl_->name, ": set_host_dirty() while a GPU's copy is newer would lose what the GPU "
                   "computed. Call copy_to_host() (or any host access) first.");
    impl_->residency->host_dirty = dirty && impl_->residency->device;
}

void Buffer<void>::copy_to_host() const {
    check_defined("copy_to_host");
    impl_->host_for_read();
}

void Buffer<void>::device_free() const {
    check_defined("device_free");
    impl_->host_for_read();
    *impl_->residency = BufferResidency{};
}

uint64_t Buffer<void>::device_handle() const {
    if (!impl_ || !impl_->residency->device) return 0;
    const DeviceCopy &d = *impl_->residency->device;
    return d.address() - uint64_t(d.span_lo);
}

const std::string &Buffer<void>::name() const {
    check_defined("name");
    return impl_->name;
}

void Buffer<void>::set_name(const std::string &name) {
    check_defined("set_name");
    impl_->name = name;
    if (impl_->input) impl_->input->name = name;
}

void Buffer<void>::set_min(const std::vector<int64_t> &mins) {
    check_defined("set_min");
    if (int(mins.size()) != dimensions())
        user_error("Buffer ", impl_->name, "::set_min: got ", mins.size(), " mins for ", dimensions(), " dimensions.");
    for (size_t i = 0; i < mins.size(); ++i) impl_->dims[i].min = mins[i];
    if (impl_->input) impl_->input->bound->dims = impl_->dims;
}

bool Buffer<void>::contains(const std::vector<int64_t> &coords) const {
    if (int(coords.size()) != dimensions()) return false;
    for (size_t i = 0; i < coords.size(); ++i) {
        const BufferDim &d = impl_->dims[i];
        if (coords[i] < d.min || coords[i] >= d.min + d.extent) return false;
    }
    return true;
}

int64_t Buffer<void>::byte_offset_of(const std::vector<int64_t> &coords) const {
    check_defined("element access");
    if (int(coords.size()) != dimensions())
        user_error("Buffer ", impl_->name, ": accessed with ", coords.size(), " coordinates, but it has ",
                   dimensions(), " dimensions.");
    int64_t offset = 0;
    for (size_t i = 0; i < coords.size(); ++i) {
        const BufferDim &d = impl_->dims[i];
        if (coords[i] < d.min || coords[i] >= d.min + d.extent)
            user_error("Buffer ", impl_->name, ": coordinate ", coords[i], " of dimension ", i,
                       " is outside the buffer [", d.min, ", ", d.min + d.extent - 1, "].");
        offset += (coords[i] - d.min) * d.stride;
    }
    return offset * impl_->type.bytes();
}

void *Buffer<void>::address_of(const std::vector<int64_t> &coords) const {
    int64_t offset = byte_offset_of(coords);
    return impl_->host_for_write() + offset;
}

Buffer<void> Buffer<void>::copy() const {
    check_defined("copy");
    std::vector<int> sizes;
    for (int i = 0; i < dimensions(); ++i) sizes.push_back(int(extent(i)));
    Buffer<void> out(type(), sizes, name() + "_copy");
    std::vector<int64_t> mins;
    for (int i = 0; i < dimensions(); ++i) mins.push_back(min(i));
    out.set_min(mins);
    out.copy_from(*this);
    return out;
}

void Buffer<void>::copy_from(const Buffer<void> &from) const {
    check_defined("copy_from");
    TESSERA_INTERNAL_ASSERT(from.type() == type(), "copy_from between buffers of different types");
    size_t bytes = size_t(type().bytes());
    const uint8_t *src = from.impl_->host_for_read();  // the source keeps its device copy
    uint8_t *dst = impl_->host_for_write();
    from.for_each_coordinate(
        [&](const std::vector<int64_t> &c) { std::memcpy(dst + byte_offset_of(c), src + from.byte_offset_of(c), bytes); });
}

std::shared_ptr<InputContents> Buffer<void>::as_input() const {
    check_defined("operator()");
    if (!impl_->input) {
        auto in = std::make_shared<InputContents>();
        in->name = impl_->name;
        in->type = impl_->type;
        in->dimensions = int(impl_->dims.size());
        in->is_parameter = false;
        // The InputContents must not keep the BufferImpl alive through a cycle; it is bound to
        // a copy of the handle that shares the data and the descriptor values.
        in->bound = std::make_shared<BufferImpl>(*impl_);
        in->bound->input.reset();
        impl_->input = in;
    }
    return impl_->input;
}

Expr Buffer<void>::operator()(std::vector<Expr> args) const { return detail::checked_input_call(as_input(), std::move(args)); }

namespace detail {

Expr checked_input_call(const std::shared_ptr<InputContents> &in, std::vector<Expr> args) {
    const char *kind = in->is_parameter ? "InputBuffer " : "Buffer ";
    if (int(args.size()) != in->dimensions)
        user_error(kind, in->name, " has ", in->dimensions, " dimensions but is accessed with ", args.size(), " coordinates.");
    for (size_t i = 0; i < args.size(); ++i) {
        if (!args[i].defined()) user_error(kind, in->name, ": coordinate ", i, " is an undefined Expr.");
        if (!args[i].type().is_int_or_uint() || args[i].type().is_bool())
            user_error(kind, in->name, ": coordinate ", i, " (", args[i], ") has type ", args[i].type(),
                       "; coordinates must be integers (a float-typed index). Cast it, e.g. cast<int>(floor(e)).");
        if (args[i].type() != Int(32)) args[i] = cast(Int(32), args[i]);
    }
    return ir::make_input_call(in, std::move(args));
}

} // namespace detail

} // namespace tessera
