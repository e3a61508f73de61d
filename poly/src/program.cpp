#include "tessera/poly/program.h"

#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/options.h>

#include <atomic>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "tessera/poly/isl_expr.h"
#include "tessera/poly/isl_util.h"
#include "tessera/poly/marks.h"
#include "tessera/poly/storage_folding.h"
#include "tessera/poly/used_parameters.h"

namespace tessera::poly {

int Program::exec_statement(const std::string &name) const {
    for (size_t i = 0; i < statements.size(); ++i)
        if (statements[i].name == name) return int(i);
    return -1;
}

std::vector<Storage> full_storage(const Model &m, std::vector<int> &storage_of_array) {
    std::vector<Storage> st;
    storage_of_array.assign(m.arrays.size(), -1);
    for (size_t i = 0; i < m.arrays.size(); ++i) {
        const Array &a = m.arrays[i];
        if (a.kind != Array::Kind::Func) continue;
        Storage s;
        s.kind = a.output >= 0 ? Storage::Kind::Output : Storage::Kind::Buffer;
        s.array = int(i);
        s.name = a.func->name;
        s.type = a.type;
        s.dimensions = a.dimensions;
        s.output = a.output;
        s.min = a.min;
        s.extent = a.extent;
        storage_of_array[i] = int(st.size());
        st.push_back(std::move(s));
    }
    return st;
}

Program sequential_program(std::shared_ptr<const Model> model) {
    Program p;
    p.model = model;
    p.schedule = model->original;
    for (size_t i = 0; i < model->statements.size(); ++i) {
        const Statement &s = model->statements[i];
        ExecStatement e;
        e.name = s.name;
        e.statement = int(i);
        e.dims = s.dims;
        e.domain = s.domain;
        e.value = s.value;
        e.store = s.store;
        e.guards = s.guards;
        p.statements.push_back(std::move(e));
    }
    p.storage = full_storage(*model, p.storage_of_array);
    Group g;
    g.name = "sequential";
    g.kind = Group::Kind::Sequential;
    for (size_t i = 0; i < model->statements.size(); ++i) g.statements.push_back(int(i));
    p.groups.push_back(g);
    // (The last resort of the automatic scheduler, so its atomic AST has no limit: the loops are
    // the statements' own, a nest each, and their AST is cheap.)
    build_loop_nest(p, {kAstOperations, 0});
    return p;
}

namespace {

class NestBuilder {
public:
    // `plain`: every loop is LoopNode::plain, vector marks vectorize nothing, and parallel marks
    // (but kernels') run nothing on threads.
    explicit NestBuilder(const Program &p, bool plain = false) : p_(p), plain_(plain) {}

