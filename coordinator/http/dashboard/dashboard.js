// The themis dashboard: reads /api/cluster, /api/apps and /api/rounds (read-only) and draws them.
"use strict";

const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"];
const SVG = "http://www.w3.org/2000/svg";

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function iso(ts) { return ts == null ? "" : new Date(ts * 1000).toISOString().replace(".000Z", "Z"); }
function rho(v) { return v == null ? "–" : v.toFixed(3); }
function inSeconds(ts, now) {
  const s = Math.round(ts - now);
  if (s < 0) return "expired";
  if (s < 120) return "in " + s + " s";
  if (s < 7200) return "in " + Math.round(s / 60) + " min";
  return "in " + (s / 3600).toFixed(1) + " h";
}

async function getJson(path) {
  const response = await fetch(path, { cache: "no-store" });
  if (!response.ok) throw new Error(path + ": HTTP " + response.status);
  return response.json();
}

function drawCluster(cluster) {
  const root = document.getElementById("cluster");
  root.replaceChildren();
  const byHost = new Map();
  for (const h of cluster.hosts) byHost.set(h.name, { host: h, gpus: [] });
  for (const g of cluster.gpus) byHost.get(g.host).gpus.push(g);
  for (const { host, gpus } of byHost.values()) {
    const box = el("div", { class: "host", "data-host": host.name },
                   el("h3", {}, host.name + " ", el("span", { class: "state-" + host.state }, "(" + host.state + ", " + host.rack + ")")));
    const list = el("div", { class: "gpus" });
    for (const g of gpus) {
      const holder = g.app == null ? "free" : "app " + g.app + " (" + g.app_name + ")" + (g.job == null ? "" : " job " + g.job);
      const gpu = el("span", { class: "gpu " + g.state, "data-gpu": g.gpu, title: "GPU " + g.gpu + " = " + host.name + ":" + g.local_index },
                     "GPU " + g.gpu + " ", el("span", { class: "holder" }, holder));
      if (g.lease_expiry != null) {
        gpu.append(el("span", { class: "expiry" }, "lease expires " + iso(g.lease_expiry) + " (" + inSeconds(g.lease_expiry, cluster.now) + ")"));
      }
      list.append(gpu);
    }
    box.append(list);
    root.append(box);
  }
  if (!cluster.gpus.length) root.append(el("p", {}, "No host has registered yet."));
  const counts = {};
  for (const g of cluster.gpus) counts[g.state] = (counts[g.state] || 0) + 1;
  document.getElementById("summary").textContent = cluster.hosts.length + " hosts, " + cluster.gpus.length + " GPUs: " +
      ["leased", "idle", "free", "down"].map(s => (counts[s] || 0) + " " + s).join(", ");
}

