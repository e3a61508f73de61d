// var, layer_norm and batch_norm (tensor.h), composed from the other ops so that the
// scheduler sees one graph of Funcs.
#include "tensor_util.h"

namespace tessera::ops {

namespace {
Tensor as_float(const Tensor &a) { return a.type().is_float() ? a : cast(a, Float(32)); }

// A per-channel vector [C] shaped to broadcast against axis 1 of a tensor of `rank` axes.
Tensor channel_vector(const Tensor &v, int64_t channels, int rank, const std::string &what) {
    if (v.rank() != 1 || v.shape()[0] != channels)
        user_error("ops::batch_norm: ", what, " ", v.name(), " must have shape [", channels, "].");
    Tensor r = v;
    for (int i = 2; i < rank; ++i) r = unsqueeze(r, -1);
    return r;
}
} // namespace

Tensor var(const Tensor &a, std::vector<int> axes, int correction, bool keepdim) {
    Tensor x = as_float(a);
    int64_t count = 1;
    for (int ax : axes) count *= a.shape()[size_t(normalize_axis(ax, a.rank(), "var"))];
    if (count - correction <= 0)
        user_error("ops::var of ", a.name(), ": ", count, " elements with correction ", correction, " leave no degrees of freedom.");
    Tensor d = sub(x, mean(x, axes, true));
    return mul(sum(mul(d, d), axes, keepdim), 1.0 / double(count - correction));
}

Tensor layer_norm(const Tensor &x, int normalized_axes, const Tensor *weight, const Tensor *bias, double eps) {
    if (normalized_axes < 1 || normalized_axes > x.rank())
        user_error("ops::layer_norm: normalized_axes ", normalized_axes, " must be in [1, ", x.rank(), "] for ", x.name(), ".");
    std::vector<int> axes;
    for (int i = x.rank() - normalized_axes; i < x.rank(); ++i) axes.push_back(i);
    std::vector<int64_t> normalized(x.shape().end() - normalized_axes, x.shape().end());
    for (const Tensor *p : {weight, bias})
        if (p && p->shape() != normalized)
            user_error("ops::layer_norm: ", p->name(), " must have the shape of the normalized axes.");
    Tensor xf = as_float(x);
    Tensor centered = sub(xf, mean(xf, axes, true));
    Tensor inv_std = rsqrt(add(var(xf, axes, 0, true), eps));
    Tensor y = mul(centered, inv_std);
    if (weight) y = mul(y, *weight);
    if (bias) y = add(y, *bias);
    return y;
}

Tensor batch_norm(const Tensor &x, const Tensor &running_mean, const Tensor &running_var, const Tensor *weight,
                  const Tensor *bias, double eps) {
    if (x.rank() < 2) user_error("ops::batch_norm: ", x.name(), " needs at least 2 axes [N, C, ...].");
    int64_t c = x.shape()[1];
    Tensor y = mul(sub(as_float(x), channel_vector(running_mean, c, x.rank(), "running_mean")),
                   rsqrt(add(channel_vector(running_var, c, x.rank(), "running_var"), eps)));
    if (weight) y = mul(y, channel_vector(*weight, c, x.rank(), "weight"));
    if (bias) y = add(y, channel_vector(*bias, c, x.rank(), "bias"));
    return y;
}

} // namespace tessera::ops
