#pragma once

namespace saltation {
// The library's version and the git commit it was built from ("unknown" outside a checkout),
// for provenance records.
const char* version();
const char* git_hash();
}  // namespace saltation
