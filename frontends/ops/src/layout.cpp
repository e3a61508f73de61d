// Layout ops (tensor.h): each is a Func whose value reads its operand at an index map of its
// own coordinates (a permutation, a division and modulo by constant sizes, an offset), so that
// the scheduler inlines or fuses it into its consumer like any cheap stage.
#include <algorithm>
#include <climits>
#include <functional>
#include <numeric>

#include "tensor_util.h"

namespace tessera::ops {

namespace {

// A result of `shape` whose value at coordinates `out` is `value(out)`. Maps whose coordinates
// stay affine without division (permute, slice, expand, squeeze, unsqueeze) are inline tensors
// (consumers read the operand through them); reshape's divisions and cat's and pad's selects
// are Funcs of their own, so that composing them cannot make one access too complex to bound.
enum class Inline { Yes, No };
Tensor index_map(const std::string &op, std::vector<int64_t> shape,
                 const std::function<Expr(const std::vector<Expr> &)> &value, Inline mode) {
    Axes axes = make_axes(shape.size());
    if (mode == Inline::Yes) return inline_or_func(op, axes, value(axes.exprs), std::move(shape));
    return func_tensor(op, axes, value(axes.exprs), std::move(shape));
}

int64_t elements(const std::vector<int64_t> &shape) {
    return std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<int64_t>());
}

} // namespace

Tensor permute(const Tensor &a, std::vector<int> dims) {
    if (int(dims.size()) != a.rank())
        user_error("ops::permute of ", a.name(), ": ", dims.size(), " axes given for a tensor of ", a.rank(), ".");
    std::vector<bool> seen(size_t(a.rank()), false);
    std::vector<int64_t> shape;
    for (int &d : dims) {
        d = normalize_axis(d, a.rank(), "permute");
        if (seen[size_t(d)]) user_error("ops::permute of ", a.name(), ": axis ", d, " appears twice.");
        seen[size_t(d)] = true;
        shape.push_back(a.shape()[size_t(d)]);
    }
    return index_map("permute", shape, [&](const std::vector<Expr> &out) {
        std::vector<Expr> src(size_t(a.rank()));
        for (size_t i = 0; i < dims.size(); ++i) src[size_t(dims[i])] = out[i];
        return a(src);
    }, Inline::Yes);
}

Tensor transpose(const Tensor &a, int axis0, int axis1) {
    std::vector<int> dims(size_t(a.rank()));
    std::iota(dims.begin(), dims.end(), 0);
    std::swap(dims[size_t(normalize_axis(axis0, a.rank(), "transpose"))], dims[size_t(normalize_axis(axis1, a.rank(), "transpose"))]);
    return permute(a, dims);
}

