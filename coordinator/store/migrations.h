#pragma once
// The schema, as numbered migrations. Migration N (1-based) moves user_version from N-1 to N.
// Never edit a released migration: append a new one. The admin views (docs/admin.md) are an interface.
#include <string>
#include <vector>

namespace themis::store {

const std::vector<std::string>& migrations();

}  // namespace themis::store
