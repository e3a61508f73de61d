// The loops below a register_tile mark (poly/register_tiling.h), emitted twice:
//
//   if (row loop runs `rows` iterations) {
//     for the whole block (32), or the binary digits of a partial one jammed (16 and 8 of 24),
//     or else one digit after another {
//       for k ...                    // the loops between the mark and the rows, as they are
//         row lo + 0: each sub-block, one vector step after another
//         ...
//         row lo + rows - 1: ...     // each row's accesses to the written array in a scope of
//     }                              // its own
//   } else {                         // partial rows, or a count no multiple of the
//     the loops as they are          // narrowest part: the tiles at the edges
//   }
//
// In the full tiles the written block's addresses do not change in the k loop and provably
// overlap neither one another nor the operands, so LLVM's scalar promotion keeps the block in
// registers across the k loop.
#include <llvm/IR/MDBuilder.h>

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
    // The fast path needs every row; the block may be partial (the last block of a row whose
    // width is no multiple of the block: a 56-column image in blocks of 32). A partial block
    // runs as sub-blocks of the binary digits of its width, each in registers across the
    // loops around (24 = 16 + 8); sub-blocks of one block touch different elements, so running
    // the loops around once per sub-block is legal (the block's loop carries nothing). Parts
    // go down to half a vector (8 floats with AVX-512); each is one more copy of the loops
    // around, LLVM's time.
    Value *full = b.CreateICmpEQ(b.CreateSub(row_hi, row_lo), i64(tile.rows - 1));
    std::vector<int64_t> widths{tile.block};
    const int lanes = vector_lanes(*vec);
    const bool power_of_two = (tile.block & (tile.block - 1)) == 0;
    if (power_of_two && lanes >= 2)
        for (int64_t wd = tile.block / 2; wd >= std::max<int64_t>(4, lanes / 2); wd /= 2) widths.push_back(wd);
    // A partial block that the parts do not cover exactly (without parts, or a width no
    // multiple of the narrowest part) goes the edge's way.
    full = b.CreateAnd(full, widths.size() == 1 ? b.CreateICmpEQ(count, i64(tile.block))
                                                 : b.CreateICmpEQ(b.CreateAnd(count, i64(widths.back() - 1)), i64(0)));
    llvm::BasicBlock *fast = llvm::BasicBlock::Create(ctx, "register_tile", function);
    llvm::BasicBlock *edge = llvm::BasicBlock::Create(ctx, "register_tile_edge", function);
    llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx, "register_tile_done", function);
    b.CreateCondBr(full, fast, edge);

    b.SetInsertPoint(edge);
    node(mark.body, s);
    b.CreateBr(done);

    b.SetInsertPoint(fast);
    // A run of a row's elements [first, last], `width` of them, `offset` elements after the
    // block's first (its vector steps' alias slots follow the block's).
    struct Part {
        Value *first, *last;
        int64_t width, offset;
    };
    // The loops around, then each row's parts in registers.
    std::function<void(size_t, const std::vector<Part> &)> emit = [&](size_t k, const std::vector<Part> &run) {
        if (k < outer.size()) {
            const poly::LoopNode &l = *outer[k];
            // The loops around a part (a partial block, at a row's end) are left as they are,
            // not unrolled by LLVM: they run a few percent of the iterations, and unrolled with
            // their remainders they took a fifth of pb_3mm's LLVM time (200 -> 175 ms, no change
            // in its run time: 33.5 ms either way, medians of 15, interleaved).
            bool part = run.size() != 1 || run[0].width != tile.block;
            serial_for(l, s, expr(l.min, s), expr(l.max, s), false, part, [&](Value *i) {
                Value *saved = s.vars.count(l.var) ? s.vars[l.var] : nullptr;
                s.vars[l.var] = i;
                emit(k + 1, run);
                if (saved) s.vars[l.var] = saved;
                else s.vars.erase(l.var);
            });
            return;
        }
        for (long r = 0; r < tile.rows; ++r) {
            Scope row = s;
            row.vars[rows->var] = b.CreateAdd(row_lo, i64(r), "", false, true);
            for (const Part &pt : run) {
                tile_view = steps > 0 ? &written : nullptr;
                tile_slot = steps > 0 ? int(r) * steps + int(pt.offset / (tile.block / steps)) : -1;
                if (!vector_for(*vec, row, pt.first, pt.last, pt.width)) {
                    tile_view = nullptr;  // no steps: no slots
                    serial_for(*vec, row, pt.first, pt.last, true);
                }
                tile_view = nullptr;
                tile_slot = -1;
            }
        }
    };
    // Sub-block `width` (a binary digit of count) starts after the wider digits' elements.
    auto when = [&](Value *condition, const std::function<void()> &then) {
        llvm::BasicBlock *yes = llvm::BasicBlock::Create(ctx, "register_tile_part", function);
        llvm::BasicBlock *next = llvm::BasicBlock::Create(ctx, "register_tile_next", function);
        b.CreateCondBr(condition, yes, next);
        b.SetInsertPoint(yes);
        then();
        b.CreateBr(next);
        b.SetInsertPoint(next);
    };
    // The whole block (count == block, the common case: one test per tile), else the parts.
    llvm::BasicBlock *whole = llvm::BasicBlock::Create(ctx, "register_tile_block", function);
    llvm::BasicBlock *parts = llvm::BasicBlock::Create(ctx, "register_tile_parts", function);
    b.CreateCondBr(b.CreateICmpEQ(count, i64(tile.block)), whole, parts);
    b.SetInsertPoint(whole);
    emit(0, {Part{lo, hi, tile.block, 0}});
    b.CreateBr(done);
    b.SetInsertPoint(parts);
    // A partial block with every digit (24 = 16 + 8 of a block of 32: a 56-column row) runs
    // its digits jammed, all in registers in one pass of the loops around: each step of the
    // reduction then loads the operand invariant along the rows once for all digits and does
    // the multiply-adds of a whole vector of accumulators per row (conv2d 56 x 56 x 64 -> 64,
    // where the part of 8 columns ran a pass of its own at half a vector per multiply-add:
    // see docs/benchmarks.md). Jamming is legal for the reason running the parts one after
    // another is: they touch different elements, and each element's updates keep their order.
    // Other partial blocks run one digit after another.
    std::vector<Part> digits;
    int64_t every_digit = 0;
    for (size_t k = 1; k < widths.size(); ++k) {
        const int64_t wd = widths[k];
        Value *first = b.CreateAdd(lo, b.CreateAnd(count, i64(~(2 * wd - 1))));
        digits.push_back(Part{first, b.CreateAdd(first, i64(wd - 1)), wd, tile.block - 2 * wd});
        every_digit |= wd;
    }
    if (digits.size() >= 2) {
        llvm::BasicBlock *jammed = llvm::BasicBlock::Create(ctx, "register_tile_jammed_parts", function);
        llvm::BasicBlock *one_by_one = llvm::BasicBlock::Create(ctx, "register_tile_parts_one_by_one", function);
        b.CreateCondBr(b.CreateICmpEQ(b.CreateAnd(count, i64(tile.block - 1)), i64(every_digit)), jammed, one_by_one);
        b.SetInsertPoint(jammed);
        emit(0, digits);
        b.CreateBr(done);
        b.SetInsertPoint(one_by_one);
    }
    for (const Part &pt : digits)
        when(b.CreateICmpNE(b.CreateAnd(count, i64(pt.width)), i64(0)), [&] { emit(0, {pt}); });
    b.CreateBr(done);
    b.SetInsertPoint(done);
    return true;
}

} // namespace tessera::codegen
