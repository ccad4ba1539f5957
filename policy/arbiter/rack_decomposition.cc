#include "policy/arbiter/rack_decomposition.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>

#include "policy/arbiter/greedy_packing.h"
#include "policy/arbiter/master_lp.h"
#include "policy/arbiter/winner_solver.h"

namespace themis::arbiter {

namespace {

constexpr int kBitsPerItem = 7;
constexpr std::uint64_t kItemMask = (std::uint64_t{1} << kBitsPerItem) - 1;
// Above the kMaxItemsPerRack items of a rack's residuals: marks a rack RackTable::peek touched.
constexpr std::uint64_t kTouched = std::uint64_t{1} << 63;
static_assert(RackDecomposition::kMaxItemsPerRack * kBitsPerItem <= 63);
// A pattern enters the master when its reduced gain exceeds this.
constexpr double kEnterTolerance = 1e-9;
// A rack's program starts from the best of its patterns in the master at the reduced gains, less this margin for the
// order in which the sums are taken.
constexpr double kFloorMargin = 1e-9;
// In the column generation's first kGreedyIterations, a rack whose last program kept more states than kGreedyAbove
// (or that has run none) is priced by a greedy pattern first.
constexpr int kGreedyIterations = 12;
constexpr std::int64_t kGreedyAbove = 10000;

// Which rack each row belongs to (-1: it links racks, or uses no rack's item) and the items of each rack that its
// rows use, in item order.
struct Layout {
  bool ok = false;
  int racks = 0;
  std::vector<std::vector<int>> row_rack;      // per bidder, per row
  std::vector<std::vector<int>> rack_items;    // per rack
  std::vector<int> slot;                       // per item: its place in its rack's state, -1 none
};

Layout make_layout(const PackingProblem& problem) {
  Layout out;
  if (problem.item_rack.size() != static_cast<std::size_t>(problem.item_count)) return out;
  for (int r : problem.item_rack) out.racks = std::max(out.racks, r + 1);
  if (out.racks == 0) return out;
  std::vector<std::vector<char>> used(static_cast<std::size_t>(out.racks),
                                      std::vector<char>(static_cast<std::size_t>(problem.item_count), 0));
  out.row_rack.resize(problem.bidders.size());
  for (std::size_t b = 0; b < problem.bidders.size(); ++b) {
    for (const PackingRow& row : problem.bidders[b].rows) {
      int rack = -1;
      bool linking = false;
      for (int item : row.items) {
        const int r = problem.item_rack[static_cast<std::size_t>(item)];
        if (r < 0) continue;
        if (rack >= 0 && r != rack) linking = true;
        rack = r;
      }
      if (linking) rack = -1;
      out.row_rack[b].push_back(rack);
      if (rack >= 0)
        for (int item : row.items)
          if (problem.item_rack[static_cast<std::size_t>(item)] == rack) used[static_cast<std::size_t>(rack)][static_cast<std::size_t>(item)] = 1;
    }
  }
  out.rack_items.resize(static_cast<std::size_t>(out.racks));
  out.slot.assign(static_cast<std::size_t>(problem.item_count), -1);
  for (int k = 0; k < out.racks; ++k) {
    auto& items = out.rack_items[static_cast<std::size_t>(k)];
    for (int i = 0; i < problem.item_count; ++i)
      if (used[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)] != 0) {
        if (problem.capacity(i) > RackDecomposition::kMaxCapacity) return out;
        out.slot[static_cast<std::size_t>(i)] = static_cast<int>(items.size());
        items.push_back(i);
      }
    if (items.size() > static_cast<std::size_t>(RackDecomposition::kMaxItemsPerRack)) return out;
  }
  out.ok = true;
  return out;
}

// The best pattern of one rack under reduced gains: one row per bidder, every item of the rack within its
// capacity. Exact: a dynamic program over the rack's bidders, one state per set of units used.
class RackPricing {
 public:
  RackPricing(const PackingProblem& problem, const Layout& layout, int rack, int excluded) {
    for (std::size_t b = 0; b < problem.bidders.size(); ++b) {
      if (static_cast<int>(b) == excluded) continue;
      std::vector<Move> moves;
      const auto& rows = problem.bidders[b].rows;
      for (std::size_t r = 0; r < rows.size(); ++r) {
        if (layout.row_rack[b][r] != rack || !(rows[r].gain > 0)) continue;
        Move move{static_cast<int>(r), {}};
        for (const ItemLoad& load : item_loads(rows[r])) {
          const int slot = layout.slot[static_cast<std::size_t>(load.item)];
          if (problem.item_rack[static_cast<std::size_t>(load.item)] == rack)
            move.loads.push_back({slot * kBitsPerItem, load.units, problem.capacity(load.item)});
        }
        moves.push_back(std::move(move));
      }
      if (!moves.empty()) bidders_.push_back({static_cast<int>(b), std::move(moves)});
    }
    // The item most moves load bounds what the bidders still to come can add (a knapsack on it alone).
    std::map<int, std::pair<int, int>> loaded;  // shift -> (moves loading it, capacity)
    for (const Bidder& bidder : bidders_)
      for (const Move& move : bidder.moves)
        for (const Load& load : move.loads) {
          auto& [count, capacity] = loaded[load.shift];
          ++count;
          capacity = load.capacity;
        }
    int most = 0;
    for (const auto& [shift, entry] : loaded)
      if (entry.first > most) {
        most = entry.first;
        key_shift_ = shift;
        key_capacity_ = entry.second;
      }
    for (Bidder& bidder : bidders_)
      for (Move& move : bidder.moves)
        for (const Load& load : move.loads)
          if (load.shift == key_shift_) move.key_units = load.units;
  }

