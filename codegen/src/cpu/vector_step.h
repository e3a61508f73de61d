// Explicit vectorization of loops marked "vector": W lanes per step.
//
// The loop's body must be statement instances without guards. Values that do not change along
// the loop stay scalar (uniform); integer values that advance by a constant step per lane stay
// "affine" (lane 0's value and the step); everything else becomes a vector of W lanes. A load
// or store whose coordinates are uniform except dimension 0, which advances by one per lane, is
// one contiguous vector access; one that advances by two per lane is two vector loads and a
// shuffle, and one at x / 2 (plus uniform terms) two half-vector loads and a shuffle; one at
// clamp(x, lo, hi) a contiguous vector where all lanes lie inside (a branch), one broadcast
// element where all lie past one end; other loads gather lane by lane, at offsets from int32
// lanes. A select whose condition is uniform branches: only the chosen value is computed. Stores
// to outputs can be non-temporal (streaming): a prologue then aligns the vector stores to the
// vector size, and an epilogue finishes the loop, each one masked step on AVX-512 (where the
// step neither gathers nor scatters) or scalar iterations. Loads of one row at neighbouring
// offsets (a stencil's x - 1, x, x + 1) are carried from step to step (rotated_loads.h).
//
// A register tile's partial block (register_tile_lowering.cpp) runs masked steps: only the lanes
// of the mask are loaded and stored (contiguous accesses masked, every other one a masked gather
// or scatter), so that a row's last block of 28 columns is two vector steps, not a scalar loop.
//
// This header holds VectorLowering, which emits one step of such a loop (its lanes' values, loads
// and stores); vector_lowering.cpp drives the loop around the steps (FunctionLowering::vector_for:
// the peel, the rotated loads' first step, the whole steps, the remainder).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/TargetParser/Triple.h>

#include "../function_lowering.h"
#include "rotated_loads.h"

namespace tessera::codegen {

using llvm::Value;

// A value across the lanes of one vector step.
struct Lanes {
    enum class Kind { Uniform, Affine, Varying };
    Kind kind = Kind::Uniform;
    Value *scalar = nullptr;  // Uniform: the value; Affine: lane 0's value
    int64_t step = 0;         // Affine: value(lane l) = scalar + step * l
    Value *vector = nullptr;  // Varying
};

using VScope = std::map<std::string, Lanes>;

class VectorLowering {
public:
    VectorLowering(FunctionLowering &f, int lanes) : f_(f), b_(f.b), w_(lanes) {}

    // The lanes of the steps that follow that hold elements (<W x i1>); null: all of them.
    void set_mask(Value *mask) { mask_ = mask; }

    Value *to_vector(const Lanes &l) {
        if (l.kind == Lanes::Kind::Varying) return l.vector;
        Value *splat = b_.CreateVectorSplat(unsigned(w_), l.scalar);
        if (l.kind == Lanes::Kind::Uniform) return splat;
        std::vector<llvm::Constant *> steps;
        for (int i = 0; i < w_; ++i) steps.push_back(llvm::ConstantInt::get(l.scalar->getType(), uint64_t(l.step * i), true));
        return b_.CreateAdd(splat, llvm::ConstantVector::get(steps));
    }

    Lanes uniform(Value *v) { return Lanes{Lanes::Kind::Uniform, v, 0, nullptr}; }
    Lanes varying(Value *v) { return Lanes{Lanes::Kind::Varying, nullptr, 0, v}; }

    Lanes expr(const Expr &e, const VScope &s) {
        const ExprNode &n = *e;
        switch (n.op) {
        case Op::IntConst:
        case Op::UIntConst:
        case Op::FloatConst: return uniform(f_.expr(e, Scope{}));
        case Op::Var: {
            auto it = s.find(n.name);
            if (it == s.end()) internal_error("codegen: the variable ", n.name, " is not bound in a vector loop");
            return it->second;
        }
        case Op::FuncCall:
        case Op::InputCall: return load(n, s);
        default: break;
        }
        std::vector<Lanes> args;
        bool all_uniform = true;
        bool saved = f_.index_mode;
        f_.index_mode = f_.index_mode && on_index_spine(n.op);
        for (const Expr &a : n.args) {
            args.push_back(expr(a, s));
            all_uniform &= args.back().kind == Lanes::Kind::Uniform;
            if (n.op == Op::Select && args.size() == 1 && args[0].kind == Lanes::Kind::Uniform && args[0].scalar->getType()->isIntegerTy(1)) {
                Lanes r = branch_select(args[0].scalar, n, s);
                f_.index_mode = saved;
                return r;
            }
        }
        f_.index_mode = saved;
        if (all_uniform) {
            std::vector<Value *> v;
            for (const Lanes &l : args) v.push_back(l.scalar);
            return uniform(f_.apply(n, v));
        }
        // Integer index arithmetic stays affine in the lane.
        bool affine_ok = std::all_of(args.begin(), args.end(), [](const Lanes &l) { return l.kind != Lanes::Kind::Varying; });
        if (affine_ok && n.type.is_int_or_uint() && !n.type.is_bool()) {
            auto scalars = [&]() {
                std::vector<Value *> v;
                for (const Lanes &l : args) v.push_back(l.scalar);
                return v;
            };
            // A narrowing integer cast (int64 loop-nest values to int32 coordinates) commutes
            // with the lanes' wrapping additions: the lanes stay affine.
            const Type from = n.args[0].type();
            if (n.op == Op::Cast && from.is_int_or_uint() && !from.is_bool() && n.type.bits <= from.bits)
                return Lanes{args[0].kind, f_.apply(n, scalars()), args[0].step, nullptr};
            if (n.op == Op::Add || n.op == Op::Sub) {
                int64_t st = n.op == Op::Add ? args[0].step + args[1].step : args[0].step - args[1].step;
                Lanes r{Lanes::Kind::Affine, f_.apply(n, scalars()), st, nullptr};
                if (st == 0) r.kind = Lanes::Kind::Uniform;
                return r;
            }
            if (n.op == Op::Mul) {
                auto c0 = ir::as_const_int(n.args[0]), c1 = ir::as_const_int(n.args[1]);
                if (c0 || c1) {
                    int64_t st = c1 ? args[0].step * *c1 : args[1].step * *c0;
                    return Lanes{Lanes::Kind::Affine, f_.apply(n, scalars()), st, nullptr};
                }
            }
        }
        std::vector<Value *> v;
        for (const Lanes &l : args) v.push_back(to_vector(l));
        return varying(f_.apply(n, v));
    }

