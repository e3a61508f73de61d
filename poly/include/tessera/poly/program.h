// A scheduled pipeline, ready to execute: the schedule tree, the statements as the schedule
// runs them, where each Func's values live, and the loop nest.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/poly/loop_nest.h"
#include "tessera/poly/model.h"
#include "tessera/poly/schedule_options.h"

namespace tessera::poly {

// Where the values of one Func live while the pipeline runs.
struct Storage {
    enum class Kind {
        Output,   // the caller's output buffer
        Buffer,   // a full intermediate buffer over the Func's region
        Scratch,  // a per-tile scratchpad of an overlapped-tiled group, indexed from 0 by local
                  // coordinates computed with wrapping int32 arithmetic (see `offset`)
    };
    Kind kind = Kind::Buffer;
    int array = -1;  // the model array
    std::string name;
    Type type;
    int dimensions = 0;
    int output = -1;
    // Buffer: the box, over parameter Vars, Halide order. Scratch: min 0 and constant extents.
    std::vector<Expr> min, extent;
    int group = -1;  // Scratch: the group whose tiles own it
    // Scratch: the global coordinates of its element 0 in each tile, over the tile coordinates
    // ("$tile0", ...), Halide order: where the tile's footprint starts. Int64 Exprs.
    std::vector<Expr> offset;
    // Scratch: the box one tile computes (before folding), Halide order.
    std::vector<int64_t> footprint;
    // Scratch: per dimension (Halide order), the rows a sliding window keeps (a ring indexed
    // modulo this), or 0. Set by "fold:<array>:<dimension>:<rows>" marks in the tree.
    std::vector<int64_t> fold;
    // Scratch: a column window's ring (a fold mark below a GPU `thread` mark, column_window in
    // overlapped_tiling.h): every access to it lies in the iteration of the thread loop for its
    // own column, so each thread keeps its column's `fold` rows to itself (codegen: in
    // registers). Its coordinates stay global (not made local to the tile, not wrapped).
    bool thread_window = false;
    bool folded() const {
        for (int64_t f : fold)
            if (f > 0) return true;
        return false;
    }
};

// A statement as the schedule executes it: a model statement, or the copy of one inside the
// tiles of an overlapped group, whose instances carry the tile coordinates first.
struct ExecStatement {
    std::string name;                // tuple name in the schedule
    int statement = -1;              // the model statement computed
    int group = -1;                  // the overlapped group whose tiles compute it, or -1
    int tiles = 0;                   // leading tile coordinates in its tuple (0 outside groups)
    std::vector<std::string> dims;   // instance Vars in tuple order
    isl::set domain;
    Expr value;                      // lowered; reads of scratchpads use local coordinates
    std::vector<Expr> store;         // coordinates stored to (local for scratchpads)
    std::vector<Expr> guards;
};

// A set of statements scheduled together (a fusion group).
struct Group {
    std::string name;
    enum class Kind { OverlappedTiles, Affine, Sequential };
    Kind kind = Kind::Affine;
    std::vector<int> statements;      // model statements, in order
    std::vector<FuncContents *> funcs;
    std::vector<int> tile_sizes;      // per tiled dimension, outermost first
    std::string note;                 // why it was scheduled this way (fallbacks included)
};

struct Program {
    std::shared_ptr<const Model> model;  // first member: owns the isl context
    isl::schedule schedule;
    std::vector<ExecStatement> statements;
    std::vector<Storage> storage;
    std::vector<int> storage_of_array;  // -1 for inputs
    std::vector<Group> groups;
    LoopNodePtr nest;
    std::string ast_c;  // isl's pseudo-C of the same AST
    // The options the automatic scheduler made it with (none for an imported schedule).
    std::optional<ScheduleOptions> scheduled_with;
    // Milliseconds spent in each phase that produced this program, in order.
    std::vector<std::pair<std::string, double>> timings;
    // With ScheduleOptions::defer_legality, the legality check this program still needs (none
    // when it needs none): call it with the program, once, on one thread, while nothing else
    // uses the model's isl context. It returns null when the schedule is legal, else the
    // program to run instead, scheduled again without what made it illegal (a ring's first
    // planes alone, or storage folding), as schedule_model would have returned it; an illegal
    // schedule with no such fallback throws an internal error. heat-3d's check took 100 ms, a
    // quarter of its compile, with one of the two cores idle.
    std::function<std::shared_ptr<const Program>(const Program &)> deferred_legality;

