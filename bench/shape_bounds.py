#!/usr/bin/env python3
"""How far two Lagrangian bounds on the PF solve lie above the best packing known, on the shape problems that
`auction_bench --dump DIR` writes (docs/performance.md, "Two bounds on the shape problem").

  capacity prices: relax every group's capacity (one price per group); each bidder then picks its best row
                   alone. Its best value over the prices is the LP bound, the one `shape` and CBC start from.
  row prices:      relax "at most one row per bidder" (one price per bidder); what is left is a knapsack over
                   the tree of groups (GPU < slot < machine < rack < offer), solved exactly by dynamic
                   programming, so the bound sees that whole GPUs must fit into each group. A row that asks of
                   several groups is placed at their lowest common ancestor with its total count (a further
                   relaxation, so the bound stays valid).

Both are minimised by subgradient steps (Polyak steps towards the best packing known); any prices give a valid
upper bound, so the figures printed are bounds, if not always the best ones the prices could give.

  python3 bench/shape_bounds.py DIR [--steps N]
"""
import argparse
import glob
import json
import math
import os


def load(path):
    d = json.load(open(path))
    parent = [g["parent"] for g in d["groups"]]
    cap = [g["capacity"] for g in d["groups"]]
    rows = [(b, r["gain"], [tuple(a) for a in r["asks"]]) for b, brows in enumerate(d["rows"]) for r in brows]
    return d, parent, cap, rows


def ancestors(g, parent):
    out = []
    while g >= 0:
        out.append(g)
        g = parent[g]
    return out


def polyak(value, target, sub, prices, k):
    """One projected subgradient step on prices >= 0 (sub: the constraint slacks at the current solution)."""
    norm = sum(s * s for s, p in zip(sub, prices) if not (s > 0 and p == 0)) or 1.0
    step = (value - target) / norm if value > target else 0.01 / (1 + k)
    return [max(0.0, p - step * s) for p, s in zip(prices, sub)]


def capacity_price_bound(d, parent, cap, rows, steps, target):
    usage = []
    for (_, _, asks) in rows:
        u = {}
        for (g, k) in asks:
            for a in ancestors(g, parent):
                u[a] = u.get(a, 0) + k
        usage.append(u)
    prices = [0.0] * len(cap)
    best = math.inf
    for k in range(steps):
        pick = [(-1, 0.0)] * len(d["rows"])
        for i, (b, w, _) in enumerate(rows):
            v = w - sum(prices[g] * n for g, n in usage[i].items())
            if v > pick[b][1]:
                pick[b] = (i, v)
        value = sum(v for _, v in pick) + sum(p * c for p, c in zip(prices, cap))
        best = min(best, value)
        slack = list(cap)
        for (i, _) in pick:
            if i >= 0:
                for g, n in usage[i].items():
                    slack[g] -= n
        prices = polyak(value, target, slack, prices, k)
    return best


def row_price_bound(d, parent, cap, rows, steps, target):
    groups = len(cap)
    children = [[] for _ in range(groups)]
    root = 0
    for g, p in enumerate(parent):
        if p < 0:
            root = g
        else:
            children[p].append(g)
    attached = [[] for _ in range(groups)]  # per group: (row, GPUs it takes there)
    for i, (_, _, asks) in enumerate(rows):
        where = [g for g, _ in asks]
        if len(where) > 1:
            common = set(ancestors(where[0], parent))
            for g in where[1:]:
                common &= set(ancestors(g, parent))
            where = [max(common, key=lambda a: len(ancestors(a, parent)))]  # the deepest common ancestor
        attached[where[0]].append((i, sum(n for _, n in asks)))
    order, stack = [], [root]
    while stack:
        g = stack.pop()
        order.append(g)
        stack.extend(children[g])
    order.reverse()  # children first
    bidders = len(d["rows"])
    prices = [0.0] * bidders
    best = math.inf
    for k in range(steps):
        table, how = {}, {}
        for g in order:
            best_at = [0.0]  # best value by GPUs used in g's subtree
            merges = []
            for c in children[g]:
                sub = table[c]
                merged = [-math.inf] * min(cap[g] + 1, len(best_at) + len(sub) - 1)
                split = [None] * len(merged)
                for x, vx in enumerate(best_at):
                    if vx == -math.inf:
                        continue
                    for y, vy in enumerate(sub):
                        if x + y < len(merged) and vx + vy > merged[x + y]:
                            merged[x + y], split[x + y] = vx + vy, (x, y)
                merges.append((c, split))
                best_at = merged
            takes = []
            for (i, size) in attached[g]:
                v = rows[i][1] - prices[rows[i][0]]
                if v <= 0 or size > cap[g]:
                    continue
                grown = best_at + [-math.inf] * max(0, min(cap[g] + 1, len(best_at) + size) - len(best_at))
                took = [False] * len(grown)
                for x in range(len(best_at)):
                    if best_at[x] > -math.inf and x + size <= cap[g] and best_at[x] + v > grown[x + size]:
                        grown[x + size], took[x + size] = best_at[x] + v, True
                takes.append((i, size, took))
                best_at = grown
            table[g], how[g] = best_at, (merges, takes)
        used = max(range(len(table[root])), key=lambda c: table[root][c])
        value = table[root][used] + sum(prices)
        best = min(best, value)
        chosen = []

        def back(g, c):
            merges, takes = how[g]
            for (i, size, took) in reversed(takes):
                if took[c]:
                    chosen.append(i)
                    c -= size
            for (child, split) in reversed(merges):
                x, y = split[c]
                back(child, y)
                c = x

        back(root, used)
        slack = [1] * bidders
        for i in chosen:
            slack[rows[i][0]] -= 1
        prices = polyak(value, target, slack, prices, k)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir")
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    print("| instance | best packing (Σ gain) | its solver proved it | capacity prices: bound | above best | "
          "row prices: bound | above best |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for path in sorted(glob.glob(os.path.join(args.dir, "*.json"))):
        d, parent, cap, rows = load(path)
        shape_runs = [v for v in d["pf"].values() if v["shapes"]]
        if not shape_runs:
            raise SystemExit(f"{path}: no solver of the shape problem ran (auction_bench --solvers cbc-shape)")
        known = max(v["value"] for v in shape_runs)
        proven = any(v["proven"] and v["value"] == known for v in shape_runs)
        lp = capacity_price_bound(d, parent, cap, rows, args.steps, known)
        tree = row_price_bound(d, parent, cap, rows, args.steps, known)
        print(f"| {os.path.basename(path)} | {known:.5f} | {'yes' if proven else 'no'} | {lp:.5f} | "
              f"{100 * (lp - known) / known:.2f}% | {tree:.5f} | {100 * (tree - known) / known:.2f}% |")


if __name__ == "__main__":
    main()
