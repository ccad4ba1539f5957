#pragma once
// Winner determination over shapes. A bid row whose scope is wider than its GPUs (core/bid.h
// ShapeScope) says "this many GPUs from each slot / machine / rack / anywhere"; concrete bundles that
// differ only by interchangeable GPUs are one shape, so they stop competing as separate rows.
//
// The problem stays a PackingProblem: its items are the topology groups (GPU, slot, machine, rack,
// the whole offer) some row draws from directly, each with its offered GPU count as capacity, and a
// row uses, for every GPU it asks of group v, one unit of v and of each such group above v. Groups are
// nested, so choices within every group's capacity can always be given concrete GPUs
// (shape_assignment.h); a group only rows below it draw from needs no item (its children's
// capacities add up to its own). Rows of one bidder with the same shape are kept once, the highest
// gain. An exact-scope row is a shape over single GPUs, so concrete bids are the unit-capacity case.
#include <span>
#include <vector>

#include "core/bid.h"
#include "core/topology.h"
#include "policy/arbiter/packing_problem.h"

namespace themis::arbiter {

// A topology group with offered GPUs. Level 0: one GPU, 1: slot, 2: machine, 3: rack, 4: the offer.
struct ShapeGroup {
  int level = 0;
  int parent = -1;                 // index into ShapeProblem::groups, -1 for the offer
  std::vector<GpuIndex> gpus;      // its offered GPUs, sorted
};

// `count` GPUs from group `group`.
struct ShapeDemand {
  int group = 0;
  int count = 0;
};

struct ShapeProblem {
  PackingProblem packing;
  std::vector<ShapeGroup> groups;
  // Per bidder, per packing row: what it asks of each group, sorted by group.
  std::vector<std::vector<std::vector<ShapeDemand>>> demands;
};

// Rows of each bid beyond `max_rows` distinct shapes (highest gains first) are left out. Bids must be
// validated (bid_validation.h) against `offer`.
ShapeProblem make_shape_problem(const Cluster& cluster, const Offer& offer, std::span<const Bid> bids,
                                int max_rows);

}  // namespace themis::arbiter
