// The op library's tensors and ops: every op is a DSL Func, so Tessera's scheduler fuses and
// tiles across op boundaries (a matmul, its bias and its ReLU become one group).
//
//   using namespace tessera;
//   InputBuffer<float> xb("x", 2), wb("w", 2), bb("b", 1);
//   ops::Tensor x = ops::input(xb, {64, 256}), w = ops::input(wb, {128, 256}),
//               b = ops::input(bb, {128});
//   ops::Tensor y = ops::relu(ops::linear(x, w, b));     // shape {64, 128}
//   Buffer<float> out = y.func().realize({128, 64});     // dimension 0 is the last axis
//
// Shapes are concrete and written outermost first, as NumPy and torch write them. The Func of
// a tensor of shape {d0, ..., dn} has dimension 0 over dn (the contiguous axis of a C-ordered
// array), as Tessera's Python buffers have it: a tensor's Func realizes straight into a
// C-ordered array of its shape. Types follow torch's promotion (promote_types below).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <tessera/func.h>
#include <tessera/param.h>

namespace tessera::ops {

class Tensor {
public:
    Tensor() = default;
    // A tensor over `shape` whose values the Func gives (it must have one dimension per axis).
    Tensor(Func func, std::vector<int64_t> shape);

    // A tensor read straight from an InputBuffer (input() below): no Func copies it.
    Tensor(InputBuffer<void> buffer, std::vector<int64_t> shape);

    // An inline tensor: its value at `axes` (one Var per axis, outermost first) is `value`, and
    // every consumer reads the expression itself, so a chain of elementwise ops and simple index
    // maps is one stage, as Halide inlines pointwise Funcs. `name` names it in messages and
    // names its Func if it is materialized.
    //   Tensor t({i, j}, a({i, j}) * 2, {4, 5}, "mul");  t({Expr(1), k}) is a({1, k}) * 2
    Tensor(std::vector<Var> axes, Expr value, std::vector<int64_t> shape, std::string name);

