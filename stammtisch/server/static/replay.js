// The replay of a finished deal on the felt: step through it (buttons, arrow keys, a swipe on
// the felt, the timeline) view by view, with the analysis's findings marked on the timeline and
// said on the felt, and a graph of the open-hand value over the deal.
// The views come from the server (GET /api/tables/{id}/replay/{n}: as this link may see the
// deal; POST /api/replay: a record file's deal, whole), and so does the analysis (GET
// /api/tables/{id}/analysis/{n}; POST /api/replay/analysis); which step is shown lives here only.
// Uses app.js's helpers (t, tc, el, $, cardEl, cardList, actionPhrase, renderSeatTiles, …).
"use strict";

const replay = { on: false, file: null, deal: null, data: null, step: 0, analysis: null, error: null, loading: false };

function replayName(seat) {
  const d = replay.data;
  return d && d.players[seat] !== undefined ? d.players[seat] : String(seat);
}

// The view at step k: the server's view of that moment with the log up to it.
function replayView(k) {
  const d = replay.data;
  return { ...d.steps[k], log: d.log.slice(0, k), legal_actions: [] };
}

// The table's info as the replay shows it: this table's seats, or a record file's players.
function replayInfo() {
  const d = replay.data;
  const live = replay.file ? null : game.info;
  return { players: d.players, seats: live ? live.seats : d.players.map(() => ({ connected: true, bot: false })),
    balances: null, clockwise: d.clockwise, family: d.family, deal_number: d.deal };
}

// Each play the analysis judged, at the step right after its card was played.
function replayFindings() {
  const d = replay.data, a = replay.analysis;
  if (!d || !a || !a.data || !a.data.played) return [];
  const out = [];
  let from = 0;
  for (const p of a.data.plays || []) {
    let i = from;
    while (i < d.log.length && !(d.log[i][0] === p.seat && d.log[i][1] === p.action)) i++;
    if (i >= d.log.length) continue;
    from = i + 1;
    out.push({ step: i + 1, play: p });
  }
  return out;
}

// A costly card in the analysis's own words (its line, as the analysis lists it)
const findingText = (f) => renderText(f.play.line).trim();

// The lines of the value graph: one point before the first card, then one after each card.
// Tapp's contracts are judged for the declarer's side, so one line serves every reader. In Tippen
// and Ramsch everyone plays for himself and each card carries every active seat's value
// (``values``): the graph follows the viewer's own when he played the deal, else one line per
// active player (a spectator, the admin, a record file), each labelled with its player.
function replaySeries(findings) {
  const a = replay.analysis.data, sv = a.start_value;
  if (sv === null || typeof sv !== "object") {
    const pts = [];
    for (const f of findings) {
      if (typeof f.play.before !== "number" || typeof f.play.after !== "number") return null;
      if (!pts.length) pts.push([f.step - 1, f.play.before, null]);
      pts.push([f.step, f.play.after, f.play.loss > 0 ? f : null]);
    }
    return { mine: false, lines: [{ seat: null, pts }] };
  }
  if (findings.some((f) => !f.play.values)) return null;
  const seats = Object.keys(sv).map(Number).sort((x, y) => x - y);
  const me = replay.file ? null : game.seat;
  const mine = me !== null && seats.includes(me);
  const lines = (mine ? [me] : seats).map((seat) => ({ seat, pts: [[findings[0].step - 1, sv[String(seat)], null],
    ...findings.map((f) => [f.step, f.play.values[String(seat)], f.play.loss > 0 && f.play.seat === seat ? f : null])] }));
  return { mine, lines };
}

// What the graph shows, in words: under the graph and as its label
function replayLegend(series) {
  const m = replay.analysis.data.measure;
  if (series.lines[0].seat === null) return t("replayLegendOne", { measure: t("measure." + m) });
  if (m === "own-points") return series.mine ? t("replayLegendMinePoints") : t("replayLegendEachPoints");
  return series.mine ? t("replayLegendMineTricks") : t("replayLegendEachTricks");
}