Tensor reshape(const Tensor &a, std::vector<int64_t> shape) {
    int64_t n = a.number_of_elements(), known = 1;
    int inferred = -1;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == -1) {
            if (inferred >= 0) user_error("ops::reshape of ", a.name(), ": only one size may be -1.");
            inferred = int(i);
        } else if (shape[i] < 0) {
            user_error("ops::reshape of ", a.name(), ": size ", shape[i], " is negative.");
        } else {
            known *= shape[i];
        }
    }
    if (inferred >= 0) shape[size_t(inferred)] = known == 0 ? 0 : n / known;
    if (elements(shape) != n)
        user_error("ops::reshape of ", a.name(), ": ", n, " elements do not fill the new shape (", elements(shape), ").");
    if (n > INT32_MAX) user_error("ops::reshape of ", a.name(), ": more than 2^31 elements.");
    if (shape == a.shape()) return a;
    // Row-major reshapes compose: a reshape of a reshape of b is a reshape of b, one stage where
    // two copied the values ([8, 128, 8, 32] -> [8, 128, 256] -> [1024, 256], a transformer's
    // attention output going into its projection), and the index maps of a split undone by a
    // merge vanish.
    if (a.reshape_source()) return reshape(*a.reshape_source(), shape);
    // Split both shapes into the shortest runs of axes with equal products, size-1 axes joining
    // the run before them: [8, 128, 768] -> [8, 128, 8, 96] is 8 | 128 | 768 -> 8 x 96. Within a
    // run, the row-major position over the run's output axes gives a's coordinates. A run with
    // one axis of a (a split, or the axis unchanged) reads it at an affine position; merging
    // several axes of a into one needs division. Reshapes without merges are inline index maps.
    const std::vector<int64_t> &in = a.shape();
    struct Run {
        size_t in_begin, in_end, out_begin, out_end;
    };
    std::vector<Run> runs;
    if (n == 0) {
        runs.push_back({0, in.size(), 0, shape.size()});
    } else {
        size_t i = 0, o = 0;
        while (i < in.size() || o < shape.size()) {
            Run r{i, i, o, o};
            int64_t pi = i < in.size() ? in[i++] : 1, po = o < shape.size() ? shape[o++] : 1;
            while (pi != po) {
                if (pi < po && i < in.size()) pi *= in[i++];
                else if (po < pi && o < shape.size()) po *= shape[o++];
                else internal_error("ops::reshape: the runs of ", a.name(), "'s axes do not match.");
            }
            while (i < in.size() && in[i] == 1) ++i;
            while (o < shape.size() && shape[o] == 1) ++o;
            r.in_end = i;
            r.out_end = o;
            runs.push_back(r);
        }
    }
    bool merges = false;
    for (const Run &r : runs)
        merges = merges || std::count_if(in.begin() + long(r.in_begin), in.begin() + long(r.in_end),
                                         [](int64_t d) { return d != 1; }) > 1;
    Tensor reshaped = index_map("reshape", shape, [&](const std::vector<Expr> &out) {
        std::vector<Expr> src(in.size(), Expr(0));
        for (const Run &r : runs) {
            Expr flat = Expr(0);
            for (size_t k = r.out_begin; k < r.out_end; ++k)
                if (shape[k] != 1) flat = flat * int32_t(shape[k]) + out[k];
            int64_t stride = 1;
            for (size_t j = r.in_end; j-- > r.in_begin;) {
                if (in[j] == 1) continue;
                Expr pos = stride == 1 ? flat : flat / int32_t(stride);
                bool outermost = std::all_of(in.begin() + long(r.in_begin), in.begin() + long(j),
                                             [](int64_t d) { return d == 1; });
                src[j] = outermost ? pos : pos % int32_t(in[j]);  // the outermost stays below its size
                stride *= in[j];
            }
        }
        return a(src);
    }, merges ? Inline::No : Inline::Yes);
    // Only a source that computes nothing: reading a computed inline tensor again would compute
    // its values a second time beside this reshape's copy of them.
    if (!a.is_inline() || a.is_index_map()) reshaped.reshape_source_ = std::make_shared<const Tensor>(a);
    return reshaped;
}

Tensor flatten(const Tensor &a, int start, int end) {
    if (a.rank() == 0) return a;
    start = normalize_axis(start, a.rank(), "flatten");
    end = normalize_axis(end, a.rank(), "flatten");
    if (start > end) user_error("ops::flatten of ", a.name(), ": start axis ", start, " is after end axis ", end, ".");
    std::vector<int64_t> shape(a.shape().begin(), a.shape().begin() + start);
    int64_t merged = 1;
    for (int i = start; i <= end; ++i) merged *= a.shape()[size_t(i)];
    shape.push_back(merged);
    shape.insert(shape.end(), a.shape().begin() + end + 1, a.shape().end());
    return reshape(a, shape);
}

Tensor squeeze(const Tensor &a, int axis) {
    axis = normalize_axis(axis, a.rank(), "squeeze");
    if (a.shape()[size_t(axis)] != 1) return a;  // as torch: only a size-1 axis goes
    if (a.rank() == 1) user_error("ops::squeeze of ", a.name(), ": the op library has no tensors of zero axes.");
    std::vector<int64_t> shape = a.shape();
    shape.erase(shape.begin() + axis);
    return index_map("squeeze", shape, [&](const std::vector<Expr> &out) {
        std::vector<Expr> src = out;
        src.insert(src.begin() + axis, Expr(0));
        return a(src);
    }, Inline::Yes);
}

Tensor unsqueeze(const Tensor &a, int axis) {
    axis = normalize_axis(axis, a.rank() + 1, "unsqueeze");
    std::vector<int64_t> shape = a.shape();
    shape.insert(shape.begin() + axis, 1);
    return index_map("unsqueeze", shape, [&](const std::vector<Expr> &out) {
        std::vector<Expr> src = out;
        src.erase(src.begin() + axis);
        return a(src);
    }, Inline::Yes);
}

Tensor expand(const Tensor &a, std::vector<int64_t> shape) {
    if (shape.size() < a.shape().size())
        user_error("ops::expand of ", a.name(), ": the new shape has fewer axes than the tensor.");
    size_t offset = shape.size() - a.shape().size();
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == -1) {
            if (i < offset) user_error("ops::expand of ", a.name(), ": -1 for a new leading axis.");
            shape[i] = a.shape()[i - offset];
        }
        if (i >= offset && a.shape()[i - offset] != 1 && a.shape()[i - offset] != shape[i])
            user_error("ops::expand of ", a.name(), ": axis ", i - offset, " has size ", a.shape()[i - offset],
                       ", which only expands from 1.");
    }
    return index_map("expand", shape, [&](const std::vector<Expr> &out) { return read_broadcast(a, shape, out); },
                     Inline::Yes);
}