    // `parallel` / `vectorize`: the iterator of the loop an enclosing mark applies to, or "".
    LoopNodePtr convert(isl_ast_node *n, const std::string &parallel, const std::string &vectorize) {
        switch (isl_ast_node_get_type(n)) {
        case isl_ast_node_for: return convert_for(n, parallel, vectorize);
        case isl_ast_node_if: {
            auto r = std::make_shared<LoopNode>();
            r->kind = LoopNode::Kind::If;
            r->condition = expr(isl_ast_node_if_get_cond(n));
            isl_ast_node *t = isl_ast_node_if_get_then_node(n);
            r->then_case = convert(t, parallel, vectorize);
            isl_ast_node_free(t);
            if (isl_ast_node_if_has_else_node(n) == isl_bool_true) {
                isl_ast_node *e = isl_ast_node_if_get_else_node(n);
                r->else_case = convert(e, parallel, vectorize);
                isl_ast_node_free(e);
            }
            return r;
        }
        case isl_ast_node_block: {
            auto r = std::make_shared<LoopNode>();
            r->kind = LoopNode::Kind::Block;
            isl_ast_node_list *list = isl_ast_node_block_get_children(n);
            for (int i = 0; i < isl_ast_node_list_n_ast_node(list); ++i) {
                isl_ast_node *c = isl_ast_node_list_get_ast_node(list, i);
                r->children.push_back(convert(c, parallel, vectorize));
                isl_ast_node_free(c);
            }
            isl_ast_node_list_free(list);
            return r;
        }
        case isl_ast_node_mark: {
            auto r = std::make_shared<LoopNode>();
            r->kind = LoopNode::Kind::Mark;
            isl_id *id = isl_ast_node_mark_get_id(n);
            std::optional<Mark> mark = mark_of_id(id);
            r->mark = isl_id_get_name(id);
            isl_id_free(id);
            isl_ast_node *c = isl_ast_node_mark_get_node(n);
            // The mark applies to the loop of the schedule dimension just below it, which isl
            // names c<depth> (with_marked_depth), and collapses the members of its band after it.
            // A band member that isl drops because it runs once has no loop. Then the mark
            // applies to the next member it collapses, c<depth + 1> and so on (a parallel:2 tile
            // band whose outer tile loop runs once, as at constant sizes of one tile: the inner
            // tile loop runs on threads, not serially; a kernel's grid is that loop, not one
            // block), and with none left to nothing, never to a loop of a deeper dimension.
            std::string marked;
            if (mark && mark->loop_depth >= 0) marked = "$c" + std::to_string(mark->loop_depth);
            // A kernel's block loops are marked parallel in the loop nest, its thread loop
            // vectorized: inside a kernel mark, the GPU code generator reads them so. A plain
            // case's parallel loops run serially: on threads, each would be a function of its
            // own for LLVM (heat-3d's degenerate case: two, a tenth of its LLVM time), for sizes
            // whose speed does not matter.
            bool blocks = mark && mark->marks_loop() &&
                          ((mark->kind == Mark::Kind::Parallel && !plain_) || mark->kind == Mark::Kind::Kernel);
            std::string par = blocks ? marked : parallel;
            if (blocks && !marked.empty()) band_end_[marked] = mark->loop_depth + mark->collapse;
            bool vector_mark = mark && (mark->kind == Mark::Kind::Thread || (mark->kind == Mark::Kind::Vector && !plain_));
            std::string vec = vector_mark ? marked : vectorize;
            r->body = convert(c, par, vec);
            isl_ast_node_free(c);
            return r;
        }
        case isl_ast_node_user: {
            auto r = std::make_shared<LoopNode>();
            r->kind = LoopNode::Kind::Call;
            isl_ast_expr *call = isl_ast_node_user_get_expr(n);
            isl_ast_expr *fn = isl_ast_expr_op_get_arg(call, 0);
            isl_id *id = isl_ast_expr_get_id(fn);
            r->statement_name = isl_id_get_name(id);
            isl_id_free(id);
            isl_ast_expr_free(fn);
            r->statement = p_.exec_statement(r->statement_name);
            TESSERA_INTERNAL_ASSERT(r->statement >= 0, "unknown statement ", r->statement_name);
            for (int i = 1; i < int(isl_ast_expr_op_get_n_arg(call)); ++i) r->args.push_back(expr(isl_ast_expr_op_get_arg(call, i)));
            isl_ast_expr_free(call);
            return r;
        }
        default: internal_error("unexpected isl AST node");
        }
    }

private:
    // An isl loop `for (init; cond; inc)` with cond `it <= e`, `it < e`, or a conjunction of
    // them, becomes `for (it = init; it <= max; it += inc)`.
    LoopNodePtr convert_for(isl_ast_node *n, const std::string &parallel, const std::string &vectorize) {
        auto r = std::make_shared<LoopNode>();
        r->kind = LoopNode::Kind::For;
        isl_ast_expr *it = isl_ast_node_for_get_iterator(n);
        isl_id *id = isl_ast_expr_get_id(it);
        r->var = "$" + std::string(isl_id_get_name(id));
        isl_id_free(id);
        isl_ast_expr_free(it);
        r->min = expr(isl_ast_node_for_get_init(n));
        isl_ast_expr *inc = isl_ast_node_for_get_inc(n);
        isl_val *v = isl_ast_expr_get_val(inc);
        r->step = isl_val_get_num_si(v);
        isl_val_free(v);
        isl_ast_expr_free(inc);
        r->max = upper_bound(expr(isl_ast_node_for_get_cond(n)), r->var);
        // The marked loop, or (where isl dropped it) a later member of the band it collapses;
        // iterator depths grow inward, so the first loop below the mark is the only candidate.
        // It collapses with the members after it, as far as the band's end.
        auto band = band_end_.find(parallel);
        int depth = iterator_depth(r->var);
        r->parallel = band != band_end_.end() && depth >= iterator_depth(parallel) && depth < band->second;
        if (r->parallel) r->collapse = band->second - depth;
        r->vectorize = r->var == vectorize;
        r->plain = plain_;
        isl_ast_node *body = isl_ast_node_for_get_body(n);
        r->body = convert(body, r->parallel ? std::string() : parallel, vectorize);
        isl_ast_node_free(body);
        // The loops collapsed with this one are those directly inside it that are later members
        // of the marked band (c<depth + 1>, ..., up to the band's end). isl drops a loop that
        // runs once: the loop directly inside may then be a deeper dimension's (a reduction,
        // say), which the mark never made parallel (fuzzer seed 2442233: a reduction's loop ran
        // on threads, a race).
        if (r->collapse > 1) {
            int chained = 1;
            for (const LoopNode *at = r.get(); chained < r->collapse; ++chained) {
                const LoopNodePtr &inner = at->body;
                if (!inner || inner->kind != LoopNode::Kind::For || iterator_depth(inner->var) >= band->second) break;
                at = inner.get();
            }
            r->collapse = chained;
        }
        return r;
    }