// The open-hand value over the deal as a graph, its lines named beneath it.
function replayGraph(findings) {
  const d = replay.data, n = d.steps.length - 1;
  const series = replaySeries(findings);
  if (!series || series.lines[0].pts.length < 2) return null;
  const W = 300, H = 80, pad = 6;
  const ys = series.lines.flatMap((l) => l.pts.map((p) => p[1]));
  const lo = Math.min(...ys), hi = Math.max(...ys), span = hi - lo || 1;
  const X = (k) => pad + (W - 2 * pad) * k / Math.max(1, n), Y = (y) => H - pad - (H - 2 * pad) * (y - lo) / span;
  const lineName = (l) => (l.seat === null ? t("measure." + replay.analysis.data.measure) : replayName(l.seat));
  const said = series.lines.map((l) => t("replayGraphLine", { name: lineName(l), from: l.pts[0][1], to: l.pts[l.pts.length - 1][1] })).join("; ");
  const svg = document.createElementNS(SVG_NS, "svg");
  const at = (e, attrs) => { for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v)); return e; };
  at(svg, { viewBox: `0 0 ${W} ${H}`, class: "replay-graph", "data-testid": "replay-graph", role: "img",
    "aria-label": t("replayGraph", { legend: replayLegend(series), lines: said }) });
  const line = (x1, y1, x2, y2, cls) => svg.append(at(document.createElementNS(SVG_NS, "line"), { x1, y1, x2, y2, class: cls }));
  line(pad, Y(lo), W - pad, Y(lo), "axis");
  series.lines.forEach((l, i) => {
    svg.append(at(document.createElementNS(SVG_NS, "polyline"), { points: l.pts.map(([k, y]) => `${X(k).toFixed(1)},${Y(y).toFixed(1)}`).join(" "),
      class: `value line-${i % 6}`, "data-testid": "replay-graph-line", "data-seat": l.seat === null ? "" : l.seat,
      "data-values": l.pts.map((p) => p[1]).join(",") }));
  });
  for (const l of series.lines) {
    for (const [k, y, f] of l.pts) {
      if (f) svg.append(at(document.createElementNS(SVG_NS, "circle"), { cx: X(k).toFixed(1), cy: Y(y).toFixed(1), r: 3.5, class: "mistake" }));
    }
  }
  line(X(replay.step), pad / 2, X(replay.step), H - pad / 2, "now");
  for (const [y, dy] of hi === lo ? [[lo, -2]] : [[hi, 9], [lo, -2]]) {
    const txt = at(document.createElementNS(SVG_NS, "text"), { x: 1, y: Y(y) + dy - (y === hi ? pad : 0), class: "tick" });
    txt.textContent = String(y);
    svg.append(txt);
  }
  const names = series.lines.map((l, i) => el("li", { class: `line-${i % 6}`, "data-seat": l.seat === null ? "" : String(l.seat) },
    el("span", { class: "swatch", "aria-hidden": "true" }), lineName(l)));
  return [svg, el("p", { class: "replay-legend hint", "data-testid": "replay-graph-legend", text: replayLegend(series) }),
    el("ul", { class: "replay-lines", "data-testid": "replay-graph-lines" }, ...names)];
}

function goStep(k) {
  if (!replay.data) return;
  replay.step = Math.max(0, Math.min(replay.data.steps.length - 1, k));
  render();
}

