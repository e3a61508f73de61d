// tessera-fuzz: runs the random-pipeline differential fuzzer (pipeline_fuzzer.h) over a range of
// seeds and prints the seed and reproduction of every failure. Exits non-zero on any failure.
//
//   tessera-fuzz --count 2000 --seed 1 --progress     seeds 1..2000, a progress line every 100
//   tessera-fuzz --seed 57 --count 1 --verbose        prints seed 57's pipeline before running it
//   tessera-fuzz --count 2000 --isolate --timeout 60  runs the pipelines in a child process, so that
//                                                     a crash or a hang is reported as a failure of
//                                                     its seed and the run goes on
//   tessera-fuzz --seed 57 --count 1 --shrink         also prints a smaller pipeline failing alike
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "pipeline_fuzzer.h"

#include <tessera/runtime/cuda_device.h>

using namespace tessera;

namespace {

struct Options {
    uint64_t seed = 1;
    uint64_t count = 100;
    bool progress = false;
    bool verbose = false;
    bool trace = false;
    bool isolate = false;
    bool device = false;  // --device: settings.device_sm from device 0
    int timeout_s = 60;
    bool shrink = false;
    int shrink_attempts = 300;
    fuzz::FuzzSettings settings;
};

void usage() {
    std::cerr
        << "usage: tessera-fuzz [--count N] [--seed S] [--progress] [--verbose] [--trace] [--isolate]\n"
           "                    [--timeout SECONDS] [--shrink] [--shrink-attempts N] [--max-funcs N]\n"
           "                    [--max-points N] [--max-dims 1-3] [--slow-ms MS] [--gpu] [--device]\n"
           "                    [--directives] [--quota-scale F]\n"
           "Runs the random pipelines of seeds S .. S+N-1 compiled and interpreted, and compares them.\n"
           "  --progress  a summary line every 100 pipelines\n"
           "  --verbose   print each seed and its pipeline before running it\n"
           "  --trace     print 'seed S' to stderr before running each pipeline: after a crash, the last\n"
           "              such line names its seed\n"
           "  --isolate   run the pipelines in a child process; a crash, or no result after --timeout\n"
           "              seconds of CPU (default 60; or 10 times that of wall-clock time), is a\n"
           "              failure of its seed and the run goes on\n"
           "  --shrink    after the run, look for a smaller pipeline that fails like each failure (each\n"
           "              attempt in a child process; implies --isolate; hangs are not shrunk)\n"
           "  --gpu       compile for the emulated GPU (Target::cuda(80).emulated(), 30% of seeds with\n"
           "              with_shared_memory_opt_in(), half without gpu_column_windows) instead of the host\n"
           "  --device    as --gpu, but on this machine's CUDA GPU (Target::cuda(sm) of device 0, through\n"
           "              the driver) instead of the emulator; exp, log and sin are left out (libdevice's\n"
           "              last bit may differ from the host's)\n"
           "  --directives  give every stage random scheduling directives (split, reorder, parallel, ...);\n"
           "              a compile that rejects one as illegal counts as a rejection\n"
           "  --quota-scale F  every isl operation quota times F (say 0.01): analyses take their fallbacks,\n"
           "              isl stopped partway; a compile giving up on a region within its operation budget\n"
           "              counts as a rejection\n"
           "  --max-funcs, --max-points, --max-dims, --slow-ms: FuzzSettings (pipeline_fuzzer.h)\n";
}

bool parse(int argc, char **argv, Options &o) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto number = [&](auto &out) {
            using T = std::remove_reference_t<decltype(out)>;
            if (i + 1 >= argc) return false;
            char *end = nullptr;
            if constexpr (std::is_floating_point_v<T>) out = T(std::strtod(argv[++i], &end));
            else out = T(std::strtoull(argv[++i], &end, 10));
            return *end == '\0';
        };
        bool ok = true;
        if (a == "--count") ok = number(o.count);
        else if (a == "--seed") ok = number(o.seed);
        else if (a == "--progress") o.progress = true;
        else if (a == "--verbose") o.verbose = true;
        else if (a == "--trace") o.trace = true;
        else if (a == "--isolate") o.isolate = true;
        else if (a == "--timeout") ok = number(o.timeout_s);
        else if (a == "--shrink") o.shrink = o.isolate = true;
        else if (a == "--shrink-attempts") ok = number(o.shrink_attempts);
        else if (a == "--max-funcs") ok = number(o.settings.max_funcs);
        else if (a == "--max-points") ok = number(o.settings.max_output_points);
        else if (a == "--max-dims") ok = number(o.settings.max_dimensions);
        else if (a == "--slow-ms") ok = number(o.settings.slow_compile_ms);
        else if (a == "--gpu") o.settings.gpu = true;
        else if (a == "--device") o.settings.gpu = o.device = true;
        else if (a == "--directives") o.settings.directives = true;
        else if (a == "--quota-scale") ok = number(o.settings.quota_scale) && o.settings.quota_scale > 0;
        else ok = false;
        if (!ok) return false;
    }
    bool seeds_fit = o.count <= std::numeric_limits<uint64_t>::max() - o.seed;  // S + N does not wrap
    return o.count > 0 && seeds_fit && o.timeout_s > 0 && o.settings.max_funcs > 0 && o.settings.max_output_points > 0 &&
           o.settings.max_dimensions >= 1 && o.settings.max_dimensions <= 3;
}

