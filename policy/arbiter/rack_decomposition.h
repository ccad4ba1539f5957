#pragma once
// The shape problem decomposed by rack (Dantzig-Wolfe), for a bound that sees what the LP does not.
//
// A row whose items all lie in one rack (its machines, slots and GPUs, and the rack itself; items above the racks,
// such as the whole offer, may be used too) is that rack's; any other row links racks. Relaxing "each bidder at most
// one row" and the capacities with prices leaves, per rack, the packing of that rack's rows with one row per bidder
// and every item of the rack within its capacity: a small problem, solved exactly by dynamic programming over the
// rack's bidders, its state the units used of each of the rack's items (a state is dropped where a knapsack over one
// item, the one most rows load, shows that the bidders after it cannot lift it above the best value seen). The
// master LP chooses at most one such packing (a pattern) per rack and any linking rows, each bidder at most one row,
// every item within its capacity; patterns enter it by column generation, priced by those dynamic programs at the
// master's duals (in the first iterations, a rack whose program ran large is priced by a greedy pattern while one
// prices out). The master is solved by MasterLp (master_lp.h), warm from its last basis as patterns enter.
//
// The bound at any prices π ≥ 0 is Σ_bidders π_b + Σ_items π_i·capacity_i + Σ_racks (the rack's best pattern
// under the reduced gains) + Σ_linking rows max(0, reduced gain): computed here from the duals (clamped at 0), so
// the LP's tolerances never make it invalid, and it is at least the LP's. It is the LP bound with every integrality
// inside a rack: machines that a gang fills or not, a bidder's choice between its rows in one rack. On elastic
// bids it reaches the optimum on most solves, where the LP and the Lagrangian steps stay about 1% above it
// (docs/performance.md, "Racks as blocks"). Each master solution rounds to a packing (its columns largest first,
// each taking its rows whose bidders are free and that still fit, then each bidder moved to its best row that still
// fits: upgrade_packing), the best kept, also where the time budget stops the column generation; in the PF solve a
// short dive on the master follows where that packing lies well below the bound. Where the best packing meets the
// bound, as it does where the last master is integral, the solve is settled without a search.
//
// Patterns are kept across the solves of one problem (the N+1 solves start from the PF solve's; a pattern holding
// the excluded bidder's row enters without that row).
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "policy/arbiter/deadline.h"
#include "policy/arbiter/packing_problem.h"

namespace themis::arbiter {

// Rows of one rack that a packing may take together: (bidder, row) into PackingProblem::bidders.
struct RackPattern {
  int rack = 0;
  std::vector<std::pair<int, int>> rows;
};

struct RackBound {
  bool available = false;  // false: the problem has no racks (PackingProblem::item_rack), or a rack too large
                           // (kMaxItemsPerRack, kMaxCapacity, kMaxStates)
  double bound = std::numeric_limits<double>::infinity();  // on the optimum without the excluded bidder
  PackingChoice choice;    // the best of the master solutions rounded to packings (empty where none was solved)
  bool proven = false;     // `choice` is optimal: its value is within kImprovementTolerance of `bound`
  int iterations = 0;      // master LP solves
  std::vector<double> prices;  // the prices of `bound`: per bidder, then per item (empty where none was computed)
  // A bound on the optimum without `bidder` as well: `bound` less the bidder's price. At the same prices the problem
  // without it loses that term, and each rack's best pattern and the linking rows can only lose its rows. +inf where
  // no prices were computed.
  double bound_without(int bidder) const;
};

class RackDecomposition {
 public:
  // A rack's dynamic program keys its states by the units used of each of its items, 7 bits each in 64 bits.
  static constexpr int kMaxItemsPerRack = 9;
  static constexpr int kMaxCapacity = 127;
  static constexpr int kDefaultMaxIterations = 100;
  // A rack whose dynamic program holds more states than this after some bidder (the elastic (20, 64) auctions reached
  // about 10,000 before its knapsack bound) makes the problem not decompose: the solve goes on without it, whatever its time budget (the
  // simulator's solves have none).
  static constexpr std::size_t kMaxStates = std::size_t{1} << 17;
  // The PF solve dives on the master (rack_decomposition.cc) where its best rounding lies more than kDiveGap of the
  // bound below it, fixing up to kDiveSteps columns.
  static constexpr double kDiveGap = 0.005;
  static constexpr int kDiveSteps = 10;