    // A select whose condition is the same in every lane of the step: only the chosen value is
    // computed, behind a branch, instead of both in every lane and a blend. camera_pipe's
    // corrected(x, y, c) picks a row of its colour matrix by c, and demosaiced(x, y, c) a colour
    // plane, with c outside the vector loop: blended, every lane computed all three rows (9
    // vector multiplies where 3 do) and loaded all three planes. The values stay uniform, or
    // affine when both are with one step, as a select of them would.
    Lanes branch_select(Value *condition, const ExprNode &n, const VScope &s) {
        return two_way(condition, "select.true", "select.false", [&] { return expr(n.args[1], s); },
                       [&] { return expr(n.args[2], s); });
    }

    // The lanes `when_true` or `when_false` emits, in blocks of their own behind a branch on
    // `condition` (named `true_name` and `false_name`), joined by a phi: uniform, or affine with
    // one step, when both are; else vectors.
    Lanes two_way(Value *condition, const char *true_name, const char *false_name, const std::function<Lanes()> &when_true,
                  const std::function<Lanes()> &when_false) {
        llvm::Function *fn = b_.GetInsertBlock()->getParent();
        llvm::BasicBlock *true_block = llvm::BasicBlock::Create(f_.ctx, true_name, fn);
        llvm::BasicBlock *false_block = llvm::BasicBlock::Create(f_.ctx, false_name, fn);
        llvm::BasicBlock *merge = llvm::BasicBlock::Create(f_.ctx, "merge", fn);
        b_.CreateCondBr(condition, true_block, false_block);
        b_.SetInsertPoint(true_block);
        Lanes t = when_true();
        llvm::BasicBlock *true_end = b_.GetInsertBlock();
        b_.SetInsertPoint(false_block);
        Lanes e = when_false();
        llvm::BasicBlock *false_end = b_.GetInsertBlock();
        Lanes r;
        if (t.kind == e.kind && t.kind != Lanes::Kind::Varying && t.step == e.step) {
            r = t;
        } else {
            b_.SetInsertPoint(true_end);
            t = varying(to_vector(t));
            b_.SetInsertPoint(false_end);
            e = varying(to_vector(e));
            r = t;
        }
        b_.SetInsertPoint(true_end);
        b_.CreateBr(merge);
        b_.SetInsertPoint(false_end);
        b_.CreateBr(merge);
        b_.SetInsertPoint(merge);
        Value *a = r.kind == Lanes::Kind::Varying ? t.vector : t.scalar, *c = r.kind == Lanes::Kind::Varying ? e.vector : e.scalar;
        llvm::PHINode *phi = b_.CreatePHI(a->getType(), 2);
        phi->addIncoming(a, true_end);
        phi->addIncoming(c, false_end);
        (r.kind == Lanes::Kind::Varying ? r.vector : r.scalar) = phi;
        return r;
    }

    // A contiguous access: every coordinate uniform but dimension 0, which advances by 1.
    static bool contiguous(const std::vector<Lanes> &c) {
        if (c.empty() || c[0].kind != Lanes::Kind::Affine || c[0].step != 1) return false;
        for (size_t d = 1; d < c.size(); ++d)
            if (c[d].kind != Lanes::Kind::Uniform) return false;
        return true;
    }

    // Dimension 0 advances by two per lane, the others not at all.
    static bool strided_by_two(const std::vector<Lanes> &c) {
        if (c.empty() || c[0].kind != Lanes::Kind::Affine || c[0].step != 2) return false;
        for (size_t d = 1; d < c.size(); ++d)
            if (c[d].kind != Lanes::Kind::Uniform) return false;
        return true;
    }

    // A coordinate x / 2 + u (u uniform: sums and differences of uniform terms, in any order
    // around the one division by 2): x's lanes, and u (null when there is none).
    struct HalfCoordinate {
        Lanes twice;
        Value *offset = nullptr;
    };
    std::optional<HalfCoordinate> half_coordinate(const Expr &e, const VScope &s) {
        if (!e.type().is_int()) return std::nullopt;
        if (e->op == Op::Div) {
            if (ir::as_const_int(e->args[1]) != std::optional<int64_t>(2)) return std::nullopt;
            return HalfCoordinate{expr(e->args[0], s), nullptr};
        }
        if (e->op != Op::Add && e->op != Op::Sub) return std::nullopt;
        // The side with the division: the left one of a difference, either of a sum.
        for (int side : {0, 1}) {
            if (side == 1 && e->op == Op::Sub) break;
            std::optional<HalfCoordinate> h = half_coordinate(e->args[side], s);
            if (!h) continue;
            Lanes u = expr(e->args[1 - side], s);
            if (u.kind != Lanes::Kind::Uniform) return std::nullopt;
            Value *term = e->op == Op::Sub ? b_.CreateNeg(u.scalar) : u.scalar;
            h->offset = h->offset ? b_.CreateAdd(h->offset, term) : term;
            return h;
        }
        return std::nullopt;
    }

