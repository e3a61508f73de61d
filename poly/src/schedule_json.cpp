#include "tessera/poly/schedule_json.h"

#include "tessera/poly/gpu_mapping.h"

#include <nlohmann/json.hpp>

#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/union_set.h>

#include "tessera/poly/dependences.h"
#include "tessera/poly/legality.h"
#include "tessera/poly/staged_inputs.h"

namespace tessera::poly {
namespace {

using json = nlohmann::ordered_json;

std::string str(const Expr &e) { return e.defined() ? to_string(e) : std::string(); }

template <typename T>
std::string isl_str(T *obj, char *(*print)(T *)) {
    char *c = print(obj);
    std::string s = c ? c : "";
    free(c);
    return s;
}

const char *kind_name(Parameter::Kind k) {
    switch (k) {
    case Parameter::Kind::OutputMin: return "output_min";
    case Parameter::Kind::OutputExtent: return "output_extent";
    case Parameter::Kind::InputMin: return "input_min";
    case Parameter::Kind::InputExtent: return "input_extent";
    case Parameter::Kind::Scalar: return "param";
    case Parameter::Kind::Region: return "region";
    }
    return "?";
}

const char *group_kind(Group::Kind k) {
    switch (k) {
    case Group::Kind::OverlappedTiles: return "overlapped_tiles";
    case Group::Kind::Affine: return "affine";
    case Group::Kind::Sequential: return "sequential";
    }
    return "?";
}

const char *storage_kind(Storage::Kind k) {
    switch (k) {
    case Storage::Kind::Output: return "output";
    case Storage::Kind::Buffer: return "buffer";
    case Storage::Kind::Scratch: return "scratch";
    }
    return "?";
}

// The schedule tree as structured JSON, node by node.
json tree_json(isl_schedule_node *n) {
    json j;
    auto children = [&]() {
        json c = json::array();
        for (int i = 0; i < int(isl_schedule_node_n_children(n)); ++i) {
            isl_schedule_node *ch = isl_schedule_node_get_child(n, i);
            c.push_back(tree_json(ch));
            isl_schedule_node_free(ch);
        }
        return c;
    };
    auto only_child = [&]() {
        json c = children();
        return c.empty() ? json() : c[0];
    };
    switch (isl_schedule_node_get_type(n)) {
    case isl_schedule_node_domain: {
        isl_union_set *d = isl_schedule_node_domain_get_domain(n);
        j["domain"] = isl_str(d, isl_union_set_to_str);
        isl_union_set_free(d);
        j["child"] = only_child();
        break;
    }
    case isl_schedule_node_band: {
        json band;
        int members = int(isl_schedule_node_band_n_member(n));
        isl_multi_union_pw_aff *mupa = isl_schedule_node_band_get_partial_schedule(n);
        band["members"] = json::array();
        band["coincident"] = json::array();
        for (int i = 0; i < members; ++i) {
            isl_union_pw_aff *upa = isl_multi_union_pw_aff_get_at(mupa, i);
            band["members"].push_back(isl_str(upa, isl_union_pw_aff_to_str));
            isl_union_pw_aff_free(upa);
            band["coincident"].push_back(isl_schedule_node_band_member_get_coincident(n, i) == isl_bool_true);
        }
        isl_multi_union_pw_aff_free(mupa);
        band["permutable"] = isl_schedule_node_band_get_permutable(n) == isl_bool_true;
        j["band"] = band;
        j["child"] = only_child();
        break;
    }
    case isl_schedule_node_sequence: j["sequence"] = children(); break;
    case isl_schedule_node_set: j["set"] = children(); break;
    case isl_schedule_node_filter: {
        isl_union_set *f = isl_schedule_node_filter_get_filter(n);
        j["filter"] = isl_str(f, isl_union_set_to_str);
        isl_union_set_free(f);
        j["child"] = only_child();
        break;
    }
    case isl_schedule_node_mark: {
        isl_id *id = isl_schedule_node_mark_get_id(n);
        j["mark"] = isl_id_get_name(id);
        isl_id_free(id);
        j["child"] = only_child();
        break;
    }
    case isl_schedule_node_leaf: j = json::object(); break;
    default:
        j["node"] = "other";
        j["child"] = only_child();
        break;
    }
    if (j.contains("child") && j["child"].is_null()) j.erase("child");
    return j;
}

} // namespace

namespace {

// The strings of the schedule JSON's "pipeline".`key` list, none where it has no such list
// (what does not parse is reported by schedule_from_json); a list of anything but strings is a
// UserError (`entry`: what its strings name, "Func name").
std::vector<std::string> pipeline_list(const std::string &text, const char *key, const char *entry) {
    std::vector<std::string> names;
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("pipeline") || !j["pipeline"].is_object() || !j["pipeline"].contains(key))
        return names;
    const json &list = j["pipeline"][key];
    if (!list.is_array()) user_error("The schedule JSON's pipeline.", key, " is not an array of ", entry, "s.");
    for (const json &n : list) {
        if (!n.is_string()) user_error("The schedule JSON's pipeline.", key, " holds ", n.dump(), ", which is not a ", entry, ".");
        names.push_back(n.get<std::string>());
    }
    return names;
}

} // namespace

