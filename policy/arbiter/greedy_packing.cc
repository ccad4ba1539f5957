#include "policy/arbiter/greedy_packing.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "policy/arbiter/winner_solver.h"

namespace themis::arbiter {

namespace {

constexpr double kImprovement = 1e-12;

double row_gain(const PackingProblem& p, int bidder, int row) {
  return row < 0 ? 0.0 : p.bidders[static_cast<std::size_t>(bidder)].rows[static_cast<std::size_t>(row)].gain;
}

const std::vector<int>& row_items(const PackingProblem& p, int bidder, int row) {
  return p.bidders[static_cast<std::size_t>(bidder)].rows[static_cast<std::size_t>(row)].items;
}

}  // namespace

GreedyOrders::GreedyOrders(const PackingProblem& problem) : problem_(&problem) {
  struct Candidate {
    RowPick pick;
    double gain;
    double size;
    double score = 0;  // of the pass being sorted
  };
  std::vector<Candidate> candidates;
  for (std::size_t b = 0; b < problem.bidders.size(); ++b) {
    const auto& rows = problem.bidders[b].rows;
    for (std::size_t r = 0; r < rows.size(); ++r)
      if (rows[r].gain > 0 && !rows[r].items.empty())
        candidates.push_back(
            {{static_cast<int>(b), static_cast<int>(r)}, rows[r].gain, static_cast<double>(rows[r].items.size())});
  }
  // By gain, by gain per GPU and by gain per √GPUs; each sort is stable over the last. Leaving a bidder's rows out
  // afterwards keeps the others' order, so the orders serve every excluded bidder.
  auto score = [](std::size_t pass, const Candidate& c) {
    return pass == 0 ? c.gain : pass == 1 ? c.gain / c.size : c.gain / std::sqrt(c.size);
  };
  for (std::size_t pass = 0; pass < orders_.size(); ++pass) {
    for (Candidate& c : candidates) c.score = score(pass, c);
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
    orders_[pass].reserve(candidates.size());
    for (const Candidate& c : candidates) orders_[pass].push_back(c.pick);
  }
}

OrderedPacking pack_in_order(const PackingProblem& problem, int excluded, std::span<const RowPick> order) {
  OrderedPacking out{PackingChoice(problem.bidders.size(), -1), 0};
  std::vector<int> used(static_cast<std::size_t>(problem.item_count), 0);
  for (const RowPick& c : order) {
    if (c.bidder == excluded || out.choice[static_cast<std::size_t>(c.bidder)] >= 0) continue;
    // Units taken one by one (a row lists an item once per unit) until one is over its capacity.
    const auto& items = row_items(problem, c.bidder, c.row);
    std::size_t taken = 0;
    bool fits = true;
    while (fits && taken < items.size()) {
      const int i = items[taken++];
      fits = ++used[static_cast<std::size_t>(i)] <= problem.capacity(i);
    }
    if (!fits) {
      while (taken > 0) --used[static_cast<std::size_t>(items[--taken])];
      continue;
    }
    out.choice[static_cast<std::size_t>(c.bidder)] = c.row;
    out.value += row_gain(problem, c.bidder, c.row);
  }
  return out;
}

PackingChoice GreedyOrders::packing(int excluded) const {
  PackingChoice best(problem_->bidders.size(), -1);
  double best_value = 0;
  for (const std::vector<RowPick>& order : orders_) {
    OrderedPacking packed = pack_in_order(*problem_, excluded, order);
    if (packed.value > best_value) {
      best_value = packed.value;
      best = std::move(packed.choice);
    }
  }
  return best;
}

PackingChoice greedy_packing(const PackingProblem& problem, int excluded) {
  return GreedyOrders(problem).packing(excluded);
}

namespace {

// improve_packing on a capacitated problem: a bidder takes a better row, the holders with the least gain of each item
// it lacks make room and re-pick the best rows that still fit, kept where the sum gains.
PackingChoice improve_capacitated(const PackingProblem& problem, int excluded, PackingChoice choice, const Deadline& deadline) {
  choice = upgrade_packing(problem, excluded, std::move(choice));
  if (deadline.passed()) return choice;  // not worth the passes' setup (the rows' loads flat, the items' holders)
  const auto n = problem.bidders.size();
  const auto items = static_cast<std::size_t>(problem.item_count);
  // Each row's units per item (a row lists an item once per unit), flat: row r of bidder b has the loads
  // [load_begin[first_row[b] + r], load_begin[first_row[b] + r + 1]).
  std::vector<ItemLoad> loads;
  std::vector<std::size_t> first_row(n + 1, 0), load_begin(1, 0);
  for (std::size_t b = 0; b < n; ++b) {
    for (const PackingRow& row : problem.bidders[b].rows) {
      append_item_loads(row, loads);
      load_begin.push_back(loads.size());
    }
    first_row[b + 1] = first_row[b] + problem.bidders[b].rows.size();
  }
  const auto loads_of = [&](int b, int row) {
    const std::size_t r = first_row[static_cast<std::size_t>(b)] + static_cast<std::size_t>(row);
    return std::span<const ItemLoad>(loads.data() + load_begin[r], load_begin[r + 1] - load_begin[r]);
  };
  std::vector<int> left(items);
  for (std::size_t i = 0; i < items; ++i) left[i] = problem.capacity(static_cast<int>(i));
  auto take = [&](int b, int row, int sign) {
    if (row >= 0)
      for (const ItemLoad& l : loads_of(b, row)) left[static_cast<std::size_t>(l.item)] -= sign * l.units;
  };
  for (std::size_t b = 0; b < n; ++b) take(static_cast<int>(b), choice[b], 1);
  // Per item: the bidders holding units of it, the least gain first.
  std::vector<std::vector<int>> holders(items);
  auto rebuild = [&] {
    for (auto& h : holders) h.clear();
    for (std::size_t b = 0; b < n; ++b)
      if (choice[b] >= 0)
        for (const ItemLoad& l : loads_of(static_cast<int>(b), choice[b]))
          holders[static_cast<std::size_t>(l.item)].push_back(static_cast<int>(b));
    for (auto& h : holders)
      std::stable_sort(h.begin(), h.end(), [&](int x, int y) {
        return row_gain(problem, x, choice[static_cast<std::size_t>(x)]) < row_gain(problem, y, choice[static_cast<std::size_t>(y)]);
      });
  };
  rebuild();
  const auto fits = [&](int b, int row) {
    return std::all_of(loads_of(b, row).begin(), loads_of(b, row).end(),
                       [&](const ItemLoad& l) { return l.units <= left[static_cast<std::size_t>(l.item)]; });
  };
  // The best row of `b` that fits `left`, or -1.
  auto best_fitting = [&](int b) {
    const auto& rows = problem.bidders[static_cast<std::size_t>(b)].rows;
    int best_row = -1;
    double best = 0;
    for (std::size_t r = 0; r < rows.size(); ++r)
      if (rows[r].gain > best + kImprovementTolerance && fits(b, static_cast<int>(r))) {
        best = rows[r].gain;
        best_row = static_cast<int>(r);
      }
    return best_row;
  };
  std::vector<int> evicted, old_rows;
  std::vector<char> is_evicted(n, 0);
  for (int pass = 0; pass < 4; ++pass) {
    bool improved = false;
    for (std::size_t bi = 0; bi < n && !deadline.passed(); ++bi) {
      const int b = static_cast<int>(bi);
      if (b == excluded) continue;
      const auto& rows = problem.bidders[bi].rows;
      for (std::size_t r = 0; r < rows.size(); ++r) {
        const int old_row = choice[bi];
        const double current = row_gain(problem, b, old_row);
        if (!(rows[r].gain > current + kImprovementTolerance)) continue;
        take(b, old_row, -1);
        take(b, static_cast<int>(r), 1);
        // Evict, item by item, the holders with the least gain until the row fits.
        evicted.clear();
        bool possible = true;
        for (const ItemLoad& l : loads_of(b, static_cast<int>(r))) {
          const auto item = static_cast<std::size_t>(l.item);
          for (std::size_t h = 0; left[item] < 0 && h < holders[item].size(); ++h) {
            const int who = holders[item][h];
            if (who == b || is_evicted[static_cast<std::size_t>(who)] != 0) continue;
            is_evicted[static_cast<std::size_t>(who)] = 1;
            evicted.push_back(who);
            take(who, choice[static_cast<std::size_t>(who)], -1);
          }
          if (left[item] < 0) possible = false;
        }
        double delta = rows[r].gain - current;
        old_rows.clear();
        for (int who : evicted) {
          old_rows.push_back(choice[static_cast<std::size_t>(who)]);
          delta -= row_gain(problem, who, choice[static_cast<std::size_t>(who)]);
          choice[static_cast<std::size_t>(who)] = -1;
        }
        const bool tried = possible && !evicted.empty();
        if (tried)
          for (int who : evicted) {
            const int alt = best_fitting(who);
            choice[static_cast<std::size_t>(who)] = alt;
            take(who, alt, 1);
            delta += row_gain(problem, who, alt);
          }
        for (int who : evicted) is_evicted[static_cast<std::size_t>(who)] = 0;
        if (tried && delta > kImprovementTolerance) {
          choice[bi] = static_cast<int>(r);
          rebuild();
          improved = true;
          continue;
        }
        // Undo.
        for (std::size_t k = 0; k < evicted.size(); ++k) {
          const int who = evicted[k];
          if (tried) take(who, choice[static_cast<std::size_t>(who)], -1);
          choice[static_cast<std::size_t>(who)] = old_rows[k];
          take(who, old_rows[k], 1);
        }
        take(b, static_cast<int>(r), -1);
        take(b, old_row, 1);
      }
    }
    if (!improved) break;
  }
  return upgrade_packing(problem, excluded, std::move(choice));
}

}  // namespace

PackingChoice improve_packing(const PackingProblem& problem, int excluded, PackingChoice choice, const Deadline& deadline) {
  if (!packing_feasible(problem, choice, excluded)) return choice;
  if (problem.capacitated()) return improve_capacitated(problem, excluded, std::move(choice), deadline);
  const auto n = problem.bidders.size();
  std::vector<int> holder(static_cast<std::size_t>(problem.item_count), -1);  // item -> bidder using it
  auto place = [&](int b, int row, int who) {
    if (row >= 0)
      for (int g : row_items(problem, b, row)) holder[static_cast<std::size_t>(g)] = who;
  };
  for (std::size_t b = 0; b < n; ++b) place(static_cast<int>(b), choice[b], static_cast<int>(b));

  // The best row of `b` whose items are all free (or already b's); -1 if none beats `floor`.
  auto best_fitting = [&](int b, double floor) {
    const auto& rows = problem.bidders[static_cast<std::size_t>(b)].rows;
    int best_row = -1;
    double best = floor;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (!(rows[r].gain > best + kImprovement)) continue;
      const bool fits = std::all_of(rows[r].items.begin(), rows[r].items.end(), [&](int g) {
        const int h = holder[static_cast<std::size_t>(g)];
        return h < 0 || h == b;
      });
      if (fits) {
        best = rows[r].gain;
        best_row = static_cast<int>(r);
      }
    }
    return best_row;
  };

