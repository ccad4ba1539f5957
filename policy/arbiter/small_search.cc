#include "policy/arbiter/small_search.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "policy/arbiter/winner_solver.h"

namespace themis::arbiter {
namespace {

class Search {
 public:
  Search(const PackingProblem& problem, int excluded, const PackingChoice& start, std::int64_t max_nodes)
      : problem_(problem), max_nodes_(max_nodes), used_(static_cast<std::size_t>(problem.item_count), 0),
        current_(problem.bidders.size(), -1), best_(start), best_value_(packing_value(problem, start)) {
    for (std::size_t b = 0; b < problem.bidders.size(); ++b) {
      if (static_cast<int>(b) == excluded) continue;
      std::vector<int> rows;
      for (std::size_t r = 0; r < problem.bidders[b].rows.size(); ++r)
        if (problem.bidders[b].rows[r].gain > 0) rows.push_back(static_cast<int>(r));
      if (rows.empty()) continue;
      std::stable_sort(rows.begin(), rows.end(), [&](int x, int y) { return gain(b, x) > gain(b, y); });
      order_.push_back({static_cast<int>(b), std::move(rows)});
    }
    std::stable_sort(order_.begin(), order_.end(), [&](const Bidder& x, const Bidder& y) {
      return gain(static_cast<std::size_t>(x.index), x.rows.front()) > gain(static_cast<std::size_t>(y.index), y.rows.front());
    });
    suffix_.assign(order_.size() + 1, 0.0);
    for (std::size_t k = order_.size(); k-- > 0;)
      suffix_[k] = suffix_[k + 1] + gain(static_cast<std::size_t>(order_[k].index), order_[k].rows.front());
    key_units();
    tabulate_size_bound();
  }

  bool run() {
    descend(0, 0.0);
    return nodes_ <= max_nodes_;
  }

  // When the depth-first search gives up: the same problem by layers, one bidder at a time, keeping for
  // each set of taken GPUs only the best value, so the permutations of equivalent bundles among earlier
  // bidders, which make the depth-first search slow, collapse into one state. A state that cannot beat
  // the incumbent even if every later bidder got its best row is dropped. Exact; gives up past
  // `max_states` states.
  bool run_layers(std::int64_t max_states) {
    if (!keyed_) return false;
    // The states of the layer being built, by key: open addressing over at least twice the budget, so
    // probes stay short; an entry belongs to this layer when its stamp is this layer's mark.
    thread_local std::vector<std::uint64_t> table_key;
    thread_local std::vector<std::uint32_t> table_stamp;
    thread_local std::vector<int> table_slot;
    thread_local std::uint32_t mark = 0;
    int shift = 64;
    while ((std::int64_t{1} << (64 - shift)) < 2 * max_states + 2) --shift;
    const std::size_t size = std::size_t{1} << (64 - shift);
    if (table_key.size() < size) {
      table_key.assign(size, 0);
      table_stamp.assign(size, 0);
      table_slot.assign(size, 0);
      mark = 0;
    }
    const std::size_t mask = size - 1;
    auto entry = [&](std::uint64_t key) {
      std::size_t h = static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift);
      while (table_stamp[h] == mark && table_key[h] != key) h = (h + 1) & mask;
      return h;
    };
    struct State {
      std::uint64_t key;
      double value;
      int parent;  // index in the previous layer
      int row;     // row taken by this layer's bidder, -1: none
      int taken;   // units taken
    };
    std::vector<std::vector<State>> layers(order_.size() + 1);
    layers[0].push_back({0, 0.0, -1, -1, 0});
    double incumbent = best_value_;
    std::size_t best_layer = 0;  // where the best state beyond the start is, if any (0: none)
    int best_state = -1;
    std::int64_t states = 1;
    for (std::size_t k = 0; k < order_.size(); ++k) {
      auto& next = layers[k + 1];
      if (++mark == 0) {  // wrapped: forget every old mark
        std::fill(table_stamp.begin(), table_stamp.end(), 0);
        mark = 1;
      }
      const auto bi = static_cast<std::size_t>(order_[k].index);
      // Earlier layers never change, so a state's chain of parents stays valid; a state is only replaced
      // by a better one for the same taken GPUs.
      auto offer = [&](std::uint64_t key, double value, int parent, int row, int taken) {
        if (value + size_bound(k + 1, units_ - taken) <= incumbent + kImprovementTolerance)
          return;  // the bound is >= 0: nor is it better
        const std::size_t h = entry(key);
        int at;
        if (table_stamp[h] != mark) {
          table_stamp[h] = mark;
          table_key[h] = key;
          at = table_slot[h] = static_cast<int>(next.size());
          next.push_back({key, value, parent, row, taken});
          ++states;
        } else if (value > next[static_cast<std::size_t>(table_slot[h])].value + kImprovementTolerance) {
          at = table_slot[h];
          next[static_cast<std::size_t>(at)] = {key, value, parent, row, taken};
        } else {
          return;
        }
        if (value > incumbent + kImprovementTolerance) {
          incumbent = value;
          best_layer = k + 1;
          best_state = at;
        }
      };
      for (std::size_t s = 0; s < layers[k].size(); ++s) {
        const State state = layers[k][s];
        if (state.value + size_bound(k, units_ - state.taken) <= incumbent + kImprovementTolerance) continue;
        offer(state.key, state.value, static_cast<int>(s), -1, state.taken);
        for (int r : order_[k].rows) {
          const PackingRow& row = problem_.bidders[bi].rows[static_cast<std::size_t>(r)];
          if (!fits_key(state.key, row)) continue;
          std::uint64_t key = state.key;
          for (int item : row.items) key += unit_[static_cast<std::size_t>(item)];
          offer(key, state.value + row.gain, static_cast<int>(s), r, state.taken + static_cast<int>(row.items.size()));
          if (states > max_states) return false;  // also keeps the table at most half full
        }
        if (states > max_states) return false;
      }
    }
    nodes_ += states;
    if (best_state < 0) return true;  // nothing beats the start
    best_value_ = incumbent;
    std::fill(best_.begin(), best_.end(), -1);  // bidders after best_layer take nothing
    int at = best_state;
    for (std::size_t k = best_layer; k-- > 0;) {
      const State& state = layers[k + 1][static_cast<std::size_t>(at)];
      best_[static_cast<std::size_t>(order_[k].index)] = state.row;
      at = state.parent;
    }
    return true;
  }
  const PackingChoice& best() const { return best_; }
  double best_value() const { return best_value_; }
  std::int64_t nodes() const { return nodes_; }