// Counts of what happened, over all seeds run.
struct Tally {
    uint64_t pipelines = 0, user_errors = 0;
    uint64_t by_outcome[int(fuzz::Outcome::Hang) + 1] = {};  // indexed by fuzz::Outcome, the last one Hang
    double slowest_compile_ms = 0;
    uint64_t slowest_seed = 0;

    uint64_t failures() const { return pipelines - by_outcome[int(fuzz::Outcome::Ok)]; }
    void add(const fuzz::FuzzResult &r) {
        ++pipelines;
        user_errors += r.user_error;
        ++by_outcome[int(r.outcome)];
        if (r.compile_ms > slowest_compile_ms) {
            slowest_compile_ms = r.compile_ms;
            slowest_seed = r.seed;
        }
    }
    std::string summary() const {
        std::string s = std::to_string(pipelines) + " pipelines";
        for (fuzz::Outcome o : {fuzz::Outcome::Mismatch, fuzz::Outcome::ErrorMismatch, fuzz::Outcome::Exception,
                                fuzz::Outcome::Slow, fuzz::Outcome::Crash, fuzz::Outcome::Hang})
            s += std::string(o == fuzz::Outcome::Mismatch ? ": " : ", ") + std::to_string(by_outcome[int(o)]) + " " +
                 fuzz::outcome_name(o);
        s += "; " + std::to_string(user_errors) + " rejected with a UserError by both paths; slowest compile " +
             std::to_string(int64_t(slowest_compile_ms)) + " ms (seed " + std::to_string(slowest_seed) + ")";
        return s;
    }
};

void print_failure(const fuzz::FuzzResult &r) {
    std::cout << "\n==== FAIL seed " << r.seed << ": " << fuzz::outcome_name(r.outcome) << "\n"
              << r.detail << "\n---- reproduction\n" << r.reproduction << std::flush;
}

void print_progress(const Options &o, const Tally &tally) {
    if (o.progress && tally.pipelines % 100 == 0) std::cout << "[progress] " << tally.summary() << "\n" << std::flush;
}

// Runs one seed in this process, printing what --trace and --verbose ask for.
fuzz::FuzzResult run_seed(uint64_t seed, const Options &o) {
    if (o.trace) {
        std::fprintf(stderr, "seed %llu\n", (unsigned long long)seed);
        std::fflush(stderr);
    }
    if (o.verbose) std::cout << "seed " << seed << "\n" << fuzz::describe(seed, o.settings) << std::flush;
    fuzz::FuzzResult r = fuzz::run_one(seed, o.settings);
    if (o.verbose)
        std::cout << "seed " << seed << ": " << fuzz::outcome_name(r.outcome)
                  << (r.user_error ? " (a UserError on both paths)" : "") << ", compiled in " << int64_t(r.compile_ms)
                  << " ms" << (r.detail.empty() ? "" : "\n" + r.detail) << "\n"
                  << std::flush;
    return r;
}

// ---- Child processes ----------------------------------------------------------------------------
// A child reports over a pipe in frames: a kind byte, an 8-byte length, then the payload.

enum class Frame : char { Start = 'S', Result = 'R' };