    // A load's coordinates of dimensions 1 and up as scalars (slot 0 left for dimension 0), when
    // all of them are uniform in the step; nothing otherwise.
    std::optional<std::vector<Value *>> uniform_outer_coordinates(const ExprNode &n, const VScope &s, const StorageView &view) {
        bool saved = f_.index_mode;
        f_.index_mode = !view.scratch;  // local coordinates wrap (Storage::Kind::Scratch)
        std::vector<Value *> coords = {nullptr};
        bool uniform = true;
        for (size_t d = 1; d < n.args.size(); ++d) {
            Lanes l = expr(n.args[d], s);
            uniform = uniform && l.kind == Lanes::Kind::Uniform;
            coords.push_back(l.scalar);
        }
        f_.index_mode = saved;
        if (!uniform) return std::nullopt;
        return coords;
    }

    // A load at x / 2 along the loop (an interleave, an upsample by 2): lane l reads element
    // q + floor((p + l) / 2), where x0 = 2q + p is lane 0's x. Two half vectors, A at q and B at
    // q + p (both within the elements q .. q + W/2 - 1 + p that the lanes read), and a shuffle
    // for each parity: p = 0 takes A[0], A[0], A[1], A[1], ...; p = 1 takes A[0], A[1], A[1],
    // ..., B[W/2 - 1]. The coordinate may add or subtract uniform terms to x / 2: a scratchpad's
    // coordinates are local to the tile, x / 2 - (the tile's origin) (camera_pipe's
    // red_even_rows reads r_gr and r_r so; lane by lane, 32 scalar loads per 16 lanes). Nothing
    // when the load is not of that form.
    std::optional<Lanes> load_at_half(const ExprNode &n, const VScope &s, const StorageView &view) {
        if (n.args.empty() || w_ % 2 != 0) return std::nullopt;
        bool saved = f_.index_mode;
        f_.index_mode = !view.scratch;
        std::optional<HalfCoordinate> h = half_coordinate(n.args[0], s);
        f_.index_mode = saved;
        if (!h) return std::nullopt;
        const Lanes &v = h->twice;
        std::optional<std::vector<Value *>> rest = uniform_outer_coordinates(n, s, view);
        if (v.kind != Lanes::Kind::Affine || v.step != 1 || !rest) return std::nullopt;
        std::vector<Value *> &coords = *rest;
        Value *q = b_.CreateAShr(v.scalar, 1), *p = b_.CreateAnd(v.scalar, 1);
        if (h->offset) q = b_.CreateAdd(q, h->offset);
        coords[0] = q;
        Type t = view.type;
        llvm::Type *st = f_.storage_type(t);
        llvm::Type *half = llvm::FixedVectorType::get(st, unsigned(w_ / 2));
        llvm::Align align(uint64_t(std::max(1, t.bytes())));
        Value *at = f_.address(view, coords);
        llvm::LoadInst *a = b_.CreateAlignedLoad(half, at, align);
        llvm::LoadInst *bl = b_.CreateAlignedLoad(half, b_.CreateInBoundsGEP(st, at, b_.CreateSExt(p, b_.getInt64Ty())), align);
        f_.tag_access(a, view);
        f_.tag_access(bl, view);
        std::vector<int> even, odd;
        for (int l = 0; l < w_; ++l) {
            even.push_back(l / 2);
            odd.push_back((l + 1) / 2 < w_ / 2 ? (l + 1) / 2 : w_ - 1);
        }
        Value *r = b_.CreateSelect(b_.CreateICmpEQ(p, llvm::ConstantInt::get(p->getType(), 0)), b_.CreateShuffleVector(a, bl, even),
                                   b_.CreateShuffleVector(a, bl, odd));
        return varying(f_.from_memory(t, r));
    }

    const StorageView &view_of_load(const ExprNode &n) const {
        return n.op == Op::InputCall ? f_.inputs.at(n.input.get()) : f_.view_of(n.func_ptr);
    }

    // The W elements a contiguous load reads, as they are in memory; null when the load is
    // not contiguous.
    Value *contiguous_vector(const ExprNode &n, const VScope &s) {
        const StorageView &view = view_of_load(n);
        std::vector<Lanes> c;
        bool saved = f_.index_mode;
        f_.index_mode = !view.scratch;
        for (const Expr &a : n.args) c.push_back(expr(a, s));
        f_.index_mode = saved;
        if (!contiguous(c)) return nullptr;
        std::vector<Value *> coords;
        for (const Lanes &l : c) coords.push_back(l.scalar);
        llvm::Type *vt = llvm::FixedVectorType::get(f_.storage_type(view.type), unsigned(w_));
        llvm::Align align(uint64_t(std::max(1, view.type.bytes())));
        if (mask_) {
            llvm::CallInst *l = b_.CreateMaskedLoad(vt, f_.address(view, coords), align, mask_, llvm::Constant::getNullValue(vt));
            f_.tag_access(l, view);
            return l;
        }
        Value *addr = f_.address(view, coords);
        prefetch(n, addr);
        llvm::LoadInst *l = b_.CreateAlignedLoad(vt, addr, align);
        f_.tag_access(l, view);
        return l;
    }

    // ---- Prefetches ----
    // Set while the vector loop's body is emitted (not for its first step's previous vectors,
    // a register tile's blocks or masked steps): each contiguous load of an input there also
    // prefetches the line `bytes` further on, once per call, input and coordinates (a value
    // that reads in(x + 2, y) three times prefetches once; with a prefetch per read, the
    // duplicates kept LLVM from merging the loads, and bilateral_grid's slicing loop grew from
    // 726 to 1213 instructions and ran 17% slower). Inputs only: the full buffers of Funcs
    // computed at root ran no faster with them (pyramid_blend, local_laplacian, polybench).
    void set_prefetch(int64_t bytes) {
        prefetch_bytes_ = bytes;
        prefetched_.clear();
    }

