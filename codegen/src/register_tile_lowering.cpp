// The loops below a register_tile mark (poly/register_tiling.h), emitted twice:
//
//   if (row loop runs `rows` iterations) {
//     if (the whole block: 32 elements) {
//       for k ...                    // the loops between the mark and the rows, as they are
//         row lo + 0: each vector step, one after another
//         ...
//         row lo + rows - 1: ...     // each row's accesses to the written array in a scope of
//     } else {                       // its own
//       masked steps, as many as the partial block needs (28 of 32: two steps of 16 lanes,
//       the second's last 4 lanes masked off), the block in registers across the k loops
//     }
//   } else {                         // partial rows: the tiles at the edges
//     the loops as they are
//   }
//
// In the full tiles the written block's addresses do not change in the k loop and provably
// overlap neither one another nor the operands, so LLVM's scalar promotion keeps the block in
// registers across the k loop. A masked block's accesses are masked intrinsics, which LLVM does
// not promote: its elements are loaded into stack slots before the k loops and stored after
// them, and the slots become registers.
#include <llvm/IR/MDBuilder.h>

#include <set>

#include <tessera/structural_equality.h>

#include "function_lowering.h"

namespace tessera::codegen {

using llvm::Value;

bool FunctionLowering::register_tile(const poly::LoopNode &mark, const poly::Mark &tile, Scope &s) {
    // The shape: loops -> row loop -> "vector" mark -> vector loop -> one statement.
    std::vector<const poly::LoopNode *> outer;
    const poly::LoopNode *n = mark.body.get();
    while (n && n->kind == poly::LoopNode::Kind::For && n->body && n->body->kind == poly::LoopNode::Kind::For) {
        outer.push_back(n);
        n = n->body.get();
    }
    const poly::LoopNode *rows = n;
    if (outer.empty() || !rows || rows->kind != poly::LoopNode::Kind::For || rows->step != 1 || rows->parallel ||
        !rows->body || rows->body->kind != poly::LoopNode::Kind::Mark)
        return false;
    const poly::LoopNode *vec = rows->body->body.get();
    if (!vec || vec->kind != poly::LoopNode::Kind::For || !vec->vectorize || vec->step != 1) return false;
    std::vector<const poly::LoopNode *> calls;
    if (!body_calls(vec->body, calls) || calls.size() != 1) return false;
    for (const poly::LoopNode *l : outer)
        if (l->parallel || l->vectorize) return false;
    // The rows' and the block's bounds must not change inside the tile.
    auto varies = [&](const Expr &e, bool with_rows) {
        for (const std::string &v : ir::free_vars(e)) {
            if (with_rows && v == rows->var) return true;
            for (const poly::LoopNode *l : outer)
                if (v == l->var) return true;
        }
        return false;
    };
    if (varies(rows->min, false) || varies(rows->max, false) || varies(vec->min, true) || varies(vec->max, true)) return false;

    const poly::ExecStatement &e = p.statements[size_t(calls[0]->statement)];
    const StorageView &written = view_of(m.statements[size_t(e.statement)].func);
    // One alias scope per vector step of each row (the block's steps at the vector width that
    // vector_for will use; none if it will not split the block into steps).
    int steps = 0;
    if (int w = vector_lanes(*vec); w >= 2 && tile.block % w == 0 && tile.block / w <= 8) steps = tile.block / w;
    if (steps > 0 && tile_scopes.size() != size_t(tile.rows * steps)) {
        llvm::MDBuilder mdb(ctx);
        llvm::MDNode *domain = mdb.createAnonymousAliasScopeDomain("tessera register tile");
        tile_scopes.clear();
        for (long k = 0; k < tile.rows * steps; ++k) tile_scopes.push_back(mdb.createAnonymousAliasScope(domain));
    }

    Value *row_lo = expr(rows->min, s), *row_hi = expr(rows->max, s);
    Value *lo = expr(vec->min, s), *hi = expr(vec->max, s);
    Value *count = b.CreateAdd(b.CreateSub(hi, lo), i64(1));
    // The fast path needs every row.
    Value *full = b.CreateICmpEQ(b.CreateSub(row_hi, row_lo), i64(tile.rows - 1));
    // The block may be partial (the last block of a row whose width is no multiple of the
    // block: a 56-column image in blocks of 32, a ResNet layer's rows of 28, 14 or 7 columns,
    // where every block is partial). Where the block is vector steps, a partial block runs
    // ceil(count / W) of them, masked (one code path per number of steps: two for a block of
    // 32 floats with AVX-512), each row's elements in registers across the loops around: conv2d
    // 28 x 28 x 128 -> 128 took 10.6 ms through the edge's loops (a tenth of its speed at
    // 32 x 32), 1.0 ms so. Without steps, a partial block goes the edge's way.
    if (steps == 0) full = b.CreateAnd(full, b.CreateICmpEQ(count, i64(tile.block)));
    llvm::BasicBlock *fast = llvm::BasicBlock::Create(ctx, "register_tile", function);
    llvm::BasicBlock *edge = llvm::BasicBlock::Create(ctx, "register_tile_edge", function);
    llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx, "register_tile_done", function);
    b.CreateCondBr(full, fast, edge);