bool write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) return false;
        p += w;
        n -= size_t(w);
    }
    return true;
}

void send(int fd, Frame kind, const std::string &payload) {
    uint64_t n = payload.size();
    char header[9];
    header[0] = char(kind);
    std::memcpy(header + 1, &n, 8);
    if (!write_all(fd, header, 9) || !write_all(fd, payload.data(), payload.size())) _exit(3);
}

// The CPU seconds process `pid` has used (all its threads), or -1 when /proc does not say.
double cpu_seconds(pid_t pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string s;
    if (!std::getline(f, s)) return -1;
    size_t comm_end = s.rfind(')');
    if (comm_end == std::string::npos || comm_end + 2 > s.size()) return -1;
    std::istringstream in(s.substr(comm_end + 2));
    std::string field;
    for (int i = 3; i <= 13; ++i) in >> field;  // state .. cmajflt
    unsigned long long utime = 0, stime = 0;
    if (!(in >> utime >> stime)) return -1;
    return double(utime + stime) / double(sysconf(_SC_CLK_TCK));
}

// Reads frames from child `pid`, waiting for each until the child has spent `timeout_s` seconds
// of CPU on it without a result (a loop that never ends), or 10 times that of wall-clock time
// (a child that waits on something forever). A child that a loaded machine starves of CPU is
// not a hang: counting wall-clock time alone reported pipelines that compile in 3 s as hung
// while other processes ran.
class FrameReader {
public:
    FrameReader(int fd, int timeout_s, pid_t pid) : fd_(fd), timeout_s_(timeout_s), pid_(pid) {}
    enum Status { Ok, Closed, TimedOut };
    Status next(Frame &kind, std::string &payload) {
        auto start = std::chrono::steady_clock::now();
        auto deadline = start + std::chrono::seconds(timeout_s_);
        double cpu_at_start = cpu_seconds(pid_);
        while (true) {
            if (buffer_.size() >= 9) {
                uint64_t n;
                std::memcpy(&n, buffer_.data() + 1, 8);
                if (buffer_.size() >= 9 + n) {
                    kind = Frame(buffer_[0]);
                    payload = buffer_.substr(9, n);
                    buffer_.erase(0, 9 + n);
                    return Ok;
                }
            }
            auto now = std::chrono::steady_clock::now();
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
            if (left.count() <= 0) {
                double used = cpu_seconds(pid_) - cpu_at_start;
                bool starved = cpu_at_start >= 0 && used >= 0 && used < double(timeout_s_);
                if (starved && now - start < 10 * std::chrono::seconds(timeout_s_)) {
                    deadline = now + std::chrono::seconds(1);
                    continue;
                }
                return TimedOut;
            }
            pollfd p{fd_, POLLIN, 0};
            if (poll(&p, 1, int(left.count())) <= 0) continue;
            char chunk[65536];
            ssize_t n = read(fd_, chunk, sizeof chunk);
            if (n <= 0) return Closed;
            buffer_.append(chunk, size_t(n));
        }
    }

private:
    int fd_;
    int timeout_s_;
    pid_t pid_;
    std::string buffer_;
};

// A result and the draws that made it, as a frame payload: a header line, then the texts.
std::string encode(const fuzz::FuzzResult &r, const std::vector<uint64_t> &made) {
    std::string draws;
    for (uint64_t d : made) draws += std::to_string(d) + " ";
    char header[256];
    std::snprintf(header, sizeof header, "%llu %d %d %.3f %zu %zu %zu\n", (unsigned long long)r.seed, int(r.outcome),
                  int(r.user_error), r.compile_ms, r.detail.size(), r.reproduction.size(), draws.size());
    return header + r.detail + r.reproduction + draws;
}