  std::vector<int> evicted, old_rows;
  for (int pass = 0; pass < 4; ++pass) {
    bool improved = false;
    for (std::size_t bi = 0; bi < n && !deadline.passed(); ++bi) {
      const int b = static_cast<int>(bi);
      if (b == excluded) continue;
      // Plain move: a better row on free GPUs.
      if (const int r = best_fitting(b, row_gain(problem, b, choice[bi])); r >= 0) {
        place(b, choice[bi], -1);
        choice[bi] = r;
        place(b, r, b);
        improved = true;
      }
      // Eviction move: take a better row, the bidders in the way re-pick what still fits.
      const auto& rows = problem.bidders[bi].rows;
      for (std::size_t r = 0; r < rows.size(); ++r) {
        const double current = row_gain(problem, b, choice[bi]);
        if (!(rows[r].gain > current + kImprovement)) continue;
        evicted.clear();
        for (int g : rows[r].items) {
          const int h = holder[static_cast<std::size_t>(g)];
          if (h >= 0 && h != b && std::find(evicted.begin(), evicted.end(), h) == evicted.end()) evicted.push_back(h);
        }
        if (evicted.empty()) continue;
        double delta = rows[r].gain - current;
        for (int h : evicted) delta -= row_gain(problem, h, choice[static_cast<std::size_t>(h)]);
        // Apply tentatively; old_rows[k] is evicted[k]'s row before the move.
        const int old_row = choice[bi];
        old_rows.clear();
        place(b, choice[bi], -1);
        for (int h : evicted) {
          old_rows.push_back(choice[static_cast<std::size_t>(h)]);
          place(h, choice[static_cast<std::size_t>(h)], -1);
          choice[static_cast<std::size_t>(h)] = -1;
        }
        choice[bi] = static_cast<int>(r);
        place(b, static_cast<int>(r), b);
        for (int h : evicted) {
          const int alt = best_fitting(h, 0.0);
          if (alt >= 0) {
            choice[static_cast<std::size_t>(h)] = alt;
            place(h, alt, h);
            delta += row_gain(problem, h, alt);
          }
        }
        if (delta > kImprovement) {
          improved = true;
          continue;
        }
        // Undo.
        for (int h : evicted) place(h, choice[static_cast<std::size_t>(h)], -1);
        place(b, choice[bi], -1);
        choice[bi] = old_row;
        place(b, old_row, b);
        for (std::size_t k = 0; k < evicted.size(); ++k) {
          choice[static_cast<std::size_t>(evicted[k])] = old_rows[k];
          place(evicted[k], old_rows[k], evicted[k]);
        }
      }
    }
    if (!improved) break;
  }
  return choice;
}

