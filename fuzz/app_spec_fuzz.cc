// Fuzzes the app-spec TOML parser (spec/app_spec.h) and the launcher's [scheduler] part of the
// same text (launcher/launch_spec.h). A rejected spec must throw std::invalid_argument only.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "spec/app_spec.h"
#include "launcher/launch_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  int jobs = 1;
  try {
    const auto spec = themis::spec::parse_app_spec(text, "fuzz.toml");
    jobs = static_cast<int>(spec.jobs.size());
    for (const auto& job : spec.jobs) {
      for (const auto& part : job.command) (void)themis::spec::expand_placeholders(part, 7, job.index, job.hparams);
    }
  } catch (const std::invalid_argument&) {
  }
  try {
    (void)themis::launcher::parse_launch_spec(text, "fuzz.toml", jobs);
  } catch (const std::invalid_argument&) {
  }
  try {
    (void)themis::spec::parse_duration_ms(text);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
