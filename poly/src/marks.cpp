#include "tessera/poly/marks.h"

#include <isl/id.h>
#include <isl/schedule_node.h>

#include <sstream>

#include "tessera/error.h"

namespace tessera::poly {

std::string Mark::text() const {
    switch (kind) {
    case Kind::Parallel: return collapse > 1 ? "parallel:" + std::to_string(collapse) : "parallel";
    case Kind::Vector: return "vector";
    case Kind::TileBody: return "tile_body";
    case Kind::Fold: return "fold:" + array + ":" + std::to_string(dimension) + ":" + std::to_string(rows);
    case Kind::RegisterTile: return "register_tile:" + std::to_string(rows) + ":" + std::to_string(block);
    case Kind::Kernel: return collapse == 1 ? "kernel" : "kernel:" + std::to_string(collapse);
    case Kind::Thread: return "thread";
    case Kind::Barrier: return "barrier";
    }
    return "";
}

std::optional<Mark> parse_mark(const std::string &text) {
    if (text == "parallel") return Mark::parallel();
    if (text.rfind("parallel:", 0) == 0) {
        std::istringstream in(text.substr(9));
        int collapse = 0;
        std::string extra;
        if (!(in >> collapse) || collapse < 1 || collapse > 8 || (in >> extra))
            user_error("The schedule mark '", text, "' is not of the form 'parallel:<loops>' with 1 to 8 loops.");
        return Mark::parallel(collapse);
    }
    if (text == "vector") return Mark::vector();
    if (text == "kernel") return Mark::kernel(1);
    if (text.rfind("kernel:", 0) == 0) {
        std::istringstream in(text.substr(7));
        int loops = -1;
        std::string extra;
        if (!(in >> loops) || loops < 0 || loops > 3 || (in >> extra))
            user_error("The schedule mark '", text, "' is not of the form 'kernel:<block loops>' with 0 to 3 loops.");
        return Mark::kernel(loops);
    }
    if (text == "thread") return Mark::thread();
    if (text == "barrier") return Mark::barrier();
    if (text == "tile_body") return Mark::tile_body();
    if (text.rfind("register_tile:", 0) == 0) {
        std::string rest = text.substr(14);
        for (char &c : rest)
            if (c == ':') c = ' ';
        std::istringstream in(rest);
        long rows = 0;
        int block = 0;
        std::string extra;
        if (!(in >> rows >> block) || rows < 1 || rows > 16 || block < 1 || block > 256 || (in >> extra))
            user_error("The schedule mark '", text,
                       "' is not of the form 'register_tile:<rows>:<block>' with 1 to 16 rows and 1 to 256 elements.");
        return Mark::register_tile(rows, block);
    }
    if (text.rfind("fold:", 0) != 0) return std::nullopt;
    std::string rest = text.substr(5);
    for (char &c : rest)
        if (c == ':') c = ' ';
    std::istringstream in(rest);
    std::string array, extra;
    int dimension = -1;
    long rows = 0;
    if (!(in >> array >> dimension >> rows) || dimension < 0 || rows <= 0 || (in >> extra))
        user_error("The schedule mark '", text, "' is not of the form 'fold:<array>:<dimension>:<rows>'.");
    return Mark::fold(array, dimension, rows);
}

isl::schedule_node insert_mark(const isl::schedule_node &node, const Mark &mark) {
    // (isl::id's string constructor parses an identifier; allocate the name as it is.)
    isl_id *id = isl_id_alloc(node.ctx().get(), mark.text().c_str(), new Mark(mark));
    id = isl_id_set_free_user(id, [](void *user) { delete static_cast<Mark *>(user); });
    return node.insert_mark(isl::manage(id));
}

std::optional<Mark> mark_of_id(isl_id *id) {
    if (void *user = isl_id_get_user(id)) return *static_cast<const Mark *>(user);
    return parse_mark(isl_id_get_name(id));
}

std::optional<Mark> mark_of(isl_schedule_node *mark_node) {
    if (isl_schedule_node_get_type(mark_node) != isl_schedule_node_mark) return std::nullopt;
    isl_id *id = isl_schedule_node_mark_get_id(mark_node);
    std::optional<Mark> m = mark_of_id(id);
    isl_id_free(id);
    return m;
}

} // namespace tessera::poly