 private:
  struct Bidder {
    int index;
    std::vector<int> rows;  // rows with gain > 0, best first
  };

  double gain(std::size_t bidder, int row) const { return problem_.bidders[bidder].rows[static_cast<std::size_t>(row)].gain; }

  // What is taken, as one number (run_layers' key): each item's used count in its own bit field. Bidders
  // are searched in a fixed order, so bidders k.. face the same problem whenever the same units are taken
  // before them. Not keyed when the counts need more than 64 bits.
  void key_units() {
    int bits = 0;
    for (int i = 0; i < problem_.item_count; ++i) {
      int width = 1;
      while ((1 << width) <= problem_.capacity(i)) ++width;
      unit_.push_back(bits + width <= 64 ? std::uint64_t{1} << bits : 0);
      field_mask_.push_back((std::uint64_t{1} << width) - 1);
      bits += width;
    }
    keyed_ = bits <= 64;
  }

  // Whether `row` fits beside the taken counts packed in `key` (key_units).
  bool fits_key(std::uint64_t key, const PackingRow& row) const {
    return fits_beside(row, [&](int item) {
      const auto i = static_cast<std::size_t>(item);
      return static_cast<int>((key >> std::countr_zero(unit_[i])) & field_mask_[i]);
    });
  }

  // Whether `row` fits beside `used(item)` units of each item; items are sorted, so a repeated item needs
  // that many units.
  template <typename Used>
  bool fits_beside(const PackingRow& row, Used used) const {
    for (std::size_t k = 0; k < row.items.size();) {
      std::size_t end = k;
      while (end < row.items.size() && row.items[end] == row.items[k]) ++end;
      if (used(row.items[k]) + static_cast<int>(end - k) > problem_.capacity(row.items[k])) return false;
      k = end;
    }
    return true;
  }


  bool take(const PackingRow& row) {
    std::size_t k = 0;
    for (; k < row.items.size(); ++k) {
      int& u = used_[static_cast<std::size_t>(row.items[k])];
      if (u >= problem_.capacity(row.items[k])) break;
      ++u;
    }
    if (k == row.items.size()) {
      free_ -= static_cast<int>(k);
      return true;
    }
    while (k-- > 0) --used_[static_cast<std::size_t>(row.items[k])];
    return false;
  }
  void give_back(const PackingRow& row) {
    free_ += static_cast<int>(row.items.size());
    for (int item : row.items) --used_[static_cast<std::size_t>(item)];
  }

  bool fits(const PackingRow& row) const {
    return fits_beside(row, [&](int item) { return used_[static_cast<std::size_t>(item)]; });
  }

  // The best gain of bidder order_[k] over its rows that fit what is left: rows only lose room as the
  // search goes deeper, so the sum over the later bidders bounds what they can still add.
  double best_fitting(std::size_t k) const {
    const auto bi = static_cast<std::size_t>(order_[k].index);
    for (int r : order_[k].rows)
      if (fits(problem_.bidders[bi].rows[static_cast<std::size_t>(r)])) return gain(bi, r);
    return 0;
  }