    int exec_statement(const std::string &name) const;
};

// Derives the program a schedule tree describes. The tree's domain names model statements
// ("S_blur_x_0") and the copies that overlapped group k computes in each tile
// ("G0_S_blur_x_0"), whose first dimensions are the tile coordinates. A Func whose statements
// and readers all lie in one overlapped group lives in a per-tile scratchpad sized by the fixed
// box hull of its footprint; its stores and reads are rewritten to local coordinates. Every
// other Func gets a full buffer (or the output buffer). `groups` describes the grouping (empty:
// derived from the names). Throws a UserError when the tree does not fit the model.

// isl operations the AST generator may spend on the separated AST (a loop's range split into
// pieces wherever the statements' bounds differ), and then again on the atomic one (one loop per
// band member holding each statement once, guards inside). The apps and PolyBench kernels stay
// below it (heat-3d, the largest, separated). A fuzzer pipeline of 9 Funcs with boundary
// conditions and guarded updates (seed 1800249) spent 3.5 s in isl's AST generator and 3.4 s in
// LLVM on the separated loops, against 0.6 s and 0.6 s atomic; one of 8 Funcs (seed 2103434)
// spent 17 s on the atomic AST, where the automatic scheduler now falls back to the sequential
// program.
constexpr long kAstOperations = 1000000;
// The atomic AST's quota when the separated one is over its own: beyond it, the automatic
// scheduler falls back to the sequential program, whose AST is cheap.
constexpr long kAtomicAstOperations = 250000;
// The CPU time one AST attempt with an operation quota may take (CpuDeadline): operations grow
// costly with large coefficients, and fuzzer seed 2497874 spent 17 s of its 23 s compile on a
// separated AST within its million operations (then 2.4 s on the atomic one, before falling back
// to the sequential program). The largest AST of the apps takes 0.6 s (local_laplacian) on a
// good day; on a VM running 3x slower than usual, one of interpolate's took over 2 s (the
// limit then) and its fused group fell back to the sequential program: 5 s leaves that margin.
constexpr double kAstAttemptCpuMs = 5000;

// isl operations the AST generator may spend on the separated AST and then on the atomic one
// (0: no limit), and the threads it may spend them on.
struct AstQuota {
    long separated = kAstOperations;
    long atomic = kAtomicAstOperations;  // negative: no atomic AST is tried
    // The groups' ASTs (generated over the parameters each involves: used_parameters.h) are
    // independent: with threads > 1 each is generated from the printed text of its schedule in
    // an isl context of its own, on up to `threads` threads (isl contexts are not shared between
    // threads). pb_3mm's three register-tiled matmuls took 24 ms each. The quotas apply to each
    // group's AST, as on one thread, and the loops are the same.
    int threads = 1;
};

// The quota of an imported schedule (the user's): the atomic AST is generated without a limit.
constexpr AstQuota kUnboundedAtomicAst{kAstOperations, 0};

// `ast_quota`: when build_loop_nest exceeds it, the Program comes back with a null nest (the
// automatic scheduler then falls back to another schedule); with an atomic quota of 0 the AST is
// generated without a limit after all.
Program program_from_tree(std::shared_ptr<const Model> model, const isl::schedule &schedule, std::vector<Group> groups,
                          AstQuota ast_quota = kUnboundedAtomicAst);

// Builds the AST of `p.schedule` and converts it into p.nest (and p.ast_c, which says so when
// the AST is atomic for want of operations). False, with p.nest null, when neither AST is
// generated within its quota. With no limit on the atomic AST, one is always built: where isl
// cannot build the atomic AST, the separated one without a limit.
bool build_loop_nest(Program &p, AstQuota quota = {});

// The model's statements in their original order, every Func in a full buffer: a legal
// sequential program (the fallback schedule).
Program sequential_program(std::shared_ptr<const Model> model);

// The Storage records of every Func array: outputs in the caller's buffers, the rest in full
// buffers over their regions.
std::vector<Storage> full_storage(const Model &m, std::vector<int> &storage_of_array);

} // namespace tessera::poly