    // The Func computing the tensor. For an input tensor, a new Func reading the buffer; for an
    // inline tensor, one Func defined by its expression (made on the first call, then reused).
    Func func() const;
    // Whether consumers read this tensor's expression rather than a Func (the constructor above).
    bool is_inline() const { return value_.defined(); }
    // Whether it is an inline tensor that only reads another at mapped coordinates (a permute,
    // slice, expand...), computing nothing.
    bool is_index_map() const;
    // The name of the Func or InputBuffer, for messages.
    std::string name() const;
    const std::vector<int64_t> &shape() const { return shape_; }
    int rank() const { return int(shape_.size()); }
    Type type() const;
    int64_t number_of_elements() const;
    // The value at `index`, given outermost axis first.
    Expr operator()(const std::vector<Expr> &index) const;
    // The sizes to realize the Func over (the shape reversed).
    std::vector<int> realize_sizes() const;
    // The tensor this one is a row-major reshape of (reshape()), when that one computes nothing
    // (a Func's or input's values, or an index map of them); null otherwise. A reshape of this
    // tensor reshapes that one instead.
    const std::shared_ptr<const Tensor> &reshape_source() const { return reshape_source_; }

private:
    friend Tensor reshape(const Tensor &a, std::vector<int64_t> shape);
    std::shared_ptr<const Tensor> reshape_source_;
    Func func_;                // the values, or
    InputBuffer<void> input_;  // an input read in place, or
    std::vector<Var> axes_;    // an inline tensor: `value_` over `axes_`
    Expr value_;
    std::string name_;
    std::shared_ptr<Func> materialized_;  // an inline tensor's Func, once func() made it
    std::vector<int64_t> shape_;
};

// The tensor as a stage of its own: an inline tensor's values computed once into a Func, which
// every consumer then reads (for values used by several consumers, or expensive ones); any
// other tensor unchanged.
Tensor materialize(const Tensor &t);

// A tensor reading an InputBuffer of the given shape (outermost first), in place.
Tensor input(const InputBuffer<void> &buffer, std::vector<int64_t> shape);

// A tensor of `shape` whose every element is `value` in `type` (torch.full); an inline tensor,
// so a consumer reads the constant itself.
Tensor full(std::vector<int64_t> shape, double value, Type type);

// NumPy's broadcasting of two shapes: axes aligned at the end, an axis of size 1 stretched.
// Throws a UserError naming both shapes and `op` when they do not broadcast.
std::vector<int64_t> broadcast_shapes(const std::vector<int64_t> &a, const std::vector<int64_t> &b, const std::string &op);
// torch's promotion of two tensors' types: bool < integers < floats; within a kind the wider
// type; a signed and an unsigned integer give a signed type that holds both (uint8 and int8:
// int16); float16 with bfloat16 gives float32.
Type promote_types(Type a, Type b);

// ---- Elementwise (broadcasting, promoted) ------------------------------------------------------
Tensor add(const Tensor &a, const Tensor &b);
Tensor sub(const Tensor &a, const Tensor &b);
Tensor mul(const Tensor &a, const Tensor &b);
// True division, as torch's: integer operands are divided as float32.
Tensor div(const Tensor &a, const Tensor &b);
// torch.div with a rounding_mode: the quotient rounded toward zero (Trunc) or toward negative
// infinity (Floor), in the promoted type. Floats: trunc(a / b), as torch computes it; Floor of
// floats is a UserError (torch's exact algorithm needs an exact fmod). Integers: exact, whatever
// the signs (7 / -2: Trunc -3, Floor -4).
enum class Rounding { Trunc, Floor };
Tensor div(const Tensor &a, const Tensor &b, Rounding rounding);
Tensor maximum(const Tensor &a, const Tensor &b);
Tensor minimum(const Tensor &a, const Tensor &b);
Tensor pow(const Tensor &a, const Tensor &b);
// With a scalar operand (it takes the tensor's type, as a Python scalar does in torch, unless
// it is a float and the tensor an integer: then float32).
Tensor add(const Tensor &a, double b);
Tensor mul(const Tensor &a, double b);
// Comparisons give bool tensors.
enum class Compare { EQ, NE, LT, LE, GT, GE };
Tensor compare(Compare op, const Tensor &a, const Tensor &b);
// cond ? a : b, broadcasting all three.
Tensor where(const Tensor &cond, const Tensor &a, const Tensor &b);
Tensor clamp(const Tensor &a, double lo, double hi);
Tensor cast(const Tensor &a, Type t);

// Unary; integer inputs of the float functions are computed in float32, as torch does.
Tensor neg(const Tensor &a);
Tensor abs(const Tensor &a);
Tensor exp(const Tensor &a);
Tensor log(const Tensor &a);
Tensor sqrt(const Tensor &a);
Tensor rsqrt(const Tensor &a);
Tensor tanh(const Tensor &a);
Tensor sigmoid(const Tensor &a);
Tensor relu(const Tensor &a);
Tensor silu(const Tensor &a);
// GELU, x * Φ(x): the exact form through erf (an approximation within 1.5e-7 of erf, as float32
// rounding), or torch's approximate="tanh" form.
Tensor gelu(const Tensor &a, bool tanh_approximation = false);

// ---- Reductions over axes (negative axes count from the end) ----------------------------------
Tensor sum(const Tensor &a, std::vector<int> axes, bool keepdim = false);
Tensor mean(const Tensor &a, std::vector<int> axes, bool keepdim = false);
Tensor amax(const Tensor &a, std::vector<int> axes, bool keepdim = false);
Tensor amin(const Tensor &a, std::vector<int> axes, bool keepdim = false);
// exp(a - max) / sum(exp(a - max)) along `axis`; log_softmax is a - max - log(sum(exp(a - max))).
Tensor softmax(const Tensor &a, int axis);
Tensor log_softmax(const Tensor &a, int axis);

// Variance with Bessel's `correction` (torch.var's default 1; 0 for the biased variance).
Tensor var(const Tensor &a, std::vector<int> axes, int correction = 1, bool keepdim = false);
// (x - mean) / sqrt(var + eps) * weight + bias over the last `normalized_axes` axes (biased
// variance), as torch.nn.functional.layer_norm; weight and bias (shape of those axes) optional.
Tensor layer_norm(const Tensor &x, int normalized_axes, const Tensor *weight = nullptr, const Tensor *bias = nullptr,
                  double eps = 1e-5);
// Inference batch normalization of x [N, C, ...] with per-channel running statistics [C] and
// optional weight and bias [C] (torch.nn.functional.batch_norm, training=False).
Tensor batch_norm(const Tensor &x, const Tensor &running_mean, const Tensor &running_var, const Tensor *weight = nullptr,
                  const Tensor *bias = nullptr, double eps = 1e-5);

// ---- Layout: index maps, never copies of their own (the consumer reads through them) ----------
// torch.permute: result axis i is a's axis dims[i].
Tensor permute(const Tensor &a, std::vector<int> dims);
Tensor transpose(const Tensor &a, int axis0, int axis1);
// torch.reshape (one size may be -1): the row-major order of the elements is kept.
Tensor reshape(const Tensor &a, std::vector<int64_t> shape);
// Axes start..end (inclusive, negative from the end) merged into one.
Tensor flatten(const Tensor &a, int start = 0, int end = -1);
Tensor squeeze(const Tensor &a, int axis);
Tensor unsqueeze(const Tensor &a, int axis);
// a broadcast to `shape` (torch.expand; -1 keeps a size).
Tensor expand(const Tensor &a, std::vector<int64_t> shape);
// Python's a[start:end:step] along one axis (step > 0; start and end clamped as Python does).
Tensor slice(const Tensor &a, int axis, int64_t start, int64_t end, int64_t step = 1);
// torch.cat along `axis`; the other sizes must match, types are promoted.
Tensor cat(const std::vector<Tensor> &tensors, int axis);
// Constant padding: pads[i] = {before, after} for axis i (outermost first; missing leading axes
// are not padded).
Tensor pad(const Tensor &a, const std::vector<std::pair<int64_t, int64_t>> &pads, double value = 0);

// ---- Linear algebra ----------------------------------------------------------------------------
// a [..., m, k] times b [..., k, n] with the batch axes broadcast (torch.matmul on rank ≥ 2).
Tensor matmul(const Tensor &a, const Tensor &b);
// x [..., k] times weight [n, k] transposed, plus bias [n] (torch.nn.functional.linear).
Tensor linear(const Tensor &x, const Tensor &weight, const Tensor *bias = nullptr);

// ---- Convolution and pooling (NCHW; channels_last: NHWC in and out) ---------------------------
struct Conv2dOptions {
    std::pair<int, int> stride{1, 1}, padding{0, 0}, dilation{1, 1};  // (height, width)
    int groups = 1;              // groups == channels == outputs: depthwise
    bool channels_last = false;  // x and the result are NHWC (the weight stays [O, C/groups, KH, KW])
};
// torch.nn.functional.conv2d: x [N, C, H, W], weight [O, C/groups, KH, KW], bias [O].
Tensor conv2d(const Tensor &x, const Tensor &weight, const Tensor *bias = nullptr, const Conv2dOptions &options = {});
struct Pool2dOptions {
    std::pair<int, int> kernel{2, 2}, stride{0, 0}, padding{0, 0};  // stride 0: the kernel size
    bool channels_last = false;
    bool count_include_pad = true;  // avg_pool2d: divide by the whole window, as torch's default
};
Tensor max_pool2d(const Tensor &x, const Pool2dOptions &options);
Tensor avg_pool2d(const Tensor &x, const Pool2dOptions &options);
// torch.nn.functional.adaptive_avg_pool2d to an output of (height, width).
Tensor adaptive_avg_pool2d(const Tensor &x, std::pair<int, int> output_size, bool channels_last = false);

} // namespace tessera::ops