    // The depth of an AST iterator $c<depth>; -1 for another name.
    static int iterator_depth(const std::string &var) {
        if (var.size() < 3 || var.compare(0, 2, "$c") != 0) return -1;
        for (size_t i = 2; i < var.size(); ++i)
            if (var[i] < '0' || var[i] > '9') return -1;
        return std::stoi(var.substr(2));
    }

    static Expr upper_bound(const Expr &cond, const std::string &var) {
        if (cond->op == Op::And)
            return ir::fold_constants(ir::make_binary(Op::Min, upper_bound(cond->args[0], var), upper_bound(cond->args[1], var)));
        if ((cond->op == Op::LE || cond->op == Op::LT) && cond->args[0]->op == Op::Var && cond->args[0]->name == var) {
            if (cond->op == Op::LE) return cond->args[1];
            return ir::fold_constants(ir::make_binary(Op::Sub, cond->args[1], make_const(cond->args[1].type(), int64_t(1))));
        }
        internal_error("unexpected loop condition ", cond, " for ", var);
    }

    // Loop bounds, conditions and statement arguments, in int64 (isl_expr.h). Names that are
    // not parameters are the AST's loop iterators, int64 too.
    Expr expr(isl_ast_expr *e) {
        return from_ast_expr(
            isl::manage(e),
            [this](const std::string &id) -> Expr {
                const Parameter *prm = p_.model->param_by_name(id);
                return prm ? prm->var : ir::make_var("$" + id, Int(64));
            },
            Int(64));
    }

