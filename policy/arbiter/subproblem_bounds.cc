#include "policy/arbiter/subproblem_bounds.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <utility>

namespace themis::arbiter {

namespace {

struct RowLess {
  bool operator()(const std::pair<double, std::vector<ItemLoad>>& x,
                  const std::pair<double, std::vector<ItemLoad>>& y) const {
    if (x.first != y.first) return x.first < y.first;
    return std::lexicographical_compare(x.second.begin(), x.second.end(), y.second.begin(), y.second.end(),
                                        [](const ItemLoad& a, const ItemLoad& b) {
                                          return a.item != b.item ? a.item < b.item : a.units < b.units;
                                        });
  }
};

}  // namespace

void SubproblemBounds::use_for(const PackingProblem* problem, const std::vector<SearchBidder>& bidders,
                               std::size_t items) {
  if (problem_ == problem && keys_ && keys_->relevant_from.size() == bidders.size() + 2) return;
  problem_ = problem;
  const std::size_t n = bidders.size();
  std::vector<std::vector<ItemLoad>> relevant(n + 1);
  std::vector<int> most(items, 0), own(items, 0);
  for (std::size_t d = n; d-- > 0;) {
    std::fill(own.begin(), own.end(), 0);
    for (const SearchRow& row : bidders[d].rows)
      for (const ItemLoad& l : row.loads)
        own[static_cast<std::size_t>(l.item)] = std::max(own[static_cast<std::size_t>(l.item)], l.units);
    for (std::size_t i = 0; i < items; ++i) most[i] += own[i];
    for (std::size_t i = 0; i < items; ++i)
      if (most[i] > 0) relevant[d].push_back({static_cast<int>(i), most[i]});
  }
  const std::vector<std::vector<std::vector<int>>> interchangeable = find_interchangeable(bidders, items, relevant);
  auto keys = std::make_shared<KeyLayout>();
  keys->relevant_from.push_back(0);
  keys->classes_from.push_back(0);
  keys->members_from.push_back(0);
  for (std::size_t d = 0; d <= n; ++d) {
    keys->relevant.insert(keys->relevant.end(), relevant[d].begin(), relevant[d].end());
    keys->relevant_from.push_back(keys->relevant.size());
    for (const std::vector<int>& members : interchangeable[d]) {
      keys->members.insert(keys->members.end(), members.begin(), members.end());
      keys->members_from.push_back(keys->members.size());
    }
    keys->classes_from.push_back(keys->members_from.size() - 1);
  }
  keys_ = std::move(keys);
  own_ = Table{};
  shared_.reset();
}

void SubproblemBounds::make_key(std::size_t position, const std::vector<int>& residual, Key& key) const {
  const KeyLayout& keys = *keys_;
  key.words.clear();
  for (std::size_t r = keys.relevant_from[position]; r < keys.relevant_from[position + 1]; ++r)
    key.words.push_back(std::min(residual[static_cast<std::size_t>(keys.relevant[r].item)], keys.relevant[r].units));
  for (std::size_t c = keys.classes_from[position]; c < keys.classes_from[position + 1]; ++c) {
    const std::span<const int> members(keys.members.data() + keys.members_from[c], keys.members_from[c + 1] - keys.members_from[c]);
    std::vector<int>& values = key.scratch;
    values.clear();
    for (const int k : members) values.push_back(key.words[static_cast<std::size_t>(k)]);
    std::sort(values.begin(), values.end(), std::greater<>());
    for (std::size_t m = 0; m < members.size(); ++m) key.words[static_cast<std::size_t>(members[m])] = values[m];
  }
  std::uint64_t hash = 0x9e3779b97f4a7c15ULL * (position + 1);
  for (const int v : key.words) hash = (hash ^ static_cast<std::uint64_t>(v)) * 0x100000001b3ULL;
  key.hash = hash ^ (hash >> 29);
}

double SubproblemBounds::find(std::size_t position, int tag, const Key& key) const {
  const double own = own_.find(position, tag, key);
  return shared_ ? std::min(own, shared_->find(position, tag, key)) : own;
}

void SubproblemBounds::record(std::size_t position, int tag, const Key& key, double bound) {
  if (!std::isfinite(bound)) return;
  own_.record(position, tag, key, bound);
}

void SubproblemBounds::share() {
  if (own_.empty()) return;
  if (!shared_) {
    shared_ = std::make_shared<const Table>(std::move(own_));
  } else {
    auto merged = std::make_shared<Table>(*shared_);
    merged->absorb(own_);
    shared_ = std::move(merged);
  }
  own_ = Table{};
}

// Two items are interchangeable for bidders [position, end) when swapping them maps every one of those bidders'
// rows onto a row of the same bidder with the same gain. Then the best those bidders can add from a residual is
// the same as from the residual with the two items' values swapped (the swap maps packings onto packings of
// equal value), and the interchangeable items of a position form classes (a swap that is a symmetry for each
// bidder is one for all of them; two swaps sharing an item make the third). Each position's classes refine the
// next position's by one bidder: the items it draws from part from those it does not, and among those it
// draws from, two stay together when the swap maps its rows onto its rows.
std::vector<std::vector<std::vector<int>>> SubproblemBounds::find_interchangeable(
    const std::vector<SearchBidder>& bidders, std::size_t items, const std::vector<std::vector<ItemLoad>>& relevant) {
  const std::size_t n = bidders.size();
  std::vector<std::vector<std::vector<int>>> interchangeable(n + 1);
  std::vector<int> cls(items, 0);  // past the last bidder every item is alike
  int classes = 1;
  for (std::size_t d = n; d-- > 0;) {
    const std::vector<SearchRow>& rows = bidders[d].rows;
    std::set<std::pair<double, std::vector<ItemLoad>>, RowLess> own;
    std::vector<int> touched;
    for (const SearchRow& row : rows) {
      own.insert({row.gain, row.loads});
      for (const ItemLoad& l : row.loads) touched.push_back(l.item);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    // The swap of items a and b maps bidder d's rows onto its rows.
    const auto swap_keeps = [&](int a, int b) {
      std::vector<ItemLoad> image;
      for (const SearchRow& row : rows) {
        const bool moves =
            std::any_of(row.loads.begin(), row.loads.end(), [&](const ItemLoad& l) { return l.item == a || l.item == b; });
        if (!moves) continue;
        image = row.loads;
        for (ItemLoad& l : image) l.item = l.item == a ? b : l.item == b ? a : l.item;
        std::sort(image.begin(), image.end(), [](const ItemLoad& x, const ItemLoad& y) { return x.item < y.item; });
        if (own.find({row.gain, image}) == own.end()) return false;
      }
      return true;
    };
    // Every item it draws from leaves its class, for the first new class whose first member it swaps with.
    std::vector<std::pair<int, int>> firsts;  // per class opened here: (the class it came from, its number)
    std::vector<int> new_of;                  // per class opened here: its first member
    for (const int t : touched) {
      const int old = cls[static_cast<std::size_t>(t)];
      int joined = -1;
      for (std::size_t f = 0; f < firsts.size() && joined < 0; ++f)
        if (firsts[f].first == old && swap_keeps(new_of[f], t)) joined = firsts[f].second;
      if (joined < 0) {
        joined = classes++;
        firsts.push_back({old, joined});
        new_of.push_back(t);
      }
      cls[static_cast<std::size_t>(t)] = joined;
    }
    // The classes of this position's key: indices into relevant[d] of items of one class, two or more.
    std::map<int, std::vector<int>> members;
    for (std::size_t k = 0; k < relevant[d].size(); ++k)
      members[cls[static_cast<std::size_t>(relevant[d][k].item)]].push_back(static_cast<int>(k));
    for (auto& [c, list] : members)
      if (list.size() > 1) interchangeable[d].push_back(std::move(list));
  }
  return interchangeable;
}

double SubproblemBounds::Table::find(std::size_t position, int tag, const Key& key) const {
  const int e = slots_[slot_of(position, tag, tagged_hash(key, tag), key.words)];
  return e < 0 ? std::numeric_limits<double>::infinity() : entries_[static_cast<std::size_t>(e)].bound;
}

void SubproblemBounds::Table::record(std::size_t position, int tag, const Key& key, double bound) {
  insert(position, tag, tagged_hash(key, tag), key.words, bound);
}

void SubproblemBounds::Table::absorb(const Table& other) {
  const std::span<const int> words(other.words_);
  for (std::size_t e = 0; e < other.entries_.size(); ++e) {
    const Entry& entry = other.entries_[e];
    // Keys lie back to back: each ends where the next begins.
    const std::size_t end = e + 1 < other.entries_.size() ? other.entries_[e + 1].offset : words.size();
    insert(entry.position, entry.tag, entry.hash, words.subspan(entry.offset, end - entry.offset), entry.bound);
  }
}

std::uint64_t SubproblemBounds::Table::tagged_hash(const Key& key, int tag) {
  return key.hash ^ static_cast<std::uint64_t>(tag + 1) * 0xff51afd7ed558ccdULL;
}

void SubproblemBounds::Table::insert(std::size_t position, int tag, std::uint64_t hash, std::span<const int> words,
                                     double bound) {
  const std::size_t s = slot_of(position, tag, hash, words);
  if (const int e = slots_[s]; e >= 0) {
    entries_[static_cast<std::size_t>(e)].bound = std::min(entries_[static_cast<std::size_t>(e)].bound, bound);
    return;
  }
  if (words_.size() + words.size() > kMaxWords || entries_.size() >= kMaxEntries) return;
  slots_[s] = static_cast<int>(entries_.size());
  entries_.push_back({hash, words_.size(), position, tag, bound});
  words_.insert(words_.end(), words.begin(), words.end());
  if (entries_.size() * 2 > slots_.size()) grow();
}

std::size_t SubproblemBounds::Table::slot_of(std::size_t position, int tag, std::uint64_t hash,
                                              std::span<const int> words) const {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t s = hash & mask;; s = (s + 1) & mask) {
    const int e = slots_[s];
    if (e < 0) return s;
    const Entry& entry = entries_[static_cast<std::size_t>(e)];
    if (entry.hash == hash && entry.position == position && entry.tag == tag &&
        std::equal(words.begin(), words.end(), words_.begin() + static_cast<std::ptrdiff_t>(entry.offset)))
      return s;
  }
}

void SubproblemBounds::Table::grow() {
  slots_.assign(slots_.size() * 2, -1);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t e = 0; e < entries_.size(); ++e) {
    std::size_t s = entries_[e].hash & mask;
    while (slots_[s] >= 0) s = (s + 1) & mask;
    slots_[s] = static_cast<int>(e);
  }
}

}  // namespace themis::arbiter