Tensor slice(const Tensor &a, int axis, int64_t start, int64_t end, int64_t step) {
    axis = normalize_axis(axis, a.rank(), "slice");
    if (step <= 0) user_error("ops::slice of ", a.name(), ": step ", step, " must be positive.");
    int64_t n = a.shape()[size_t(axis)];
    auto clamp_index = [n](int64_t i) { return i < 0 ? std::max<int64_t>(i + n, 0) : std::min(i, n); };
    start = clamp_index(start);
    end = clamp_index(end);
    std::vector<int64_t> shape = a.shape();
    shape[size_t(axis)] = end > start ? (end - start + step - 1) / step : 0;
    return index_map("slice", shape, [&](const std::vector<Expr> &out) {
        std::vector<Expr> src = out;
        src[size_t(axis)] = out[size_t(axis)] * int32_t(step) + int32_t(start);
        return a(src);
    }, Inline::Yes);
}

Tensor cat(const std::vector<Tensor> &tensors, int axis) {
    if (tensors.empty()) user_error("ops::cat: no tensors.");
    const Tensor &first = tensors[0];
    axis = normalize_axis(axis, first.rank(), "cat");
    std::vector<int64_t> shape = first.shape();
    shape[size_t(axis)] = 0;
    Type t = first.type();
    for (const Tensor &x : tensors) {
        if (x.rank() != first.rank())
            user_error("ops::cat: ", x.name(), " has ", x.rank(), " axes, ", first.name(), " has ", first.rank(), ".");
        for (int i = 0; i < x.rank(); ++i)
            if (i != axis && x.shape()[size_t(i)] != first.shape()[size_t(i)])
                user_error("ops::cat: ", x.name(), " differs from ", first.name(), " in axis ", i, " (", x.shape()[size_t(i)],
                           " against ", first.shape()[size_t(i)], ").");
        shape[size_t(axis)] += x.shape()[size_t(axis)];
        t = promote_types(t, x.type());
    }
    return index_map("cat", shape, [&](const std::vector<Expr> &out) {
        // Last piece first, wrapped by a select per earlier piece. Each piece is read at an
        // index clamped into its own range, so that no read leaves its bounds.
        Expr value;
        int64_t offset = shape[size_t(axis)];
        for (size_t p = tensors.size(); p-- > 0;) {
            const Tensor &x = tensors[p];
            int64_t size = x.shape()[size_t(axis)];
            offset -= size;
            if (size == 0) continue;
            std::vector<Expr> src = out;
            src[size_t(axis)] = clamp(out[size_t(axis)] - int32_t(offset), 0, int32_t(size - 1));
            Expr piece = cast(t, x(src));
            value = value.defined() ? select(out[size_t(axis)] < int32_t(offset + size), piece, value) : piece;
        }
        return value.defined() ? value : make_zero(t);
    }, Inline::No);
}

Tensor pad(const Tensor &a, const std::vector<std::pair<int64_t, int64_t>> &pads, double value) {
    if (int(pads.size()) > a.rank())
        user_error("ops::pad of ", a.name(), ": ", pads.size(), " axes of padding for a tensor of ", a.rank(), ".");
    size_t offset = size_t(a.rank()) - pads.size();
    std::vector<int64_t> shape = a.shape();
    for (size_t i = 0; i < pads.size(); ++i) {
        if (pads[i].first < 0 || pads[i].second < 0)
            user_error("ops::pad of ", a.name(), ": negative padding (use slice to crop).");
        shape[offset + i] += pads[i].first + pads[i].second;
    }
    Type t = a.type();
    Expr fill = t.is_float() ? make_const(t, value) : make_const(t, int64_t(value));
    return index_map("pad", shape, [&](const std::vector<Expr> &out) {
        std::vector<Expr> src = out;
        Expr inside;
        for (size_t i = 0; i < pads.size(); ++i) {
            size_t ax = offset + i;
            int64_t n = a.shape()[ax];
            if (n == 0) return fill;
            Expr c = out[ax] - int32_t(pads[i].first);
            Expr in_range = c >= 0 && c < int32_t(n);
            inside = inside.defined() ? (inside && in_range) : in_range;
            src[ax] = clamp(c, 0, int32_t(n - 1));
        }
        return inside.defined() ? select(inside, a(src), fill) : a(src);
    }, Inline::No);
}

} // namespace tessera::ops