    const Program &p_;
    bool plain_;
    // By the iterator a parallel or kernel mark applies to: the depth past the members it
    // collapses (set again by each mark, so a sibling group's at the same depth lends nothing).
    std::map<std::string, int> band_end_;
};

// Gives each parallel and vector mark of a copy of the schedule the schedule depth below it
// (Mark::loop_depth): the depth of the band it marks, which names that band's loop in the AST
// (c<depth>).
isl_schedule_node *with_marked_depth(isl_schedule_node *node, void *) {
    std::optional<Mark> mark = mark_of(node);
    if (!mark || !mark->marks_loop()) return node;
    mark->loop_depth = int(isl_schedule_node_get_schedule_depth(node));
    // A parallel mark collapses loops of its own band only (an imported "parallel:2" above a
    // band of one loop runs that loop alone on threads), as the legality check reads it.
    isl_schedule_node *band = isl_schedule_node_get_child(node, 0);
    int members = isl_schedule_node_get_type(band) == isl_schedule_node_band ? int(isl_schedule_node_band_n_member(band)) : 1;
    isl_schedule_node_free(band);
    mark->collapse = std::max(1, std::min(mark->collapse, members));
    node = isl_schedule_node_delete(node);
    return insert_mark(isl::manage(node), *mark).release();
}

} // namespace

namespace {

// Sets every member of every band to be generated atomic: one loop per band member that holds
// each statement once, with guards inside, instead of isl's default, which splits the loop's
// range into pieces wherever the statements' bounds differ (and recurses into each piece).
isl_schedule_node *atomic_band(isl_schedule_node *node, void *) {
    if (isl_schedule_node_get_type(node) != isl_schedule_node_band) return node;
    isl_size n = isl_schedule_node_band_n_member(node);
    for (isl_size i = 0; i < n; ++i) node = isl_schedule_node_band_member_set_ast_loop_type(node, int(i), isl_ast_loop_atomic);
    return node;
}

// isl's AST of `schedule` under `context`: generated separated (isl's default: a loop's range
// split into pieces wherever the statements' bounds differ, recursively) within
// `quota.separated` isl operations, then atomic (one loop per band member holding each
// statement once, guards inside) within `quota.atomic`; 0: no limit, negative: not tried. An
// attempt with a quota also stops after kAstAttemptCpuMs of CPU time. Null when neither
// finishes, `atomic` says which one was built. Where isl 0.25 cannot build the atomic AST
// ("cannot handle void expression": folded storage, under the parameters where its updates
// never run) and the atomic one had no limit, separated after all, without one.
// `atomic_first`: atomic within `quota.separated` before all of that (a case whose speed does
// not matter).
isl_ast_node *generate_ast(isl_ctx *ctx, const isl::schedule &schedule, const isl::set &context, AstQuota quota,
                           bool &atomic_ast, bool atomic_first) {
    isl_schedule *marked = isl_schedule_map_schedule_node_bottom_up(schedule.copy(), with_marked_depth, nullptr);
    std::vector<std::pair<bool, long>> attempts = {{false, quota.separated}};
    if (atomic_first) attempts.insert(attempts.begin(), {true, quota.separated});
    if (quota.atomic >= 0) attempts.push_back({true, quota.atomic});
    if (quota.atomic == 0 && quota.separated != 0) attempts.push_back({false, 0});
    isl_ast_node *root = nullptr;
    std::string why = "no message";
    for (auto [atomic, max_operations] : attempts) {
        // (The context as a private copy: an attempt stopped by its quota partway may leave the
        // pieces it worked on broken, and the model's context serves everything after.)
        isl_ast_build *build = isl_ast_build_from_context(copied_to(isl::ctx(ctx), context).release());
        isl_schedule *s = isl_schedule_copy(marked);
        if (atomic) s = isl_schedule_map_schedule_node_bottom_up(s, atomic_band, nullptr);
        auto generate = [&] { root = isl_ast_build_node_from_schedule(build, s); };
        bool finished =
            max_operations > 0 ? within_quota(isl::ctx(ctx), max_operations, kAstAttemptCpuMs, generate) : (generate(), true);
        isl_ast_build_free(build);
        if (finished && root) {
            atomic_ast = atomic;
            break;
        }
        isl_ast_node_free(root);
        root = nullptr;
        if (const char *message = isl_ctx_last_error_msg(ctx)) why = message;
        isl_ctx_reset_error(ctx);
    }
    isl_schedule_free(marked);
    if (!root && quota.atomic == 0) internal_error("isl could not build the AST of the schedule: ", why);
    return root;
}

// The pseudo-C of an AST, indented by `indent`.
std::string ast_to_c(isl_ast_node *node, int indent) {
    isl_printer *printer = isl_printer_to_str(isl_ast_node_get_ctx(node));
    printer = isl_printer_set_output_format(printer, ISL_FORMAT_C);
    printer = isl_printer_set_indent(printer, indent);
    printer = isl_printer_print_ast_node(printer, node);
    char *text = isl_printer_get_str(printer);
    isl_printer_free(printer);
    std::string c = text ? text : "";
    free(text);
    return c;
}

// One group's AST (generate_ast) and its pseudo-C. Generated on another thread, in an isl
// context of its own, which it keeps alive until the AST is freed.
struct PartAst {
    std::unique_ptr<IslContext> own_ctx;  // null: generated in the model's context
    isl_ast_node *root = nullptr;         // null: not generated within the quota
    bool atomic = false;
    std::string c;
    std::exception_ptr error;

