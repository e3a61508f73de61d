// GPU column windows (poly::column_window, docs/gpu.md): a thread loop over a window's columns.
//
//   thread for (x ...)                  thread k runs columns x0 = lo + C k, ..., x0 + C - 1:
//     for (y ...)                         for (y ...) { body(x0); ...; body(x0 + C - 1); shift }
//       S_blur_x(y + 4, x)  → F(x, y + 4)
//       S_blur_y(y, x)      ← F(x, y ... y + 4)
//
// Each column's rows of F are its thread's own (poly::Storage::thread_window): `fold` slots in
// the thread's frame, which LLVM keeps in registers when every slot is a constant. The row a
// window's writer stores, `anchor` rows ahead of the row loop's variable, goes to slot 0 and
// moves up a slot each iteration (the shift at the end of the body), so the row y + a sits at
// slot anchor - a (FunctionLowering::window_address). C columns a thread (the thread loop
// jammed into the row loop; CodegenOptions::gpu_window_columns) share their input loads:
// blur_x's two columns load 6 elements a row, not 10.

#include <algorithm>
#include <optional>
#include <set>

#include "../function_lowering.h"
#include "kernel_parts.h"
#include "tessera/codegen/gpu_target.h"

namespace tessera::codegen {

using llvm::Value;

namespace {

// Every statement call below `n`.
void calls_below(const poly::LoopNode *n, std::vector<const poly::LoopNode *> &out) {
    if (!n) return;
    if (n->kind == poly::LoopNode::Kind::Call) out.push_back(n);
    for (const auto &c : n->children) calls_below(c.get(), out);
    calls_below(n->body.get(), out);
    calls_below(n->then_case.get(), out);
    calls_below(n->else_case.get(), out);
}

// Whether a loop lies at or below `n`.
bool has_loop_below(const poly::LoopNode *n) {
    if (!n) return false;
    if (n->kind == poly::LoopNode::Kind::For) return true;
    for (const auto &c : n->children)
        if (has_loop_below(c.get())) return true;
    return has_loop_below(n->body.get()) || has_loop_below(n->then_case.get()) || has_loop_below(n->else_case.get());
}

// The storage a call's statement writes.
size_t storage_written(const FunctionLowering &f, const poly::LoopNode &call) {
    const poly::ExecStatement &e = f.p.statements[size_t(call.statement)];
    return size_t(f.p.storage_of_array[size_t(f.m.array_of(f.m.statements[size_t(e.statement)].func))]);
}

// The row loop of a column window: the innermost of the loops that are, one inside the other,
// all of the thread loop's body (through marks and blocks of one child), when no loop lies
// below it. Null when there is none (isl gives a tile of one row no loop).
const poly::LoopNode *window_row_loop(const poly::LoopNode &threads) {
    const poly::LoopNode *rows = nullptr;
    const poly::LoopNode *n = threads.body.get();
    while (n) {
        if (n->kind == poly::LoopNode::Kind::Mark || (n->kind == poly::LoopNode::Kind::Block && n->children.size() == 1)) {
            n = n->kind == poly::LoopNode::Kind::Mark ? n->body.get() : n->children[0].get();
        } else if (n->kind == poly::LoopNode::Kind::For && !n->vectorize) {
            rows = n;
            n = n->body.get();
        } else {
            break;
        }
    }
    return rows && !has_loop_below(rows->body.get()) ? rows : nullptr;
}

// Lowers `n` for every column `xs` (the columns past `hi` skipped; none if null), jammed: a
// block child by child, a conditional not on the column once around the columns of its
// branches, anything else (a statement) once per column, each with its window slots.
void jam_columns(FunctionLowering &f, const poly::LoopNodePtr &n, const poly::LoopNode &threads, const std::vector<size_t> &windows,
                 const std::vector<std::vector<Value *>> &slots, const std::vector<Value *> &xs, Value *hi, Scope &row) {
    if (!n) return;
    if (n->kind == poly::LoopNode::Kind::Mark) return jam_columns(f, n->body, threads, windows, slots, xs, hi, row);
    if (n->kind == poly::LoopNode::Kind::Block) {
        for (const poly::LoopNodePtr &c : n->children) jam_columns(f, c, threads, windows, slots, xs, hi, row);
        return;
    }
    if (n->kind == poly::LoopNode::Kind::If && !reads_var(n->condition, threads.var)) {
        row.vars[threads.var] = xs[0];
        Value *c = f.expr(n->condition, row);
        llvm::BasicBlock *then_bb = llvm::BasicBlock::Create(f.ctx, "then", f.function);
        llvm::BasicBlock *else_bb = n->else_case ? llvm::BasicBlock::Create(f.ctx, "else", f.function) : nullptr;
        llvm::BasicBlock *done = llvm::BasicBlock::Create(f.ctx, "endif", f.function);
        f.b.CreateCondBr(c, then_bb, else_bb ? else_bb : done);
        f.b.SetInsertPoint(then_bb);
        jam_columns(f, n->then_case, threads, windows, slots, xs, hi, row);
        f.b.CreateBr(done);
        if (else_bb) {
            f.b.SetInsertPoint(else_bb);
            jam_columns(f, n->else_case, threads, windows, slots, xs, hi, row);
            f.b.CreateBr(done);
        }
        f.b.SetInsertPoint(done);
        return;
    }
    for (size_t c = 0; c < xs.size(); ++c) {
        llvm::BasicBlock *past = nullptr;
        if (c > 0 && hi) {
            llvm::BasicBlock *run = llvm::BasicBlock::Create(f.ctx, threads.var + ".jammed", f.function);
            past = llvm::BasicBlock::Create(f.ctx, threads.var + ".jammed.done", f.function);
            f.b.CreateCondBr(threads.step > 0 ? f.b.CreateICmpSLE(xs[c], hi) : f.b.CreateICmpSGE(xs[c], hi), run, past);
            f.b.SetInsertPoint(run);
        }
        row.vars[threads.var] = xs[c];
        for (size_t i = 0; i < windows.size(); ++i) f.storage[windows[i]].base = slots[c][i];
        f.node(n, row);
        if (past) {
            f.b.CreateBr(past);
            f.b.SetInsertPoint(past);
        }
    }
}

// One iteration of a column window's row loop (variable `y`, scope `row`): the body once per
// column `xs` (each column's rows in `slots`, the columns past `hi` skipped; every column when
// `hi` is null), then the shift.
void window_row(FunctionLowering &f, const poly::LoopNode &loop, const poly::LoopNode &threads, const std::vector<size_t> &windows,
                const std::vector<std::vector<Value *>> &slots, const std::vector<Value *> &xs, Value *hi, Value *y, Scope &row) {
    row.vars[loop.var] = y;
    row.vars[threads.var] = xs[0];
    // Where each window's writer stores, from y: a constant keeps its rows in registers; else
    // (and where y steps by more than one) the rows are a ring, slot = row modulo the rows kept.
    std::vector<const poly::LoopNode *> calls;
    calls_below(loop.body.get(), calls);
    for (size_t w : windows) {
        StorageView &v = f.storage[w];
        v.window_row = y;
        v.window_anchor.reset();
        for (const poly::LoopNode *c : calls) {
            if (loop.step != 1 || storage_written(f, *c) != w) continue;
            Scope at = instance_scope(f, *c, row);
            f.index_mode = true;
            Value *stored = f.expr(f.p.statements[size_t(c->statement)].store[size_t(v.window_dim)], at);
            f.index_mode = false;
            v.window_anchor = FunctionLowering::constant_offset(f.widened_index(stored), y);
            break;
        }
    }
    // The columns jammed statement by statement (jam_columns): a stage's accesses for every
    // column lie in one basic block, where LLVM combines them. (Any order across columns is
    // legal: a column's stages read only that column.)
    jam_columns(f, loop.body, threads, windows, slots, xs, hi, row);
    // Every row kept moves up a slot: the next iteration's y is one row further.
    for (size_t i = 0; i < windows.size(); ++i) {
        const StorageView &v = f.storage[windows[i]];
        if (!v.window_anchor) continue;
        llvm::Type *t = f.storage_type(v.type);
        for (const std::vector<Value *> &column : slots)
            for (int64_t j = v.window_rows - 1; j > 0; --j)
                f.b.CreateStore(f.b.CreateLoad(t, f.b.CreateConstInBoundsGEP1_64(t, column[i], uint64_t(j - 1))),
                                f.b.CreateConstInBoundsGEP1_64(t, column[i], uint64_t(j)));
    }
}

void column_window_version(FunctionLowering &f, const poly::LoopNode &threads, const std::vector<size_t> &windows,
                           const std::vector<std::vector<Value *>> &slots, const poly::LoopNode *rows, int columns, Value *lo,
                           Value *hi, bool aligned, Scope &s);
void column_window_body(FunctionLowering &f, const poly::LoopNode &threads, const std::vector<size_t> &windows,
                        const std::vector<std::vector<Value *>> &slots, const poly::LoopNode *rows, const std::vector<Value *> &xs,
                        Value *hi, Scope &s);

// Whether every buffer in global memory the statements below the thread loop `threads` read or
// write (inputs, outputs, Funcs stored whole) lets a thread access its `columns` consecutive
// columns together: its element at the loop's first column `lo`, and every row and plane after
// it, starts on a multiple of `columns` elements (the buffer's base so aligned, lo's distance
// from its min and its strides multiples of `columns`). Then an access at a column a multiple
// of `columns` past a thread's first is that aligned (load_at, store). An i1 value, or null
// when some buffer's elements could not be (their size times `columns` not a power of two of at
// most 16 bytes).
Value *columns_aligned(FunctionLowering &f, const poly::LoopNode &threads, int columns, Value *lo) {
    std::vector<const poly::LoopNode *> calls;
    calls_below(threads.body.get(), calls);
    std::set<const StorageView *> global;
    for (const poly::LoopNode *c : calls) {
        const poly::ExecStatement &e = f.p.statements[size_t(c->statement)];
        if (const StorageView &w = f.view_of(f.m.statements[size_t(e.statement)].func); !w.scratch) global.insert(&w);
        auto visit = [&](const Expr &root) {
            ir::visit(root, [&](const Expr &x) {
                if (x->op == Op::InputCall) global.insert(&f.inputs.at(x->input.get()));
                if (x->op == Op::FuncCall && !f.view_of(x->func_ptr).scratch) global.insert(&f.view_of(x->func_ptr));
                return true;
            });
        };
        visit(e.value);
        for (const Expr &g : e.guards) visit(g);
    }
    if (global.empty()) return nullptr;
    Value *ok = f.b.getTrue();
    for (const StorageView *v : global) {
        int64_t bytes = int64_t(v->type.bytes()) * columns;
        if (bytes <= 0 || bytes > 16 || (bytes & (bytes - 1)) != 0 || v->min.empty() || !v->base) return nullptr;
        Value *base = f.b.CreatePtrToInt(v->base, f.b.getInt64Ty());
        ok = f.b.CreateAnd(ok, f.b.CreateICmpEQ(f.b.CreateAnd(base, f.i64(bytes - 1)), f.i64(0)));
        ok = f.b.CreateAnd(ok, f.b.CreateICmpEQ(f.b.CreateSRem(f.b.CreateSub(lo, v->min[0]), f.i64(columns)), f.i64(0)));
        for (size_t d = 1; d < v->stride.size(); ++d)
            ok = f.b.CreateAnd(ok, f.b.CreateICmpEQ(f.b.CreateSRem(v->stride[d], f.i64(columns)), f.i64(0)));
    }
    return ok;
}

// One version of column_window_for's thread loop (`aligned`: its inputs are aligned for its
// columns' accesses together, columns_aligned).
void column_window_version(FunctionLowering &f, const poly::LoopNode &threads, const std::vector<size_t> &windows,
                           const std::vector<std::vector<Value *>> &slots, const poly::LoopNode *rows, int columns, Value *lo,
                           Value *hi, bool aligned, Scope &s) {
    Value *count = trip_count(f, lo, hi, threads.step);
    Value *groups = f.b.CreateSDiv(f.b.CreateAdd(count, f.i64(columns - 1)), f.i64(columns));
    ThreadSteps steps(f, threads.var, groups);
    Value *k = steps.k;
    // Column c is the first plus c steps (so that a load's column is the first's plus a constant).
    std::vector<Value *> xs{f.b.CreateAdd(lo, f.b.CreateMul(f.b.CreateMul(k, f.i64(columns)), f.i64(threads.step)), threads.var, false, true)};
    for (int c = 1; c < columns; ++c) xs.push_back(f.b.CreateAdd(xs[0], f.i64(int64_t(c) * threads.step), threads.var, false, true));
    f.kernel->aligned_column = aligned ? xs[0] : nullptr;
    f.kernel->aligned_columns = columns;
    // The thread's columns all within the loop (every thread but the last of a tile whose width
    // is not a multiple of the columns): run with no test per column and row, which also lets
    // LLVM load the columns' shared inputs together.
    if (columns > 1) {
        Value *full = threads.step > 0 ? f.b.CreateICmpSLE(xs.back(), hi) : f.b.CreateICmpSGE(xs.back(), hi);
        llvm::BasicBlock *all = llvm::BasicBlock::Create(f.ctx, threads.var + ".all_columns", f.function);
        llvm::BasicBlock *some = llvm::BasicBlock::Create(f.ctx, threads.var + ".some_columns", f.function);
        llvm::BasicBlock *done = llvm::BasicBlock::Create(f.ctx, threads.var + ".columns_done", f.function);
        f.b.CreateCondBr(full, all, some);
        f.b.SetInsertPoint(all);
        column_window_body(f, threads, windows, slots, rows, xs, nullptr, s);
        f.b.CreateBr(done);
        f.b.SetInsertPoint(some);
        column_window_body(f, threads, windows, slots, rows, xs, hi, s);
        f.b.CreateBr(done);
        f.b.SetInsertPoint(done);
    } else {
        column_window_body(f, threads, windows, slots, rows, xs, hi, s);
    }
    f.kernel->aligned_column = nullptr;
    steps.finish();
}

// A thread's columns `xs` of a column window (the columns past `hi` skipped, none if null):
// the thread loop's body, its row loop lowered by window_row.
void column_window_body(FunctionLowering &f, const poly::LoopNode &threads, const std::vector<size_t> &windows,
                        const std::vector<std::vector<Value *>> &slots, const poly::LoopNode *rows, const std::vector<Value *> &xs,
                        Value *hi, Scope &s) {
    Scope inside = s;
    inside.vars[threads.var] = xs[0];
    bool saved_single = f.kernel->single;
    f.kernel->single = true;
    f.kernel->window_loop = rows;
    f.kernel->window_rows = [&](const poly::LoopNode &loop, Scope &around) {
        f.kernel->window_loop = nullptr;
        // gpu_unroll_rows rows an iteration, then the rows left one at a time: each thread
        // issues the loads of several rows before it uses them (jammed_rows).
        int unroll = std::max(1, f.options.gpu_unroll_rows);
        Value *first = f.expr(loop.min, around), *last = f.expr(loop.max, around);
        Value *count = trip_count(f, first, last, loop.step);
        Value *rest = f.b.CreateAdd(first, f.b.CreateMul(f.b.CreateSub(count, f.b.CreateSRem(count, f.i64(unroll))), f.i64(loop.step)));
        poly::LoopNode by_unroll = loop;
        by_unroll.step = loop.step * unroll;
        f.serial_for(by_unroll, around, first, f.b.CreateSub(rest, f.i64(1)), false, false, [&](Value *y) {
            Scope row = around;
            for (int j = 0; j < unroll; ++j)
                window_row(f, loop, threads, windows, slots, xs, hi, j == 0 ? y : f.b.CreateAdd(y, f.i64(int64_t(j) * loop.step), "", false, true), row);
        });
        f.serial_for(loop, around, rest, last, false, true, [&](Value *y) {
            Scope row = around;
            window_row(f, loop, threads, windows, slots, xs, hi, y, row);
        });
    };
    f.node(threads.body, inside);
    f.kernel->window_loop = nullptr;
    f.kernel->window_rows = nullptr;
    f.kernel->single = saved_single;
}
} // namespace

// The column windows below the thread loop `threads`: each thread_window storage a statement
// below it writes.
std::vector<size_t> windows_below(const FunctionLowering &f, const poly::LoopNode &threads) {
    std::vector<const poly::LoopNode *> calls;
    calls_below(threads.body.get(), calls);
    std::set<size_t> out;
    for (const poly::LoopNode *c : calls)
        if (f.p.storage[storage_written(f, *c)].thread_window) out.insert(storage_written(f, *c));
    return {out.begin(), out.end()};
}

// The thread loop `threads` over the columns of the column windows `windows` (windows_below).
void column_window_for(FunctionLowering &f, const poly::LoopNode &threads, const std::vector<size_t> &windows, Scope &s) {
    const poly::LoopNode *rows = window_row_loop(threads);
    // Several columns a thread where the loops down to the rows do not depend on the column.
    int columns = 1;
    if (rows && f.options.gpu_window_columns > 1) {
        bool depends = false;
        for (const poly::LoopNode *n = threads.body.get(); n && n != rows->body.get();
             n = n->kind == poly::LoopNode::Kind::Block ? n->children[0].get() : n->body.get())
            if (n->kind == poly::LoopNode::Kind::For) depends = depends || reads_var(n->min, threads.var) || reads_var(n->max, threads.var);
        if (!depends) columns = f.options.gpu_window_columns;
    }
    // Each column's rows of each window, in the kernel's frame.
    llvm::IRBuilder<> entry(&f.function->getEntryBlock(), f.function->getEntryBlock().begin());
    std::vector<std::vector<Value *>> slots;
    slots.resize(size_t(columns));
    std::vector<StorageView> saved;
    for (size_t w : windows) {
        const poly::Storage &st = f.p.storage[w];
        saved.push_back(f.storage[w]);
        StorageView v;
        v.type = st.type;
        v.scratch = true;
        v.alias = int(f.m.graph.inputs.size() + w);
        for (size_t d = 0; d < st.fold.size(); ++d)
            if (st.fold[d] > 0) v.window_dim = int(d), v.window_rows = st.fold[d];
        if (v.window_dim < 0) internal_error("the column window ", st.name, " keeps no rows");
        for (int c = 0; c < columns; ++c)
            slots[size_t(c)].push_back(entry.CreateAlloca(f.storage_type(st.type), f.i64(v.window_rows), st.name + ".rows"));
        v.base = slots[0].back();
        f.storage[w] = v;
    }

    Value *lo = f.expr(threads.min, s), *hi = f.expr(threads.max, s);
    // Two versions when a thread runs several columns: one where every buffer the window reads
    // and writes in global memory is aligned for accessing them together (columns_aligned), the
    // other as it is.
    Value *aligned = columns > 1 ? columns_aligned(f, threads, columns, lo) : nullptr;
    if (!aligned) {
        column_window_version(f, threads, windows, slots, rows, columns, lo, hi, false, s);
    } else {
        llvm::BasicBlock *yes = llvm::BasicBlock::Create(f.ctx, threads.var + ".aligned", f.function);
        llvm::BasicBlock *no = llvm::BasicBlock::Create(f.ctx, threads.var + ".unaligned", f.function);
        llvm::BasicBlock *done = llvm::BasicBlock::Create(f.ctx, threads.var + ".versions.done", f.function);
        f.b.CreateCondBr(aligned, yes, no);
        f.b.SetInsertPoint(yes);
        column_window_version(f, threads, windows, slots, rows, columns, lo, hi, true, s);
        f.b.CreateBr(done);
        f.b.SetInsertPoint(no);
        column_window_version(f, threads, windows, slots, rows, columns, lo, hi, false, s);
        f.b.CreateBr(done);
        f.b.SetInsertPoint(done);
    }
    for (size_t i = 0; i < windows.size(); ++i) f.storage[windows[i]] = saved[i];
}

std::optional<int64_t> FunctionLowering::constant_offset(Value *v, Value *base) {
    if (v == base) return int64_t(0);
    if (llvm::isa<llvm::SExtInst>(v) || llvm::isa<llvm::ZExtInst>(v) || llvm::isa<llvm::TruncInst>(v))
        return constant_offset(llvm::cast<llvm::CastInst>(v)->getOperand(0), base);
    auto *o = llvm::dyn_cast<llvm::BinaryOperator>(v);
    if (!o) return std::nullopt;
    auto *k0 = llvm::dyn_cast<llvm::ConstantInt>(o->getOperand(0));
    auto *k1 = llvm::dyn_cast<llvm::ConstantInt>(o->getOperand(1));
    if (o->getOpcode() == llvm::Instruction::Add && (k0 || k1)) {
        std::optional<int64_t> r = constant_offset(o->getOperand(k1 ? 0 : 1), base);
        if (r) return *r + (k1 ? k1 : k0)->getSExtValue();
    }
    if (o->getOpcode() == llvm::Instruction::Sub && k1) {
        std::optional<int64_t> r = constant_offset(o->getOperand(0), base);
        if (r) return *r - k1->getSExtValue();
    }
    return std::nullopt;
}

Value *FunctionLowering::window_address(const StorageView &view, const std::vector<Value *> &coords) {
    Value *row = widened_index(coords[size_t(view.window_dim)]);
    Value *slot;
    if (view.window_anchor && view.window_row) {
        std::optional<int64_t> ahead = FunctionLowering::constant_offset(row, view.window_row);
        slot = b.CreateSub(i64(*view.window_anchor), ahead ? i64(*ahead) : b.CreateSub(row, view.window_row));
    } else {
        Value *r = b.CreateSRem(row, i64(view.window_rows));
        slot = b.CreateSelect(b.CreateICmpSLT(r, i64(0)), b.CreateAdd(r, i64(view.window_rows)), r);
    }
    return b.CreateInBoundsGEP(storage_type(view.type), view.base, slot);
}


} // namespace tessera::codegen