    void prefetch(const ExprNode &n, Value *addr) {
        if (prefetch_bytes_ <= 0 || n.op != Op::InputCall) return;
        std::string key = std::to_string(call_) + " " + n.input->name;
        for (const Expr &a : n.args) key += ", " + to_string(a);
        if (!prefetched_.insert(key).second) return;
        // Not inbounds: the line ahead may lie past the buffer, which a prefetch ignores.
        Value *ahead = b_.CreateGEP(b_.getInt8Ty(), addr, f_.i64(prefetch_bytes_));
        b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {ahead->getType()},
                           {ahead, b_.getInt32(0) /* read */, b_.getInt32(3) /* keep in every level */, b_.getInt32(1) /* data */});
    }

    // ---- Rotated loads (rotated_loads.h) ----
    // Before the loop: the groups, and the calls of the loop's body they index.
    void plan_rotation(std::vector<RotatedLoadGroup> groups, const std::vector<const poly::LoopNode *> &calls) {
        groups_ = std::move(groups);
        calls_ = calls;
        loads_ = 0;
        for (size_t g = 0; g < groups_.size(); ++g)
            for (const RotatedLoad &l : groups_[g].loads) rotated_[{l.call, l.node}] = {g, l.offset};
    }
    bool rotating() const { return !groups_.empty(); }
    // The loads of the step emitted since plan_rotation: one per group, and the others.
    int loads_per_step() const { return loads_ + int(groups_.size()); }
    // Masked gathers and scatters emitted (x86 runs each lane by lane, behind a test per lane).
    int masked_lane_accesses() const { return masked_lane_accesses_; }
    // At x = the first step's x (the loop runs at least once): each group's vector of the
    // step "before" it, whose upper kmax - kmin lanes hold elements x + kmin .. x + kmax - 1
    // (from the first step's own load at kmin; the other lanes are never read).
    std::vector<Value *> first_previous(const VScope &first) {
        std::vector<Value *> r;
        for (const RotatedLoadGroup &g : groups_) {
            const RotatedLoad &low = g.loads[g.lowest_load];
            Value *v = contiguous_vector(*low.node, statement_scope(*calls_[size_t(low.call)], first));
            int64_t span = g.highest - g.lowest;
            std::vector<int> mask;
            for (int l = 0; l < w_; ++l) mask.push_back(l >= w_ - span ? int(l - (w_ - span)) : -1);
            r.push_back(b_.CreateShuffleVector(v, mask));
        }
        return r;
    }
    // In the loop's header: the previous step's vectors.
    void previous_phis(const std::vector<Value *> &first, llvm::BasicBlock *from) {
        for (Value *v : first) {
            llvm::PHINode *phi = b_.CreatePHI(v->getType(), 2, "rotated");
            phi->addIncoming(v, from);
            previous_.push_back(phi);
        }
    }
    // At the top of the body: each group's load at kmax, the one vector the step loads.
    void load_highest(const VScope &step) {
        current_.clear();
        for (const RotatedLoadGroup &g : groups_) {
            const RotatedLoad &high = g.loads[g.highest_load];
            current_.push_back(contiguous_vector(*high.node, statement_scope(*calls_[size_t(high.call)], step)));
        }
    }
    // At the end of the body: this step's vectors are the next step's previous ones.
    void close_phis(llvm::BasicBlock *from) {
        for (size_t g = 0; g < previous_.size(); ++g) previous_[g]->addIncoming(current_[g], from);
        current_.clear();
    }

    // The stack slot that holds the current register tile slot's elements of the written array,
    // inside a masked block's reduction loops (FunctionLowering::tile_accumulators); null
    // elsewhere.
    llvm::AllocaInst *accumulator(const StorageView &view) const {
        if (&view != f_.tile_view || f_.tile_slot < 0 || size_t(f_.tile_slot) >= f_.tile_accumulators.size()) return nullptr;
        return f_.tile_accumulators[size_t(f_.tile_slot)];
    }

    Lanes load(const ExprNode &n, const VScope &s) {
        const StorageView &view = view_of_load(n);
        // (register_tile checked that the statement reads the written array only at the element
        // it stores.)
        if (llvm::AllocaInst *acc = accumulator(view)) return varying(f_.from_memory(view.type, b_.CreateLoad(acc->getAllocatedType(), acc)));
        auto rotated = rotated_.find({call_, &n});
        if (rotated != rotated_.end() && !current_.empty()) {
            // Lanes x + k .. x + k + W - 1 of (previous step's x - W + kmax .., this step's x + kmax ..).
            auto [g, k] = rotated->second;
            int64_t first = w_ + k - groups_[g].highest;
            Value *v = current_[g];
            if (first != w_) {
                std::vector<int> mask;
                for (int l = 0; l < w_; ++l) mask.push_back(int(first + l));
                v = b_.CreateShuffleVector(previous_[g], current_[g], mask);
            }
            return varying(f_.from_memory(view.type, v));
        }
        // (Two half vectors around the lanes' elements: past the mask's.)
        if (!mask_)
            if (std::optional<Lanes> h = load_at_half(n, s, view)) return *h;
        // (Masked steps too: the interior's whole vector lies within the clamp, and the edge's
        // lanes are clamped into it.)
        if (std::optional<Lanes> l = load_within_clamp(n, s, view)) return *l;
        return load_lanes(n, s, view);
    }