std::set<const FuncContents *> inlined_in_schedule_json(const PipelineGraph &g, const std::string &text) {
    std::set<const FuncContents *> inlined;
    for (const std::string &name : pipeline_list(text, "inlined", "Func name")) {
        auto it = std::find_if(g.funcs.begin(), g.funcs.end(), [&](const auto &f) { return f->name == name; });
        if (it == g.funcs.end())
            user_error("The schedule JSON lists ", name, " in pipeline.inlined, but the pipeline has no Func ", name,
                       ". Export the schedule of this pipeline with Pipeline::schedule_json() and edit that.");
        const FuncContents &f = **it;
        if (f.compute_inline) continue;
        if (!f.updates.empty() || g.is_output(&f))
            user_error("The schedule JSON lists ", name, " in pipeline.inlined, but ", name,
                       f.updates.empty() ? " is an output of the pipeline" : " has update definitions",
                       "; only a pure Func that is not an output is computed inline. Remove it from the list.");
        inlined.insert(&f);
    }
    return inlined;
}

std::vector<std::string> staged_inputs_in_schedule_json(const std::string &text) {
    return pipeline_list(text, "staged_inputs", "input name");
}

std::string schedule_to_json(const Program &p, const ScheduleOptions *o, int indent) {
    const Model &m = *p.model;
    json j;
    j["schema_version"] = kScheduleSchemaVersion;
    json outputs = json::array(), funcs = json::array();
    for (const Func &f : m.pipeline.outputs()) outputs.push_back(f.name());
    json inlined = json::array();
    for (const auto &f : m.graph.funcs) {
        funcs.push_back(f->name);
        if (m.graph.is_inlined(f.get())) inlined.push_back(f->name);
    }
    j["pipeline"] = {{"outputs", outputs}, {"funcs", funcs}, {"inlined", inlined}};
    if (!m.staged_copies.empty()) j["pipeline"]["staged_inputs"] = staged_input_names(m);
    for (const RecomputedFunc &r : m.recomputed) {
        json by = json::array();
        for (const FuncContents *c : r.by) by.push_back(c->name);
        j["pipeline"]["recomputed"].push_back({{"func", r.func->name}, {"by", by}});
    }
    if (!o && p.scheduled_with) o = &*p.scheduled_with;
    if (o) {
        j["options"] = {{"fusion", fusion_name(o->fusion)}, {"tile_sizes", o->tile_sizes}, {"parallel", o->parallel},
                        {"vector_width", o->vector_width}, {"max_operations", o->max_operations},
                        {"max_recompute", o->max_recompute}, {"cache_bytes", o->cache_bytes},
                        {"storage_folding", o->storage_folding}};
    }
    json params = json::array();
    for (const Parameter &prm : m.params) {
        json q = {{"name", prm.name}, {"kind", kind_name(prm.kind)}, {"dim", prm.dim}};
        if (prm.output >= 0) q["of"] = m.pipeline.outputs()[size_t(prm.output)].name();
        if (prm.input) q["of"] = prm.input->name;
        if (prm.param) q["of"] = prm.param->name;
        if (prm.kind == Parameter::Kind::Region) q["value"] = str(prm.value);
        params.push_back(q);
    }
    j["parameters"] = params;

    json stmts = json::array();
    for (const ExecStatement &e : p.statements) {
        const Statement &s = m.statements[size_t(e.statement)];
        stmts.push_back({{"name", e.name},
                         {"computes", s.name},
                         {"func", s.func->name},
                         {"definition", s.definition},
                         {"dims", e.dims},
                         {"domain", isl_str(e.domain.get(), isl_set_to_str)}});
    }
    j["statements"] = stmts;

    json groups = json::array();
    for (const Group &g : p.groups) {
        json fs = json::array(), ss = json::array();
        for (FuncContents *f : g.funcs) fs.push_back(f->name);
        for (int s : g.statements) ss.push_back(m.statements[size_t(s)].name);
        groups.push_back({{"name", g.name},
                          {"kind", group_kind(g.kind)},
                          {"stages", fs},
                          {"statements", ss},
                          {"tile_sizes", g.tile_sizes},
                          {"note", g.note}});
    }
    j["groups"] = groups;

    json storage = json::array(), footprints = json::array();
    for (const Storage &st : p.storage) {
        json s = {{"func", st.name}, {"kind", storage_kind(st.kind)}, {"type", st.type.to_string()}};
        json ext = json::array(), mn = json::array();
        for (const Expr &e : st.extent) ext.push_back(str(e));
        for (const Expr &e : st.min) mn.push_back(str(e));
        if (st.kind == Storage::Kind::Output) s["output"] = st.output;
        if (st.kind == Storage::Kind::Buffer) s["min"] = mn;
        s["extent"] = ext;
        if (st.kind == Storage::Kind::Scratch) {
            int64_t elements = 1;
            for (const Expr &e : st.extent) elements *= ir::as_const_int(e).value_or(0);
            s["group"] = "G" + std::to_string(st.group);
            s["bytes_per_tile"] = elements * st.type.bytes();
            json off = json::array();
            for (const Expr &e : st.offset) off.push_back(str(e));
            footprints.push_back({{"group", "G" + std::to_string(st.group)},
                                  {"func", st.name},
                                  {"size", st.footprint},
                                  {"offset", off},
                                  {"fold", st.fold}});
        }
        storage.push_back(s);
    }
    j["storage"] = storage;
    j["footprints"] = footprints;

    // GPU schedules: each kernel, its block loops, statements, barriers and the scratchpads
    // its blocks keep (in shared memory when they fit; docs/gpu.md).
    std::vector<KernelSummary> kernels = kernels_of(p.schedule);
    if (!kernels.empty()) {
        json ks = json::array();
        for (size_t k = 0; k < kernels.size(); ++k) {
            const KernelSummary &kernel = kernels[k];
            std::set<int> groups_in;
            for (const std::string &name : kernel.statements) {
                int e = p.exec_statement(name);
                if (e >= 0 && p.statements[size_t(e)].group >= 0) groups_in.insert(p.statements[size_t(e)].group);
            }
            json scratch = json::array();
            for (const Storage &st : p.storage)
                if (st.kind == Storage::Kind::Scratch && groups_in.count(st.group)) scratch.push_back(st.name);
            ks.push_back({{"kernel", k},
                          {"block_loops", kernel.block_loops},
                          {"statements", kernel.statements},
                          {"barriers", kernel.barriers},
                          {"thread_loops", kernel.thread_loops},
                          {"block_scratch", scratch}});
        }
        j["gpu_kernels"] = ks;
    }
    isl::schedule_node root = p.schedule.root();
    j["tree"] = tree_json(root.get());
    j["schedule_tree"] = isl_str(p.schedule.get(), isl_schedule_to_str);
    j["loop_nest"] = p.ast_c;
    return j.dump(indent);
}