function renderReplay() {
  const d = replay.data;
  const bar = $("replay-bar"), below = $("replay-below");
  $("table").classList.add("replaying");
  bar.hidden = false; below.hidden = false;
  $("replay-error").textContent = replay.error ? replay.error : "";
  $("replay-deal-box").hidden = !replay.file;
  if (replay.file) {
    const keep = String(replay.deal);
    $("replay-deal").replaceChildren(...replay.file.deals.map((_, i) => el("option", { value: String(i + 1), text: t("dealN", { n: i + 1 }), selected: String(i + 1) === keep })));
  }
  if (!d) {
    $("replay-title").textContent = replay.loading ? t("replayLoading") : "";
    return;
  }
  germanSuits = d.suits === "german";
  const k = replay.step, last = d.steps.length - 1;
  const v = replayView(k), info = replayInfo();
  const seen = d.whole ? t("replayWhole") : d.seat === null ? t("replayAsSpectator") : t("replayAsSeat", { name: replayName(d.seat) });
  $("replay-title").textContent = t("replayTitle", { n: d.deal }) + " – " + seen;
  $("t-title").textContent = replay.file ? rulesetTitle(replay.file.ruleset, replay.file.ruleset) : $("t-title").textContent;
  $("t-deal").textContent = String(d.deal);
  $("t-pot").parentElement.hidden = true;
  $("t-trump").textContent = v.trump ? trumpWords(v.trump) : "–";
  $("t-contract-box").hidden = !v.contract;
  $("t-contract").textContent = v.contract ? (v.declarer !== null && v.declarer !== undefined
    ? t("contractBy", { contract: contractName(v.contract), name: replayName(v.declarer) }) : contractName(v.contract)) : "";
  const slider = $("replay-slider");
  slider.max = String(last); slider.value = String(k);
  slider.setAttribute("aria-valuetext", t("replayStep", { k, n: last }));
  $("replay-step").textContent = t("replayStep", { k, n: last });
  $("replay-first").disabled = $("replay-prev").disabled = k === 0;
  $("replay-next").disabled = $("replay-last").disabled = k === last;
  const [seat, action] = k > 0 ? d.log[k - 1] : [null, null];
  $("replay-action").textContent = k === 0 ? t("replayDealt")
    : (v.terminal ? resultHeading(v) + " – " : "") + actionPhrase(action, seat === game.seat && !replay.file ? null : replayName(seat));

  // the felt: the seats, the middle, the trick (the trick just completed lies there, its winner marked)
  renderSeatTiles(info, v);
  renderCenter(info, v);
  const where = (s) => seatPlace(s, d.players.length, d.clockwise);
  const swept = !v.trick.length && v.last_trick && action && action.startsWith("play:");
  if (swept) showTrick($("trick"), $("trick-winner"), v.last_trick, where);
  else { cardList($("trick"), v.trick, true, null, where); $("trick-winner").textContent = ""; }
  $("trick").dataset.finished = swept ? "true" : "false";
  showTrick($("last-trick"), $("last-trick-winner"), swept ? null : v.last_trick || null);
  $("last-trick-box").hidden = false;
  $("last-trick-box").classList.toggle("empty", !$("last-trick").children.length);
  $("open-hand-box").hidden = true;

  // the hands: the viewer's at the bottom; every hand, the tapp and what was laid away when whole
  const me = game.seat === null || replay.file ? 0 : game.seat;
  const own = d.whole ? d.steps[k].hands[me] : v.hand || [];
  const trumpCls = (c) => (v.trump && c[0] === v.trump ? "trump" : null);
  $("hand").classList.remove("choosing");
  $("hand").replaceChildren(...own.map((c) => cardEl(c, { class: trumpCls(c), "data-testid": `replay-card-${c}` })));
  const rows = [];
  if (d.whole) {
    d.players.forEach((p, s) => {
      if (s === me) return;
      rows.push(el("li", { "data-testid": `replay-hand-${s}` }, el("b", { text: p + ": " }),
        el("span", { class: "cards small" }, ...d.steps[k].hands[s].map((c) => cardEl(c, { class: trumpCls(c) })))));
    });
    const st = d.steps[k];
    if (st.tapp && st.tapp.length) rows.push(el("li", { "data-testid": "replay-tapp" }, el("b", { text: t("tappLabel") + ": " }),
      el("span", { class: "cards small" }, ...st.tapp.map((c) => cardEl(c)))));
  }
  $("replay-hands").replaceChildren(...rows);
  $("replay-hands").hidden = !rows.length;

  // the findings: marks on the timeline, the one of this step said on the felt, the graph
  const findings = replayFindings();
  const marks = findings.filter((f) => f.play.loss > 0 && f.play.line);
  $("replay-marks").style.setProperty("--steps", String(last + 1));
  $("replay-marks").replaceChildren(...marks.map((f) => {
    const mark = el("button", { type: "button", class: "mark" + (f.step === k ? " here" : ""), "data-testid": `replay-mark-${f.step}`,
      "aria-label": findingText(f), title: findingText(f), onclick: () => goStep(f.step) });
    mark.style.left = `${(100 * f.step / Math.max(1, last)).toFixed(2)}%`;  // (CSSOM: the page's CSP allows no style attribute)
    return mark;
  }));
  const here = marks.find((f) => f.step === k);
  $("replay-finding").textContent = here ? findingText(here) : "";
  const a = replay.analysis;
  $("replay-analysis-state").textContent = !a || a.loading ? t("analysisLoading")
    : a.error ? (a.error.text || (a.error.key ? t(a.error.key) : errorText(a.error.message, a.error.rule)))
      : a.data && !a.data.played ? t("analysisNoPlay") : "";
  const graph = findings.length ? replayGraph(findings) : null;
  $("replay-graph-box").replaceChildren(...(graph || []));
  $("replay-graph-box").hidden = !graph;
  $("turn").textContent = "";
}

