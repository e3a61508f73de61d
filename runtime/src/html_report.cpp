#include "tessera/runtime/html_report.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <tessera/poly/gpu_mapping.h>
#include <tessera/target_info.h>

namespace tessera::runtime {
namespace {

std::string escape(const std::string &s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string kind_name(poly::Group::Kind k) {
    switch (k) {
    case poly::Group::Kind::OverlappedTiles: return "overlapped tiles";
    case poly::Group::Kind::Affine: return "affine";
    case poly::Group::Kind::Sequential: return "sequential";
    }
    return "?";
}

std::string tiles_text(const std::vector<int> &tiles) {
    if (tiles.empty()) return "untiled";
    std::string s;
    for (int t : tiles) s += (s.empty() ? "" : " × ") + std::to_string(t);
    return s;
}

template <typename T>
std::string joined(const std::vector<T> &v, const std::string &sep = " × ") {
    std::ostringstream s;
    for (size_t i = 0; i < v.size(); ++i) s << (i ? sep : "") << v[i];
    return s.str();
}

// The Func graph: the inputs' box on the left, then one box per fusion group in the order the
// groups run, and last a dashed box for Funcs of no group (inlined into their consumers). Inside
// a box, a Func sits one level right of the latest of its producers in the same box, so that a
// group's own dataflow reads left to right.
std::string graph_svg(const poly::Program &program) {
    const poly::Model &m = *program.model;
    const PipelineGraph &g = m.graph;
    constexpr int kNodeW = 130, kNodeH = 28, kLevelW = 160, kRowH = 44, kTop = 62, kLeft = 16, kBoxPad = 14, kBoxGap = 26;
    struct Node {
        std::string name;
        int box = 0, level = 0, row = 0;
        bool input = false, output = false;
    };
    std::map<const void *, Node> nodes;
    int boxes = int(program.groups.size()) + 2;  // inputs, groups, inlined
    for (const auto &in : g.inputs) nodes[in.get()] = {in->name, 0, 0, 0, true, false};
    std::map<const FuncContents *, int> box_of;
    for (size_t k = 0; k < program.groups.size(); ++k)
        for (FuncContents *f : program.groups[k].funcs) box_of.emplace(f, int(k) + 1);
    // Levels, producers first (g.funcs is in dependency order).
    for (const auto &f : g.funcs) {
        auto b = box_of.find(f.get());
        Node n{f->name, b == box_of.end() ? boxes - 1 : b->second, 0, 0, false, g.is_output(f.get())};
        auto callees = g.callees.find(f.get());
        if (callees != g.callees.end())
            for (FuncContents *c : callees->second) {
                const Node &p = nodes.at(c);
                if (p.box == n.box) n.level = std::max(n.level, p.level + 1);
            }
        nodes[f.get()] = n;
    }
    // Rows: in order of appearance within each (box, level).
    std::map<std::pair<int, int>, int> used;
    std::vector<int> levels(size_t(boxes), 0), rows(size_t(boxes), 0);
    auto place = [&](Node &n) {
        n.row = used[{n.box, n.level}]++;
        levels[size_t(n.box)] = std::max(levels[size_t(n.box)], n.level + 1);
        rows[size_t(n.box)] = std::max(rows[size_t(n.box)], n.row + 1);
    };
    for (const auto &in : g.inputs) place(nodes.at(in.get()));
    for (const auto &f : g.funcs) place(nodes.at(f.get()));
    std::vector<int> box_x(size_t(boxes), 0);
    int x = kLeft;
    for (int b = 0; b < boxes; ++b) {
        box_x[size_t(b)] = x;
        if (levels[size_t(b)] > 0) x += levels[size_t(b)] * kLevelW + 2 * kBoxPad - (kLevelW - kNodeW) + kBoxGap;
    }
    int max_rows = std::max(1, *std::max_element(rows.begin(), rows.end()));
    int width = x + kLeft, height = kTop + max_rows * kRowH + 20;
    auto x_of = [&](const Node &n) { return box_x[size_t(n.box)] + kBoxPad + n.level * kLevelW; };
    auto y_of = [&](const Node &n) { return kTop + n.row * kRowH; };

    std::ostringstream s;
    s << "<svg id=\"func-graph\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height << "\" role=\"img\" aria-label=\"Func graph with fusion groups\">\n";
    s << "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
         "orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#555\"/></marker></defs>\n";
    // The boxes first, under the nodes.
    auto outline = [&](int b, const std::string &cls, const std::string &label, const std::string &sub) {
        if (levels[size_t(b)] == 0) return;
        int bx = box_x[size_t(b)], by = kTop - 40;
        int w = levels[size_t(b)] * kLevelW + 2 * kBoxPad - (kLevelW - kNodeW), h = rows[size_t(b)] * kRowH + 40;
        s << "<g class=\"" << cls << "\"><rect x=\"" << bx << "\" y=\"" << by << "\" width=\"" << w << "\" height=\"" << h
          << "\" rx=\"10\"/>\n<text class=\"group-label\" x=\"" << bx + 8 << "\" y=\"" << by + 15 << "\">" << escape(label)
          << "</text><text class=\"group-sub\" x=\"" << bx + 8 << "\" y=\"" << by + 29 << "\">" << escape(sub) << "</text></g>\n";
    };
    outline(0, "inputs", "inputs", "");
    for (size_t k = 0; k < program.groups.size(); ++k) {
        const poly::Group &grp = program.groups[k];
        outline(int(k) + 1, "group", grp.name + ": " + kind_name(grp.kind), tiles_text(grp.tile_sizes));
    }
    outline(boxes - 1, "inlined", "inlined", "into their consumers");
    // Edges: producer → consumer.
    auto edge = [&](const Node &a, const Node &b) {
        double x1 = x_of(a) + kNodeW, y1 = y_of(a) + kNodeH / 2.0, x2 = x_of(b), y2 = y_of(b) + kNodeH / 2.0;
        double mid = (x1 + x2) / 2;
        if (y_of(a) == y_of(b) && x2 - x1 > kLevelW) {
            // Past other nodes of the same row: an arc from the top of one to the top of the other.
            double top = y_of(a) - 7;
            s << "<path class=\"edge\" d=\"M " << x1 - kNodeW / 2.0 << " " << y_of(a) << " C " << x1 - kNodeW / 2.0 << " " << top
              << ", " << x2 + kNodeW / 2.0 << " " << top << ", " << x2 + kNodeW / 2.0 << " " << y_of(b)
              << "\" marker-end=\"url(#arrow)\"/>\n";
            return;
        }
        s << "<path class=\"edge\" d=\"M " << x1 << " " << y1 << " C " << mid << " " << y1 << ", " << mid << " " << y2 << ", " << x2
          << " " << y2 << "\" marker-end=\"url(#arrow)\"/>\n";
    };
    for (const auto &f : g.funcs) {
        auto it = g.callees.find(f.get());
        if (it != g.callees.end())
            for (FuncContents *c : it->second) edge(nodes.at(c), nodes.at(f.get()));
        std::set<const InputContents *> read;
        for (const Definition *d : definitions_of(*f))
            for (const Expr &e : definition_exprs(*d))
                ir::visit(e, [&](const Expr &n) {
                    if (n->op == Op::InputCall && read.insert(n->input.get()).second) edge(nodes.at(n->input.get()), nodes.at(f.get()));
                    return true;
                });
    }
    for (const auto &[key, n] : nodes) {
        std::string cls = n.input ? "node input" : n.output ? "node output" : "node";
        s << "<g class=\"" << cls << "\"><rect x=\"" << x_of(n) << "\" y=\"" << y_of(n) << "\" width=\"" << kNodeW << "\" height=\""
          << kNodeH << "\" rx=\"5\"/><text x=\"" << x_of(n) + kNodeW / 2 << "\" y=\"" << y_of(n) + 18
          << "\" text-anchor=\"middle\">" << escape(n.name) << "</text></g>\n";
    }
    s << "</svg>\n";
    return s.str();
}

} // namespace

std::string html_report(const poly::Program &program, const CompileReport &report, const std::string &pipeline_text,
                        const Target &target) {
    const poly::Model &m = *program.model;
    std::string outputs;
    for (const FuncContents *f : m.graph.outputs) outputs += (outputs.empty() ? "" : ", ") + f->name;
    std::string target_name = target.arch == Target::Arch::CUDA
                                  ? "CUDA sm_" + std::to_string(target.sm) + (target.emulate ? " (emulated)" : "")
                                  : "host CPU";
    std::ostringstream h;
    h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>Tessera: " << escape(outputs) << "</title>\n"
      << "<style>\n"
         "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}\n"
         "h1{font-size:22px} h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}\n"
         "table{border-collapse:collapse;font-size:13px} td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}\n"
         "th{background:#f3f3f3} pre{background:#f7f7f7;padding:10px;overflow:auto;font-size:12px;max-height:600px}\n"
         ".graph{overflow:auto;border:1px solid #ddd;padding:6px}\n"
         "svg text{font-size:12px;font-family:system-ui,sans-serif}\n"
         ".group rect{fill:#fff7ec;stroke:#e67e22;stroke-width:2}\n"
         ".inputs rect{fill:#f4f8fb;stroke:#7f8c8d;stroke-width:1}\n"
         ".inlined rect{fill:none;stroke:#7f8c8d;stroke-width:1.5;stroke-dasharray:6 4}\n"
         ".group-label{font-weight:bold;fill:#a04000} .group-sub{fill:#555;font-size:11px}\n"
         ".node rect{fill:#d6eaf8;stroke:#2874a6} .node.input rect{fill:#eeeeee;stroke:#555}\n"
         ".node.output rect{fill:#d5f5e3;stroke:#1e8449;stroke-width:2}\n"
         ".edge{fill:none;stroke:#555;stroke-width:1.2}\n"
         ".bar{display:inline-block;height:10px;background:#2874a6}\n"
      << "</style></head><body>\n";
    h << "<h1>Tessera pipeline: " << escape(outputs) << "</h1>\n";
    h << "<p>Target: " << escape(target_name) << ". Compiled in <b>" << report.total_ms << " ms</b>. Compile cache: <b id=\"cache-status\">"
      << escape(report.cache.empty() ? "not used" : report.cache) << "</b>.</p>\n";

    h << "<h2>Func graph and fusion groups</h2>\n<div class=\"graph\">\n" << graph_svg(program) << "</div>\n";

    h << "<h2>Groups</h2>\n<table id=\"groups\"><tr><th>group</th><th>kind</th><th>Funcs</th><th>tiles</th><th>why</th></tr>\n";
    for (const poly::Group &g : program.groups) {
        std::vector<std::string> funcs;
        for (FuncContents *f : g.funcs) funcs.push_back(f->name);
        h << "<tr><td>" << escape(g.name) << "</td><td>" << kind_name(g.kind) << "</td><td>" << escape(joined(funcs, ", "))
          << "</td><td>" << tiles_text(g.tile_sizes) << "</td><td>" << escape(g.note) << "</td></tr>\n";
    }
    h << "</table>\n";

    h << "<h2>Storage</h2>\n<table id=\"storage\"><tr><th>buffer</th><th>kind</th><th>type</th><th>group</th><th>per-tile "
         "footprint</th><th>folded to</th></tr>\n";
    for (const poly::Storage &st : program.storage) {
        std::string kind = st.kind == poly::Storage::Kind::Output ? "output"
                           : st.kind == poly::Storage::Kind::Buffer ? "full buffer" : "scratchpad";
        std::string group = st.group >= 0 && size_t(st.group) < program.groups.size() ? program.groups[size_t(st.group)].name : "";
        std::string fold;
        for (size_t d = 0; d < st.fold.size(); ++d)
            if (st.fold[d]) fold += (fold.empty() ? "" : ", ") + std::to_string(st.fold[d]) + " rows in dimension " + std::to_string(d);
        h << "<tr><td>" << escape(st.name) << "</td><td>" << kind << "</td><td>" << st.type << "</td><td>" << escape(group)
          << "</td><td>" << (st.footprint.empty() ? "" : joined(st.footprint)) << "</td><td>" << escape(fold) << "</td></tr>\n";
    }
    h << "</table>\n";

    std::vector<poly::KernelSummary> kernels = poly::kernels_of(program.schedule);
    if (!kernels.empty()) {
        int threads = std::min(256, TargetInfo::nvidia_gpu(target.sm, target.shared_memory_opt_in).max_threads_per_block);
        h << "<h2>GPU kernels</h2>\n<table id=\"kernels\"><tr><th>kernel</th><th>grid</th><th>block</th><th>statements</th>"
             "<th>barriers</th></tr>\n";
        for (size_t k = 0; k < kernels.size(); ++k) {
            const poly::KernelSummary &ks = kernels[k];
            h << "<tr><td>" << k << "</td><td>" << ks.block_loops << "-dimensional (one block per tile)</td><td>"
              << (ks.thread_loops ? std::to_string(threads) + " threads" : "1 thread") << "</td><td>"
              << escape(joined(ks.statements, ", ")) << "</td><td>" << ks.barriers << "</td></tr>\n";
        }
        h << "</table>\n";
    }

    h << "<h2>Compile time by phase</h2>\n<table id=\"phases\"><tr><th>phase</th><th>ms</th><th></th></tr>\n";
    double longest = 0;
    for (const auto &[phase, ms] : report.phase_ms) longest = std::max(longest, ms);
    for (const auto &[phase, ms] : report.phase_ms)
        h << "<tr><td>" << escape(phase) << "</td><td>" << ms << "</td><td><span class=\"bar\" style=\"width:"
          << (longest > 0 ? int(300 * ms / longest) : 0) << "px\"></span></td></tr>\n";
    h << "<tr><th>total</th><th>" << report.total_ms << "</th><th></th></tr></table>\n";

    h << "<h2>Loop nest</h2>\n<pre id=\"loop-nest\">" << escape(poly::to_string(program.nest)) << "</pre>\n";
    h << "<h2>Pipeline</h2>\n<pre id=\"pipeline\">" << escape(pipeline_text) << "</pre>\n";
    h << "</body></html>\n";
    return h.str();
}

} // namespace tessera::runtime
