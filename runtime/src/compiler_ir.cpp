#include "tessera/runtime/compiler_ir.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <tessera/pipeline.h>
#include <tessera/poly/dependences.h>
#include <tessera/poly/schedule_options.h>

namespace tessera::runtime {

std::string model_text(const poly::Model &m) {
    std::ostringstream s;
    s << "context: " << m.context << "\n\n";
    for (const poly::Statement &st : m.statements) {
        s << "statement " << st.name << "\n";
        s << "  domain: " << st.domain << "\n";
        s << "  write:  " << st.write.relation << "\n";
        for (const poly::Access &r : st.reads)
            s << "  read:   " << r.relation << (r.exact ? "" : "  (may: a data-dependent index, over-approximated)") << "\n";
        for (const Expr &g : st.guards) s << "  guard:  " << g << "\n";
        s << "\n";
    }
    for (const poly::Array &a : m.arrays)
        s << "array " << a.name << " : " << a.type << ", region " << a.region << "\n";
    return s.str();
}

std::string dependences_text(const poly::Model &m) {
    poly::Dependences d = poly::compute_dependences(m, poly::ScheduleOptions{}.max_operations);
    if (!d.computed) return "not computed: isl ran out of its operation quota (the scheduler keeps the original order)\n";
    std::ostringstream s;
    s << "flow (read after write):\n  " << d.flow << "\n";
    s << "anti (write after read):\n  " << d.anti << "\n";
    s << "output (write after write):\n  " << d.output << "\n";
    return s.str();
}

std::string stage_file_name(const std::string &stage) {
    const auto &stages = compiler_ir_stages();
    size_t index = 0;
    while (index < stages.size() && stages[index] != stage) ++index;
    std::string ext = stage == "schedule" ? "json" : stage == "loop_nest" ? "c" : (stage == "llvm" || stage == "llvm_unoptimized") ? "ll"
                      : stage == "asm" ? "s" : stage == "ptx" ? "ptx" : "txt";
    std::string number = std::to_string(index + 1);
    if (number.size() < 2) number = "0" + number;
    return number + "-" + stage + "." + ext;
}

std::vector<std::string> dump_compiler_ir(const Callable &c, const Pipeline &p, const std::string &dir) {
    static std::atomic<int> count{0};
    std::vector<std::string> files;
    // The directory is named after the outputs.
    std::string outputs;
    for (const Func &f : p.outputs()) outputs += (outputs.empty() ? "" : "+") + f.name();
    for (char &ch : outputs)
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '+' && ch != '-') ch = '_';
    std::filesystem::path out = std::filesystem::path(dir) / (outputs + "-" + std::to_string(getpid()) + "-" + std::to_string(count++));
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec) user_error("TESSERA_DUMP: cannot create ", out.string(), ": ", ec.message(), ".");
    for (const std::string &stage : compiler_ir_stages()) {
        std::string body;
        try {
            body = c.compiler_ir(stage);
        } catch (const UserError &) {
            continue;  // a stage this compile did not keep (ptx on the host)
        }
        std::filesystem::path file = out / stage_file_name(stage);
        std::ofstream f(file, std::ios::binary);
        f << body;
        if (!f) user_error("TESSERA_DUMP: cannot write ", file.string(), ".");
        files.push_back(file.string());
    }
    return files;
}

std::string dump_directory() {
    const char *d = std::getenv("TESSERA_DUMP");
    return d && *d ? std::string(d) : std::string();
}

} // namespace tessera::runtime
