#include "saltation/version.hpp"

#include "saltation/config.hpp"

#ifndef SALTATION_GIT_HASH
#define SALTATION_GIT_HASH "unknown"
#endif

namespace saltation {
const char* version() { return SALTATION_VERSION_STRING; }
const char* git_hash() { return SALTATION_GIT_HASH; }
}  // namespace saltation
