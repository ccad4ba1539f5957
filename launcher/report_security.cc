#include "launcher/report_security.h"

#include "net/socket_security.h"

namespace themis::launcher {

ReportSecurity::ReportSecurity(zmq::context_t& context)
    : server_(net::generate_curve_keypair()), workers_(net::generate_curve_keypair()) {
  // The role and name only tag admitted connections; the report socket does not read them.
  zap_ = std::make_unique<net::ZapHandler>(
      context, std::vector<net::Principal>{{"workers", workers_.public_key, net::Role::kUser}});
}

void ReportSecurity::secure(zmq::socket_t& pull) const { net::make_curve_server(pull, server_); }

std::map<std::string, std::string> ReportSecurity::worker_env() const {
  return {{"THEMIS_REPORT_SERVER_KEY", server_.public_key},
          {"THEMIS_REPORT_PUBLIC_KEY", workers_.public_key},
          {"THEMIS_REPORT_SECRET_KEY", workers_.secret_key}};
}

}  // namespace themis::launcher
