// The polyhedral model of a pipeline.
//
// Each definition of each Func (the pure one, then the updates) becomes a statement with a
// parametric iteration domain and access relations. Tuples list dimensions outermost first, so
// blur_x(x, y, c) is the statement S_blur_x_0[c, y, x] writing the array F_blur_x[c, y, x];
// an update f(args) over RDom r has its pure Vars outermost and r's variables innermost
// (r.x last), as the update's loops run. Parameters are the mins and extents of the outputs and
// of the inputs, and the integer Params.
//
// Regions are inferred from the outputs, consumers first, by composing access relations: a
// Func is computed over the box hull of what its consumers read plus what its own updates
// write and read (as in the reference interpreter), exactly and parametrically for affine
// accesses; Func::bound replaces a dimension of the box and Func::align_bounds widens it. A bound of that box that is piecewise becomes a Region parameter (see Parameter). A data-dependent index is over-approximated by its affine bounds (clamps, types,
// remainders; see affine.h) and recorded as a may-access.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <tessera/func_graph.h>
#include <tessera/pipeline.h>

#include "tessera/poly/affine.h"
#include "tessera/poly/isl_util.h"
#include "tessera/poly/recomputed_reads.h"

namespace tessera::poly {

struct RingInitialization;  // ring_initialization.h

// A symbolic value of the pipeline: an isl parameter when it is an integer.
//
// Region parameters stand for a bound of a Func's region that is the minimum or maximum of
// affine bounds isl cannot order (say the output's box and an update's footprint over the input
// size). Keeping such a bound as one parameter keeps every domain a single box; its exact value
// (`value`, over the parameters before it) is computed before the pipeline runs, like Halide's
// bounds inference.
struct Parameter {
    enum class Kind { OutputMin, OutputExtent, InputMin, InputExtent, Scalar, Region };
    Kind kind;
    std::string name;  // isl name, e.g. out_blur_y_extent_0, in_input_min_1, p_steps
    Expr var;          // the Var standing for it in lowered expressions: "$" + name
    int output = -1;   // OutputMin / OutputExtent: index into the pipeline's outputs
    std::shared_ptr<InputContents> input;
    std::shared_ptr<ParamContents> param;
    int dim = 0;
    bool in_isl = false;  // integer parameters are isl parameters
    Expr value;           // Region: the exact bound (Int(64)), over earlier parameters
    int array = -1;       // Region: the array whose region it bounds, or -1
};

// An array read or written by statements: a Func's storage or an input buffer.
struct Array {
    enum class Kind { Func, Input };
    Kind kind;
    std::string name;  // isl tuple name: F_<func> or I_<input>
    Type type;
    int dimensions = 0;
    FuncContents *func = nullptr;
    std::shared_ptr<InputContents> input;
    int output = -1;  // index into the pipeline's outputs, or -1
    // Funcs: the box computed; inputs: the box read. In the array's space (outermost first).
    isl::set region;
    // The same box per dimension in Halide order (dimension 0 first), over parameter Vars.
    std::vector<Expr> min, extent;
};

struct Access {
    int array = -1;
    isl::map relation;  // statement instance → array element
    bool exact = true;  // false: a may-access (over-approximated data-dependent index)
    // The same relation on every instance, not only the statement's domain: no floor divisions
    // of the domain in it, so per-tile footprints derive from it cheaply (overlapped_tiling.cpp).
    isl::map unrestricted;
};

struct Statement {
    std::string name;  // isl tuple name: S_<func>_<definition>
    FuncContents *func = nullptr;
    int definition = 0;  // 0: the pure definition; k: update k - 1
    // The Var names of the instance dimensions, in tuple order. Lowered expressions use them
    // (RDom variables become Vars named like "r.x").
    std::vector<std::string> dims;
    isl::set domain;
    Expr value;                 // the value stored
    std::vector<Expr> store;    // coordinates stored to, Halide order
    std::vector<Expr> guards;   // conditions tested at run time (RDom predicates isl cannot hold)
    std::vector<Access> reads;  // one per distinct (array, relation)
    Access write;
};

// Func::bound: what the pipeline needs of a bounded Func (its consumers' reads, its output
// buffer, its own updates' accesses) must lie inside the bound. Checked before the pipeline
// computes anything (codegen's host entry, the AST interpreter); isl proved the others.
// Int(64) Exprs over the parameters' Vars; need_max < need_min when nothing is needed.
struct BoundCheck {
    int array = -1;
    int dim = 0;  // Halide order
    Expr need_min, need_max, bound_min, bound_max;
};

// The instances of a model's statements whose value is overwritten before anything reads it
// (dead_instances.h).
struct DeadInstances {
    // The dead instances that leave each statement's domain in few pieces (what schedules
    // leave out).
    isl::union_set dead;
    // Every dead instance found, however many pieces the rest of its statement makes (a folded
    // Func's pure planes past the first ring, ring_initialization.h).
    isl::union_set overwritten;
    // By array, region_covers_accesses (storage_folding.h) of the Funcs analysed, where a helper
    // thread found them together (start_dead_instances): a ring's first planes need both.
    std::map<int, isl::set> covers;
};

// Note: isl's C++ objects have no move constructor and cannot be copied while null, so every
// struct holding them is filled in completely before it is copied into a container.
class Model {
public:
    IslContext isl;  // first member: destroyed after every isl object below
    // An isl_ctx is not thread-safe: code that uses the isl objects of a model (or of a program
    // over it) that other threads can reach, such as a pipeline's cached program, holds this.
    mutable std::mutex isl_mutex;
    Pipeline pipeline;
    PipelineGraph graph;
    std::vector<Parameter> params;
    std::vector<Array> arrays;
    std::vector<Statement> statements;  // in the pipeline's order
    isl::set context;                   // what is assumed of the parameters
    isl::schedule original;             // the sequential order of the definitions
    // Statement instances whose value is overwritten before anything reads it (dead_instances.h):
    // a schedule may leave them out. Empty when there are none. The first call may wait for
    // them: build_model can find them on a thread of its own (see set_dead_instances).
    const isl::union_set &dead() const;
    // Every instance whose value is overwritten before anything reads it, a superset of dead()
    // (DeadInstances::overwritten).
    const isl::union_set &overwritten() const;
    // What dead() and overwritten() return: `find`'s result, asked for on their first call
    // (once, whichever thread calls first); its covers go into region_covers.
    void set_dead_instances(std::function<DeadInstances()> find);
    std::vector<BoundCheck> bound_checks;
    // region_covers_accesses (storage_folding.h) by array, computed once: the AST, the legality
    // check and ring_initialization.h all assume it.
    mutable std::map<int, isl::set> region_covers;
    // ring_initialization's analyses (ring_initialization.h) by (array, dimension, planes),
    // those that finished within their quota: the scheduler's, read again by the legality check.
    mutable std::map<std::tuple<int, int, int64_t>, std::shared_ptr<const RingInitialization>> ring_initializations;
    // fold_dependences (storage_folding.h) by the folds (array, dimension, planes) it was asked
    // for: the scheduler's, read again by the legality check.
    mutable std::map<std::vector<std::tuple<int, int, int64_t>>, isl::union_map> fold_dependences;
    // The copies of inputs staged in GPU shared memory (staged_inputs.h): the Funcs
    // `<input>_shared` of the graph, read by the Funcs that read the input at several offsets.
    std::vector<const FuncContents *> staged_copies;
    // The Funcs some consumers recompute at the few points they read (recomputed_reads.h).
    std::vector<RecomputedFunc> recomputed;

