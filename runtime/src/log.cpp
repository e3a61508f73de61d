#include "tessera/runtime/log.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>

namespace tessera::runtime {
namespace {

const char *topic_name(LogTopic t) {
    switch (t) {
    case LogTopic::Compile: return "compile";
    case LogTopic::Cache: return "cache";
    case LogTopic::Recompile: return "recompile";
    }
    return "?";
}

std::mutex g_stderr_mutex;

} // namespace

bool log_enabled(LogTopic topic) {
    const char *v = std::getenv("TESSERA_LOG");
    if (!v || !*v) return false;
    std::stringstream s(v);
    std::string item;
    while (std::getline(s, item, ','))
        if (item == "all" || item == topic_name(topic)) return true;
    return false;
}

void log_line(LogTopic topic, const std::string &line) {
    if (!log_enabled(topic)) return;
    std::lock_guard<std::mutex> lock(g_stderr_mutex);
    std::fprintf(stderr, "tessera[%s] %s\n", topic_name(topic), line.c_str());
}

void warn_once(const std::string &message) {
    static std::set<std::string> given;
    std::lock_guard<std::mutex> lock(g_stderr_mutex);
    if (!given.insert(message).second) return;
    std::fprintf(stderr, "tessera: warning: %s\n", message.c_str());
}

} // namespace tessera::runtime