  // A pattern from one greedy pass: the bidders by their best reduced gain, each taking its best move that still fits.
  // Its value (0: none) and rows, and in `loose` an upper bound on best(): each bidder's best reduced gain, summed.
  double greedy(const std::vector<std::vector<double>>& reduced, std::vector<std::pair<int, int>>* rows, double* loose) {
    live_.clear();
    *loose = 0;
    for (std::size_t k = 0; k < bidders_.size(); ++k) {
      const double most = best_gain(bidders_[k], reduced);
      *loose += most;
      if (most > kEnterTolerance) live_.push_back({most, static_cast<int>(k)});
    }
    std::stable_sort(live_.begin(), live_.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    rows->clear();
    std::uint64_t used = 0;
    double value = 0;
    for (const auto& [most, k] : live_) {
      const Bidder& bidder = bidders_[static_cast<std::size_t>(k)];
      const auto& gains = reduced[static_cast<std::size_t>(bidder.index)];
      const Move* pick = nullptr;
      std::uint64_t pick_used = 0;
      for (const Move& m : bidder.moves) {
        const double gain = gains[static_cast<std::size_t>(m.row)];
        if (!(gain > kEnterTolerance) || (pick != nullptr && !(gain > gains[static_cast<std::size_t>(pick->row)]))) continue;
        if (const std::optional<std::uint64_t> after = with_move(used, m)) {
          pick = &m;
          pick_used = *after;
        }
      }
      if (pick == nullptr) continue;
      used = pick_used;
      value += gains[static_cast<std::size_t>(pick->row)];
      rows->push_back({bidder.index, pick->row});
    }
    return value;
  }
  // The states the last call of best() kept, over its layers (the most an int64 holds before the first call).
  std::int64_t last_states() const { return last_states_; }

  static constexpr double kTooLarge = -1;
  static constexpr double kStopped = -2;
  // `reduced[b][r]`: row r of bidder b's gain less its prices. Returns the best value (> 0) and its rows, or 0;
  // kTooLarge where a layer of the program outgrew RackDecomposition::kMaxStates; kStopped where `deadline` passed
  // (read on entry, before each bidder's layer and every kStatesPerClockRead states of it: at 200 bidders one rack's
  // program can take 50 ms). `floor`: the value of a pattern the caller has (0: none); the program prunes what cannot beat it,
  // and where nothing does returns it with no rows.
  double best(const std::vector<std::vector<double>>& reduced, std::vector<std::pair<int, int>>* rows,
              const Deadline& deadline, double floor = 0) {
    constexpr std::size_t kStatesPerClockRead = 4096;
    if (deadline.passed()) return kStopped;
    // Only bidders with a row of positive reduced gain can add to a pattern.
    active_.clear();
    for (std::size_t k = 0; k < bidders_.size(); ++k) {
      const auto& gains = reduced[static_cast<std::size_t>(bidders_[k].index)];
      if (std::any_of(bidders_[k].moves.begin(), bidders_[k].moves.end(),
                      [&](const Move& m) { return gains[static_cast<std::size_t>(m.row)] > kEnterTolerance; }))
        active_.push_back(k);
    }
    if (layers_.size() < active_.size() + 1) layers_.resize(active_.size() + 1);
    // What the bidders from each place on can still add at most (each its best reduced gain): a state that cannot
    // reach the best value seen with it is dropped, which keeps the layers small once few gains are positive.
    most_after_.assign(active_.size() + 1, 0.0);
    for (std::size_t k = active_.size(); k-- > 0;) most_after_[k] = most_after_[k + 1] + best_gain(bidders_[active_[k]], reduced);
    // after_(k, c): the most bidders [k, end) can add with c units of the key item left, each one move (exact on
    // that item alone, so at most most_after_[k]).
    const std::size_t width = static_cast<std::size_t>(key_capacity_) + 1;
    const bool knapsack = key_shift_ >= 0;
    if (knapsack) {
      after_.assign((active_.size() + 1) * width, 0.0);
      for (std::size_t k = active_.size(); k-- > 0;) {
        const auto& gains = reduced[static_cast<std::size_t>(bidders_[active_[k]].index)];
        double* here = &after_[k * width];
        const double* next = &after_[(k + 1) * width];
        std::copy(next, next + width, here);
        for (const Move& m : bidders_[active_[k]].moves) {
          const double gain = gains[static_cast<std::size_t>(m.row)];
          if (!(gain > kEnterTolerance)) continue;
          for (std::size_t c = static_cast<std::size_t>(m.key_units); c < width; ++c)
            here[c] = std::max(here[c], gain + next[c - static_cast<std::size_t>(m.key_units)]);
        }
      }
    }
    // The most bidders [k, end) can add to a state that used `used`.
    auto most_from = [&](std::size_t k, std::uint64_t used) {
      if (!knapsack) return most_after_[k];
      const auto left = static_cast<std::size_t>(key_capacity_) - static_cast<std::size_t>((used >> key_shift_) & kItemMask);
      return after_[k * width + left];
    };
    double seen = floor > 0 ? floor - kFloorMargin : 0;
    last_states_ = 0;
    layers_[0].clear();
    layers_[0].push_back({0, 0.0, 0, -1});
    for (std::size_t k = 0; k < active_.size(); ++k) {
      if (deadline.passed()) return kStopped;
      const Bidder& bidder = bidders_[active_[k]];
      const auto& gains = reduced[static_cast<std::size_t>(bidder.index)];
      const std::vector<State>& from = layers_[k];
      std::vector<State>& to = layers_[k + 1];
      to.clear();
      // The bidder's moves of positive reduced gain, the largest first: a state stops at the first that cannot
      // reach the best value seen.
      live_.clear();
      for (std::size_t m = 0; m < bidder.moves.size(); ++m)
        if (const double gain = gains[static_cast<std::size_t>(bidder.moves[m].row)]; gain > kEnterTolerance)
          live_.push_back({gain, static_cast<int>(m)});
      std::stable_sort(live_.begin(), live_.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      start_table(from.size() * (live_.size() + 1));
      for (std::size_t f = 0; f < from.size(); ++f) {
        if (f % kStatesPerClockRead == kStatesPerClockRead - 1 && deadline.passed()) return kStopped;
        const State& state = from[f];
        if (state.value + most_from(k, state.used) < seen) continue;
        if (state.value + most_from(k + 1, state.used) >= seen) keep(to, {state.used, state.value, static_cast<std::uint32_t>(f), -1});
        for (const auto& [gain, m] : live_) {
          if (state.value + gain + most_after_[k + 1] < seen) break;
          const std::optional<std::uint64_t> after = with_move(state.used, bidder.moves[static_cast<std::size_t>(m)]);
          if (!after) continue;
          const std::uint64_t used = *after;
          const double value = state.value + gain;
          if (value + most_from(k + 1, used) < seen) continue;
          seen = std::max(seen, value);
          keep(to, {used, value, static_cast<std::uint32_t>(f), m});
        }
      }
      if (to.size() > RackDecomposition::kMaxStates) return kTooLarge;
      last_states_ += static_cast<std::int64_t>(to.size());
    }
    const std::vector<State>& last = layers_[active_.size()];
    if (rows != nullptr) rows->clear();
    std::size_t at = 0;
    for (std::size_t i = 1; i < last.size(); ++i)
      if (last[i].value > last[at].value) at = i;
    const double best_value = last.empty() ? 0 : last[at].value;
    if (floor > 0 && !(best_value > floor)) return floor;
    if (!(best_value > 0)) return 0;
    if (rows != nullptr) rows_of(at, rows);
    return best_value;
  }

 private:
  // The rows of the pattern that ends at state `at` of the last layer.
  void rows_of(std::size_t at, std::vector<std::pair<int, int>>* rows) const {
    rows->clear();
    for (std::size_t k = active_.size(); k > 0; --k) {
      const State& state = layers_[k][at];
      const Bidder& bidder = bidders_[active_[k - 1]];
      if (state.move >= 0) rows->push_back({bidder.index, bidder.moves[static_cast<std::size_t>(state.move)].row});
      at = state.previous;
    }
    std::reverse(rows->begin(), rows->end());
  }

  struct Load {
    int shift, units, capacity;
  };
  struct Move {
    int row;
    std::vector<Load> loads;
    int key_units = 0;  // its units of the item at key_shift_
  };
  struct Bidder {
    int index;
    std::vector<Move> moves;
  };
  // The bidder's best reduced gain, 0 where none is positive.
  static double best_gain(const Bidder& bidder, const std::vector<std::vector<double>>& reduced) {
    const auto& gains = reduced[static_cast<std::size_t>(bidder.index)];
    double most = 0;
    for (const Move& m : bidder.moves) most = std::max(most, gains[static_cast<std::size_t>(m.row)]);
    return most;
  }
  // The units used after `move` on top of `used`; none where it does not fit.
  static std::optional<std::uint64_t> with_move(std::uint64_t used, const Move& move) {
    for (const Load& load : move.loads) {
      if (static_cast<int>((used >> load.shift) & kItemMask) + load.units > load.capacity) return std::nullopt;
      used += static_cast<std::uint64_t>(load.units) << load.shift;
    }
    return used;
  }

  // A set of units used, the best value reaching it, and how: its state in the layer before and the move taken.
  struct State {
    std::uint64_t used;
    double value;
    std::uint32_t previous;
    int move;  // -1: the bidder took nothing
  };
  // An open-addressing table from `used` to a state's place in the layer being built, at most half full.
  void start_table(std::size_t most) {
    std::size_t size = 16;
    while (size < 2 * most) size *= 2;
    table_.assign(size, kEmpty);
  }
  void keep(std::vector<State>& layer, const State& state) {
    const std::size_t mask = table_.size() - 1;
    std::size_t h = static_cast<std::size_t>((state.used * 0x9E3779B97F4A7C15ULL) >> 20) & mask;
    while (table_[h] != kEmpty && layer[table_[h]].used != state.used) h = (h + 1) & mask;
    if (table_[h] == kEmpty) {
      table_[h] = static_cast<std::uint32_t>(layer.size());
      layer.push_back(state);
    } else if (layer[table_[h]].value < state.value) {
      layer[table_[h]] = state;
    }
  }
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;

  std::vector<Bidder> bidders_;
  std::vector<std::size_t> active_;
  std::vector<double> most_after_;
  std::vector<std::vector<State>> layers_;
  std::vector<std::uint32_t> table_;
  int key_shift_ = -1;  // the item of the knapsack bound (-1: none), its bit offset in a state
  int key_capacity_ = 0;
  std::vector<double> after_;  // best(): per place k and units c of that item left, (k, c) at k * (capacity + 1) + c
  std::int64_t last_states_ = std::numeric_limits<std::int64_t>::max();
  std::vector<std::pair<double, int>> live_;  // best() and greedy(): the moves of the bidder at hand, (reduced gain, move)
};

}  // namespace

bool RackDecomposition::applies(const PackingProblem& problem) { return make_layout(problem).ok; }

RackBound RackDecomposition::solve(const PackingProblem& problem, int excluded, const Deadline& deadline,
                                   const PackingChoice* start, int max_iterations) {
  RackBound out;
  const Layout layout = make_layout(problem);
  if (!layout.ok) return out;
  if (problem_ != &problem) {
    patterns_.clear();
    problem_ = &problem;
  }
  out.available = true;
  const int bidders = static_cast<int>(problem.bidders.size());
  const int items = problem.item_count;
  const int racks = layout.racks;
  // Master rows: bidders [0, B), items [B, B + I), racks [B + I, B + I + K). Columns: the linking rows, then the
  // patterns.
  struct Column {
    int rack = -1;  // -1: a linking row
    std::vector<std::pair<int, int>> rows;
  };
  std::vector<Column> columns;
  std::vector<double> row_upper(static_cast<std::size_t>(bidders + items + racks), 1.0);
  for (int i = 0; i < items; ++i) row_upper[static_cast<std::size_t>(bidders + i)] = problem.capacity(i);
  MasterLp lp(std::move(row_upper));
  std::vector<std::pair<int, double>> entries;
  auto add_column = [&](Column column) {
    std::map<int, double> coefficients;
    double gain = 0;
    for (const auto& [b, r] : column.rows) {
      const PackingRow& row = problem.bidders[static_cast<std::size_t>(b)].rows[static_cast<std::size_t>(r)];
      coefficients[b] += 1;
      for (int item : row.items) coefficients[bidders + item] += 1;
      gain += row.gain;
    }
    if (column.rack >= 0) coefficients[bidders + items + column.rack] = 1;
    entries.assign(coefficients.begin(), coefficients.end());
    lp.add_column(gain, entries);
    columns.push_back(std::move(column));
  };
  for (int b = 0; b < bidders; ++b) {
    if (b == excluded) continue;
    const auto& rows = problem.bidders[static_cast<std::size_t>(b)].rows;
    for (std::size_t r = 0; r < rows.size(); ++r)
      if (layout.row_rack[static_cast<std::size_t>(b)][r] < 0 && rows[r].gain > 0) add_column({-1, {{b, static_cast<int>(r)}}});
  }
  for (const RackPattern& pattern : patterns_) {
    Column column{pattern.rack, {}};
    bool valid = true;
    for (const auto& [b, r] : pattern.rows) {
      valid = valid && b >= 0 && b < bidders && r >= 0 && r < static_cast<int>(problem.bidders[static_cast<std::size_t>(b)].rows.size());
      if (b != excluded) column.rows.push_back({b, r});
    }
    if (!valid) continue;
    if (!column.rows.empty()) add_column(std::move(column));
  }

  if (start != nullptr && start->size() == problem.bidders.size()) {  // the start's rows of each rack, as a pattern
    std::vector<Column> own(static_cast<std::size_t>(racks));
    for (int b = 0; b < bidders; ++b) {
      const int r = (*start)[static_cast<std::size_t>(b)];
      if (b == excluded || r < 0 || r >= static_cast<int>(layout.row_rack[static_cast<std::size_t>(b)].size())) continue;
      const int rack = layout.row_rack[static_cast<std::size_t>(b)][static_cast<std::size_t>(r)];
      if (rack >= 0) own[static_cast<std::size_t>(rack)].rows.push_back({b, r});
    }
    for (int k = 0; k < racks; ++k) {
      Column& column = own[static_cast<std::size_t>(k)];
      if (column.rows.empty()) continue;
      column.rack = k;
      patterns_.push_back({k, column.rows});
      add_column(std::move(column));
    }
  }
  std::vector<RackPricing> pricing;
  for (int k = 0; k < racks; ++k) pricing.emplace_back(problem, layout, k, excluded);
  std::vector<std::vector<double>> reduced(problem.bidders.size());
  for (std::size_t b = 0; b < problem.bidders.size(); ++b) reduced[b].resize(problem.bidders[b].rows.size());
  std::vector<double> prices(static_cast<std::size_t>(bidders + items + racks));
  std::vector<std::pair<int, int>> rows;
  // Each master solution rounded to a packing: its columns by value, largest first, each taking the rows whose
  // bidders are still free and that still fit; the best of them is kept. Where a solution is integral this is that
  // solution, and at the last it meets the bound. The solutions on the way to the last round to better packings
  // than the last alone on some solves (docs/performance.md, "A cheaper rack program, and every master rounded").
  PackingChoice best_rounded;
  double best_rounded_value = -1;
  auto round = [&]() {
    const std::vector<double>& x = lp.x();
    std::vector<std::size_t> by_value;
    for (std::size_t c = 0; c < columns.size(); ++c)
      if (x[c] > 1e-6) by_value.push_back(c);
    std::stable_sort(by_value.begin(), by_value.end(), [&](std::size_t a, std::size_t b) { return x[a] > x[b]; });
    std::vector<RowPick> order;
    for (std::size_t c : by_value)
      for (const auto& [b, r] : columns[c].rows) order.push_back({b, r});
    PackingChoice choice = pack_in_order(problem, -1, order).choice;
    if (!packing_feasible(problem, choice, excluded)) return;
    choice = upgrade_packing(problem, excluded, std::move(choice));
    const double value = packing_value(problem, choice);
    if (value > best_rounded_value + kImprovementTolerance) {
      best_rounded_value = value;
      best_rounded = std::move(choice);
    }
  };
  for (int iteration = 0; iteration < max_iterations; ++iteration) {
    lp.solve(deadline);
    ++out.iterations;
    if (!lp.optimal()) break;
    round();
    const std::vector<double>& dual = lp.duals();
    for (std::size_t k = 0; k < prices.size(); ++k) prices[k] = std::max(0.0, dual[k]);
    // The bound at these prices, and the reduced gains the racks' programs price.
    double bound = 0;
    for (int b = 0; b < bidders; ++b)
      if (b != excluded) bound += prices[static_cast<std::size_t>(b)];
    for (int i = 0; i < items; ++i) bound += prices[static_cast<std::size_t>(bidders + i)] * problem.capacity(i);
    for (int b = 0; b < bidders; ++b) {
      if (b == excluded) continue;
      const auto& bidder_rows = problem.bidders[static_cast<std::size_t>(b)].rows;
      for (std::size_t r = 0; r < bidder_rows.size(); ++r) {
        double gain = bidder_rows[r].gain - prices[static_cast<std::size_t>(b)];
        for (int item : bidder_rows[r].items) gain -= prices[static_cast<std::size_t>(bidders + item)];
        reduced[static_cast<std::size_t>(b)][r] = gain;
        if (layout.row_rack[static_cast<std::size_t>(b)][r] < 0 && bidder_rows[r].gain > 0) bound += std::max(0.0, gain);
      }
    }
    int added = 0;
    bool priced = true;  // every rack priced: the bound at these prices is complete
    // Each rack's best pattern already in the master, at the reduced gains: its program need only look above it
    // (the elastic (20, 64) auctions spent a fifth less time in these programs; docs/performance.md, "The racks' master
    // LP without CLP").
    std::vector<double> floors(static_cast<std::size_t>(racks), 0.0);
    for (std::size_t c = 0; c < columns.size(); ++c) {
      if (columns[c].rack < 0) continue;
      double value = 0;
      for (const auto& [b, r] : columns[c].rows) value += reduced[static_cast<std::size_t>(b)][static_cast<std::size_t>(r)];
      double& floor = floors[static_cast<std::size_t>(columns[c].rack)];
      floor = std::max(floor, value);
    }
    for (int k = 0; k < racks; ++k) {
      RackPricing& rack = pricing[static_cast<std::size_t>(k)];
      const double price = prices[static_cast<std::size_t>(bidders + items + k)];
      // In the first kGreedyIterations, where the rack's last program was large (or none ran yet), a greedy pattern
      // that prices out enters instead of the program's best: at the first prices, far from the master's optimum, the
      // programs keep the most states (docs/performance.md, "Greedy patterns while the racks' programs are large").
      // The iteration's bound then counts the rack at each bidder's best reduced gain, which is weaker but holds.
      if (iteration < kGreedyIterations && rack.last_states() > kGreedyAbove) {
        double loose = 0;
        const double value = rack.greedy(reduced, &rows, &loose);
        if (!rows.empty() && value > price + kEnterTolerance && value > floors[static_cast<std::size_t>(k)] + kEnterTolerance) {
          bound += loose;
          patterns_.push_back({k, rows});
          add_column({k, rows});
          ++added;
          continue;
        }
      }
      const double best = rack.best(reduced, &rows, deadline, floors[static_cast<std::size_t>(k)]);
      if (best == RackPricing::kStopped) {
        priced = false;
        break;
      }
      if (best < 0) return RackBound{};  // kTooLarge: the problem does not decompose within bounds
      bound += best;
      if (!rows.empty() && best > price + kEnterTolerance) {
        patterns_.push_back({k, rows});
        add_column({k, rows});
        ++added;
      }
    }
    if (priced && bound < out.bound) {
      out.bound = bound;
      out.prices.assign(prices.begin(), prices.begin() + bidders + items);
    }
    if (added == 0 || !priced || deadline.passed()) break;
  }
  // A dive on the restricted master, in the PF solve where the best rounding lies well below the bound: the column the
  // master takes most of (short of all) is fixed at 1, the master solved again without pricing and rounded, up to
  // kDiveSteps times. On the (200, 1024) elastic auctions it finds packings 1-2% of the bound better than the roundings
  // (docs/performance.md, "Roundings the time budget cut off, and a dive for the PF packing"); on smaller auctions the
  // gap rarely reaches kDiveGap.
  if (excluded < 0 && best_rounded_value < out.bound - kImprovementTolerance - kDiveGap * out.bound && !deadline.passed()) {
    if (!lp.optimal()) {  // the column generation stopped after adding columns (max_iterations)
      lp.solve(deadline);
      if (lp.optimal()) round();
    }
    for (int step = 0; step < kDiveSteps && lp.optimal() && !deadline.passed(); ++step) {
      const std::vector<double>& x = lp.x();
      int pick = -1;
      for (std::size_t c = 0; c < columns.size(); ++c)
        if (x[c] > 1e-6 && x[c] < 1 - 1e-6 && (pick < 0 || x[c] > x[static_cast<std::size_t>(pick)])) pick = static_cast<int>(c);
      if (pick < 0) break;
      if (!lp.fix_at_one(pick)) break;
      lp.solve(deadline);
      if (!lp.optimal()) break;
      round();
    }
  }
  // The best rounding is kept also where the time budget stopped the column generation: on the (200, 1024) auctions
  // it is the best packing the solve finds (docs/performance.md, "Roundings the time budget cut off, and a dive for the
  // PF packing").
  if (best_rounded.empty()) return out;
  out.proven = best_rounded_value >= out.bound - kImprovementTolerance;
  out.choice = std::move(best_rounded);
  return out;
}

double RackBound::bound_without(int bidder) const {
  if (prices.empty()) return std::numeric_limits<double>::infinity();
  return bound - prices[static_cast<std::size_t>(bidder)];
}

RackTable::RackTable(const PackingProblem& problem, int excluded, const std::vector<int>& order,
                     const std::vector<double>& prices) {
  const Layout layout = make_layout(problem);
  const auto bidders = problem.bidders.size();
  if (!layout.ok || prices.size() != bidders + static_cast<std::size_t>(problem.item_count)) return;
  racks_ = layout.racks;
  item_prices_.assign(prices.begin() + static_cast<std::ptrdiff_t>(bidders), prices.end());
  rack_items_ = layout.rack_items;
  positions_.resize(order.size());
  for (std::size_t p = 0; p < order.size(); ++p) {
    const int b = order[p];
    Position& position = positions_[p];
    position.moves.resize(static_cast<std::size_t>(racks_));
    if (b == excluded) continue;
    position.bidder_price = prices[static_cast<std::size_t>(b)];
    const auto& rows = problem.bidders[static_cast<std::size_t>(b)].rows;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      double reduced = rows[r].gain - prices[static_cast<std::size_t>(b)];
      for (int item : rows[r].items) reduced -= item_prices_[static_cast<std::size_t>(item)];
      if (!(rows[r].gain > 0) || !(reduced > 0)) continue;
      const int rack = layout.row_rack[static_cast<std::size_t>(b)][r];
      Move move{reduced, {}};
      for (const ItemLoad& load : item_loads(rows[r]))
        if (rack < 0 || problem.item_rack[static_cast<std::size_t>(load.item)] == rack)
          move.loads.push_back({rack < 0 ? load.item : layout.slot[static_cast<std::size_t>(load.item)] * kBitsPerItem, load.units});
      (rack < 0 ? position.linking : position.moves[static_cast<std::size_t>(rack)]).push_back(std::move(move));
    }
  }
  memo_.resize(positions_.size() * static_cast<std::size_t>(racks_));
  item_rack_ = problem.item_rack;
  item_shift_.assign(item_rack_.size(), -1);
  for (std::size_t i = 0; i < item_rack_.size(); ++i)
    if (layout.slot[i] >= 0) item_shift_[i] = layout.slot[i] * kBitsPerItem;
  touched_.assign(static_cast<std::size_t>(racks_), 0);
  last_left_.assign(static_cast<std::size_t>(racks_), 0);
  last_value_.assign(static_cast<std::size_t>(racks_), 0.0);
  // Per position and rack, the most units of each item the rows from that position on can take together: each
  // position's largest load on the item, summed.
  room_.assign((positions_.size() + 1) * static_cast<std::size_t>(racks_), 0);
  for (std::size_t p = positions_.size(); p-- > 0;)
    for (int k = 0; k < racks_; ++k) {
      std::uint64_t room = room_[(p + 1) * static_cast<std::size_t>(racks_) + static_cast<std::size_t>(k)];
      std::vector<int> most(rack_items_[static_cast<std::size_t>(k)].size(), 0);
      for (const Move& move : positions_[p].moves[static_cast<std::size_t>(k)])
        for (const Load& load : move.loads) {
          int& m = most[static_cast<std::size_t>(load.at / kBitsPerItem)];
          m = std::max(m, load.units);
        }
      for (std::size_t i = 0; i < most.size(); ++i) {
        const int shift = kBitsPerItem * static_cast<int>(i);
        const int units = std::min(RackDecomposition::kMaxCapacity, static_cast<int>((room >> shift) & kItemMask) + most[i]);
        room = (room & ~(kItemMask << shift)) | (static_cast<std::uint64_t>(units) << shift);
      }
      room_[p * static_cast<std::size_t>(racks_) + static_cast<std::size_t>(k)] = room;
    }
  usable_ = true;
}

double RackTable::outside_racks(std::size_t position, const std::vector<int>& residual) const {
  double total = 0;
  for (std::size_t i = 0; i < item_prices_.size(); ++i) total += item_prices_[i] * residual[i];
  for (std::size_t p = position; p < positions_.size(); ++p) {
    total += positions_[p].bidder_price;
    for (const Move& move : positions_[p].linking) {
      const bool fits = std::all_of(move.loads.begin(), move.loads.end(), [&](const Load& load) {
        return load.units <= residual[static_cast<std::size_t>(load.at)];
      });
      if (fits) total += move.reduced;
    }
  }
  return total;
}

std::uint64_t RackTable::rack_left(int rack, const std::vector<int>& residual) const {
  std::uint64_t left = 0;
  const auto& items = rack_items_[static_cast<std::size_t>(rack)];
  for (std::size_t i = 0; i < items.size(); ++i)
    left |= static_cast<std::uint64_t>(std::clamp(residual[static_cast<std::size_t>(items[i])], 0, RackDecomposition::kMaxCapacity))
            << (kBitsPerItem * i);
  return left;
}

// Units beyond what the rows from `position` on can take change nothing: cut to that, the residuals that differ only
// there share one entry (on the elastic (20, 64) auctions the tables hold 4-5x fewer).
std::uint64_t RackTable::cut(std::size_t position, int rack, std::uint64_t left) const {
  const std::uint64_t room = room_[position * static_cast<std::size_t>(racks_) + static_cast<std::size_t>(rack)];
  std::uint64_t out = 0;
  for (std::size_t i = 0; i < rack_items_[static_cast<std::size_t>(rack)].size(); ++i) {
    const int shift = kBitsPerItem * static_cast<int>(i);
    out |= std::min((left >> shift) & kItemMask, (room >> shift) & kItemMask) << shift;
  }
  return out;
}

double RackTable::bound(std::size_t position, const std::vector<int>& residual) {
  if (!usable_) return std::numeric_limits<double>::infinity();
  double total = outside_racks(position, residual);
  for (int k = 0; k < racks_; ++k) {
    const std::uint64_t left = rack_left(k, residual);
    const double value = best(position, k, left);
    last_left_[static_cast<std::size_t>(k)] = left;
    last_value_[static_cast<std::size_t>(k)] = value;
    total += value;
    if (!usable_) return std::numeric_limits<double>::infinity();
  }
  last_position_ = position;
  last_total_ = total;
  return total;
}

double RackTable::peek(std::size_t position, std::span<const Change> changes) {
  if (!usable_ || position != last_position_) return std::numeric_limits<double>::infinity();
  double total = last_total_;
  std::size_t racks_touched = 0;
  for (const Change& change : changes) {
    const auto item = static_cast<std::size_t>(change.item);
    total -= item_prices_[item] * (change.before - change.after);
    if (item_shift_[item] < 0) continue;  // no row of a rack draws from it
    const int rack = item_rack_[item];
    auto& left = touched_[static_cast<std::size_t>(rack)];
    if (left == 0) {
      left = last_left_[static_cast<std::size_t>(rack)] | kTouched;
      ++racks_touched;
    }
    const int shift = item_shift_[item];
    const auto units = static_cast<std::uint64_t>(std::clamp(change.after, 0, RackDecomposition::kMaxCapacity));
    left = (left & ~(kItemMask << shift)) | (units << shift);
  }
  for (int k = 0; racks_touched > 0 && k < racks_; ++k) {
    std::uint64_t& left = touched_[static_cast<std::size_t>(k)];
    if (left == 0) continue;
    --racks_touched;
    const std::uint64_t here = left & ~kTouched;
    left = 0;
    if (here == last_left_[static_cast<std::size_t>(k)] || position >= positions_.size()) continue;
    double value = last_value_[static_cast<std::size_t>(k)];
    const std::uint64_t key = cut(position, k, here);
    if (key == 0) {
      value = 0;
    } else {
      if (const double* known = memo_[position * static_cast<std::size_t>(racks_) + static_cast<std::size_t>(k)].find(key))
        value = *known;
    }
    total += value - last_value_[static_cast<std::size_t>(k)];
  }
  return total;
}

namespace {
std::size_t memo_hash(std::uint64_t left) { return static_cast<std::size_t>((left * 0x9E3779B97F4A7C15ULL) >> 20); }
}  // namespace

const double* RackTable::Memo::find(std::uint64_t left) const {
  if (slots_.empty()) return nullptr;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t h = memo_hash(left) & mask;; h = (h + 1) & mask) {
    const Slot& slot = slots_[h];
    if (slot.left == left) return &slot.value;
    if (slot.left == 0) return nullptr;
  }
}

