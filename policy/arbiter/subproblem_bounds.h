#pragma once
// Upper bounds on the shape search's subproblems, kept across the N+1 solves of one problem
// (SolveHints::memory; shape_solver.cc searches with them, docs/arbiter.md "What the N+1 solves share").
//
// Bidders are searched in one order in every solve (the excluded one, kept in place, takes nothing), so a
// subproblem is the position of the next bidder and the residual capacities: what bidders [position, end) can
// add depends only on the items they draw from, and on each only up to the most they could ask of it together,
// so the key holds those residuals clamped to that most. Its value is an upper bound on the best they can add:
// 0 at the end, a node's Lagrangian bound where it is cut, else the best child's gain plus the child's bound.
// A solve without bidder i meets two kinds of subproblem: past i's position they are the full problem's (tag
// kFull), up to it they lack i (tag: i's position); a full subproblem's bound also bounds the same one without
// i (leaving a bidder out never helps). So every bound found by the PF solve, or by a solve past its excluded
// bidder, prunes every later solve, and within one solve the permutations of interchangeable choices (two
// bidders each taking one of two machines, in either order) are searched once. Bounded: past kMaxEntries
// entries or kMaxWords words of keys of its own a memory stores nothing more; what it shares with its copies
// (share()) does not count.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "policy/arbiter/packing_problem.h"
#include "policy/arbiter/search_rows.h"

namespace themis::arbiter {

class SubproblemBounds {
 public:
  static constexpr int kFull = -1;
  static constexpr std::size_t kMaxEntries = std::size_t{1} << 18;
  static constexpr std::size_t kMaxWords = std::size_t{1} << 22;

  // Keeps what it holds when it was made for `problem` (and so for these bidders in this order); else
  // starts over for it.
  void use_for(const PackingProblem* problem, const std::vector<SearchBidder>& bidders, std::size_t items);

  // The key of (position, residual), kept for the lookups and the record that follow.
  struct Key {
    std::uint64_t hash = 0;
    std::vector<int> words;
    std::vector<int> scratch;  // make_key's
  };
  // Items that bidders [position, end) treat alike give their residuals in one order (the largest first), so
  // that states which differ only by which of them was taken share one key.
  void make_key(std::size_t position, const std::vector<int>& residual, Key& key) const;

  // The bound recorded for the subproblem, +inf when none.
  double find(std::size_t position, int tag, const Key& key) const;
  // Keeps the lower of `bound` and what the subproblem holds (nothing when it is not finite or the caps are
  // reached).
  void record(std::size_t position, int tag, const Key& key, double bound);

  // Moves the bounds recorded since the last call into the part that copies share, read-only, instead of each
  // copying it: the solves without each winner start from the PF solve's memory, and each then has room for
  // kMaxEntries entries of its own whatever that memory holds (with one copy each, the solves of the hardest
  // auctions found it full and searched several times the nodes: docs/performance.md, "Subproblem bounds shared
  // by the solves without a winner"). Not while a search uses this memory.
  void share();

 private:
  // Bounds by (position, tag, key) in open addressing, at most kMaxEntries entries and kMaxWords words of keys.
  class Table {
   public:
    bool empty() const { return entries_.empty(); }
    double find(std::size_t position, int tag, const Key& key) const;
    void record(std::size_t position, int tag, const Key& key, double bound);
    // Adds `other`'s bounds (the lower one where both hold a subproblem).
    void absorb(const Table& other);

   private:
    static constexpr std::size_t kFirstSlots = 256;
    struct Entry {
      std::uint64_t hash;
      std::size_t offset;  // of its key in words_; the key ends where the next entry's begins
      std::size_t position;
      int tag;
      double bound;
    };
    static std::uint64_t tagged_hash(const Key& key, int tag);
    void insert(std::size_t position, int tag, std::uint64_t hash, std::span<const int> words, double bound);
    // The slot holding the subproblem, or the empty slot where it would go.
    std::size_t slot_of(std::size_t position, int tag, std::uint64_t hash, std::span<const int> words) const;
    void grow();

    std::vector<int> slots_ = std::vector<int>(kFirstSlots, -1);  // open addressing into entries_, -1 empty
    std::vector<Entry> entries_;
    std::vector<int> words_;                                        // the keys, back to back
  };

  // What each position's key holds, flat: made by use_for, then only read, so copies share it. As a vector per
  // position and per class (at 200 bidders tens of thousands of them), its copy in each solve without a winner and
  // its release took up to a millisecond each.
  struct KeyLayout {
    // Position d's items: relevant[relevant_from[d], relevant_from[d + 1]), each (item, the most bidders [d, end)
    // ask of it).
    std::vector<ItemLoad> relevant;
    std::vector<std::size_t> relevant_from;
    // Position d's classes of interchangeable items: classes [classes_from[d], classes_from[d + 1]), class c the
    // indices into d's relevant items members[members_from[c], members_from[c + 1]).
    std::vector<int> members;
    std::vector<std::size_t> members_from;
    std::vector<std::size_t> classes_from;
  };
  static std::vector<std::vector<std::vector<int>>> find_interchangeable(
      const std::vector<SearchBidder>& bidders, std::size_t items, const std::vector<std::vector<ItemLoad>>& relevant);

  const PackingProblem* problem_ = nullptr;
  std::shared_ptr<const KeyLayout> keys_;
  Table own_;                                    // recorded since the last share()
  std::shared_ptr<const Table> shared_;          // share()'s, read by every copy
};

}  // namespace themis::arbiter
