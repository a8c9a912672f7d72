// UCX status codes into library errors: the one place ucs_status_t is translated.
#pragma once

#include <ucs/type/status.h>

#include <string>

#include "core/error.h"

namespace mpix::sparse::detail {

inline void check_ucx(ucs_status_t status, const char *what) {
    if (status != UCS_OK) fail(ErrorId::TransportFailure, std::string(what) + ": " + ucs_status_string(status));
}

}  // namespace mpix::sparse::detail