    b.SetInsertPoint(edge);
    node(mark.body, s);
    b.CreateBr(done);

    b.SetInsertPoint(fast);
    // The loops around, then each row's block in registers.
    std::function<void(size_t)> emit = [&](size_t k) {
        if (k < outer.size()) {
            const poly::LoopNode &l = *outer[k];
            serial_for(l, s, expr(l.min, s), expr(l.max, s), false, false, [&](Value *i) {
                Value *saved = s.vars.count(l.var) ? s.vars[l.var] : nullptr;
                s.vars[l.var] = i;
                emit(k + 1);
                if (saved) s.vars[l.var] = saved;
                else s.vars.erase(l.var);
            });
            return;
        }
        for (long r = 0; r < tile.rows; ++r) {
            Scope row = s;
            row.vars[rows->var] = b.CreateAdd(row_lo, i64(r), "", false, true);
            tile_view = steps > 0 ? &written : nullptr;
            tile_slot = steps > 0 ? int(r) * steps : -1;
            if (!vector_for(*vec, row, lo, hi, tile.block)) {
                tile_view = nullptr;  // no steps: no slots
                serial_for(*vec, row, lo, hi, true);
            }
            tile_view = nullptr;
            tile_slot = -1;
        }
    };
    // The whole block (count == block, the common case: one test per tile), else the masked
    // steps it needs.
    llvm::BasicBlock *whole = llvm::BasicBlock::Create(ctx, "register_tile_block", function);
    llvm::BasicBlock *partial = llvm::BasicBlock::Create(ctx, "register_tile_partial", function);
    b.CreateCondBr(b.CreateICmpEQ(count, i64(tile.block)), whole, partial);
    b.SetInsertPoint(whole);
    emit(0);
    b.CreateBr(done);
    b.SetInsertPoint(partial);
    if (steps > 0) {
        const int64_t w = tile.block / steps;
        Value *needed = b.CreateSDiv(b.CreateAdd(count, i64(w - 1)), i64(w));  // (1 <= count < block)
        for (int k = 1; k <= steps; ++k) {
            llvm::BasicBlock *these = llvm::BasicBlock::Create(ctx, "register_tile_masked", function);
            llvm::BasicBlock *next = llvm::BasicBlock::Create(ctx, "register_tile_masked_next", function);
            b.CreateCondBr(b.CreateICmpSLE(needed, i64(k)), these, next);
            b.SetInsertPoint(these);
            masked_block(outer, *rows, *vec, *calls[0], tile, steps, k, row_lo, lo, count, s);
            b.CreateBr(done);
            b.SetInsertPoint(next);
        }
    }
    b.CreateBr(done);
    b.SetInsertPoint(done);
    return true;
}