int best_row_that_fits(std::span<const PackingRow> rows, std::vector<int>& left, double floor, double margin) {
  int best_row = -1;
  double best = floor;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (!(rows[r].gain > best + margin)) continue;
    // A row lists an item once per unit: it fits where no item appears more often than units are left.
    bool fits = true;
    for (int i : rows[r].items) fits = --left[static_cast<std::size_t>(i)] >= 0 && fits;
    for (int i : rows[r].items) ++left[static_cast<std::size_t>(i)];
    if (fits) {
      best = rows[r].gain;
      best_row = static_cast<int>(r);
    }
  }
  return best_row;
}

PackingChoice upgrade_packing(const PackingProblem& problem, int excluded, PackingChoice choice) {
  if (!packing_feasible(problem, choice, excluded)) return choice;
  std::vector<int> left(static_cast<std::size_t>(problem.item_count));
  for (int i = 0; i < problem.item_count; ++i) left[static_cast<std::size_t>(i)] = problem.capacity(i);
  auto take = [&](int b, int row, int sign) {
    if (row >= 0)
      for (int i : row_items(problem, b, row)) left[static_cast<std::size_t>(i)] -= sign;
  };
  for (std::size_t b = 0; b < choice.size(); ++b) take(static_cast<int>(b), choice[b], 1);
  // Each move gains more than kImprovementTolerance, so the passes end; the cap only bounds a pathological case.
  for (int pass = 0; pass < 32; ++pass) {
    bool moved = false;
    for (std::size_t b = 0; b < problem.bidders.size(); ++b) {
      const int bidder = static_cast<int>(b);
      if (bidder == excluded) continue;
      take(bidder, choice[b], -1);
      const auto& rows = problem.bidders[b].rows;
      const int better = best_row_that_fits(rows, left, row_gain(problem, bidder, choice[b]), kImprovementTolerance);
      const int best_row = better >= 0 ? better : choice[b];
      moved = moved || best_row != choice[b];
      choice[b] = best_row;
      take(bidder, choice[b], 1);
    }
    if (!moved) break;
  }
  return choice;
}

}  // namespace themis::arbiter