    // A load at clamp(x, lo, hi) along the loop, or at clamp(2x + k, lo, hi), the others uniform
    // (a repeat_edge boundary, read as it is or downsampled): in the interior every lane's
    // coordinate lies in [lo, hi], where the load is one contiguous vector, or every other element
    // of two; a branch takes it there and gathers only at the edges. Nothing when the load is not
    // of that form.
    std::optional<Lanes> load_within_clamp(const ExprNode &n, const VScope &s, const StorageView &view) {
        if (n.args.empty()) return std::nullopt;
        const Expr &x = n.args[0];
        if (x->op != Op::Min || x->args[0]->op != Op::Max || !x.type().is_int()) return std::nullopt;
        const Expr &inner = x->args[0]->args[0], &lo_e = x->args[0]->args[1], &hi_e = x->args[1];
        bool saved = f_.index_mode;
        f_.index_mode = false;  // below a min or max the DSL's int32 may wrap
        Lanes v = expr(inner, s), lo = expr(lo_e, s), hi = expr(hi_e, s);
        f_.index_mode = saved;
        std::optional<std::vector<Value *>> rest = uniform_outer_coordinates(n, s, view);
        if (v.kind != Lanes::Kind::Affine || (v.step != 1 && v.step != 2) || lo.kind != Lanes::Kind::Uniform ||
            hi.kind != Lanes::Kind::Uniform || !rest)
            return std::nullopt;
        std::vector<Value *> &coords = *rest;
        // x0 >= lo and x0 + step (W - 1) <= hi, in int64 (no wrap).
        Value *x0 = b_.CreateSExt(v.scalar, b_.getInt64Ty());
        Value *x_last = b_.CreateAdd(x0, f_.i64(v.step * (w_ - 1)));
        Value *lo64 = b_.CreateSExt(lo.scalar, b_.getInt64Ty()), *hi64 = b_.CreateSExt(hi.scalar, b_.getInt64Ty());
        Value *inside = b_.CreateAnd(b_.CreateICmpSGE(x0, lo64), b_.CreateICmpSLE(x_last, hi64));
        // Where every lane lies on one side of the clamp (a margin past the edge that a coarser
        // level's reads reach: interpolate computes its finest levels 2^9 pixels beyond the
        // image), the lanes all read the edge's element: one load, broadcast, not W lane loads.
        auto edge_element = [&](Value *at) {
            std::vector<Value *> edge = coords;
            edge[0] = at;
            return uniform(f_.load_at(view, edge));
        };
        std::vector<Value *> at_lo = coords;
        at_lo[0] = lo.scalar;
        return two_way(
            inside, "clamp.interior", "clamp.edge",
            [&] {
                std::vector<Value *> first = coords;
                first[0] = v.scalar;
                if (v.step == 2) return varying(f_.from_memory(view.type, every_other_element(view, first)));
                Type t = view.type;
                llvm::LoadInst *whole = b_.CreateAlignedLoad(llvm::FixedVectorType::get(f_.storage_type(t), unsigned(w_)),
                                                             f_.address(view, first), llvm::Align(uint64_t(std::max(1, t.bytes()))));
                f_.tag_access(whole, view);
                return varying(f_.from_memory(t, whole));
            },
            [&] {
                return two_way(
                    b_.CreateICmpSLT(x_last, lo64), "clamp.below", "clamp.not_below", [&] { return edge_element(lo.scalar); },
                    [&] {
                        return two_way(
                            b_.CreateICmpSGT(x0, hi64), "clamp.above", "clamp.across", [&] { return edge_element(hi.scalar); },
                            [&] {
                                if (v.step == 1 && f_.options.vector_bits >= 512)
                                    return varying(across_clamp(view, at_lo, x0, lo64, hi64, edge_element(lo.scalar).scalar,
                                                                edge_element(hi.scalar).scalar));
                                return varying(to_vector(load_lanes(n, s, view)));
                            });
                    });
            });
    }

    // Lanes x0 .. x0 + W - 1 of a row read at clamp(x, lo, hi), where the clamp cuts through
    // the vector (a step across the edge, or a masked step whose lanes run past it): the lanes
    // inside (and in the mask) in one masked load, the others the edge's elements `lo_value` and
    // `hi_value`. Not W lane loads: a masked gather is lane by lane on x86, each lane behind a
    // test. (`at_lo`: the coordinates of the element at lo.)
    Value *across_clamp(const StorageView &view, const std::vector<Value *> &at_lo, Value *x0, Value *lo, Value *hi,
                        Value *lo_value, Value *hi_value) {
        Value *x = b_.CreateAdd(b_.CreateVectorSplat(unsigned(w_), x0), f_.lane_numbers(w_));
        Value *below = b_.CreateICmpSLT(x, b_.CreateVectorSplat(unsigned(w_), lo));
        Value *above = b_.CreateICmpSGT(x, b_.CreateVectorSplat(unsigned(w_), hi));
        Value *inside = b_.CreateNot(b_.CreateOr(below, above));
        if (mask_) inside = b_.CreateAnd(inside, mask_);
        // Lane 0's address from the edge's (x0 may lie before the buffer: no inbounds).
        llvm::Type *st = f_.storage_type(view.type);
        Value *at = b_.CreateGEP(st, f_.address(view, at_lo), b_.CreateSub(x0, lo));
        llvm::Type *vt = llvm::FixedVectorType::get(st, unsigned(w_));
        llvm::CallInst *l = b_.CreateMaskedLoad(vt, at, llvm::Align(uint64_t(std::max(1, view.type.bytes()))), inside,
                                                llvm::Constant::getNullValue(vt));
        f_.tag_access(l, view);
        Value *loaded = f_.from_memory(view.type, l);
        return b_.CreateSelect(below, b_.CreateVectorSplat(unsigned(w_), lo_value),
                               b_.CreateSelect(above, b_.CreateVectorSplat(unsigned(w_), hi_value), loaded));
    }