function drawRhoChart(apps) {
  const root = document.getElementById("rho-chart");
  root.replaceChildren();
  const series = apps.filter(a => a.rho_history.length > 0);
  if (!series.length) {
    root.append(el("p", {}, "No round has recorded a ρ yet."));
    return;
  }
  const W = 820, H = 220, L = 48, R = 230, T = 12, B = 30;
  let minRound = Infinity, maxRound = -Infinity, maxRho = 1;
  for (const a of series) {
    for (const p of a.rho_history) {
      minRound = Math.min(minRound, p.round);
      maxRound = Math.max(maxRound, p.round);
      maxRho = Math.max(maxRho, p.rho);
    }
  }
  const lastRound = maxRound;
  if (maxRound === minRound) maxRound = minRound + 1;  // one round: a point at the left
  maxRho = Math.ceil(maxRho * 1.1 * 10) / 10;
  const x = r => L + (r - minRound) / (maxRound - minRound) * (W - L - R);
  const y = v => T + (1 - v / maxRho) * (H - T - B);
  const chart = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "ρ of each app by round" });
  for (let i = 0; i <= 4; ++i) {
    const v = maxRho * i / 4;
    chart.append(svg("line", { class: "grid", x1: L, x2: W - R, y1: y(v), y2: y(v) }));
    chart.append(svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, v.toFixed(2)));
  }
  chart.append(svg("line", { class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B }));
  chart.append(svg("line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B }));
  chart.append(svg("text", { x: L, y: H - 8 }, "round " + minRound));
  if (lastRound !== minRound) chart.append(svg("text", { x: W - R, y: H - 8, "text-anchor": "end" }, "round " + lastRound));
  chart.append(svg("text", { x: 4, y: T + 10 }, "ρ"));
  series.forEach((a, i) => {
    const colour = COLOURS[i % COLOURS.length];
    const points = a.rho_history.map(p => x(p.round).toFixed(1) + "," + y(p.rho).toFixed(1)).join(" ");
    const line = svg("polyline", { points: points, stroke: colour, "data-app": a.id });
    line.append(svg("title", {}, "app " + a.id + " (" + a.name + ")"));
    chart.append(line);
    for (const p of a.rho_history) chart.append(svg("circle", { cx: x(p.round), cy: y(p.rho), r: 2.5, fill: colour }));
    const last = a.rho_history[a.rho_history.length - 1];
    chart.append(svg("text", { x: W - R + 8, y: T + 14 + 16 * i, fill: colour }, "app " + a.id + " " + a.name + " ρ " + rho(last.rho)));
  });
  root.append(chart);
}

function drawApps(apps) {
  const body = document.querySelector("#apps tbody");
  body.replaceChildren();
  for (const a of apps) {
    const why = el("td", { class: "explain" }, a.explain.headline);
    if (a.explain.error) why.append(el("span", { class: "error" }, a.explain.error));
    body.append(el("tr", { "data-app": a.id },
                   el("td", { class: "num" }, a.id), el("td", {}, a.name), el("td", {}, a.owner), el("td", {}, a.state),
                   el("td", { class: "num rho" }, rho(a.rho)), el("td", { class: "num" }, a.gpus_held),
                   el("td", { class: "num" }, a.jobs_running + " / " + a.jobs_pending + " / " + a.jobs), why));
  }
  if (!apps.length) body.append(el("tr", {}, el("td", { colspan: 8 }, "No app has been submitted.")));
}

function drawRounds(rounds) {
  const body = document.querySelector("#rounds tbody");
  body.replaceChildren();
  for (const r of rounds) {
    const details = el("ul", { class: "details" });
    for (const d of r.details) details.append(el("li", {}, d));
    body.append(el("tr", { "data-round": r.id },
                   el("td", { class: "num" }, r.id), el("td", {}, iso(r.started_at)), el("td", {}, r.trigger),
                   el("td", { class: "num" }, r.free_gpus), el("td", { class: "num" }, r.granted), el("td", { class: "num" }, r.idle),
                   el("td", { class: "num" }, r.auction_seconds == null ? "–" : (r.auction_seconds * 1000).toFixed(1) + " ms"),
                   el("td", { class: "num" }, r.gap == null ? "–" : r.gap.toFixed(4)),
                   el("td", { class: "explain" }, r.headline, details)));
  }
  if (!rounds.length) body.append(el("tr", {}, el("td", { colspan: 9 }, "No round has run yet.")));
}

async function refresh() {
  const error = document.getElementById("error");
  try {
    const [cluster, apps, rounds] = await Promise.all([getJson("/api/cluster"), getJson("/api/apps"), getJson("/api/rounds")]);
    drawCluster(cluster);
    drawRhoChart(apps.apps);
    drawApps(apps.apps);
    drawRounds(rounds.rounds);
    document.getElementById("refreshed").textContent = iso(cluster.now);
    error.hidden = true;
    document.body.dataset.loaded = "true";
  } catch (e) {
    error.textContent = "Could not load: " + e.message;
    error.hidden = false;
  }
}

refresh();
setInterval(refresh, 5000);
