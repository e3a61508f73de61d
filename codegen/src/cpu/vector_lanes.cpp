// How many lanes a vector loop gets (FunctionLowering::vector_lanes): W elements of the widest
// loaded or stored element per vector register (its values up to two registers each), fewer
// where an output is streamed and the loop moves more than it computes, a whole register of
// bytes for lookups in byte tables. The lanes themselves are lowered in vector_step.h.
#include <algorithm>
#include <functional>

#include "../function_lowering.h"

namespace tessera::codegen {

namespace {

// Whether a coordinate may be a vector of lanes in a vector step, gathered or scattered lane by
// lane: it loads something, or it is not built of sums, constant multiples and divisions, and
// casts (a clamp).
bool gathered(const Expr &e) {
    bool found = false;
    ir::visit(e, [&](const Expr &n) {
        switch (n->op) {
        case Op::IntConst: case Op::UIntConst: case Op::Var: case Op::Param: case Op::BufferDim:
        case Op::Cast: case Op::Add: case Op::Sub: break;
        case Op::Mul: case Op::Div: case Op::Mod:
            found = found || !(ir::is_const(n->args[0]) || ir::is_const(n->args[1]));
            break;
        default: found = true;
        }
        return !found;
    });
    return found;
}

// Whether a coordinate is a clamp, min(max(e, lo), hi) or either alone, of an expression that is
// not gathered within bounds that are not (a repeat_edge boundary): its loads are contiguous
// vectors in the interior (vector_step.h, load_within_clamp), or uniform when e does not
// move along the loop, and gathered at int32 lane offsets at the edges only.
bool clamp_of_ungathered(const Expr &e) {
    if (e->op != Op::Min && e->op != Op::Max) return !gathered(e);
    return clamp_of_ungathered(e->args[0]) && !gathered(e->args[1]);
}

// The widest element (in bits) among the values of an expression and the elements it loads
// (`elements`: the widest of those loaded, and 64 for a gather lane by lane);
// 64 when a load is gathered lane by lane, except a lookup: a gather at int32 coordinates
// computed from data, which takes int32 lane offsets (vector_step.h, gather) and counts
// its element alone; nor does a clamp of such a coordinate (a repeat_edge boundary), whose loads
// gather only at the edges (with 16 float lanes instead of 8 on the AMD EPYC, A/B of 2 rounds of
// 11 runs: local_laplacian 39.7 -> 38.5 ms, bilateral_grid 13.2 -> 12.9, pyramid_blend 20.3 ->
// 19.8, interpolate 18.0 -> 17.3; camera_pipe, unsharp_mask and harris unchanged). With 16
// float lanes instead of 8, bilateral_grid ran 13.5 -> 12.95 ms and
// local_laplacian 38.6 -> 37.4 (A/B, 3 rounds of 15 runs, an AVX-512 AMD EPYC); conv2d's gathers,
// whose coordinates load nothing, ran 4% slower so (0.634 -> 0.662 ms) and keep 8 lanes. (When
// every gather's lane addresses were int64 vectors, the bilateral grid's lookups ran 30 ms with 16
// lanes, 25 with 8.) Not the coordinates of other loads, which stay scalar in a vector step
// (uniform, or affine in the lane): counted, an overlapped tile's int64 offsets in every
// scratchpad coordinate gave float loops 64-bit lanes, half the lanes (harris 33 -> 27 ms,
// camera_pipe 14.2 -> 11.8 ms without them).
// `table(call)`: whether a gathered call is a lookup in a byte table (its lanes do not count as
// gathered), which `tables` counts.
int widest(const Expr &e, const std::function<bool(const ExprNode &)> &table, int &tables, int &elements) {
    int w = 0;
    ir::visit(e, [&](const Expr &n) {
        Type t = n.type();
        int bits = t.is_bool() ? 8 : (t.is_float() && t.bits == 16 ? 32 : t.bits);
        w = std::max(w, bits);
        if (n->op != Op::FuncCall && n->op != Op::InputCall) return true;
        elements = std::max(elements, bits);
        for (const Expr &a : n->args)
            if (gathered(a)) {
                if (table(*n)) ++tables;
                else if (a.type().bits > 32 || (!ir::reads_data(a) && !clamp_of_ungathered(a))) w = std::max(w, 64), elements = 64;
                w = std::max(w, widest(a, table, tables, elements));
            }
        return false;
    });
    return w;
}

} // namespace

// The lanes vector_for gives `n`: W elements of its widest type per vector register (or
// options.vector_width); 0 when its body does not allow explicit vectors.
int FunctionLowering::vector_lanes(const poly::LoopNode &n) const {
    std::vector<const poly::LoopNode *> calls;
    if (!body_calls(n.body, calls) || calls.empty() || n.step != 1) return 0;
    int bits = 0, tables = 0, elements = 0;
    auto table = [&](const ExprNode &call) { return options.byte_table_permutes && byte_table_entries(call) > 0; };
    for (const poly::LoopNode *c : calls) {
        const poly::ExecStatement &e = p.statements[size_t(c->statement)];
        if (!e.guards.empty()) return 0;
        bits = std::max({bits, widest(e.value, table, tables, elements)});
        for (const Expr &x : e.store)
            if (gathered(x)) bits = std::max({bits, 64, widest(x, table, tables, elements)}), elements = 64;
        const StorageView &view = view_of(m.statements[size_t(e.statement)].func);
        int stored = view.type.is_bool() ? 8 : view.type.bits;
        bits = std::max(bits, stored);
        elements = std::max(elements, stored);
    }
    // A whole register of the widest element loaded or stored, while the widest value takes at
    // most kValueRegisters registers: camera_pipe's demosaic stages load and store int16 and
    // compare absolute differences in int32; with 32 lanes instead of 16 their int16 work takes
    // half the instructions a point, and the int32 compares as many as before (A/B on an AVX-512
    // AMD EPYC, 5 rounds of 11 runs: 4.54-4.74 -> 4.17-4.39 ms). Four registers a value (its
    // sharpening stage, uint8 with int32 arithmetic, at 64 lanes) ran 2% faster still, within
    // the noise; two keep the registers a deep expression needs.
    constexpr int kValueRegisters = 2;
    int w = std::min(options.vector_bits / std::max(elements, 8), kValueRegisters * options.vector_bits / std::max(bits, 8));
    // Non-temporal stores of an output: at most 256 bits a step where the loop moves memory more
    // than it computes (blur_y, 4096 x 4096 floats: 14.0 ms with 16 lanes, 11.8 with 8 on an
    // AVX-512 AMD EPYC). Where it computes (harris's output, 60 operations a point: 8 lanes
    // doubled its instructions; 16 lanes ran it 12% faster on an AVX-512 Intel Xeon), whole
    // registers.
    constexpr uint64_t kComputeBoundOperations = 16;
    uint64_t operations = 0;
    for (const poly::LoopNode *c : calls) operations += ir::operation_count(p.statements[size_t(c->statement)].value);
    for (const poly::LoopNode *c : calls) {
        const StorageView &view = view_of(m.statements[size_t(p.statements[size_t(c->statement)].statement)].func);
        if (view.output && options.streaming_output_stores && operations < kComputeBoundOperations * calls.size())
            w = std::min(w, 256 / std::max(bits, 8));
    }
    // Lookups in byte tables, and no other gather: a whole register of bytes per step, each
    // lookup a few permutes for 64 lanes (camera_pipe's tone curve: see docs/benchmarks.md).
    if (tables > 0 && bits < 64) w = options.vector_bits / 8;
    if (options.vector_width > 0) w = options.vector_width;
    return w < 2 ? 0 : w;
}

int64_t FunctionLowering::byte_table_entries(const ExprNode &call) const {
    if (call.op != Op::FuncCall || call.args.size() != 1 || call.type.bits != 8 || call.type.is_bool() || call.type.is_float())
        return 0;
    const FuncContents *f = call.func_ptr ? call.func_ptr : call.func.get();
    if (!f) return 0;
    int array = m.array_of(f);
    if (array < 0 || size_t(array) >= p.storage_of_array.size() || p.storage_of_array[size_t(array)] < 0) return 0;
    const poly::Storage &st = p.storage[size_t(p.storage_of_array[size_t(array)])];
    if (st.kind == poly::Storage::Kind::Scratch || st.extent.size() != 1) return 0;
    std::optional<int64_t> extent = ir::as_const_int(st.extent[0]);
    return extent && *extent >= 1 && *extent <= kByteTableEntries ? *extent : 0;
}

} // namespace tessera::codegen
