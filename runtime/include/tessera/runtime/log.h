// TESSERA_LOG: one line on stderr per compile event, for the topics the variable names
// (comma-separated; "all" for every one), like XLA's recompilation warnings:
//
//   TESSERA_LOG=compile,cache,recompile ./my_app
//   tessera[compile] blur_y for the host: 84.2 ms (model 1.9, schedule 31.0, ...)
//   tessera[cache] hit 3f2a9c01d4e5b6a7 (blur_y): loaded in 0.21 ms
//   tessera[recompile] blur_y compiled again: new options (fast_math)
//
// Warnings (a refused cache directory, a corrupt entry) are printed whatever TESSERA_LOG says,
// each one once per process.
#pragma once

#include <string>

namespace tessera::runtime {

enum class LogTopic { Compile, Cache, Recompile };

// Whether TESSERA_LOG names the topic (read on every call: tests change it).
bool log_enabled(LogTopic topic);
// Writes `tessera[<topic>] <line>` to stderr when the topic is enabled.
void log_line(LogTopic topic, const std::string &line);
// Writes `tessera: warning: <message>` to stderr, the first time this message is given.
void warn_once(const std::string &message);

} // namespace tessera::runtime