  // Whether `problem` decomposes: items with racks, no rack with more items its rows draw from or more units than
  // the state can hold.
  static bool applies(const PackingProblem& problem);
  // `start`: a packing (without the excluded bidder) whose rows of each rack enter the master as patterns.
  RackBound solve(const PackingProblem& problem, int excluded, const Deadline& deadline,
                  const PackingChoice* start = nullptr, int max_iterations = kDefaultMaxIterations);
  const std::vector<RackPattern>& patterns() const { return patterns_; }

 private:
  std::vector<RackPattern> patterns_;
  const PackingProblem* problem_ = nullptr;  // the problem patterns_ belong to
};

// The decomposition's bound at a node of a search over bidders in a fixed order: the bidders from a position on, on
// residual capacities, at fixed prices (RackBound::prices): Σ their bidder prices + Σ_items price·residual + their
// linking rows' positive reduced gains that fit + per rack, the best pattern of their rows within the rack's
// residuals. Valid for any prices ≥ 0. Each rack's best pattern is remembered per position and residuals, so a
// node's bound costs a lookup per rack once its subproblems were met.
class RackTable {
 public:
  static constexpr std::size_t kMaxEntries = 1 << 21;
  // `order`: the problem's bidders in the search's order (the excluded one takes nothing at its place).
  RackTable(const PackingProblem& problem, int excluded, const std::vector<int>& order,
            const std::vector<double>& prices);
  // +inf where the problem has no racks, or the remembered patterns outgrew kMaxEntries.
  double bound(std::size_t position, const std::vector<int>& residual);
  // A bound at the position of the last bound() call on residuals that are those of that call except `changes`, each
  // at most what it was (a child's, after the call for the child that takes nothing). It adds no entry: a rack whose
  // residuals changed reads its entry where the table holds one and keeps that call's value otherwise (a rack's best
  // pattern only falls with its residuals), and the linking rows are that call's (fewer fit on less). At least
  // bound() on the same residuals, at most that call's; +inf where that call was at another position.
  struct Change {
    int item;
    int before, after;  // its residual at the last bound() call, and here
  };
  double peek(std::size_t position, std::span<const Change> changes);

 private:
  struct Load {
    int at;  // a linking row's item; a rack row's bit offset in the rack's residuals
    int units;
  };
  struct Move {
    double reduced;
    std::vector<Load> loads;
  };
  struct Position {
    double bidder_price = 0;
    std::vector<Move> linking;
    std::vector<std::vector<Move>> moves;  // per rack
  };
  // One position's and rack's best patterns by residuals: an open-addressing table at most half full (no residuals
  // of 0 are kept: they mark the empty slots).
  class Memo {
   public:
    const double* find(std::uint64_t left) const;
    void insert(std::uint64_t left, double value);

   private:
    struct Slot {
      std::uint64_t left = 0;
      double value = 0;
    };
    std::vector<Slot> slots_;
    std::size_t used_ = 0;
  };
  double best(std::size_t position, int rack, std::uint64_t left);

  bool usable_ = false;
  int racks_ = 0;
  std::vector<double> item_prices_;
  std::vector<std::vector<int>> rack_items_;
  std::vector<Position> positions_;
  std::vector<Memo> memo_;  // per position and rack
  std::vector<std::uint64_t> room_;  // per position and rack: the most units of each item its rows on can take
  std::size_t entries_ = 0;
  std::size_t last_position_ = static_cast<std::size_t>(-1);  // bound()'s last call: its position, and per rack its
  std::vector<std::uint64_t> last_left_;                      // residuals and value
  std::vector<double> last_value_;
  double last_total_ = 0;
  std::vector<int> item_rack_, item_shift_;  // per item: its rack, and its bit offset in the rack's residuals (-1: none)
  std::vector<std::uint64_t> touched_;       // peek()'s scratch: per rack, its residuals (0: untouched)
  // The bound's terms outside the racks' patterns: the items' prices times the residuals, the bidders' prices from
  // `position` on and their linking rows that fit.
  double outside_racks(std::size_t position, const std::vector<int>& residual) const;
  std::uint64_t rack_left(int rack, const std::vector<int>& residual) const;
  std::uint64_t cut(std::size_t position, int rack, std::uint64_t left) const;
};

}  // namespace themis::arbiter
