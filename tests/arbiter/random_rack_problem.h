#pragma once
// Random shape problems with racks for the tests of the bounds that work on them (rack_decomposition_test.cc,
// cut_bound_test.cc): 16 GPUs (2 racks × 2 machines × 2 slots × 2), about three quarters of them offered, up to 7
// bidders of up to 4 rows of 1 to 4 GPUs, scopes from slot to anywhere (an exact row would make each of its GPUs an
// item, and racks of more items than the decomposition takes).
#include <algorithm>
#include <vector>

#include "core/rng.h"
#include "policy/arbiter/shape_problem.h"
#include "test_apps.h"

namespace themis::arbiter::testing {

inline PackingProblem random_rack_problem(Rng& rng) {
  const Cluster cluster = make_cluster(4, 2, 2, 2);
  Offer offer{1, {}};
  for (GpuIndex g = 0; g < 16; ++g)
    if (rng.below(4) != 0) offer.gpus.push_back(g);
  if (offer.gpus.empty()) offer.gpus.push_back(0);
  std::vector<Bid> bids;
  const int bidders = 2 + static_cast<int>(rng.below(6));
  for (int b = 0; b < bidders; ++b) {
    Bid bid{b + 1, 1.0 + 4.0 * rng.uniform(), {}};
    const int rows = 1 + static_cast<int>(rng.below(4));
    for (int r = 0; r < rows; ++r) {
      const int count = 1 + static_cast<int>(rng.below(std::min<std::uint64_t>(4, offer.gpus.size())));
      bid.rows.push_back({random_bundle(rng, offer.gpus, count), bid.rho_no_new * (0.1 + 0.9 * rng.uniform()),
                          static_cast<ShapeScope>(1 + rng.below(4))});
    }
    bids.push_back(std::move(bid));
  }
  return make_shape_problem(cluster, offer, bids, 32).packing;
}

}  // namespace themis::arbiter::testing