    isl::ctx ctx() const { return isl.ctx(); }
    isl::union_set domains() const;
    isl::union_map reads() const;
    isl::union_map must_writes() const;
    isl::union_map may_writes() const;
    int array_of(const FuncContents *f) const;
    int array_of(const InputContents *in) const;
    int statement_index(const std::string &name) const;
    const Parameter *param_by_var(const std::string &var_name) const;
    const Parameter *param_by_name(const std::string &isl_name) const;
    // The Var of the parameter isl calls `isl_name`; an InternalError if there is none.
    Expr param_var(const std::string &isl_name) const;
    std::optional<isl::id> param_id(const std::string &var_name) const;
    // A set space with the model's isl parameters and the given tuple.
    isl::space set_space(const std::string &tuple, unsigned dims) const;
    // Where the expressions of a statement instance `tuple[dims...]` live in isl: its Vars are
    // the set dimensions, input sizes and integer Params the model's parameters (affine.h).
    AffineSpace instance_space(const std::string &tuple, const std::vector<std::string> &dims) const;

private:
    const DeadInstances &dead_instances() const;
    mutable std::once_flag dead_found_;
    mutable std::function<DeadInstances()> find_dead_;
    mutable std::optional<DeadInstances> dead_;
};

// The model's statements grouped by definition, in the model's order: the cases an update's
// selects were split into (model.cpp, split_affine_selects) are consecutive and form one group,
// which the original schedule runs as one band.
std::vector<std::vector<int>> definitions_in_order(const Model &m);

// Builds the model; throws a UserError for inputs the model cannot bound. For a schedule JSON
// to import (`imported_schedule`), the Funcs it lists as inlined are inlined
// (inlined_in_schedule_json) in place of PipelineGraph::inlined, and the inputs it stages are
// staged (staged_inputs_in_schedule_json). Otherwise, for a GPU schedule (`gpu`), the inputs
// that qualify are staged in shared memory (staged_inputs.h).
//
// With `threads` > 1 the dead instances (dead_instances.h) are found on a thread of their own,
// in an isl context of their own, while the caller goes on with the model (heat-3d: 28 ms of
// its 60 ms model, hidden behind its dependences).
std::unique_ptr<Model> build_model(const Pipeline &p, const std::string &imported_schedule = "", bool gpu = false,
                                   int threads = 1);

} // namespace tessera::poly
