// Whole-file reads and writes on descriptors, with plain system calls, for the compile cache's
// entries and the JIT's link files.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::runtime {

// Reads the file `fd` refers to, from its current offset, into `out`: `size` bytes, or as many
// as fstat says when it is negative. False on an error.
inline bool read_all(int fd, std::string &out, int64_t size = -1) {
    struct stat st;
    if (size < 0 && fstat(fd, &st) != 0) return false;
    out.resize(size_t(size < 0 ? st.st_size : size));
    size_t done = 0;
    while (done < out.size()) {
        ssize_t n = ::read(fd, out.data() + done, out.size() - done);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            out.resize(done);
            return n == 0;
        }
        done += size_t(n);
    }
    return true;
}

// Writes all of `data` to `fd`. False on an error.
inline bool write_all(int fd, std::string_view data) {
    size_t done = 0;
    while (done < data.size()) {
        ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        done += size_t(n);
    }
    return true;
}

} // namespace tessera::runtime