void RackTable::Memo::insert(std::uint64_t left, double value) {
  if (2 * (used_ + 1) > slots_.size()) {
    std::vector<Slot> old(std::max<std::size_t>(16, 2 * slots_.size()));
    old.swap(slots_);
    used_ = 0;
    for (const Slot& slot : old)
      if (slot.left != 0) insert(slot.left, slot.value);
  }
  const std::size_t mask = slots_.size() - 1;
  std::size_t h = memo_hash(left) & mask;
  while (slots_[h].left != 0) h = (h + 1) & mask;
  slots_[h] = {left, value};
  ++used_;
}

double RackTable::best(std::size_t position, int rack, std::uint64_t left) {
  if (position >= positions_.size() || left == 0) return 0;
  left = cut(position, rack, left);
  if (left == 0) return 0;
  Memo& memo = memo_[position * static_cast<std::size_t>(racks_) + static_cast<std::size_t>(rack)];
  if (const double* known = memo.find(left)) return *known;
  double value = best(position + 1, rack, left);
  for (const Move& move : positions_[position].moves[static_cast<std::size_t>(rack)]) {
    std::uint64_t after = left;
    bool fits = true;
    for (const Load& load : move.loads) {
      const auto units = static_cast<int>((after >> load.at) & kItemMask);
      if (units < load.units) {
        fits = false;
        break;
      }
      after -= static_cast<std::uint64_t>(load.units) << load.at;
    }
    if (fits) value = std::max(value, move.reduced + best(position + 1, rack, after));
  }
  if (++entries_ > kMaxEntries) usable_ = false;  // a table this large costs more than it saves
  memo.insert(left, value);
  return value;
}

}  // namespace themis::arbiter