    // Every other element from `coords` on along dimension 0 (a Bayer mosaic's deinterleaving, a
    // downsample by 2): two loads and a shuffle, not W lane loads. The lanes need elements x0,
    // x0 + 2, ..., x0 + 2W - 2; A holds x0 .. x0 + W - 1 and B x0 + W - 1 .. x0 + 2W - 2, so that
    // both stay within what the lanes read (dimension 0 is dense in every buffer).
    Value *every_other_element(const StorageView &view, const std::vector<Value *> &coords) {
        Type t = view.type;
        llvm::Type *st = f_.storage_type(t);
        llvm::Type *vt = llvm::FixedVectorType::get(st, unsigned(w_));
        llvm::Align align(uint64_t(std::max(1, t.bytes())));
        Value *at = f_.address(view, coords);
        llvm::LoadInst *a = b_.CreateAlignedLoad(vt, at, align);
        llvm::LoadInst *bl = b_.CreateAlignedLoad(vt, b_.CreateInBoundsGEP(st, at, f_.i64(w_ - 1)), align);
        f_.tag_access(a, view);
        f_.tag_access(bl, view);
        std::vector<int> mask;
        for (int l = 0; l < w_; ++l) mask.push_back(2 * l < w_ ? 2 * l : 2 * l + 1);
        return b_.CreateShuffleVector(a, bl, mask);
    }

    // A load's lanes from its coordinates: one uniform load, a contiguous vector, every other
    // element, or a gather.
    Lanes load_lanes(const ExprNode &n, const VScope &s, const StorageView &view) {
        ++loads_;  // (uniform ones too: a step's loads, roughly)
        std::vector<Lanes> c;
        bool uniform_all = true;
        bool saved = f_.index_mode;
        f_.index_mode = !view.scratch;  // local coordinates wrap (Storage::Kind::Scratch)
        for (const Expr &a : n.args) {
            c.push_back(expr(a, s));
            uniform_all &= c.back().kind == Lanes::Kind::Uniform;
        }
        f_.index_mode = saved;
        Type t = view.type;
        if (uniform_all) {
            std::vector<Value *> coords;
            for (const Lanes &l : c) coords.push_back(l.scalar);
            return uniform(f_.load_at(view, coords));
        }
        if (contiguous(c)) return varying(f_.from_memory(t, contiguous_vector(n, s)));
        if (strided_by_two(c) && !mask_) {  // (two whole vectors: past the mask's lanes)
            std::vector<Value *> coords;
            for (const Lanes &l : c) coords.push_back(l.scalar);
            return varying(f_.from_memory(t, every_other_element(view, coords)));
        }
        if (Value *t = byte_table_lookup(n, c, view)) return varying(t);
        if (Value *g = gather(c, view)) return varying(g);
        // Gather, lane by lane (coordinates other than int32).
        std::vector<Value *> cv;
        for (const Lanes &l : c) cv.push_back(to_vector(l));
        if (mask_) return varying(f_.from_memory(t, masked_gather(lane_addresses(cv, view), view)));
        Value *r = llvm::PoisonValue::get(f_.value_type(t, w_));
        for (int i = 0; i < w_; ++i) {
            std::vector<Value *> coords;
            for (Value *v : cv) coords.push_back(b_.CreateExtractElement(v, uint64_t(i)));
            r = b_.CreateInsertElement(r, f_.load_at(view, coords), uint64_t(i));
        }
        return varying(r);
    }

    // A lookup of 64 lanes in a table of bytes (FunctionLowering::byte_table_entries) with
    // AVX-512 VBMI's vpermi2b, which picks each lane's byte by the low 7 bits of its index
    // from a pair of 64-byte registers: one permute per 128 entries of the table, each lane then
    // taking the result of its block (index / 128) in a chain of blends. camera_pipe's curve
    // (1,024 entries): 8 permutes and 7 blends per 64 lanes, where a load per lane took 64 loads,
    // extracts and inserts. The lanes' indices lie in the table (its box holds every read);
    // a last block shorter than 128 entries is loaded masked, never past the table's end.
    Value *byte_table_lookup(const ExprNode &n, const std::vector<Lanes> &c, const StorageView &view) {
        if (!f_.options.byte_table_permutes || w_ != 64 || c.size() != 1 || c[0].kind == Lanes::Kind::Uniform) return nullptr;
        const int64_t entries = f_.byte_table_entries(n);
        if (entries == 0) return nullptr;
        Value *x = to_vector(c[0]);
        if (!llvm::cast<llvm::VectorType>(x->getType())->getElementType()->isIntegerTy(32)) return nullptr;
        llvm::Type *i8 = b_.getInt8Ty();
        llvm::Type *bytes = llvm::FixedVectorType::get(i8, 64);
        Value *lo = b_.CreateTrunc(view.min[0], b_.getInt32Ty(), "", false, true);
        Value *rel = b_.CreateSub(x, b_.CreateVectorSplat(64, lo));
        Value *low = b_.CreateTrunc(rel, bytes);                                     // bits 0-6 pick the byte
        Value *block = b_.CreateTrunc(b_.CreateLShr(rel, b_.CreateVectorSplat(64, b_.getInt32(7))), bytes);
        Value *at = f_.address(view, {lo});
        llvm::Function *permute = llvm::Intrinsic::getDeclaration(&f_.module, llvm::Intrinsic::x86_avx512_vpermi2var_qi_512);
        // The 64 bytes at `offset`, those past the table's end masked off (zero).
        auto half = [&](int64_t offset) -> Value * {
            Value *ptr = b_.CreateInBoundsGEP(i8, at, f_.i64(offset));
            if (offset + 64 <= entries) {
                llvm::LoadInst *l = b_.CreateAlignedLoad(bytes, ptr, llvm::Align(1));
                f_.tag_access(l, view);
                return l;
            }
            if (offset >= entries) return llvm::Constant::getNullValue(bytes);
            std::vector<llvm::Constant *> mask;
            for (int64_t k = 0; k < 64; ++k) mask.push_back(b_.getInt1(offset + k < entries));
            return b_.CreateMaskedLoad(bytes, ptr, llvm::Align(1), llvm::ConstantVector::get(mask), llvm::Constant::getNullValue(bytes));
        };
        Value *r = nullptr;
        for (int64_t k = 0; 128 * k < entries; ++k) {
            Value *found = b_.CreateCall(permute, {half(128 * k), low, half(128 * k + 64)});
            r = r ? b_.CreateSelect(b_.CreateICmpEQ(block, b_.CreateVectorSplat(64, b_.getInt8(uint8_t(k)))), found, r) : found;
        }
        return f_.from_memory(view.type, r);
    }

