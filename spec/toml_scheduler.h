#pragma once
// parse_scheduler_table on a document already parsed (parse_app_spec's), so a spec is parsed once.
#include <string>
#include <toml++/toml.h>

#include "spec/scheduler_spec.h"

namespace themis::spec {

SchedulerTable scheduler_table_of(const toml::table& root, const std::string& source, int jobs);

}  // namespace themis::spec