// A record file's deal n sent to the server (its deals up to n: the server needs no more)
const postRecord = (url, n) => fetch(url, { method: "POST", headers: { "content-type": "application/json" },
  body: JSON.stringify({ record: { ...replay.file, deals: replay.file.deals.slice(0, n) }, deal: n }) });

// Why the server refused a record file, in the page's language: too large, a download made
// during play, a record that does not replay (the server names what is wrong), or any refusal
function recordRefusal(r, data) {
  if (r.status === 413 && data.max_bytes) return t("replayFileTooBig", { kib: Math.floor(data.max_bytes / 1024) });
  if (data.rule === "redacted record") return t("replayAnalysisRedacted");
  if (r.status === 400 || r.status === 422) return t("replayFileInvalid", { reason: data.error || r.statusText });
  return errorText(data.error || r.statusText, data.rule || null);
}

// The analysis of a record file's deal n (POST /api/replay/analysis), as fetchAnalysis answers
async function fetchRecordAnalysis(n) {
  try {
    const r = await postRecord("/api/replay/analysis", n);
    const data = await r.json().catch(() => ({ error: r.statusText }));
    return r.ok ? { deal: n, data } : { deal: n, error: { text: recordRefusal(r, data) } };
  } catch (e) {
    return { deal: n, error: { key: "analysisFailed" } };
  }
}

async function loadReplay() {
  const n = replay.deal;
  Object.assign(replay, { data: null, analysis: null, step: 0, error: null, loading: true });
  render();
  try {
    const r = replay.file ? await postRecord("/api/replay", n) : await fetch(`/api/tables/${game.tableId}/replay/${n}`, withToken());
    const data = await r.json().catch(() => ({ error: r.statusText }));
    if (replay.deal !== n || !replay.on) return;
    if (r.ok) replay.data = data;
    else replay.error = replay.file ? recordRefusal(r, data) : errorText(data.error || r.statusText, data.rule || null);
  } catch (e) {
    if (replay.deal === n) replay.error = t("dealFailed");
  }
  replay.loading = false;
  render();
  if (replay.data) {
    replay.analysis = { deal: n, loading: true };
    render();
    const a = replay.file ? await fetchRecordAnalysis(n) : await fetchAnalysis(n);
    if (replay.deal === n && replay.on) { replay.analysis = a; render(); }
  }
}