  void descend(std::size_t k, double value) {
    if (++nodes_ > max_nodes_) return;
    if (value > best_value_ + kImprovementTolerance) {
      best_value_ = value;
      best_ = current_;
    }
    if (k == order_.size() || value + suffix_[k] <= best_value_ + kImprovementTolerance) return;
    double later = 0;  // what bidders k+1.. can add at most, given what is taken now
    for (std::size_t j = k + 1; j < order_.size(); ++j) later += best_fitting(j);
    if (value + std::min(best_fitting(k) + later, size_bound(k, free_)) <= best_value_ + kImprovementTolerance) return;
    const Bidder& b = order_[k];
    const auto bi = static_cast<std::size_t>(b.index);
    for (int r : b.rows) {
      if (value + gain(bi, r) + later <= best_value_ + kImprovementTolerance) break;  // rows best first
      const PackingRow& row = problem_.bidders[bi].rows[static_cast<std::size_t>(r)];
      const int left = free_ - static_cast<int>(row.items.size());
      if (left < 0 || value + gain(bi, r) + size_bound(k + 1, left) <= best_value_ + kImprovementTolerance) continue;
      if (!take(row)) continue;
      current_[bi] = r;
      descend(k + 1, value + row.gain);
      current_[bi] = -1;
      give_back(row);
      if (nodes_ > max_nodes_) return;
    }
    descend(k + 1, value);  // this bidder wins nothing
  }

  // Σ gain bidders k.. can add when `free` units are left, each taking at most one row and together no
  // more units than are free, wherever they lie: a knapsack over row sizes (exact for that relaxation,
  // so never below the optimum of the real problem), tabled once per solve for every k and free count.
  // Free counts beyond the later bidders' widest rows summed add nothing, so the table stops there; past
  // kMaxSizeBoundWork steps to build it (the largest auctions, where the search gives up anyway) there is
  // no table and the bound is the best rows' sum. Either way it is at most that sum (suffix_[k]).
  static constexpr std::size_t kMaxSizeBoundWork = std::size_t{1} << 22;
  void tabulate_size_bound() {
    int units = 0, widest = 0;
    std::size_t rows = 0;
    for (int i = 0; i < problem_.item_count; ++i) units += problem_.capacity(i);
    for (const Bidder& b : order_) {
      const auto& all = problem_.bidders[static_cast<std::size_t>(b.index)].rows;
      int wide = 0;
      for (int r : b.rows) wide = std::max(wide, static_cast<int>(all[static_cast<std::size_t>(r)].items.size()));
      widest += wide;
      rows += b.rows.size();
    }
    units_ = free_ = units;
    width_ = static_cast<std::size_t>(std::min(units, widest)) + 1;
    if (rows * width_ > kMaxSizeBoundWork) return;
    by_size_.assign((order_.size() + 1) * width_, 0.0);
    for (std::size_t k = order_.size(); k-- > 0;) {
      const auto bi = static_cast<std::size_t>(order_[k].index);
      double* here = &by_size_[k * width_];
      const double* after = &by_size_[(k + 1) * width_];
      std::copy(after, after + width_, here);
      for (int r : order_[k].rows) {
        const PackingRow& row = problem_.bidders[bi].rows[static_cast<std::size_t>(r)];
        const auto size = row.items.size();
        for (std::size_t f = size; f < width_; ++f) here[f] = std::max(here[f], row.gain + after[f - size]);
      }
    }
  }
  double size_bound(std::size_t k, int free) const {
    if (by_size_.empty()) return suffix_[k];
    return by_size_[k * width_ + std::min(static_cast<std::size_t>(free), width_ - 1)];
  }

  const PackingProblem& problem_;
  const std::int64_t max_nodes_;
  int units_ = 0;                 // Σ capacity
  int free_ = 0;                  // units not taken on the depth-first path
  std::size_t width_ = 1;         // free counts tabled: 0 .. width_ − 1
  std::vector<double> by_size_;   // size_bound(k, free) at k · width_ + free; empty: not tabled
  std::vector<Bidder> order_;
  std::vector<double> suffix_;  // Σ best gain of order_[k..]
  std::vector<std::uint64_t> unit_;        // per item: 1 in its count's bit field
  bool keyed_ = false;                     // whether the counts fit in 64 bits
  std::vector<std::uint64_t> field_mask_;  // per item: its bit field's mask, shifted down
  std::vector<int> used_;
  PackingChoice current_;
  PackingChoice best_;
  double best_value_;
  std::int64_t nodes_ = 0;
};

}  // namespace

namespace {

PackingSolution solved(const PackingProblem& problem, const Search& search) {
  PackingSolution solution;
  solution.choice = search.best();
  solution.value = packing_value(problem, solution.choice);  // in bidder order, as the solvers report it
  solution.bound = solution.value;
  solution.proven_optimal = true;
  solution.nodes = search.nodes();
  return solution;
}

}  // namespace

std::optional<PackingSolution> small_search(const PackingProblem& problem, int excluded, const PackingChoice& start,
                                            std::int64_t max_nodes) {
  if (max_nodes <= 0) return std::nullopt;
  Search search(problem, excluded, start, max_nodes);
  if (!search.run() && !search.run_layers(max_nodes)) return std::nullopt;
  return solved(problem, search);
}

std::optional<PackingSolution> layered_search(const PackingProblem& problem, int excluded, const PackingChoice& start,
                                              std::int64_t max_states) {
  if (max_states <= 0) return std::nullopt;
  Search search(problem, excluded, start, 0);
  if (!search.run_layers(max_states)) return std::nullopt;
  return solved(problem, search);
}

}  // namespace themis::arbiter