    // A gather (a lookup table, curve(corrected(x, y, c)) in camera_pipe; the bilateral grid's
    // trilinear reads): the address with the varying dimensions at their mins once, and each
    // lane's offset from it from its int32 coordinates minus those mins, taken in int32 lanes.
    // Each difference lies in [0, 2^32) (both are int32, the coordinate within the region), so
    // its zero extension is exact; it is scaled by the dimension's stride in int64. Computed per
    // lane in int64, as address() does, LLVM's SLP vectorizer turned the coordinates into 64-bit
    // vectors (AVX-512 zmm) and extracted every lane from them: camera_pipe's table lookups took
    // twice the time of the loads themselves, and the bilateral grid's slicing 64-72 ms against
    // 45 ms now.
    Value *gather(const std::vector<Lanes> &c, const StorageView &view) {
        if (c.empty() || c[0].kind == Lanes::Kind::Uniform) return nullptr;
        // Each varying dimension's int32 lanes minus its min; the uniform ones in the base.
        std::vector<Value *> base_coords, rel(c.size(), nullptr);
        for (size_t d = 0; d < c.size(); ++d) {
            if (c[d].kind == Lanes::Kind::Uniform) {
                base_coords.push_back(c[d].scalar);
                continue;
            }
            Value *x = to_vector(c[d]);
            if (!llvm::cast<llvm::VectorType>(x->getType())->getElementType()->isIntegerTy(32)) return nullptr;
            Value *lo = b_.CreateTrunc(view.min[d], b_.getInt32Ty(), "", false, true);  // (the region is int32)
            base_coords.push_back(lo);
            rel[d] = b_.CreateSub(x, b_.CreateVectorSplat(unsigned(w_), lo));
        }
        Value *at = f_.address(view, base_coords);  // the varying dimensions at their mins
        llvm::Type *st = f_.storage_type(view.type);
        llvm::Align align(uint64_t(std::max(1, view.type.bytes())));
        Value *r = llvm::PoisonValue::get(llvm::FixedVectorType::get(st, unsigned(w_)));
        Value *ptrs = llvm::PoisonValue::get(llvm::FixedVectorType::get(b_.getPtrTy(), unsigned(w_)));
        // With several varying dimensions, the lanes' offsets in one vector of int64 (a vector
        // multiply and add per dimension), extracted once per lane, not per lane and dimension:
        // bilateral_grid's slicing gathers at (x / 8, z) of its grid, 35 scalar multiplies a step
        // before, and ran 12.7 -> 12.1 ms. (A hardware gather of those offsets, LLVM's
        // masked.gather, ran 13.2 ms: not used.)
        int varying_dims = 0;
        for (Value *r : rel) varying_dims += r != nullptr;
        Value *offsets = nullptr;
        if (varying_dims > 1) {
            llvm::Type *i64v = llvm::FixedVectorType::get(b_.getInt64Ty(), unsigned(w_));
            for (size_t d = 0; d < c.size(); ++d) {
                if (!rel[d]) continue;
                Value *term = b_.CreateZExt(rel[d], i64v);
                if (d > 0) term = b_.CreateMul(term, b_.CreateVectorSplat(unsigned(w_), view.stride[d]));
                offsets = offsets ? b_.CreateAdd(offsets, term) : term;
            }
        }
        for (int i = 0; i < w_; ++i) {
            Value *offset = offsets ? b_.CreateExtractElement(offsets, uint64_t(i)) : nullptr;
            for (size_t d = 0; d < c.size() && !offsets; ++d) {
                if (!rel[d]) continue;
                Value *term = b_.CreateZExt(b_.CreateExtractElement(rel[d], uint64_t(i)), b_.getInt64Ty());
                if (d > 0) term = b_.CreateMul(term, view.stride[d]);
                offset = offset ? b_.CreateAdd(offset, term) : term;
            }
            if (mask_) {
                ptrs = b_.CreateInsertElement(ptrs, b_.CreateGEP(st, at, offset), uint64_t(i));
                continue;
            }
            llvm::LoadInst *l = b_.CreateAlignedLoad(st, b_.CreateInBoundsGEP(st, at, offset), align);
            if (f_.access_group) l->setMetadata(llvm::LLVMContext::MD_access_group, f_.access_group);
            f_.tag_access(l, view);
            r = b_.CreateInsertElement(r, l, uint64_t(i));
        }
        return f_.from_memory(view.type, mask_ ? masked_gather(ptrs, view) : r);
    }

    // Each lane's element address (<W x ptr>), from its coordinates `cv` (vectors of lanes).
    Value *lane_addresses(const std::vector<Value *> &cv, const StorageView &view) {
        Value *ptrs = llvm::PoisonValue::get(llvm::FixedVectorType::get(b_.getPtrTy(), unsigned(w_)));
        for (int i = 0; i < w_; ++i) {
            std::vector<Value *> coords;
            for (Value *x : cv) coords.push_back(b_.CreateExtractElement(x, uint64_t(i)));
            ptrs = b_.CreateInsertElement(ptrs, f_.address(view, coords), uint64_t(i));
        }
        return ptrs;
    }

    // The lanes of the mask loaded from `ptrs` (<W x ptr>), the others zero.
    Value *masked_gather(Value *ptrs, const StorageView &view) {
        ++masked_lane_accesses_;
        llvm::Type *vt = llvm::FixedVectorType::get(f_.storage_type(view.type), unsigned(w_));
        llvm::CallInst *g = b_.CreateMaskedGather(vt, ptrs, llvm::Align(uint64_t(std::max(1, view.type.bytes()))), mask_,
                                                  llvm::Constant::getNullValue(vt));
        f_.tag_access(g, view);
        return g;
    }

