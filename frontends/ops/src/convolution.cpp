// conv2d and the 2-D pools (tensor.h). Padding is a pad index map that the reads go through;
// NHWC tensors are permuted views of NCHW ones (index maps again, no copies).
#include <limits>

#include <tessera/var.h>

#include "tensor_util.h"

namespace tessera::ops {

namespace {

Tensor to_nchw(const Tensor &x, bool channels_last, const std::string &op) {
    if (x.rank() != 4) user_error("ops::", op, ": ", x.name(), " needs 4 axes (", channels_last ? "NHWC" : "NCHW", ").");
    return channels_last ? permute(x, {0, 3, 1, 2}) : x;
}

Tensor from_nchw(const Tensor &y, bool channels_last) { return channels_last ? permute(y, {0, 2, 3, 1}) : y; }

int64_t output_extent(int64_t in, int pad, int dilation, int kernel, int stride, const std::string &op) {
    int64_t span = int64_t(dilation) * (kernel - 1) + 1;
    if (in + 2 * pad < span)
        user_error("ops::", op, ": the window (", span, ") is larger than the padded input (", in + 2 * pad, ").");
    return (in + 2 * pad - span) / stride + 1;
}

void check_positive(const std::string &op, const char *what, std::pair<int, int> v, int min) {
    if (v.first < min || v.second < min) user_error("ops::", op, ": ", what, " (", v.first, ", ", v.second, ") must be at least ", min, ".");
}

// The lowest value of a type: the identity of max pooling over padding.
double lowest(Type t) { return t.is_float() ? -std::numeric_limits<double>::infinity() : t.min_value(); }

// A pooling window reduction over x [N, C, H, W]: result(n, c, i, j) over r in the window.
Tensor pool(const std::string &op, const Tensor &x_in, const Pool2dOptions &o, bool is_max) {
    Tensor x = reused_operand(to_nchw(x_in, o.channels_last, op));
    auto stride = o.stride.first == 0 && o.stride.second == 0 ? o.kernel : o.stride;
    check_positive(op, "kernel", o.kernel, 1);
    check_positive(op, "stride", stride, 1);
    check_positive(op, "padding", o.padding, 0);
    if (o.padding.first * 2 > o.kernel.first || o.padding.second * 2 > o.kernel.second)
        user_error("ops::", op, ": padding must be at most half the kernel, as torch requires.");
    int64_t oh = output_extent(x.shape()[2], o.padding.first, 1, o.kernel.first, stride.first, op);
    int64_t ow = output_extent(x.shape()[3], o.padding.second, 1, o.kernel.second, stride.second, op);
    Type t = is_max ? x.type() : float_type_for(x.type());
    Tensor padded = pad(x, {{o.padding.first, o.padding.first}, {o.padding.second, o.padding.second}},
                        is_max ? lowest(x.type()) : 0.0);
    Axes out = make_axes(4);
    RDom r({Range(Expr(0), Expr(o.kernel.first)), Range(Expr(0), Expr(o.kernel.second))}, detail::unique_name(op + "_r"));
    auto window = [&](Expr kh, Expr kw) {
        return cast(t, padded({out.exprs[0], out.exprs[1], out.exprs[2] * stride.first + kh, out.exprs[3] * stride.second + kw}));
    };
    Func f(detail::unique_name(op));
    define(f, out, is_max ? window(Expr(0), Expr(0)) : make_zero(t));
    if (is_max) at(f, out) = max(at(f, out), window(r.x, r.y));
    else at(f, out) = at(f, out) + window(r.x, r.y);
    Tensor y(f, {x.shape()[0], x.shape()[1], oh, ow});
    if (!is_max && (o.count_include_pad || (o.padding.first == 0 && o.padding.second == 0))) {
        y = mul(y, 1.0 / double(o.kernel.first * o.kernel.second));
    } else if (!is_max) {
        // Divide by the number of window elements inside the input (torch's count_include_pad
        // false): per axis, min(start + kernel, size) - max(start, 0), start = i * stride - pad.
        auto inside = [](Expr i, int s, int p, int k, int64_t size) {
            Expr start = i * s - p;
            return min(start + k, Expr(int32_t(size))) - max(start, Expr(0));
        };
        Axes a = make_axes(4);
        Expr count = inside(a.exprs[2], stride.first, o.padding.first, o.kernel.first, x.shape()[2]) *
                     inside(a.exprs[3], stride.second, o.padding.second, o.kernel.second, x.shape()[3]);
        y = div(y, Tensor(a.vars, cast(t, count), {1, 1, oh, ow}, detail::unique_name("avg_pool2d_count")));
    }
    return from_nchw(y, o.channels_last);
}

} // namespace

Tensor conv2d(const Tensor &x_in, const Tensor &weight_in, const Tensor *bias, const Conv2dOptions &o) {
    Tensor x = reused_operand(to_nchw(x_in, o.channels_last, "conv2d")), weight = reused_operand(weight_in);
    if (weight.rank() != 4) user_error("ops::conv2d: the weight ", weight.name(), " needs 4 axes [O, C/groups, KH, KW].");
    check_positive("conv2d", "stride", o.stride, 1);
    check_positive("conv2d", "dilation", o.dilation, 1);
    check_positive("conv2d", "padding", o.padding, 0);
    int64_t n = x.shape()[0], c = x.shape()[1], outs = weight.shape()[0], cg = weight.shape()[1];
    int64_t kh = weight.shape()[2], kw = weight.shape()[3];
    if (o.groups < 1 || c % o.groups || outs % o.groups)
        user_error("ops::conv2d: groups ", o.groups, " must divide the ", c, " input channels and the ", outs, " outputs.");
    if (cg != c / o.groups)
        user_error("ops::conv2d: the weight ", weight.name(), " takes ", cg, " channels per group; the input gives ",
                   c / o.groups, ".");
    if (bias && (bias->rank() != 1 || bias->shape()[0] != outs))
        user_error("ops::conv2d: the bias ", bias->name(), " must have shape [", outs, "].");
    int64_t oh = output_extent(x.shape()[2], o.padding.first, o.dilation.first, int(kh), o.stride.first, "conv2d");
    int64_t ow = output_extent(x.shape()[3], o.padding.second, o.dilation.second, int(kw), o.stride.second, "conv2d");
    Type t = promote_types(x.type(), weight.type());
    if (bias) t = promote_types(t, bias->type());
    Tensor padded = pad(x, {{o.padding.first, o.padding.first}, {o.padding.second, o.padding.second}});
    Axes out = make_axes(4);  // n, o, i, j
    // The window column innermost, then the row, then the input channel: the order of the sums
    // (Tessera keeps it, for exact results) and the one that lets the loop-nest optimizer make
    // the output column the vector loop.
    RDom r({Range(Expr(0), Expr(int32_t(kw))), Range(Expr(0), Expr(int32_t(kh))), Range(Expr(0), Expr(int32_t(cg)))},
           detail::unique_name("conv2d_r"));
    int64_t outs_per_group = outs / o.groups;
    Expr channel = o.groups == 1 ? Expr(r.z) : out.exprs[1] / int32_t(outs_per_group) * int32_t(cg) + r.z;
    Expr input = cast(t, padded({out.exprs[0], channel, out.exprs[2] * o.stride.first + r.y * o.dilation.first,
                                 out.exprs[3] * o.stride.second + r.x * o.dilation.second}));
    Expr w = cast(t, weight({out.exprs[1], r.z, r.y, r.x}));
    // The sums are stored with the output channel next to the column ([n, row, channel, column]):
    // the loop-nest optimizer register tiles the column (vectors) against the axis outside it,
    // and against channels each step of the window loads two input vectors and broadcasts
    // a weight per channel, where against rows it would load a vector per row. The NCHW result
    // is an index map over it.
    Axes stored{{out.vars[0], out.vars[2], out.vars[1], out.vars[3]}, {out.exprs[0], out.exprs[2], out.exprs[1], out.exprs[3]}};
    Func f(detail::unique_name("conv2d"));
    define(f, stored, bias ? cast(t, (*bias)({out.exprs[1]})) : make_zero(t));
    at(f, stored) = at(f, stored) + input * w;
    return from_nchw(permute(Tensor(f, {n, oh, outs, ow}), {0, 2, 1, 3}), o.channels_last);
}

Tensor max_pool2d(const Tensor &x, const Pool2dOptions &options) { return pool("max_pool2d", x, options, true); }
Tensor avg_pool2d(const Tensor &x, const Pool2dOptions &options) { return pool("avg_pool2d", x, options, false); }

Tensor adaptive_avg_pool2d(const Tensor &x_in, std::pair<int, int> output_size, bool channels_last) {
    Tensor x = to_nchw(x_in, channels_last, "adaptive_avg_pool2d");
    check_positive("adaptive_avg_pool2d", "output_size", output_size, 1);
    int64_t h = x.shape()[2], w = x.shape()[3], oh = output_size.first, ow = output_size.second;
    // Window i covers [floor(i h / oh), ceil((i + 1) h / oh)): at most ceil(h / oh) + 1 rows.
    int64_t max_h = (h + oh - 1) / oh + 1, max_w = (w + ow - 1) / ow + 1;
    Type t = float_type_for(x.type());
    Axes out = make_axes(4);
    Expr i = out.exprs[2], j = out.exprs[3];
    Expr h0 = i * int32_t(h) / int32_t(oh), h1 = ((i + 1) * int32_t(h) + int32_t(oh - 1)) / int32_t(oh);
    Expr w0 = j * int32_t(w) / int32_t(ow), w1 = ((j + 1) * int32_t(w) + int32_t(ow - 1)) / int32_t(ow);
    RDom r({Range(Expr(0), Expr(int32_t(max_h))), Range(Expr(0), Expr(int32_t(max_w)))}, detail::unique_name("adaptive_r"));
    r.where(h0 + r.x < h1 && w0 + r.y < w1);
    Func s(detail::unique_name("adaptive_sum"));
    define(s, out, make_zero(t));
    // The predicate keeps r inside the window; bounds inference does not use it, so the
    // coordinates are also clamped into the input (the clamp never changes a summed point).
    at(s, out) = at(s, out) + cast(t, x({out.exprs[0], out.exprs[1], min(h0 + r.x, int32_t(h - 1)),
                                         min(w0 + r.y, int32_t(w - 1))}));
    Axes out2 = make_axes(4);
    Expr i2 = out2.exprs[2], j2 = out2.exprs[3];
    Expr count = (((i2 + 1) * int32_t(h) + int32_t(oh - 1)) / int32_t(oh) - i2 * int32_t(h) / int32_t(oh)) *
                 (((j2 + 1) * int32_t(w) + int32_t(ow - 1)) / int32_t(ow) - j2 * int32_t(w) / int32_t(ow));
    Func avg(detail::unique_name("adaptive_avg_pool2d"));
    define(avg, out2, Expr(at(s, out2)) / cast(t, count));
    return from_nchw(Tensor(avg, {x.shape()[0], x.shape()[1], oh, ow}), channels_last);
}

} // namespace tessera::ops
