#include "tessera/eval.h"

#include <cstring>

#include "tessera/buffer.h"

namespace tessera {

Value load_scalar(Type t, const uint8_t *p) {
    Value v;
    v.u = 0;
    switch (t.code) {
    case TypeCode::Int:
        switch (t.bits) {
        case 8: { int8_t x; std::memcpy(&x, p, 1); v.i = x; break; }
        case 16: { int16_t x; std::memcpy(&x, p, 2); v.i = x; break; }
        case 32: { int32_t x; std::memcpy(&x, p, 4); v.i = x; break; }
        default: { int64_t x; std::memcpy(&x, p, 8); v.i = x; break; }
        }
        break;
    case TypeCode::UInt:
        switch (t.bits) {
        case 1: v.u = (*p) & 1; break;
        case 8: v.u = *p; break;
        case 16: { uint16_t x; std::memcpy(&x, p, 2); v.u = x; break; }
        case 32: { uint32_t x; std::memcpy(&x, p, 4); v.u = x; break; }
        default: { uint64_t x; std::memcpy(&x, p, 8); v.u = x; break; }
        }
        break;
    case TypeCode::Float:
        if (t.bits == 16) {
            uint16_t x;
            std::memcpy(&x, p, 2);
            v.f = detail::double_from_float16_bits(x);
        } else if (t.bits == 32) {
            float x;
            std::memcpy(&x, p, 4);
            v.f = x;
        } else {
            std::memcpy(&v.f, p, 8);
        }
        break;
    case TypeCode::BFloat: {
        uint16_t x;
        std::memcpy(&x, p, 2);
        v.f = detail::double_from_bfloat16_bits(x);
        break;
    }
    }
    return v;
}

void store_scalar(Type t, uint8_t *p, Value v) {
    switch (t.code) {
    case TypeCode::Int:
    case TypeCode::UInt:
        switch (t.bits) {
        case 1: *p = uint8_t(v.u & 1); break;
        case 8: *p = uint8_t(v.u); break;
        case 16: { uint16_t x = uint16_t(v.u); std::memcpy(p, &x, 2); break; }
        case 32: { uint32_t x = uint32_t(v.u); std::memcpy(p, &x, 4); break; }
        default: std::memcpy(p, &v.u, 8); break;
        }
        break;
    case TypeCode::Float:
        if (t.bits == 16) {
            uint16_t x = detail::float16_bits_from_double(v.f);
            std::memcpy(p, &x, 2);
        } else if (t.bits == 32) {
            float x = float(v.f);
            std::memcpy(p, &x, 4);
        } else {
            std::memcpy(p, &v.f, 8);
        }
        break;
    case TypeCode::BFloat: {
        uint16_t x = detail::bfloat16_bits_from_double(v.f);
        std::memcpy(p, &x, 2);
        break;
    }
    }
}

uint8_t *Accessor::address(const int64_t *coords) const {
    int64_t offset = 0;
    for (int i = 0; i < dims; ++i) {
        int64_t c = coords[i] - min[i];
        if (c < 0 || c >= extent[i])
            internal_error("access to ", name, " at coordinate ", coords[i], " of dimension ", i,
                           ", outside its storage [", min[i], ", ", min[i] + extent[i] - 1, "]");
        offset += c * stride[i];
    }
    return base + offset * type.bytes();
}

Value Accessor::load(const int64_t *coords) const { return load_scalar(type, address(coords)); }
void Accessor::store(const int64_t *coords, Value v) const { store_scalar(type, address(coords), v); }

CompiledExpr::CompiledExpr(const Expr &e, const EvalBindings &bindings) {
    root_ = compile(e, bindings);
    type_ = e.type();
}

int CompiledExpr::compile(const Expr &e, const EvalBindings &b) {
    const ExprNode &n = *e;
    std::vector<int> children;
    for (const Expr &a : n.args) children.push_back(compile(a, b));
    Node node;
    node.op = n.op;
    node.type = n.type;
    node.arg_type = n.args.empty() ? n.type : n.args[0].type();
    node.first = int(args_.size());
    node.count = int(children.size());
    args_.insert(args_.end(), children.begin(), children.end());
    switch (n.op) {
    case Op::IntConst: node.imm.i = n.int_value; break;
    case Op::UIntConst: node.imm.u = n.uint_value; break;
    case Op::FloatConst: node.imm.f = n.float_value; break;
    case Op::Var:
        node.slot = b.var_slot ? b.var_slot(n.name) : -1;
        if (node.slot < 0) internal_error("evaluator: the Var ", n.name, " is not bound");
        break;
    case Op::RVar:
        node.slot = b.rvar_slot ? b.rvar_slot(n.rdom.get(), n.index) : -1;
        if (node.slot < 0) internal_error("evaluator: the RDom variable ", n.name, " is not bound");
        break;
    case Op::Param:
        if (b.param) node.imm = b.param(*n.param);
        else {
            if (!n.param->is_set) user_error("Param ", n.param->name, " has no value. Call ", n.param->name, ".set(value).");
            node.imm = n.param->value;
        }
        break;
    case Op::BufferDim:
        if (b.buffer_dim) node.imm.i = b.buffer_dim(*n.input, n.index, n.which);
        else {
            if (!n.input->bound) user_error("InputBuffer ", n.input->name, " is not bound. Call ", n.input->name, ".set(buffer).");
            const BufferDim &d = n.input->bound->dims[size_t(n.index)];
            node.imm.i = n.which == 0 ? d.min : d.extent;
        }
        break;
    case Op::Math: node.fn = MathFn(n.index); break;
    case Op::FuncCall:
    case Op::InputCall:
        node.acc = b.accessor ? b.accessor(n) : nullptr;
        if (!node.acc) internal_error("evaluator: no storage for ", n.name);
        if (node.acc->dims != int(n.args.size()))
            internal_error("evaluator: ", n.name, " has ", node.acc->dims, " dimensions, called with ", n.args.size());
        break;
    default: break;
    }
    nodes_.push_back(node);
    return int(nodes_.size()) - 1;
}

Value CompiledExpr::eval_node(int i, const Value *slots) const {
    const Node &n = nodes_[size_t(i)];
    const int *a = args_.data() + n.first;
    switch (n.op) {
    case Op::IntConst:
    case Op::UIntConst:
    case Op::FloatConst:
    case Op::Param:
    case Op::BufferDim: return n.imm;
    case Op::Var:
    case Op::RVar: return slots[n.slot];
    case Op::Cast: return ir::eval_cast(n.type, n.arg_type, eval_node(a[0], slots));
    case Op::Not:
    case Op::BitNot:
    case Op::Abs: return ir::eval_unary(n.op, n.arg_type, eval_node(a[0], slots));
    case Op::Likely: return eval_node(a[0], slots);
    case Op::Select: return eval_node(a[0], slots).u ? eval_node(a[1], slots) : eval_node(a[2], slots);
    case Op::Math: {
        Value v[3];
        for (int k = 0; k < n.count; ++k) v[k] = eval_node(a[k], slots);
        return ir::eval_math(n.fn, n.type, v);
    }
    case Op::FuncCall:
    case Op::InputCall: {
        int64_t c[kMaxDimensions];
        for (int k = 0; k < n.count; ++k) c[k] = eval_node(a[k], slots).i;
        return n.acc->load(c);
    }
    default: return ir::eval_binary(n.op, n.arg_type, eval_node(a[0], slots), eval_node(a[1], slots));
    }
}

} // namespace tessera