Program schedule_from_json(std::shared_ptr<const Model> model, const std::string &text, long max_operations) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error &e) {
        user_error("The schedule JSON does not parse: ", e.what());
    }
    if (!j.is_object() || !j.contains("schema_version"))
        user_error("The schedule JSON has no schema_version; export one with Pipeline::schedule_json() and edit it.");
    if (j["schema_version"] != kScheduleSchemaVersion)
        user_error("The schedule JSON has schema_version ", j["schema_version"].dump(), "; this Tessera reads version ",
                   kScheduleSchemaVersion, ".");
    if (!j.contains("schedule_tree") || !j["schema_version"].is_number() || !j["schedule_tree"].is_string())
        user_error("The schedule JSON has no \"schedule_tree\" string: it holds the schedule to import.");
    std::string tree = j["schedule_tree"].get<std::string>();
    isl_schedule *s = isl_schedule_read_from_str(model->ctx().get(), tree.c_str());
    if (!s) user_error("The schedule JSON's \"schedule_tree\" is not a schedule tree isl can read.");
    Program p = program_from_tree(model, isl::manage(s), {});
    Dependences d = compute_dependences(*model, max_operations);
    if (!d.computed)
        user_error("Cannot check the imported schedule: dependence analysis exceeded its operation quota (",
                   max_operations, ").");
    Legality l = check_legality(p, d);
    if (!l.legal) user_error("The imported schedule is illegal. ", l.violation);
    return p;
}

} // namespace tessera::poly
