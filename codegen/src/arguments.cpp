#include "tessera/codegen/arguments.h"

namespace tessera::codegen {

std::vector<Argument> pipeline_arguments(const PipelineGraph &g, const Pipeline &p) {
    std::vector<Argument> args;
    for (const auto &in : g.inputs) {
        Argument a;
        a.kind = Argument::Kind::Input;
        a.name = in->name;
        a.type = in->type;
        a.dimensions = in->dimensions;
        a.input = in;
        args.push_back(a);
    }
    for (const auto &p : g.params) {
        Argument a;
        a.kind = Argument::Kind::Param;
        a.name = p->name;
        a.type = p->type;
        a.param = p;
        args.push_back(a);
    }
    const auto &outs = p.outputs();
    for (size_t i = 0; i < outs.size(); ++i) {
        Argument a;
        a.kind = Argument::Kind::Output;
        a.name = outs[i].name();
        a.type = outs[i].type();
        a.dimensions = outs[i].dimensions();
        a.output = int(i);
        args.push_back(a);
    }
    return args;
}

} // namespace tessera::codegen
