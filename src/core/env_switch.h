// Process-wide switches from the environment, for debugging, tests and reports (not configuration:
// no MPI_Info key, not per communicator; config.h reads those). Callers read each once and keep it.
#pragma once

#include <cstdlib>
#include <cstring>

namespace mpix::sparse::detail {

// Whether environment variable `name` is set to exactly `value`.
inline bool env_is(const char *name, const char *value) {
    const char *v = std::getenv(name);
    return v != nullptr && std::strcmp(v, value) == 0;
}

}  // namespace mpix::sparse::detail