    // The int32 coordinates of int64 lanes (they fit: the regions are checked at entry).
    Lanes narrow(Lanes l) {
        llvm::Type *i32 = b_.getInt32Ty();
        if (l.scalar) l.scalar = b_.CreateTrunc(l.scalar, i32, "", false, true);
        if (l.vector) l.vector = b_.CreateTrunc(l.vector, shaped(i32, l.vector), "", false, true);
        return l;
    }

    // One statement instance for all lanes. `aligned_streaming`: the contiguous output store of
    // this step is aligned to the vector size and may be non-temporal.
    // The statement's variables bound to its call's coordinates: int64 in the loop nest, int32
    // in the statement (as in FunctionLowering::call).
    VScope statement_scope(const poly::LoopNode &n, const VScope &outer) {
        const poly::ExecStatement &e = f_.p.statements[size_t(n.statement)];
        VScope s = outer;
        for (size_t i = 0; i < e.dims.size(); ++i) s[e.dims[i]] = narrow(expr(n.args[i], outer));
        return s;
    }

    void call(const poly::LoopNode &n, const VScope &outer, bool aligned_streaming) {
        const poly::ExecStatement &e = f_.p.statements[size_t(n.statement)];
        const poly::Statement &ms = f_.m.statements[size_t(e.statement)];
        call_ = int(std::find(calls_.begin(), calls_.end(), &n) - calls_.begin());
        VScope s = statement_scope(n, outer);
        const StorageView &target = f_.view_of(ms.func);
        f_.index_mode = !target.scratch;  // local coordinates wrap (Storage::Kind::Scratch)
        std::vector<Lanes> c;
        for (const Expr &x : e.store) c.push_back(expr(x, s));
        f_.index_mode = false;
        Lanes v = expr(e.value, s);
        const StorageView &view = target;
        Type t = view.type;
        if (llvm::AllocaInst *acc = accumulator(view)) {  // (at the slot's elements: contiguous)
            b_.CreateStore(f_.to_memory(t, to_vector(v)), acc);
            return;
        }
        if (contiguous(c) && mask_) {
            std::vector<Value *> coords;
            for (const Lanes &l : c) coords.push_back(l.scalar);
            llvm::CallInst *st = b_.CreateMaskedStore(f_.to_memory(t, to_vector(v)), f_.address(view, coords),
                                                      llvm::Align(uint64_t(std::max(1, t.bytes()))), mask_);
            f_.tag_access(st, view);
            return;
        }
        if (contiguous(c)) {
            std::vector<Value *> coords;
            for (const Lanes &l : c) coords.push_back(l.scalar);
            Value *addr = f_.address(view, coords);
            bool streaming = aligned_streaming && view.output;
            uint64_t align = streaming ? uint64_t(w_ * std::max(1, t.bytes())) : uint64_t(std::max(1, t.bytes()));
            llvm::StoreInst *st = b_.CreateAlignedStore(f_.to_memory(t, to_vector(v)), addr, llvm::Align(align));
            f_.tag_access(st, view);
            if (streaming) {
                f_.mark_nontemporal(st);
                f_.streamed = true;
            }
            return;
        }
        // Scatter, lane by lane (in lane order, like the scalar loop).
        std::vector<Value *> cv;
        for (const Lanes &l : c) cv.push_back(to_vector(l));
        Value *vv = to_vector(v);
        if (mask_) {
            // (A masked scatter writes overlapping lanes in lane order too.)
            ++masked_lane_accesses_;
            llvm::CallInst *st = b_.CreateMaskedScatter(f_.to_memory(t, vv), lane_addresses(cv, view),
                                                        llvm::Align(uint64_t(std::max(1, t.bytes()))), mask_);
            f_.tag_access(st, view);
            return;
        }
        for (int i = 0; i < w_; ++i) {
            std::vector<Value *> coords;
            for (Value *x : cv) coords.push_back(b_.CreateExtractElement(x, uint64_t(i)));
            f_.store(view, coords, b_.CreateExtractElement(vv, uint64_t(i)), false);
        }
    }

    // The address of lane 0's element that `n` (a statement under the vector loop) stores at the
    // step `outer`, where its store is contiguous along the loop; null otherwise.
    Value *contiguous_store_address(const poly::LoopNode &n, const VScope &outer) {
        const poly::ExecStatement &e = f_.p.statements[size_t(n.statement)];
        const StorageView &view = f_.view_of(f_.m.statements[size_t(e.statement)].func);
        VScope s = statement_scope(n, outer);
        f_.index_mode = !view.scratch;
        std::vector<Lanes> c;
        for (const Expr &x : e.store) c.push_back(expr(x, s));
        f_.index_mode = false;
        if (!contiguous(c)) return nullptr;
        std::vector<Value *> coords;
        for (const Lanes &l : c) coords.push_back(l.scalar);
        return f_.address(view, coords);
    }

private:
    FunctionLowering &f_;
    llvm::IRBuilder<> &b_;
    int w_;
    std::vector<RotatedLoadGroup> groups_;
    std::vector<const poly::LoopNode *> calls_;
    std::map<std::pair<int, const ExprNode *>, std::pair<size_t, int64_t>> rotated_;  // → group, offset
    std::vector<llvm::PHINode *> previous_;
    std::vector<Value *> current_;  // set while the loop's body is emitted
    int call_ = -1;                 // the call being emitted
    int loads_ = 0;
    int masked_lane_accesses_ = 0;
    Value *mask_ = nullptr;  // set_mask
    int64_t prefetch_bytes_ = 0;        // set_prefetch
    std::set<std::string> prefetched_;  // this step's prefetches: call, input and coordinates
};

} // namespace tessera::codegen