void FunctionLowering::masked_block(const std::vector<const poly::LoopNode *> &outer, const poly::LoopNode &rows,
                                    const poly::LoopNode &vec, const poly::LoopNode &call, const poly::Mark &tile, int steps,
                                    int active, Value *row_lo, Value *lo, Value *count, Scope &s) {
    const poly::ExecStatement &e = p.statements[size_t(call.statement)];
    const StorageView &written = view_of(m.statements[size_t(e.statement)].func);
    const int w = int(tile.block / steps);
    // Step j's lanes hold the block's elements j w .. j w + w - 1, those below `count`: all of
    // them but in the last step (count > (active - 1) w), whose accesses alone are masked (conv2d
    // 56 x 56 x 64 -> 64, a block of 24 in two steps: 5% slower with both masked).
    std::vector<Value *> masks(size_t(active), nullptr);
    Value *width = b.CreateVectorSplat(unsigned(w), count);
    std::vector<llvm::Constant *> lane;
    for (int l = 0; l < w; ++l) lane.push_back(llvm::ConstantInt::get(b.getInt64Ty(), uint64_t((active - 1) * w + l)));
    masks.back() = b.CreateICmpSLT(llvm::ConstantVector::get(lane), width);
    // The reduction loops: the innermost loops around whose variables the stored element does
    // not involve (conv2d's input channel and window, inside the rows of the image's tile).
    std::set<std::string> store_loops;
    for (size_t i = 0; i < e.dims.size(); ++i) {
        bool stored = false;
        for (const Expr &x : e.store)
            for (const std::string &v : ir::free_vars(x)) stored = stored || v == e.dims[i];
        if (stored)
            for (const std::string &v : ir::free_vars(call.args[i])) store_loops.insert(v);
    }
    size_t reduction_from = outer.size();
    while (reduction_from > 0 && !store_loops.count(outer[reduction_from - 1]->var)) --reduction_from;
    // The slots stand for the written array only where the statement reads it at the element it
    // stores, and nowhere else (an update f(x) = f(x) + ...).
    bool reads_at_store = true;
    ir::visit(e.value, [&](const Expr &x) {
        if (x->op == Op::FuncCall && &view_of(x->func_ptr) == &written) {
            bool same = x->args.size() == e.store.size();
            for (size_t q = 0; same && q < e.store.size(); ++q) same = ir::structurally_equal(x->args[q], e.store[q]);
            reads_at_store = reads_at_store && same;
        }
        return true;
    });
    llvm::Type *slot_type = llvm::FixedVectorType::get(storage_type(written.type), unsigned(w));
    llvm::Align align(uint64_t(std::max(1, written.type.bytes())));
    tile_masks = masks;
    std::function<void(size_t, bool)> loops = [&](size_t k, bool in_slots) {
        if (k == reduction_from && k < outer.size() && !in_slots && reads_at_store) {
            // Each slot's elements' address, with the reduction loops' variables at 0 (the
            // stored element does not involve them): null where the store is not contiguous.
            std::vector<Value *> at;
            for (long r = 0; r < tile.rows; ++r)
                for (int j = 0; j < active; ++j) {
                    Scope row = s;
                    row.vars[rows.var] = b.CreateAdd(row_lo, i64(r), "", false, true);
                    for (size_t q = k; q < outer.size(); ++q) row.vars[outer[q]->var] = i64(0);
                    at.push_back(contiguous_store_address(vec, row, b.CreateAdd(lo, i64(j * w), "", false, true)));
                }
            if (std::find(at.begin(), at.end(), nullptr) == at.end()) {
                llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
                std::vector<llvm::AllocaInst *> slots;
                tile_view = &written;
                // (Slots per row as the full block has, the masked block's first `active` used.)
                slots.assign(size_t(tile.rows * steps), nullptr);
                for (size_t k_at = 0; k_at < at.size(); ++k_at) {
                    size_t slot = k_at / size_t(active) * size_t(steps) + k_at % size_t(active);
                    slots[slot] = entry.CreateAlloca(slot_type, nullptr, "tile_slot");
                    tile_slot = int(slot);
                    Value *mask = masks[k_at % size_t(active)];
                    llvm::Instruction *l = mask ? static_cast<llvm::Instruction *>(b.CreateMaskedLoad(
                                                      slot_type, at[k_at], align, mask, llvm::Constant::getNullValue(slot_type)))
                                                : b.CreateAlignedLoad(slot_type, at[k_at], align);
                    tag_access(l, written);
                    b.CreateStore(l, slots[slot]);
                }
                tile_view = nullptr;
                tile_slot = -1;
                tile_accumulators = slots;
                loops(k, true);
                tile_accumulators.clear();
                tile_view = &written;
                for (size_t k_at = 0; k_at < at.size(); ++k_at) {
                    size_t slot = k_at / size_t(active) * size_t(steps) + k_at % size_t(active);
                    tile_slot = int(slot);
                    Value *mask = masks[k_at % size_t(active)];
                    Value *v = b.CreateLoad(slot_type, slots[slot]);
                    llvm::Instruction *st = mask ? static_cast<llvm::Instruction *>(b.CreateMaskedStore(v, at[k_at], align, mask))
                                                 : b.CreateAlignedStore(v, at[k_at], align);
                    tag_access(st, written);
                }
                tile_view = nullptr;
                tile_slot = -1;
                return;
            }
        }
        if (k < outer.size()) {
            // LLVM may unroll the loops around, as around a whole block: conv2d's 3 x 3 window
            // loops, kept loops, ran its masked blocks 30% slower (28 x 28 x 128 -> 128: 1.07
            // ms, 0.82 unrolled; 6 more milliseconds of LLVM; pb_3mm's LLVM time the same).
            const poly::LoopNode &l = *outer[k];
            serial_for(l, s, expr(l.min, s), expr(l.max, s), false, false, [&](Value *i) {
                Value *saved = s.vars.count(l.var) ? s.vars[l.var] : nullptr;
                s.vars[l.var] = i;
                loops(k + 1, in_slots);
                if (saved) s.vars[l.var] = saved;
                else s.vars.erase(l.var);
            });
            return;
        }
        for (long r = 0; r < tile.rows; ++r) {
            Scope row = s;
            row.vars[rows.var] = b.CreateAdd(row_lo, i64(r), "", false, true);
            tile_view = &written;
            tile_slot = int(r) * steps;
            bool lowered = vector_for(vec, row, lo, b.CreateAdd(lo, i64(active * w - 1)), active * w);
            tile_view = nullptr;
            tile_slot = -1;
            if (!lowered) internal_error("codegen: a register tile's masked block was not lowered in vector steps");
        }
    };
    loops(0, false);
    tile_masks.clear();
}

} // namespace tessera::codegen
