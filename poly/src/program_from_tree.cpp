// A Program from a schedule tree: statements, scratchpads and local indexing, loop nest.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <isl/fixed_box.h>
#include <isl/map.h>
#include <isl/set.h>
#include <isl/union_set.h>
#include <isl/schedule_node.h>

#include "tessera/poly/isl_expr.h"
#include "tessera/poly/marks.h"
#include "tessera/poly/program.h"

namespace tessera::poly {
namespace {

std::string tuple_name(const isl::set &s) {
    const char *n = isl_set_get_tuple_name(s.get());
    return n ? n : "";
}

// Splits "G<k>_<statement>" into k and the statement name.
bool parse_group_copy(const std::string &name, int &group, std::string &statement) {
    if (name.size() < 3 || name[0] != 'G' || !std::isdigit(static_cast<unsigned char>(name[1]))) return false;
    size_t us = name.find('_');
    if (us == std::string::npos) return false;
    for (size_t i = 1; i < us; ++i)
        if (!std::isdigit(static_cast<unsigned char>(name[i]))) return false;
    group = std::stoi(name.substr(1, us - 1));
    statement = name.substr(us + 1);
    return true;
}

std::string tile_var(int j) { return "$tile" + std::to_string(j); }

bool calls(const ExecStatement &e, const FuncContents *f) {
    std::vector<Expr> exprs = e.store;
    exprs.push_back(e.value);
    for (const Expr &g : e.guards) exprs.push_back(g);
    for (const Expr &x : exprs)
        if (ir::contains_call_to(x, f)) return true;
    return false;
}

// The local coordinate of a scratchpad: the global one minus the tile's offset, modulo the
// ring's rows in a folded dimension. The offset is int64 (a tile straddling the int32 range may
// start below it); the subtraction wraps in int32, which is exact since the local coordinate is
// small (code generators must not assume it does not overflow: Storage::Kind::Scratch).
Expr local_coordinate(const Expr &global, const Expr &offset, int64_t fold) {
    Expr l = ir::fold_constants(ir::make_binary(Op::Sub, global, ir::fold_constants(ir::make_cast(Int(32), offset))));
    if (fold > 0) l = ir::make_binary(Op::Mod, l, make_const(Int(32), fold));
    return l;
}

Expr rewrite_calls(const Expr &e, const FuncContents *f, const std::vector<Expr> &offset, const std::vector<int64_t> &fold) {
    return ir::transform(e, [&](const Expr &n) {
        if (n->op != Op::FuncCall || n->func_ptr != f) return n;
        std::vector<Expr> args;
        for (size_t d = 0; d < n->args.size(); ++d) args.push_back(local_coordinate(n->args[d], offset[d], fold[d]));
        return ir::rebuild(n, std::move(args));
    });
}

// Fold marks: array name → (dimension, rows); `threaded`: the arrays whose fold mark lies
// below a GPU thread mark (column windows).
void fold_marks(isl_schedule_node *n, std::map<std::string, std::pair<int, int64_t>> &out, std::set<std::string> &threaded,
                bool below_thread = false) {
    if (std::optional<Mark> mark = mark_of(n)) {
        if (mark->kind == Mark::Kind::Fold) {
            out[mark->array] = {mark->dimension, int64_t(mark->rows)};
            if (below_thread) threaded.insert(mark->array);
        }
        below_thread = below_thread || mark->kind == Mark::Kind::Thread;
    }
    for (int i = 0; i < int(isl_schedule_node_n_children(n)); ++i) {
        isl_schedule_node *c = isl_schedule_node_get_child(n, i);
        fold_marks(c, out, threaded, below_thread);
        isl_schedule_node_free(c);
    }
}

} // namespace

Program program_from_tree(std::shared_ptr<const Model> m, const isl::schedule &schedule, std::vector<Group> groups, AstQuota ast_quota) {
    Program p;
    p.model = m;
    p.schedule = schedule;
    for (const isl::set &set : sets_of(schedule.domain())) {
        std::string name = tuple_name(set);
        int k = -1;
        std::string base = name;
        int si = m->statement_index(name);
        if (si < 0 && parse_group_copy(name, k, base)) si = m->statement_index(base);
        if (si < 0) {
            std::string known;
            for (const Statement &s : m->statements) known += (known.empty() ? "" : ", ") + s.name;
            user_error("The schedule names the statement ", name, ", which the pipeline does not have. Its statements are ",
                       known, ", and G<k>_<statement> for their copies in the tiles of overlapped group k.");
        }
        const Statement &ms = m->statements[size_t(si)];
        int dims = int(isl_set_dim(set.get(), isl_dim_set));
        int tiles = dims - int(ms.dims.size());
        if ((k < 0 && tiles != 0) || (k >= 0 && tiles < 0))
            user_error("The schedule's statement ", name, " has ", dims, " dimensions, but ", base, " has ", ms.dims.size(),
                       k >= 0 ? " (plus the tile coordinates of its group)." : ".");
        ExecStatement e;
        e.name = name;
        e.statement = si;
        e.group = k;
        e.tiles = tiles;
        for (int j = 0; j < tiles; ++j) e.dims.push_back(tile_var(j));
        for (const std::string &d : ms.dims) e.dims.push_back(d);
        e.domain = set;
        e.value = ms.value;
        e.store = ms.store;
        e.guards = ms.guards;
        p.statements.push_back(e);
    }
    p.storage = full_storage(*m, p.storage_of_array);

    std::map<std::string, std::pair<int, int64_t>> folds;
    std::set<std::string> threaded_folds;
    {
        isl::schedule_node root = schedule.root();
        fold_marks(root.get(), folds, threaded_folds);
    }

    IdResolver params = [&](const std::string &id) { return m->param_var(id); };

    // Full buffers folded by the schedule (storage_folding.h): the folded dimension keeps a ring
    // of planes, indexed by the coordinate modulo their number in every store and read.
    for (size_t ai = 0; ai < m->arrays.size(); ++ai) {
        const Array &a = m->arrays[ai];
        auto fit = folds.find(a.name);
        // (A column window's rows are placed by codegen, from global coordinates.)
        if (a.kind != Array::Kind::Func || a.output >= 0 || fit == folds.end() || threaded_folds.count(a.name)) continue;
        auto [dim, planes] = fit->second;
        if (dim >= a.dimensions)
            user_error("The schedule folds dimension ", dim, " of ", a.name, ", which has ", a.dimensions, " dimensions.");
        std::optional<int64_t> extent = ir::as_const_int(a.extent[size_t(dim)]);
        if (extent && *extent <= planes) continue;
        Storage &st = p.storage[size_t(p.storage_of_array[ai])];
        st.fold.assign(size_t(a.dimensions), 0);
        st.fold[size_t(dim)] = planes;
        st.min[size_t(dim)] = make_const(Int(32), int64_t(0));
        st.extent[size_t(dim)] = make_const(Int(32), planes);
        auto ring = [&](const Expr &c) { return ir::make_binary(Op::Mod, c, make_const(c.type(), planes)); };
        auto fold_calls = [&](const Expr &x) {
            return ir::transform(x, [&](const Expr &n) {
                if (n->op != Op::FuncCall || n->func_ptr != a.func) return n;
                std::vector<Expr> args = n->args;
                args[size_t(dim)] = ring(args[size_t(dim)]);
                return ir::rebuild(n, std::move(args));
            });
        };
        for (ExecStatement &e : p.statements) {
            e.value = fold_calls(e.value);
            for (Expr &g : e.guards) g = fold_calls(g);
            for (Expr &s : e.store) s = fold_calls(s);
            if (m->statements[size_t(e.statement)].func == a.func) e.store[size_t(dim)] = ring(e.store[size_t(dim)]);
        }
    }

    for (size_t ai = 0; ai < m->arrays.size(); ++ai) {
        const Array &a = m->arrays[ai];
        if (a.kind != Array::Kind::Func || a.output >= 0) continue;
        std::vector<size_t> writers, readers;
        for (size_t i = 0; i < p.statements.size(); ++i) {
            if (m->statements[size_t(p.statements[i].statement)].func == a.func) writers.push_back(i);
            if (calls(p.statements[i], a.func)) readers.push_back(i);
        }
        if (writers.size() != 1) continue;
        int k = p.statements[writers[0]].group;
        if (k < 0) continue;
        bool local = std::all_of(readers.begin(), readers.end(), [&](size_t r) { return p.statements[r].group == k; });
        if (!local) continue;
        size_t w = writers[0];
        // The writer's instances as a function of its tile: [t] -> [i]; its fixed box hull is
        // the scratchpad (offset per tile, constant size).
        isl_map *per_tile = isl_map_from_range(p.statements[w].domain.copy());
        per_tile = isl_map_move_dims(per_tile, isl_dim_in, 0, isl_dim_out, 0, unsigned(p.statements[w].tiles));
        // Over the parameters it involves (a few of local_laplacian's hundreds, each a column of
        // every constraint isl handles): the same box, its offset in the same parameters.
        per_tile = drop_unused_params(per_tile);
        isl_fixed_box *box = isl_map_get_range_simple_fixed_box_hull(per_tile);
        isl_map_free(per_tile);
        bool valid = isl_fixed_box_is_valid(box) == isl_bool_true;
        if (!valid) {
            isl_fixed_box_free(box);
            user_error("Func ", a.func->name, " is computed in the tiles of overlapped group ", k,
                       ", but the part of it one tile needs has no fixed size. Use fixed tile sizes or fuse less.");
        }
        isl_multi_aff *offset = isl_fixed_box_get_offset(box);
        isl_multi_val *size = isl_fixed_box_get_size(box);
        std::vector<Expr> tiles;
        for (int j = 0; j < p.statements[w].tiles; ++j) tiles.push_back(ir::make_var(tile_var(j)));
        Storage &st = p.storage[size_t(p.storage_of_array[ai])];
        st.kind = Storage::Kind::Scratch;
        st.group = k;
        std::vector<Expr> off(size_t(a.dimensions));
        for (int j = 0; j < a.dimensions; ++j) {
            int d = a.dimensions - 1 - j;
            isl_val *v = isl_multi_val_get_at(size, j);
            st.extent[size_t(d)] = make_const(Int(32), int64_t(isl_val_get_num_si(v)));
            isl_val_free(v);
            st.min[size_t(d)] = make_const(Int(32), int64_t(0));
            off[size_t(d)] = aff_to_expr(isl::manage(isl_multi_aff_get_at(offset, j)), tiles, params, Int(64));
        }
        st.offset = off;
        st.footprint.clear();
        for (const Expr &e : st.extent) st.footprint.push_back(ir::as_const_int(e).value_or(0));
        st.fold.assign(size_t(a.dimensions), 0);
        auto fit = folds.find(a.name);
        if (fit != folds.end()) {
            auto [dim, rows] = fit->second;
            if (dim >= a.dimensions)
                user_error("The schedule folds dimension ", dim, " of ", a.name, ", which has ", a.dimensions, " dimensions.");
            // A sliding window's rows are indexed modulo the ring whatever the height of the
            // tile's box: the window's offset stays at the tile's origin while the rows it
            // computes advance, so unfolded rows would run past the box. As tall as the box:
            // fuzzer seed 1700136 (one row); taller (8 rows over a box of 6, the window's rows
            // reaching past the rows one tile needs): seed 2102480, where the scratchpad was
            // left unfolded and compiled code wrote past it.
            if (rows <= 0) internal_error("a fold of ", rows, " rows for ", a.name);
            st.fold[size_t(dim)] = rows;
            st.extent[size_t(dim)] = make_const(Int(32), rows);
            st.thread_window = threaded_folds.count(a.name) > 0;
        }
        isl_multi_aff_free(offset);
        isl_multi_val_free(size);
        isl_fixed_box_free(box);
        for (size_t i = 0; i < p.statements.size(); ++i) {
            // A column window's accesses keep their global coordinates: codegen places them
            // in the thread's rows by their offsets from the row loop.
            if (p.statements[i].group != k || st.thread_window) continue;
            ExecStatement &e = p.statements[i];
            e.value = rewrite_calls(e.value, a.func, off, st.fold);
            for (Expr &g : e.guards) g = rewrite_calls(g, a.func, off, st.fold);
            for (Expr &s : e.store) s = rewrite_calls(s, a.func, off, st.fold);
            if (i == w)
                for (size_t d = 0; d < e.store.size(); ++d) e.store[d] = local_coordinate(e.store[d], off[d], st.fold[d]);
        }
    }

    if (groups.empty()) {
        std::map<int, Group> by_group;
        Group rest;
        rest.name = "imported";
        rest.kind = Group::Kind::Affine;
        for (size_t i = 0; i < p.statements.size(); ++i) {
            int k = p.statements[i].group;
            Group &g = k >= 0 ? by_group[k] : rest;
            if (k >= 0) {
                g.name = "G" + std::to_string(k);
                g.kind = Group::Kind::OverlappedTiles;
            }
            g.statements.push_back(p.statements[i].statement);
            FuncContents *f = m->statements[size_t(p.statements[i].statement)].func;
            if (std::find(g.funcs.begin(), g.funcs.end(), f) == g.funcs.end()) g.funcs.push_back(f);
        }
        for (auto &kv : by_group) groups.push_back(kv.second);
        if (!rest.statements.empty()) groups.push_back(rest);
    }
    p.groups = std::move(groups);
    build_loop_nest(p, ast_quota);
    return p;
}

} // namespace tessera::poly