    PartAst() = default;
    PartAst(const PartAst &) = delete;
    PartAst &operator=(const PartAst &) = delete;
    ~PartAst() { isl_ast_node_free(root); }  // (before own_ctx, a member declared earlier)

    void generate(isl_ctx *ctx, const isl::schedule &schedule, const isl::set &context, AstQuota quota, bool plain, int indent) {
        root = generate_ast(ctx, schedule, context, quota, atomic, plain);
        if (root) c = ast_to_c(root, indent);
    }
};

// The isl options of build_loop_nest's AST generation, on `ctx`.
void set_ast_options(isl_ctx *ctx) {
    isl_options_set_ast_build_atomic_upper_bound(ctx, 1);
    isl_options_set_ast_build_detect_min_max(ctx, 1);
}

// One AST to generate: a group's part of a case of the loop nest (`plain`: the degenerate
// case, see NestCase), printed with `indent`.
struct AstJob {
    const ScheduleOverUsedParameters *part;
    bool plain;
    int indent;
};

// The ASTs of `jobs` (as generate_ast, within `quota` each), on up to quota.threads threads:
// the job of the most statements on the calling thread, in the model's context, after
// `meanwhile` (work in the model's context, which the other threads do not touch); each other
// job's schedule and context are printed here and read into a context of its own on the thread
// that generates it. The largest job is not printed and read back because it is the costliest
// to read (local_laplacian's group of 44 stages: 145 ms of reading of its 727 ms) and the
// longest to generate, while the other threads take the other jobs in order (so the costly ones
// should come first).
std::vector<PartAst> generate_part_asts(isl_ctx *ctx, const std::vector<AstJob> &jobs, AstQuota quota,
                                        const std::function<void()> &meanwhile) {
    std::vector<PartAst> asts(jobs.size());
    int threads = int(std::min<size_t>(size_t(std::max(quota.threads, 1)), jobs.size()));
    if (threads <= 1) {
        meanwhile();
        for (size_t k = 0; k < jobs.size(); ++k) {
            const AstJob &j = jobs[k];
            asts[k].generate(ctx, j.part->schedule, j.part->context, quota, j.plain, j.indent);
            if (!asts[k].root) break;  // (the caller gives up at the first part over its quota)
        }
        return asts;
    }
    size_t largest = 0;
    isl_size most = -1;
    for (size_t k = 0; k < jobs.size(); ++k) {
        isl_union_set *domain = isl_schedule_get_domain(jobs[k].part->schedule.get());
        isl_size n = isl_union_set_n_set(domain);
        isl_union_set_free(domain);
        if (n > most) largest = k, most = n;
    }
    std::vector<std::string> schedule_text(jobs.size()), context_text(jobs.size());
    for (size_t k = 0; k < jobs.size(); ++k) {
        if (k == largest) continue;
        char *text = isl_schedule_to_str(jobs[k].part->schedule.get());
        schedule_text[k] = text ? text : "";
        free(text);
        char *context = isl_set_to_str(jobs[k].part->context.get());
        context_text[k] = context ? context : "";
        free(context);
    }
    // (isl 0.25 reads no mark node without a child, which it prints for a mark above a leaf, as
    // in a GPU kernel of one block around a statement without loops: such a part is generated
    // here, after the others, in the model's context.)
    std::vector<char> read_back(jobs.size(), 1);
    std::atomic<size_t> next{0};
    auto work = [&] {
        for (size_t k; (k = next++) < jobs.size();) {
            if (k == largest) continue;
            PartAst &a = asts[k];
            try {
                a.own_ctx = std::make_unique<IslContext>();
                isl_ctx *own = a.own_ctx->get();
                set_ast_options(own);
                isl_schedule *schedule = isl_schedule_read_from_str(own, schedule_text[k].c_str());
                isl_set *context = isl_set_read_from_str(own, context_text[k].c_str());
                if (!schedule || !context) {
                    isl_schedule_free(schedule);
                    isl_set_free(context);
                    a.own_ctx.reset();
                    read_back[k] = 0;
                    continue;
                }
                a.generate(own, isl::manage(schedule), isl::manage(context), quota, jobs[k].plain, jobs[k].indent);
            } catch (...) {
                a.error = std::current_exception();
            }
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work);
    std::exception_ptr failed;
    try {
        meanwhile();
    } catch (...) {
        failed = std::current_exception();
    }
    if (!failed) {
        const AstJob &j = jobs[largest];
        try {
            asts[largest].generate(ctx, j.part->schedule, j.part->context, quota, j.plain, j.indent);
        } catch (...) {
            asts[largest].error = std::current_exception();
        }
        work();
    } else {
        next = jobs.size();  // (the threads finish the job they hold)
    }
    for (std::thread &t : pool) t.join();
    if (failed) std::rethrow_exception(failed);
    for (PartAst &a : asts)
        if (a.error) std::rethrow_exception(a.error);
    for (size_t k = 0; k < jobs.size(); ++k)
        if (!read_back[k]) asts[k].generate(ctx, jobs[k].part->schedule, jobs[k].part->context, quota, jobs[k].plain, jobs[k].indent);
    return asts;
}

// One case of the loop nest: isl's AST of `schedule` under `context`, one part per group (child
// of the top-level sequence), each over the parameters it involves (used_parameters.h).
// `plain`: a case that runs only at degenerate sizes, generated atomic first and compiled plain
// (LoopNode::plain).
struct NestCase {
    std::vector<ScheduleOverUsedParameters> parts;
    bool plain = false;

    NestCase(const isl::schedule &schedule, const isl::set &context, bool plain_case) : plain(plain_case) {
        std::string why;
        std::optional<std::vector<ScheduleOverUsedParameters>> over_used = schedule_parts_over_used_parameters(schedule, context, why);
        parts = over_used ? std::move(*over_used) : std::vector<ScheduleOverUsedParameters>{{schedule, context}};
    }

    void add_jobs(std::vector<AstJob> &jobs) const {
        for (const ScheduleOverUsedParameters &part : parts) jobs.push_back({&part, plain, parts.size() > 1 ? 2 : 0});
    }

    // The case's loop nest from its parts' ASTs, asts[first ...]; its pseudo-C in `c`. Null when
    // a part's AST was not generated within its quota.
    LoopNodePtr nest(const Program &p, const std::vector<PartAst> &asts, size_t first, std::string &c) const {
        std::vector<LoopNodePtr> nests;
        std::string text;
        for (size_t k = first; k < first + parts.size(); ++k) {
            const PartAst &a = asts[k];
            if (!a.root) return nullptr;
            if (a.atomic && !plain) text += "// isl's AST generator exceeded its operation quota: every loop of this group is generated atomic\n";
            if (plain) text += "// degenerate sizes only: loops atomic where isl can, serial, neither vectorized nor unrolled\n";
            text += a.c;
            nests.push_back(NestBuilder(p, plain).convert(a.root, "", ""));
        }
        if (nests.size() == 1) {
            c += text;
            return nests[0];
        }
        // One block of the groups' nests in order (a group's own block spliced in).
        auto block = std::make_shared<LoopNode>();
        block->kind = LoopNode::Kind::Block;
        for (const LoopNodePtr &n : nests) {
            if (n->kind == LoopNode::Kind::Block) block->children.insert(block->children.end(), n->children.begin(), n->children.end());
            else block->children.push_back(n);
        }
        c += "{\n" + text + "}\n";
        return block;
    }
};

} // namespace

bool build_loop_nest(Program &p, AstQuota quota) {
    set_ast_options(p.model->ctx().get());
    p.nest = nullptr;
    // Folded storage fuses a Func's pure definition (over its region) with its updates: the AST
    // may assume the region holds every access, as it does at run time.
    isl::set context = p.model->context, steady = context;
    for (const Storage &st : p.storage) {
        if (st.kind != Storage::Kind::Buffer || !st.folded()) continue;
        context = context.intersect(region_covers_accesses(*p.model, st.array));
        for (const Statement &s : p.model->statements)
            if (s.func == p.model->arrays[size_t(st.array)].func && s.definition > 0) steady = steady.intersect(s.domain.params());
    }
    steady = steady.intersect(context);
    isl_ctx *ctx = p.model->ctx().get();
    if (steady.is_equal(context) || steady.is_empty()) {
        NestCase whole(p.schedule, context, false);
        std::vector<AstJob> jobs;
        whole.add_jobs(jobs);
        p.nest = whole.nest(p, generate_part_asts(ctx, jobs, quota, [] {}), 0, p.ast_c);
        return p.nest != nullptr;
    }
    // Versioned on the parameters: where every update of the folded Funcs runs (the steady
    // case), their regions hold the updates' iterations and the AST is one case; otherwise
    // (no steps, no interior) the updates do not run and the AST is small. One AST over both
    // split into cases at every loop level and took isl seconds (heat-3d: 4.9 s -> 0.9 s).
    //
    // (Where the folded Funcs' updates never run, the AST without them took heat-3d 250 ms
    // instead of 800 ms.) That case runs only at degenerate sizes (no steps, no interior):
    // atomic and plain, jacobi-1d's compile took 800 -> 450 ms (that case's AST 160 -> 45 ms,
    // LLVM 460 -> 200 ms for the whole module; docs/benchmarks.md).
    //
    // The two cases' ASTs are generated together, on quota.threads threads, while this thread
    // writes the condition between them (heat-3d: the steady case 45 ms, the other 17, the
    // condition 8: 72 ms on one thread).
    isl::set rest = context.subtract(steady);
    NestCase steady_case(p.schedule, steady, false), rest_case(without_statements_empty_in(p.schedule, rest), rest, true);
    std::vector<AstJob> jobs;
    steady_case.add_jobs(jobs);
    rest_case.add_jobs(jobs);
    auto version = std::make_shared<LoopNode>();
    version->kind = LoopNode::Kind::If;
    std::vector<PartAst> asts = generate_part_asts(ctx, jobs, quota, [&] {
        version->condition = set_to_condition(steady, context, [&](const std::string &id) { return p.model->param_var(id); });
    });
    std::string steady_c, rest_c;
    version->then_case = steady_case.nest(p, asts, 0, steady_c);
    if (!version->then_case) return false;
    version->else_case = rest_case.nest(p, asts, steady_case.parts.size(), rest_c);
    if (!version->else_case) return false;
    p.nest = version;
    p.ast_c = "if (/* every update of the folded Funcs runs */) {\n" + steady_c + "} else {\n" + rest_c + "}\n";
    return true;
}

} // namespace tessera::poly
