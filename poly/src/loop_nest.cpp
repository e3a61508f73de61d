#include "tessera/poly/loop_nest.h"

#include <sstream>

namespace tessera::poly {

void print_loop_nest(std::ostream &s, const LoopNodePtr &n, int indent) {
    if (!n) return;
    std::string pad(size_t(indent) * 2, ' ');
    switch (n->kind) {
    case LoopNode::Kind::For:
        s << pad << (n->parallel ? "parallel " : "") << (n->vectorize ? "vectorized " : "") << "for "
          << (n->parallel && n->collapse > 1 ? "collapse(" + std::to_string(n->collapse) + ") " : "") << "(" << n->var
          << " = " << n->min << "; " << n->var << " <= " << n->max << "; " << n->var << " += " << n->step << ")\n";
        print_loop_nest(s, n->body, indent + 1);
        break;
    case LoopNode::Kind::If:
        s << pad << "if (" << n->condition << ")\n";
        print_loop_nest(s, n->then_case, indent + 1);
        if (n->else_case) {
            s << pad << "else\n";
            print_loop_nest(s, n->else_case, indent + 1);
        }
        break;
    case LoopNode::Kind::Block:
        for (const auto &c : n->children) print_loop_nest(s, c, indent);
        break;
    case LoopNode::Kind::Mark:
        s << pad << "// " << n->mark << "\n";
        print_loop_nest(s, n->body, indent);
        break;
    case LoopNode::Kind::Call:
        s << pad << n->statement_name << "(";
        for (size_t i = 0; i < n->args.size(); ++i) s << (i ? ", " : "") << n->args[i];
        s << ");\n";
        break;
    }
}

std::string to_string(const LoopNodePtr &n) {
    std::ostringstream s;
    print_loop_nest(s, n);
    return s.str();
}

} // namespace tessera::poly