// A finished deal of this table (the Deals panel, the result of a deal)
function startReplay(n) {
  if ($("deals-panel").open) $("deals-panel").close();
  Object.assign(replay, { on: true, file: null, deal: n });
  loadReplay();
  $("replay-bar").scrollIntoView({ block: "start" });
  $("replay-next").focus({ preventScroll: true });
}

function closeReplay() {
  Object.assign(replay, { on: false, data: null, analysis: null, error: null });
  $("table").classList.remove("replaying");
  $("replay-bar").hidden = true; $("replay-below").hidden = true;
  $("replay-hands").replaceChildren();
  if (replay.file) { replay.file = null; $("table").hidden = true; $("lobby").hidden = false; page.render = renderLobby; renderLobby(); return; }
  render();
}

// A record file chosen in the lobby: read here, its deals replayed by the server one at a time
async function openRecordFile(file) {
  await textsLoaded;  // its answers are said in the page's words
  $("replay-file-error").textContent = "";
  let rec;
  try {
    rec = JSON.parse(await file.text());
  } catch (e) {
    $("replay-file-error").textContent = t("replayFileBad");
    return;
  }
  if (!rec || typeof rec !== "object" || !Array.isArray(rec.deals) || !Array.isArray(rec.players)) {
    $("replay-file-error").textContent = t("replayFileBad");
    return;
  }
  if (rec.format === "stammtisch-redacted/1") { $("replay-file-error").textContent = t("replayFileRedacted"); return; }
  if (!rec.deals.length) { $("replay-file-error").textContent = t("replayFileEmpty"); return; }
  $("lobby").hidden = true;
  $("table").hidden = false;
  for (const id of ["lobby-wait", "admin-box"]) $(id).hidden = true;
  game.seat = null;
  Object.assign(replay, { on: true, file: rec, deal: 1 });
  loadReplay();
}

function initReplay() {
  $("replay-first").addEventListener("click", () => goStep(0));
  $("replay-prev").addEventListener("click", () => goStep(replay.step - 1));
  $("replay-next").addEventListener("click", () => goStep(replay.step + 1));
  $("replay-last").addEventListener("click", () => goStep(Infinity));
  $("replay-slider").addEventListener("input", (ev) => goStep(Number(ev.target.value)));
  $("replay-close").addEventListener("click", closeReplay);
  $("replay-deal").addEventListener("change", (ev) => { replay.deal = Number(ev.target.value); loadReplay(); });
  $("replay-file").addEventListener("change", (ev) => { const f = ev.target.files && ev.target.files[0]; if (f) openRecordFile(f); });
  // the arrow keys step (not while typing, nor on the slider, which steps by itself)
  document.addEventListener("keydown", (ev) => {
    if (!replay.on || !replay.data || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.target.matches && ev.target.matches("input, textarea, select") || $("deals-panel").open) return;
    const to = { ArrowRight: replay.step + 1, ArrowLeft: replay.step - 1, Home: 0, End: Infinity }[ev.key];
    if (to === undefined) return;
    ev.preventDefault();
    goStep(to);
  });
  // a swipe across the felt: left for the next step, right for the one before
  let touch = null;
  $("felt").addEventListener("touchstart", (ev) => { if (replay.on && ev.touches.length === 1) touch = [ev.touches[0].clientX, ev.touches[0].clientY]; }, { passive: true });
  $("felt").addEventListener("touchend", (ev) => {
    if (!replay.on || !touch) return;
    const e = ev.changedTouches[0], dx = e.clientX - touch[0], dy = e.clientY - touch[1];
    touch = null;
    if (Math.abs(dx) > 40 && Math.abs(dx) > 1.5 * Math.abs(dy)) goStep(replay.step + (dx < 0 ? 1 : -1));
  });
}