std::optional<fuzz::FuzzResult> decode(const std::string &s, std::vector<uint64_t> &made) {
    unsigned long long seed;
    int outcome, user_error;
    double compile_ms;
    size_t detail, reproduction, draws;
    size_t eol = s.find('\n');
    if (eol == std::string::npos || std::sscanf(s.c_str(), "%llu %d %d %lf %zu %zu %zu", &seed, &outcome, &user_error,
                                                &compile_ms, &detail, &reproduction, &draws) != 7)
        return std::nullopt;
    fuzz::FuzzResult r;
    r.seed = seed;
    r.outcome = fuzz::Outcome(outcome);
    r.user_error = user_error != 0;
    r.compile_ms = compile_ms;
    size_t at = eol + 1;
    r.detail = s.substr(at, detail);
    r.reproduction = s.substr(at + detail, reproduction);
    made.clear();
    char *p = const_cast<char *>(s.c_str()) + at + detail + reproduction;
    for (char *end; *p; p = end) {
        uint64_t v = std::strtoull(p, &end, 10);
        if (end == p) break;
        made.push_back(v);
    }
    return r;
}

// Reaps a child (killing it first when it hung) and says what it died of, for a child that sent no
// result.
std::string death(pid_t pid, bool hung, int timeout_s) {
    if (hung) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        return "no result after " + std::to_string(timeout_s) + " s";
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) return std::string("the process died of signal ") + strsignal(WTERMSIG(status));
    return "the process exited with status " + std::to_string(WEXITSTATUS(status)) + " without a result";
}

// Runs `child` in a child process that writes to the returned descriptor's other end.
template <typename F>
pid_t spawn(int &read_end, F &&child) {
    int fds[2];
    if (pipe(fds) != 0) {
        std::perror("tessera-fuzz: pipe");
        std::exit(2);
    }
    std::cout << std::flush;
    pid_t pid = fork();
    if (pid < 0) {
        std::perror("tessera-fuzz: fork");
        std::exit(2);
    }
    if (pid == 0) {
        close(fds[0]);
        child(fds[1]);
        std::cout << std::flush;
        _exit(0);
    }
    close(fds[1]);
    read_end = fds[0];
    return pid;
}

// Runs seeds [first, end) in child processes, restarting after a crash or a hang; returns every
// result in order.
std::vector<fuzz::FuzzResult> run_isolated(const Options &o, uint64_t first, uint64_t end, Tally &tally) {
    std::vector<fuzz::FuzzResult> results;
    uint64_t next = first;
    while (next < end) {
        int fd;
        pid_t pid = spawn(fd, [&](int out) {
            for (uint64_t seed = next; seed < end; ++seed) {
                send(out, Frame::Start, std::to_string(seed));
                send(out, Frame::Result, encode(run_seed(seed, o), {}));
            }
        });
        FrameReader reader(fd, o.timeout_s, pid);
        bool running = false;  // a seed started without a result yet
        uint64_t running_seed = 0;
        FrameReader::Status status;
        Frame kind;
        std::string payload;
        while ((status = reader.next(kind, payload)) == FrameReader::Ok || (status == FrameReader::TimedOut && !running)) {
            if (status != FrameReader::Ok) continue;  // between pipelines: no time limit
            if (kind == Frame::Start) {
                running = true;
                running_seed = std::strtoull(payload.c_str(), nullptr, 10);
                continue;
            }
            std::vector<uint64_t> unused;
            std::optional<fuzz::FuzzResult> r = decode(payload, unused);
            if (!r) {
                std::cerr << "tessera-fuzz: a malformed result from the worker\n";
                std::exit(2);
            }
            running = false;
            next = r->seed + 1;
            results.push_back(*r);
            if (r->failed()) print_failure(*r);
            tally.add(*r);
            print_progress(o, tally);
        }
        close(fd);
        std::string why = death(pid, status == FrameReader::TimedOut, o.timeout_s);
        if (!running) {
            if (next < end) {
                std::cerr << "tessera-fuzz: the worker stopped between pipelines: " << why << "\n";
                std::exit(2);
            }
            break;
        }
        fuzz::FuzzResult r;
        r.seed = running_seed;
        r.outcome = status == FrameReader::TimedOut ? fuzz::Outcome::Hang : fuzz::Outcome::Crash;
        r.detail = why;
        r.reproduction = fuzz::describe(r.seed, o.settings);
        print_failure(r);
        results.push_back(r);
        tally.add(r);
        print_progress(o, tally);
        next = r.seed + 1;
    }
    return results;
}

