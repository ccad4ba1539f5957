#pragma once
// An app spec (TOML, docs/app-spec.md): one app, its hyper-parameter jobs (the cartesian product of
// [hyperparameters]), resources and checkpoint settings. Unknown keys are errors.
#include <map>
#include <string>
#include <vector>

namespace themis::spec {

struct JobSpec {
  int index = 0;
  std::map<std::string, std::string> hparams;  // name -> value as written
  std::string hparams_json;                    // JSON object, values typed as in the TOML (THEMIS_HPARAMS)
  std::vector<std::string> command;            // {hparam} placeholders expanded; {app} and {job} too once known
};

struct AppSpec {
  std::string name;
  std::vector<std::string> command;
  std::string workdir;
  std::map<std::string, std::string> env;
  std::map<std::string, std::vector<std::string>> hyperparameters;
  std::map<std::string, std::vector<std::string>> hyperparameter_literals;  // the same values as JSON literals
  int gpus_per_job = 1;
  int max_concurrent_jobs = 0;  // 0: as many as there are jobs
  std::string checkpoint_dir;
  int grace_period_ms = 10000;
  std::vector<JobSpec> jobs;
};

// Throws std::invalid_argument "<source>:<line>:<column>: <field>: <reason>".
AppSpec parse_app_spec(const std::string& text, const std::string& source_name);

// Replaces {app}, {job} and {name} placeholders.
std::string expand_placeholders(const std::string& text, long long app, int job,
                                const std::map<std::string, std::string>& hparams);

// "10m", "1.5s", "250ms", "2h" -> milliseconds. Throws std::invalid_argument.
long long parse_duration_ms(const std::string& text);

}  // namespace themis::spec