// Runs a shrink candidate in a child process, so that a crash or a hang is a result too.
fuzz::FuzzResult replay_in_child(uint64_t seed, const std::vector<uint64_t> &draws, std::vector<uint64_t> &made,
                                 const Options &o) {
    int fd;
    pid_t pid = spawn(fd, [&](int out) {
        std::vector<uint64_t> child_made;
        fuzz::FuzzResult r = fuzz::replay(seed, draws, o.settings, child_made);
        send(out, Frame::Result, encode(r, child_made));
    });
    FrameReader reader(fd, o.timeout_s, pid);
    Frame kind;
    std::string payload;
    FrameReader::Status status = reader.next(kind, payload);
    close(fd);
    std::optional<fuzz::FuzzResult> decoded;
    if (status == FrameReader::Ok) decoded = decode(payload, made);
    std::string why = death(pid, status == FrameReader::TimedOut, o.timeout_s);
    if (decoded) return *decoded;
    fuzz::FuzzResult r;
    r.seed = seed;
    r.outcome = status == FrameReader::TimedOut ? fuzz::Outcome::Hang : fuzz::Outcome::Crash;
    r.detail = why;
    r.reproduction = fuzz::describe_draws(draws, o.settings);
    made = draws;
    return r;
}

void shrink_failures(const std::vector<fuzz::FuzzResult> &results, const Options &o) {
    for (const fuzz::FuzzResult &failure : results) {
        if (!failure.failed() || failure.outcome == fuzz::Outcome::Hang) continue;
        std::cout << "\n---- shrinking seed " << failure.seed << " (" << fuzz::outcome_name(failure.outcome) << ")"
                  << std::flush;
        fuzz::FuzzResult small = fuzz::shrink(
            failure.seed, failure, o.settings, o.shrink_attempts,
            [&](const std::vector<uint64_t> &draws, std::vector<uint64_t> &made) {
                return replay_in_child(failure.seed, draws, made, o);
            },
            [](int attempts) {
                if (attempts % 10 == 0) std::cout << "." << std::flush;
            });
        std::cout << "\n==== SMALLER seed " << failure.seed << ": " << fuzz::outcome_name(small.outcome) << "\n"
                  << small.detail << "\n---- reproduction\n" << small.reproduction << std::flush;
    }
}

} // namespace

// Device 0's compute capability, asked in a child process: the CUDA driver does not survive a
// fork once initialized, and --isolate forks the pipelines' processes from this one.
int device_capability_from_a_child(std::string &why) {
    int fds[2];
    if (pipe(fds) != 0) {
        why = "pipe failed";
        return 0;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        std::string reason;
        int sm = tessera::runtime::cuda_device_capability(&reason);
        std::string line = std::to_string(sm) + " " + reason;
        ssize_t written = write(fds[1], line.data(), line.size());
        _exit(written == ssize_t(line.size()) ? 0 : 1);
    }
    close(fds[1]);
    std::string text;
    char chunk[256];
    for (ssize_t n; (n = read(fds[0], chunk, sizeof chunk)) > 0;) text.append(chunk, size_t(n));
    close(fds[0]);
    int status = 0;
    if (pid > 0) waitpid(pid, &status, 0);
    int sm = std::atoi(text.c_str());
    size_t space = text.find(' ');
    why = space == std::string::npos ? "the process asking the driver died" : text.substr(space + 1);
    return sm;
}

int main(int argc, char **argv) {
    Options o;
    if (!parse(argc, argv, o)) {
        usage();
        return 2;
    }
    if (o.device) {
        std::string why;
        o.settings.device_sm = device_capability_from_a_child(why);
        if (!o.settings.device_sm) {
            std::cerr << "tessera-fuzz --device: no CUDA GPU here (" << why << ")\n";
            return 2;
        }
        std::cout << "on the GPU of device 0: sm_" << o.settings.device_sm << std::endl;
    }
    Tally tally;
    uint64_t end = o.seed + o.count;
    if (o.isolate) {
        std::vector<fuzz::FuzzResult> results = run_isolated(o, o.seed, end, tally);
        if (o.shrink) shrink_failures(results, o);
    } else {
        for (uint64_t seed = o.seed; seed < end; ++seed) {
            fuzz::FuzzResult r = run_seed(seed, o);
            if (r.failed()) print_failure(r);
            tally.add(r);
            print_progress(o, tally);
        }
    }
    std::cout << "\n" << tally.summary() << "\n";
    return tally.failures() ? 1 : 0;
}
