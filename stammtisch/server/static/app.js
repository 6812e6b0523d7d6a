// Stammtisch web client: plain JavaScript, no build step.
// The server is the only authority: this page shows view(seat) and sends action strings. It never
// judges a rule itself: what may be done is what view.legal_actions lists.
"use strict";

const SUIT = { H: "♥", D: "♦", C: "♣", S: "♠" };
// German-suited faces draw their suits from index.html's SVG sprite (hearts, bells, acorns, leaves)
const GERMAN_SUIT = { H: "gs-heart", D: "gs-bell", C: "gs-acorn", S: "gs-leaf" };
const SVG_NS = "http://www.w3.org/2000/svg";

// ---------------------------------------------------------------- texts
// Every text this page shows comes from the one catalogue per language, stammtisch/i18n/{lang}.json,
// served as GET /api/texts/{lang}: the page's own texts under "web.*" (t("yourTurn") reads
// "web.yourTurn"), and the names of cards, suits, contracts, actions, rule sets and options that
// the terminal uses too (tc("rank.A")). tests/test_web_i18n.py fails on a key this file asks for
// that the catalogue lacks.
const TEXTS = { en: {}, de: {} };
// Texts not yet moved into the catalogue (keys without "web."); none should stay here.
const T = {
  en: {
  },
  de: {
  },
};


let lang = localStorage.getItem("stammtisch.lang") || ((navigator.language || "").startsWith("de") ? "de" : "en");

async function loadTexts() {
  await Promise.all(Object.keys(TEXTS).map(async (l) => {
    try {
      const r = await fetch(`/api/texts/${l}`);
      if (r.ok) TEXTS[l] = await r.json();
    } catch (e) { /* the page still works, showing keys */ }
  }));
}
const fill = (s, vars) => s.replace(/\{(\w+)\}/g, (m, k) => (Object.prototype.hasOwnProperty.call(vars, k) ? String(vars[k]) : m));
const has = (key) => Object.prototype.hasOwnProperty.call(TEXTS.en, key);
// a catalogue text by its full key; a key missing in this language falls back to English
function tc(key, vars = {}) {
  const own = TEXTS[lang] && TEXTS[lang][key];
  return fill(own !== undefined ? own : (has(key) ? TEXTS.en[key] : key), vars);
}
// a catalogue message from the server ({key, params}, a parameter a value or itself a message)
// in this page's language, as stammtisch.i18n.render does it
function renderText(m) {
  if (m === null || typeof m !== "object") return String(m);
  const vars = {};
  for (const [k, v] of Object.entries(m.params || {})) vars[k] = renderText(v);
  return tc(m.key, vars);
}
// one of this page's texts (catalogue key "web." + key)
const t = (key, vars = {}) => {
  if (has("web." + key)) return tc("web." + key, vars);
  return fill((T[lang] && T[lang][key]) || T.en[key] || key, vars);
};

// ---------------------------------------------------------------- names in words (as stammtisch/i18n/words.py)

let germanSuits = false;
const isCard = (s) => /^[HDCS][AKQJT2-9]$/.test(s);
function suitName(s) { return tc(`suit.${germanSuits ? "german" : "french"}.${s}`); }
// German-suited faces have names of their own for A K Q J (Daus, König, Ober, Unter)
const rankKey = (base, r) => (germanSuits && "AKQJ".includes(r) ? `${base}.german.${r}` : `${base}.${r}`);
// the letters on a face: French suits A K Q J (in German A K D B), German suits D K O U
function rankShort(r) { return "AKQJT".includes(r) ? tc(rankKey("rank_short", r)) : r; }
// a suit's mark in a text (a tag, a button, the log): German-suited Bells, Acorns and Leaves
// have no sign of their own, a letter of their name marks them (as stammtisch/i18n/words.py)
function suitSymbol(s) { return germanSuits && s !== "H" ? tc("suit_symbol.german." + s) : SUIT[s]; }
// the trump in words: "♠ Spades"; German-suited the suit's name alone ("Eichel")
function trumpWords(s) { return germanSuits ? t("trumpSuitGerman", { suit: suitName(s) }) : t("trumpSuit", { symbol: SUIT[s], suit: suitName(s) }); }
function cardShort(c) { return tc("card.short", { symbol: suitSymbol(c[0]), rank: rankShort(c[1]) }); }
function cardName(c) { return isCard(c) ? tc("card.name", { suit: suitName(c[0]), rank: tc(rankKey("rank", c[1])) }) : c; }
function cardsNamed(cards) { return cards.map(cardName).join(", ") || tc("cards.none"); }

function contractName(c) {
  if (!c) return "";
  const tout = c.endsWith("+tout");
  c = c.replace("+tout", "");
  const [name, suit] = c.split(":");
  const key = "contract." + (suit ? name + "_suit" : name);
  const s = has(key) ? tc(key, { suit: suit ? suitName(suit) : "" }) : c;
  return tout ? t("withTout", { contract: s }) : s;
}

const ACTION_WORDS = new Set(["tap", "pass", "shove", "deal", "sniff", "knock", "turn", "look", "drop", "stay",
  "rob", "no-rob", "hold", "tout", "no-tout", "play", "weg"]);

// An action in words: "Anna plays Ace of Hearts", "Du tappst" (who === null: the reader himself).
function actionPhrase(action, who) {
  const i = action.indexOf(":");
  const head = i < 0 ? action : action.slice(0, i), rest = i < 0 ? "" : action.slice(i + 1);
  const say = (key, vars = {}) => (who === null ? tc(key + ".you", vars) : tc(key, { ...vars, who }));
  if (ACTION_WORDS.has(action)) return say("act." + action);
  const cards = rest ? rest.split(",") : [];
  if (head === "play" && isCard(rest)) return say("act.play_card", { card: cardName(rest) });
  if ((head === "call" || head === "give") && isCard(rest)) return say("act." + head, { card: cardName(rest) });
  if (head === "give" && rest === "?") return say("act.give_hidden");
  if (head === "discard" && rest === "?") return say("act.discard_hidden");
  if (head === "discard" && cards.length && cards.every(isCard)) return say("act.discard", { cards: cardsNamed(cards) });
  if (head === "exchange") {
    if (rest === "-") return say("act.exchange_none");
    if (/^\d+$/.test(rest)) return say({ 0: "act.exchange_none", 1: "act.exchange_one" }[rest] || "act.exchange_count", { count: rest });
    if (cards.length && cards.every(isCard)) return say("act.exchange", { cards: cardsNamed(cards) });
  }
  if (head === "bid" && rest) return say("act.bid", { contract: contractName(rest) });
  if (head === "trump" && /^[HDCS]$/.test(rest)) return say("act.trump", { suit: suitName(rest) });
  if (head === "contract" && rest) {
    if (rest === "pass") return say("act.pass");
    return say("act.contract", { contract: contractName(rest) });
  }
  return say("act.other", { action });
}

// What a seat said, as a word on its tile: "taps", "passes", "Frage", "holds", "Clubs Solo", "⇄ 2".
// Cards played and cards laid away are not said; null: nothing to show.
function saidWord(action) {
  const i = action.indexOf(":");
  const head = i < 0 ? action : action.slice(0, i), rest = i < 0 ? "" : action.slice(i + 1);
  if (ACTION_WORDS.has(action)) return has("web.said." + action) ? tc("web.said." + action) : null;
  if (head === "bid" || head === "contract") return rest === "pass" ? tc("web.said.pass") : contractName(rest);
  if (head === "trump" && SUIT[rest]) return trumpWords(rest);
  if (head === "call" && isCard(rest)) return t("withCard", { verb: t("c_call"), card: cardShort(rest) });
  if (head === "exchange") {
    const n = rest === "-" ? 0 : /^\d+$/.test(rest) ? Number(rest) : rest.split(",").filter(isCard).length;
    return t("saidExchange", { n });
  }
  return null;
}

// Rule sets and options: titles, names, help and choices from the catalogue, else the server's English.
function rulesetTitle(id, fallback) { return has("ruleset.title." + id) ? tc("ruleset.title." + id) : fallback; }
function optionName(name) { return has("option.name." + name) ? tc("option.name." + name) : name; }
function optionHelp(family, o) { const k = `option.help.${family}.${o.name}`; return has(k) ? tc(k) : o.help; }
function optionValue(v) {
  if (v === true) return t("yes");
  if (v === false) return t("no");
  if (v === null || v === undefined) return tc("option.choice.none");
  return has("option.choice." + v) ? tc("option.choice." + v) : String(v);
}

// A refusal from the server in the page's language: the engine's rules and the server's codes
// have catalogue texts; an unknown code keeps the server's (English) message.
function errorText(message, rule) {
  if (lang === "en") return rule ? t("refusedAs", { message, rule }) : message;
  if (rule && has("rule." + rule)) return t("refused", { reason: tc("rule." + rule) });
  if (rule && has("web.error." + rule)) return t("error." + rule);
  return message;
}

const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids) if (kid !== null && kid !== undefined) e.append(kid);
  return e;
};

// The same children as before stay in place: a re-render on every message must not swap a
// button or a card under the pointer (a click between press and release would be lost).
function keepOrReplace(box, nodes) {
  if (box.innerHTML === nodes.map((n) => n.outerHTML).join("")) return;
  box.replaceChildren(...nodes);
}

function applyLang() {
  document.documentElement.lang = lang;
  $("lang").textContent = lang === "de" ? "EN" : "DE";
  // the name starts with what the button shows (DE / EN), then says what it does
  $("lang").setAttribute("aria-label", `${$("lang").textContent} – ${t("switchLanguage")}`);
  document.querySelectorAll("[data-i18n]").forEach((n) => { n.textContent = t(n.dataset.i18n); });
  document.querySelectorAll("[data-i18n-label]").forEach((n) => { n.setAttribute("aria-label", t(n.dataset.i18nLabel)); n.title = t(n.dataset.i18nLabel); });
  $("hand").setAttribute("aria-label", t("yourHand"));
  $("score-box").setAttribute("aria-label", t("scoreSheet"));
  $("log").setAttribute("aria-label", t("log"));
  $("chat-log").setAttribute("aria-label", t("chat"));
}
$("lang").addEventListener("click", () => {
  lang = lang === "de" ? "en" : "de";
  localStorage.setItem("stammtisch.lang", lang);
  applyLang();
  if (page.render) page.render();
  if (game.deals.open) renderDeals();
});

// ---------------------------------------------------------------- cards

function suitMark(s, cls) {
  if (!germanSuits) return el("span", { class: cls, text: SUIT[s] });
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("class", cls);
  svg.setAttribute("viewBox", "0 0 32 32");
  const use = document.createElementNS(SVG_NS, "use");
  use.setAttribute("href", "#" + GERMAN_SUIT[s]);
  svg.append(use);
  return svg;
}

// A card's face: its letters (from the catalogue) and suit in the corner, the suit large below.
// Its name for a screen reader is the catalogue's (aria-label); the drawing is hidden from it.
function cardEl(c, attrs = {}) {
  const red = c[0] === "H" || c[0] === "D";
  const cls = ["card", germanSuits ? "german" : (red ? "red" : "black"), attrs.class].filter(Boolean).join(" ");
  const rest = Object.fromEntries(Object.entries(attrs).filter(([k]) => k !== "class" && k !== "label"));
  const label = attrs.label || cardName(c);
  const face = el("span", { class: "face", "aria-hidden": "true" },
    el("span", { class: "rank", text: rankShort(c[1]) }), suitMark(c[0], "pip"), suitMark(c[0], "big"));
  return el("span", { class: cls, "data-card": c, role: "img", "aria-label": label, title: label, ...rest }, face);
}

// a button's label for a legal action
function actionLabel(a) {
  const [head, ...rest] = a.split(":");
  const arg = rest.join(":");
  if (!arg) return has("web.a_" + head) ? t("a_" + head) : a;
  if (head === "bid" || head === "contract") return arg === "pass" ? t("a_pass") : contractName(arg);
  if (head === "trump") return germanSuits ? t("trumpIsGerman", { suit: suitName(arg) }) : t("trumpIs", { symbol: SUIT[arg], suit: suitName(arg) });
  if (isCard(arg) && has("web.c_" + head)) return t("withCard", { verb: t("c_" + head), card: cardShort(arg) });
  return a;
}

// ---------------------------------------------------------------- lobby

const page = { render: null };
let rulesets = [];

async function api(path, body) {
  const r = await fetch(path, body === undefined ? {} : {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const data = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) {
    const err = new Error(data.error || r.statusText);
    err.rule = data.rule || null;
    throw err;
  }
  return data;
}
// the server's refusal of a request: its own words in English, the catalogue's in German
const apiError = (e) => (lang === "en" ? e.message : errorText(e.message, e.rule));

function currentRuleset() { return rulesets.find((r) => r.id === $("ruleset").value) || null; }

function currentBots() {
  const rs = currentRuleset();
  return social.seatChoices(["", ...(rs ? rs.bots : [])]);
}

function botLabel(b) {
  if (!b) return t("human");
  return has("web.bot_" + b) ? t("bot_" + b) : t("bot_other", { name: b });
}

function seatRow(i, name, bot) {
  const bots = currentBots();
  if (!bots.includes(bot)) bot = bots[bots.length - 1];
  // opponents by level first, the algorithms after them for researchers
  const levels = bots.filter((b) => has("bot.level." + b));
  const others = bots.filter((b) => b && !levels.includes(b) && b !== "open");
  const option = (b) => el("option", { value: b, text: botLabel(b), selected: b === bot,
    title: has(`bot.level.${b}.about`) ? tc(`bot.level.${b}.about`) : null });
  const sel = el("select", { "data-testid": `seat-bot-${i}`, class: "bot", "aria-label": t("seatWho", { n: i + 1 }) },
    option(""),
    ...(levels.length ? [el("optgroup", { label: t("botLevels") }, ...levels.map(option))] : []),
    ...(others.length ? [el("optgroup", { label: t("botAlgorithms") }, ...others.map(option))] : []),
    ...bots.filter((b) => b === "open").map(option));
  return el("div", { class: "seat-row" }, el("span", { text: `${i + 1}.`, "aria-hidden": "true" }),
    el("input", { "data-testid": `seat-name-${i}`, class: "name", value: name, maxlength: 24, required: true,
      "aria-label": t("seatName", { n: i + 1 }) }), sel);
}

const DEFAULT_NAMES = ["Anna", "Bernd", "Carla", "Dieter", "Erika", "Fritz", "Grete", "Hans", "Ilse", "Jörg"];
// the seat counts the chosen rule set allows (with pack=piquet32 no 52-card extension)
function seatLimits() {
  const rs = rulesets.find((r) => r.id === $("ruleset").value) || { min_players: 2, max_players: 10 };
  const pack = $("options").querySelector("[data-option=pack]");
  const max = pack && pack.value === "piquet32" && rs.max_players_piquet32 ? rs.max_players_piquet32 : rs.max_players;
  return { min: rs.min_players, max };
}

function renderSeats(n) {
  const lim = seatLimits();
  n = Math.max(lim.min, Math.min(lim.max, n));
  $("add-seat").disabled = n >= lim.max;
  $("remove-seat").disabled = n <= lim.min;
  const box = $("seats");
  const old = [...box.querySelectorAll(".seat-row")].map((r) => [r.querySelector(".name").value, r.querySelector(".bot").value]);
  box.replaceChildren(...Array.from({ length: n }, (_, i) => seatRow(i, old[i] ? old[i][0] : DEFAULT_NAMES[i],
    old[i] ? old[i][1] : (i === 0 ? "" : "club"))));
}

// keep: option values to show instead of the defaults (a language switch keeps what was chosen)
function renderOptions(keep = {}, seats = null) {
  const rs = currentRuleset();
  $("ruleset-title").replaceChildren(...(rs ? [el("code", { text: rs.id })] : []));
  const box = $("options");
  box.replaceChildren();
  if (!rs) return;
  for (const o of rs.options) {
    if (o.name === "players") continue;
    let input;
    const tid = `option-${o.name}`;
    const value = Object.prototype.hasOwnProperty.call(keep, o.name) ? keep[o.name] : o.default;
    if (o.kind === "bool") input = el("input", { type: "checkbox", "data-testid": tid, checked: !!value });
    else if (o.kind === "choice") input = el("select", { "data-testid": tid }, ...o.choices.map((c) => el("option", { value: c, text: optionValue(c), selected: c === value })));
    else input = el("input", { type: "text", inputmode: "numeric", "data-testid": tid, value: value === null ? "none" : String(value), size: 5 });
    input.dataset.option = o.name;
    input.dataset.default = JSON.stringify(o.default);
    const help = optionHelp(rs.family, o);
    box.append(el("label", { class: "option", title: `${o.name}: ${help}` }, el("span", { text: optionName(o.name) }), input, el("small", { text: help })));
  }
  renderSeats(seats || rs.players);
}

// The pace of a new table: "" leaves it to the server (with a person seated: wait for Next deal)
const PACES = ["", "wait", "5", "10", "20", "30", "60"];
function renderPace() {
  const keep = $("pace").value || "";
  $("pace").replaceChildren(...PACES.map((p) => el("option", { value: p, selected: p === keep,
    text: p === "" ? t("paceDefault") : p === "wait" ? t("paceWait") : t("paceSeconds", { s: p }) })));
}

function collectOptions() {
  const out = {};
  for (const input of $("options").querySelectorAll("[data-option]")) {
    const def = JSON.parse(input.dataset.default);
    let v = input.type === "checkbox" ? input.checked : input.value.trim();
    if (input.type !== "checkbox" && String(def === null ? "none" : def) === v) continue;
    if (input.type === "checkbox" && v === def) continue;
    out[input.dataset.option] = v;
  }
  return out;
}

function rememberTable(entry) {
  const list = JSON.parse(localStorage.getItem("stammtisch.tables") || "[]");
  list.unshift(entry);
  localStorage.setItem("stammtisch.tables", JSON.stringify(list.slice(0, 20)));
}

// a seat's link opened here (an invite, or a seat taken from the lobby) joins "My tables":
// the table this browser made keeps its entry and notes which seat is this browser's
function rememberOpened(info) {
  if (game.role !== "seat") return;
  const list = JSON.parse(localStorage.getItem("stammtisch.tables") || "[]");
  const link = `/t/${game.tableId}#${game.token}`;
  const entry = list.find((e) => e.id === game.tableId);
  if (entry) {
    if (entry.mine === link) return;
    entry.mine = link;
    localStorage.setItem("stammtisch.tables", JSON.stringify(list));
  } else rememberTable({ id: game.tableId, ruleset: info.ruleset, mine: link, links: [{ name: info.players[game.seat], link, seat: game.seat }] });
}

// "My tables": per table, its summary for the link this browser holds (its seat's, else the
// admin's): when it was made, the finished deals, this seat's result, playing or ended
const mineSummaries = {};
async function loadMine() {
  const list = JSON.parse(localStorage.getItem("stammtisch.tables") || "[]");
  await Promise.all(list.map(async (e) => {
    const link = e.mine || e.admin;
    if (!link) return;
    try {
      const r = await fetch(`/api/tables/${e.id}/summary`, { headers: { authorization: `Bearer ${link.split("#")[1]}` } });
      if (r.ok) mineSummaries[e.id] = await r.json();
    } catch (err) { /* the entry stays without its summary */ }
  }));
  renderMine();
}

function mineSummary(x) {
  const parts = [new Date(x.created * 1000).toLocaleDateString(lang === "de" ? "de-DE" : "en-GB"),
    t(x.deals === 1 ? "mineDeals_one" : "mineDeals", { n: x.deals })];
  if (x.balance !== null) parts.push(t("mineResult", { n: x.balance > 0 ? `+${x.balance}` : String(x.balance) }));
  parts.push(t(x.status === "ended" ? "mineEnded" : "minePlaying"));
  return parts.join(" · ");
}

function madeHere(id) { return JSON.parse(localStorage.getItem("stammtisch.tables") || "[]").some((e) => e.id === id && e.admin); }

function renderMine() {
  const list = JSON.parse(localStorage.getItem("stammtisch.tables") || "[]");
  $("mine").hidden = list.length === 0;
  $("mine-list").replaceChildren(...list.map((e) => el("li", { "data-testid": `mine-${e.id}` }, el("b", { text: rulesetTitle(e.ruleset, e.ruleset) + " " }),
    ...(mineSummaries[e.id] ? [el("span", { class: "muted", "data-testid": `mine-summary-${e.id}`,
      "data-status": mineSummaries[e.id].status, text: mineSummary(mineSummaries[e.id]) + " " })] : []),
    ...e.links.map((l) => el("a", { href: l.link, class: "chip", text: l.seat === null ? t("spectator") : l.name })),
    ...(e.admin ? [el("a", { href: e.admin, class: "chip", "data-testid": `mine-admin-${e.id}`, text: t("adminLink") })] : []))));
}

// the rule sets by name, Tippen's and Tapp's apart
function renderRulesetSelect() {
  const keep = $("ruleset").value;
  const groups = ["tippen", "tapp"].map((f) => el("optgroup", { label: tc("web.family." + f) },
    ...rulesets.filter((r) => r.family === f).map((r) => el("option", { value: r.id, text: rulesetTitle(r.id, r.title) }))));
  const others = rulesets.filter((r) => r.family !== "tippen" && r.family !== "tapp")
    .map((r) => el("option", { value: r.id, text: rulesetTitle(r.id, r.title) }));
  $("ruleset").replaceChildren(...groups.filter((g) => g.children.length), ...others);
  if (keep) $("ruleset").value = keep;
}

function renderLobby() {
  // the texts only: what was typed and chosen stays
  const names = [...$("seats").querySelectorAll(".seat-row")];
  renderRulesetSelect();
  renderOptions(collectOptions(), names.length || null);
  renderPace();
  renderMine();
  social.renderOpenTables();
}

function openRules(ruleset, part) {
  if (!window.stammtischRules) return;
  window.stammtischRules.openRulesPanel({ ruleset, lang, options: null, part });
}

async function showLobby() {
  $("lobby").hidden = false;
  page.render = renderLobby;
  $("intro-tippen").addEventListener("click", () => openRules("tippen/grupp-1975", "all"));
  $("intro-tapp").addEventListener("click", () => openRules("tapp/modern", "all"));
  renderPace();
  rulesets = await api("/api/rulesets");
  renderRulesetSelect();
  $("ruleset").value = rulesets.some((r) => r.id === "tippen/grupp-1975") ? "tippen/grupp-1975" : rulesets[0].id;
  $("ruleset").addEventListener("change", () => renderOptions());
  renderOptions();
  renderMine();
  loadMine();
  social.initLobby();
  $("add-seat").addEventListener("click", () => renderSeats($("seats").children.length + 1));
  $("remove-seat").addEventListener("click", () => renderSeats($("seats").children.length - 1));
  $("options").addEventListener("change", () => renderSeats($("seats").children.length));  // the pack bounds the seats
  $("create-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    $("create-error").textContent = "";
    const seats = [...$("seats").querySelectorAll(".seat-row")].map((r) => ({
      name: r.querySelector(".name").value.trim(), bot: r.querySelector(".bot").value || null }));
    const options = collectOptions();
    if (seats.length !== (currentRuleset() || {}).players) options.players = String(seats.length);
    const body = { ruleset: $("ruleset").value, options, seats, ...social.createFields(seats) };
    if ($("hints").checked) body.hints = true;
    const pace = $("pace").value;
    if (pace) body.pace = pace === "wait" ? "wait" : Number(pace);
    try {
      const res = await api("/api/tables", body);
      const links = res.seats.filter((s) => s.link && !s.open).map((s) => ({ name: s.name, link: s.link, seat: s.seat }));
      links.push({ name: t("spectator"), link: res.spectator.link, seat: null });
      // the creator keeps the admin link in this browser ("My tables"): he can end the table
      rememberTable({ id: res.id, ruleset: res.ruleset, links, admin: `/t/${res.id}#${res.admin_token}` });
      $("links").replaceChildren(...links.map((l) => {
        const abs = location.origin + l.link;
        const testid = l.seat === null ? "link-spectator" : `link-seat-${l.seat}`;
        const copy = el("button", { type: "button", class: "copy", "data-testid": `copy-${testid}`, text: t("copy"),
          onclick: async () => {
            try { await navigator.clipboard.writeText(abs); copy.textContent = t("copied"); } catch (e) { copy.textContent = t("copyFailed"); }
          } });
        return el("li", {}, el("b", { text: (l.seat === null ? t("spectator") : l.name) + ": " }),
          el("a", { href: l.link, target: "_blank", "data-testid": testid, text: abs }), " ", copy);
      }), ...res.seats.filter((s) => s.open).map((s) => el("li", { "data-testid": `lobby-seat-${s.seat}` },
        el("b", { text: s.name + ": " }), el("span", { class: "muted", text: t("lobbySeatOpen") }))));
      social.watchOpenSeats(res.id, res.seats.filter((s) => s.open).map((s) => s.seat));
      // the creator sits at the first human seat: Start takes him there
      const own = links.find((l) => l.seat !== null);
      $("start-hint").textContent = own ? t("startTakesYou", { name: own.name }) : "";
      $("created").hidden = false;
      $("create-form").hidden = true;
      $("start").onclick = async () => {
        try {
          await api(`/api/tables/${res.id}/start`, { token: res.admin_token });
          $("start").disabled = true; $("start").dataset.i18n = "started"; $("start").textContent = t("started");
          if (own) location.assign(own.link);
        } catch (e) { $("create-error").textContent = apiError(e); }
      };
      renderMine();
      $("created").scrollIntoView({ block: "start" });
    } catch (e) { $("create-error").textContent = apiError(e); }
  });
}

// ---------------------------------------------------------------- the table

const game = { ws: null, tableId: null, token: null, seat: null, role: null, msg: null, info: null,
  selected: new Set(), lastEvent: -1, retry: 0, dead: false, leaving: false, error: null, timer: null,
  // a finished trick stays in the middle for a moment before it moves to "last trick"
  lastTrickKey: null, held: null, heldTimer: null,
  // the hand as the keyboard walks it: the card that has the tab stop
  handFocus: null, hand: { selecting: false, selectable: new Set(), playable: new Set() },
  // the Deals panel: which deal is open, what was loaded
  deals: { open: false, deal: null, data: null, error: null, analysis: null, total: 0 },
  // what was last brought into view (bringPlayIntoView): the deal, this player's turn, a prompt
  inView: { deal: null, event: null, prompt: false } };

const TRICK_HOLD_MS = 1200;

// ---------------------------------------------------------------- motion
// Cards dealt into the hand, played onto the felt and swept to the trick's winner move (CSS
// animations, style.css); none where the reader asked for reduced motion. Every render makes
// the elements anew: each animation keeps its own clock (when its card was first shown) and
// goes on where it was, by a negative delay.
const DEAL_MS = 450, DEAL_STEP_MS = 45, ARRIVE_MS = 350, SWEEP_AFTER_MS = 700;
const motion = { shown: new Map(), dealt: null, opened: false };
const stillMoves = () => !window.matchMedia("(prefers-reduced-motion: reduce)").matches;

function animate(e, cls, since, delay, length) {
  const t0 = performance.now() - since - delay;  // how far into its animation it is
  if (t0 >= length) return;
  e.classList.add(cls);
  e.style.animationDelay = `${-t0}ms`;
}

// the cards of the trick: each new one comes from its player; a finished trick goes to its winner
function moveTrick(held, where) {
  if (!stillMoves()) return;
  const now = performance.now();
  const keep = new Map();
  for (const e of $("trick").querySelectorAll(".played")) {
    const key = e.dataset.seat + ":" + e.querySelector(".card").dataset.card;
    // the cards on the felt when the page opens lie there already
    const since = motion.shown.get(key) || (motion.opened ? now : -Infinity);
    keep.set(key, since);
    animate(e, "arrive", since, 0, ARRIVE_MS);
    if (held) {
      const to = where(held.trick.winner);
      e.style.setProperty("--wx", to.x.toFixed(3));
      e.style.setProperty("--wy", to.y.toFixed(3));
      animate(e, "sweep", held.at, SWEEP_AFTER_MS, TRICK_HOLD_MS - SWEEP_AFTER_MS);
    }
  }
  motion.shown = keep;
  motion.opened = true;
}

// a new deal's hand: its cards come in one after the other
function dealHand(deal) {
  if (!stillMoves()) return;
  const cards = [...$("hand").querySelectorAll(".card")];
  if (!cards.length) return;
  // the deal on the table when the page opens is not dealt again
  if (!motion.dealt) motion.dealt = { deal, at: -Infinity };
  if (motion.dealt.deal !== deal) motion.dealt = { deal, at: performance.now() };
  cards.forEach((c, i) => animate(c, "dealt", motion.dealt.at, i * DEAL_STEP_MS, DEAL_MS));
}

// the page's title says so when it is this player's turn and he looks at another tab
const BASE_TITLE = document.title;
function showTurnInTitle(mine) {
  document.title = mine && document.hidden ? t("yourTurnTitle", { title: BASE_TITLE }) : BASE_TITLE;
}

// Called with each new state: if a trick was just completed, hold it in the middle for a moment.
function noteTrick(v, first) {
  const key = v && v.last_trick ? JSON.stringify(v.last_trick) : null;
  if (key !== game.lastTrickKey && key !== null && !first) {
    const previous = game.lastTrickKey === null ? null : JSON.parse(game.lastTrickKey);
    game.held = { trick: v.last_trick, previous, at: performance.now() };
    clearTimeout(game.heldTimer);
    game.heldTimer = setTimeout(() => { game.held = null; render(); }, TRICK_HOLD_MS);
  } else if (key === null) {
    game.held = null;  // a new deal
  }
  game.lastTrickKey = key;
}

// ---------------------------------------------------------------- said aloud (the live region)

// Every card played, trick taken, bid and result, in words, for a screen reader; the last few
// lines stay in the region (a new line is what it reads out).
function announce(lines) {
  if (!lines.length) return;
  const box = $("live");
  for (const line of lines) box.append(el("p", { text: line }));
  while (box.children.length > 8) box.firstChild.remove();
}

function resultHeading(v) {
  const what = v.outcome ? (has("outcome." + v.outcome) ? tc("outcome." + v.outcome) : v.outcome) : v.contract ? contractName(v.contract) : "";
  return what ? t("dealOverWith", { what }) : t("dealOver");
}

// What changed from the last state to this one (null on the first state): a new deal or not, the
// actions since, a trick just taken, the deal just ended; whether it is this player's turn, and
// whether that turn just came.
function changes(prev, m) {
  const v = m.view, p = prev && prev.view;
  if (!v || !prev) return null;
  const info = m.table || game.info;
  const sameDeal = !!(p && prev.table && prev.table.deal_number === info.deal_number && p.log.length <= v.log.length);
  const key = v.last_trick ? JSON.stringify(v.last_trick) : null;
  const mine = (x) => !!x && !x.terminal && x.current_player === game.seat && x.legal_actions.length > 0;
  return { sameDeal, actions: v.log.slice(sameDeal ? p.log.length : 0),
    trick: !!key && (!p || !p.last_trick || JSON.stringify(p.last_trick) !== key),
    ended: v.terminal && !(sameDeal && p.terminal), mine: mine(v), myTurn: mine(v) && !(sameDeal && mine(p)) };
}

// The changes in words (nothing on the first state).
function whatHappened(m, c) {
  if (!c) return [];
  const v = m.view, info = m.table || game.info;
  const lines = [];
  if (!c.sameDeal) lines.push(t("dealStarts", { n: info.deal_number }));
  for (const [s, a] of c.actions) lines.push(actionPhrase(a, s === game.seat ? null : name(s)));
  if (c.trick) lines.push(t("trickWinner", { name: name(v.last_trick.winner) }));
  if (c.ended) {
    lines.push(resultHeading(v));
    if (game.seat !== null && v.net) lines.push(t("yourNet", { n: (v.net[game.seat] > 0 ? "+" : "") + v.net[game.seat] }));
  }
  if (c.myTurn) lines.push(t("yourTurn"));
  return lines;
}

// Close codes after which this link will not work again (docs/protocol.md, "Close codes"): the
// page stops and says why. Any other close is followed by a new try after a pause that doubles
// each time (with jitter, up to RETRY_MAX_MS), and starts small again after a connection that
// lasted.
const FINAL_CLOSE = new Set([4400, 4401, 4403, 4404, 4410]);
const RETRY_FIRST_MS = 500, RETRY_MAX_MS = 30000, LASTED_MS = 10000;

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  // the token goes in the first message, never in the URL (proxies log URLs)
  const ws = new WebSocket(`${proto}//${location.host}/ws/${encodeURIComponent(game.tableId)}`);
  game.ws = ws;
  let openedAt = null;
  ws.onopen = () => {
    openedAt = Date.now();
    ws.send(JSON.stringify({ type: "hello", token: game.token }));
    $("conn-status").textContent = ""; $("conn-status").dataset.state = "open";
  };
  ws.onmessage = (ev) => {
    const m = JSON.parse(ev.data);
    if (m.type === "hello") { game.seat = m.seat; game.role = m.role; }
    else if (m.type === "hint") { game.hint = { event: m.event, action: m.action, why: m.why }; render(); announce([hintLine(game.hint)]); }
    else if (m.type === "hint asked") {
      // a notice of play, not talk: it goes to the log, after the action it was asked at
      const v = game.msg && game.msg.view;
      game.hintNotices = (game.hintNotices || []).concat([{ deal: game.info ? game.info.deal_number : null, at: v ? v.log.length : 0, name: m.name }]);
      render();
    }
    else if (m.type === "state") {
      // a refusal (e.g. "stale": the click answered an older state) stays shown until the state moves on
      if (m.event !== game.lastEvent) { game.selected.clear(); game.error = null; }
      const first = game.msg === null;
      const prev = game.msg ? { view: game.msg.view, table: { deal_number: game.info ? game.info.deal_number : null } } : null;
      // the table's info comes only when it changed; else the last one holds, but for its event number
      if (m.table) game.info = m.table; else if (game.info) { game.info.events = m.event; m.table = game.info; }
      game.lastEvent = m.event; game.msg = m; document.body.dataset.event = String(m.event);
      if (first && game.info) rememberOpened(game.info);
      noteTrick(m.view, first);
      render();
      const c = changes(prev, m);
      announce(whatHappened(m, c));
      alive.onChange(c);
    } else if (m.type === "presence") { if (game.info) { game.info.seats = m.seats; render(); } }
    else if (m.type === "rematch") { game.leaving = true; social.onMessage(m); }
    else if (m.type === "chat") social.onMessage(m);
    else if (m.type === "error") {
      // kept as message and code, so that a language switch shows it in the other language
      game.error = { message: m.message, rule: m.rule || null };
      if (m.rule === "token" || m.rule === "unknown table") game.error = { key: "badLink" };
      render();
    }
  };
  ws.onclose = (ev) => {
    $("conn-status").dataset.state = "closed";
    if (game.leaving) return;  // on to the rematch's link
    if (FINAL_CLOSE.has(ev.code)) {
      game.dead = true;
      // an archived table was shown as it ended (read-only): the link works, it just has no more to say
      const ended = !!(game.info && game.info.archived);
      $("conn-status").textContent = ended ? "" : t("connectionEnded");
      if (!game.error && !ended) game.error = { key: "badLink" };
      render();
      return;
    }
    $("conn-status").textContent = t("reconnecting");
    if (openedAt !== null && Date.now() - openedAt >= LASTED_MS) game.retry = 0;
    // half the pause fixed, half random: pages that lost one server do not all come back at once
    const pause = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** game.retry);
    game.retry = Math.min(game.retry + 1, 16);
    setTimeout(connect, pause / 2 + Math.random() * pause / 2);
  };
}

function shownError() {
  const e = game.error;
  if (!e) return "";
  return e.key ? t(e.key) : errorText(e.message, e.rule);
}

function send(obj) {
  if (game.ws && game.ws.readyState === 1) { game.ws.send(JSON.stringify(obj)); return; }
  // never drop a click silently: say why nothing happened
  game.error = { key: "notConnected" };
  render();
}
// every action names the state it answers: a double click or a second tab cannot act on a newer one
function act(a) { game.error = null; send({ type: "action", action: a, event: game.lastEvent }); }

function name(seat) { return game.info ? game.info.players[seat] : String(seat); }

// Where a seat sits round the felt: the viewer (a spectator: seat 0) at the bottom, the others in
// the direction of play. Returns the unit vector from the middle (screen axes, y down): seat k
// after the viewer is at 90° + k·360°/n, turning clockwise on the screen for a clockwise table.
function seatPlace(i, n, clockwise) {
  const me = game.seat === null ? 0 : game.seat;
  const k = (i - me + n) % n;
  const a = Math.PI / 2 + (clockwise === false ? -1 : 1) * k * 2 * Math.PI / n;
  return { x: Math.cos(a), y: Math.sin(a) };
}
function place(e, at) {
  e.style.setProperty("--x", at.x.toFixed(3));
  e.style.setProperty("--y", at.y.toFixed(3));
  return e;
}

// withNames: cards are [seat, card] pairs, shown with the player's name; winner: that seat's card is marked
function cardList(box, cards, withNames, winner = null, where = null) {
  box.replaceChildren(...cards.map((x) => {
    if (!withNames) return cardEl(x);
    const [seat, c] = x;
    const won = seat === winner;
    const label = t("playedBy", { card: cardName(c), name: name(seat) }) + (won ? " – " + t("takesIt") : "");
    const e = el("span", { class: "played" + (won ? " winner" : ""), "data-seat": String(seat), "data-winner": won ? "true" : null },
      cardEl(c, { label }), el("small", { text: name(seat), "aria-hidden": "true" }));
    return where ? place(e, where(seat)) : e;
  }));
}

// A trick as it is shown: its cards, the winner's card marked, and who took it.
function showTrick(box, label, trick, where = null) {
  cardList(box, trick ? trick.cards : [], true, trick ? trick.winner : null, where);
  label.textContent = trick ? t("trickWinner", { name: name(trick.winner) }) : "";
}

function argCards(a) {
  const i = a.indexOf(":");
  if (i < 0) return null;
  const arg = a.slice(i + 1);
  if (arg === "-" || /^\d+$/.test(arg)) return [];
  const parts = arg.split(",");
  return parts.every(isCard) ? parts : null;
}

// What each seat said this deal, from the log (the catalogue's words), the latest last.
function saidBySeat(v, n) {
  const out = Array.from({ length: n }, () => []);
  for (const [s, a] of (v ? v.log : [])) {
    const w = saidWord(a);
    if (w !== null && out[s]) out[s].push({ word: w, phrase: actionPhrase(a, s === game.seat ? null : name(s)) });
  }
  return out;
}

function renderSeatTiles(info, v) {
  const n = info.players.length;
  $("felt").classList.toggle("many", n > 6);
  const said = saidBySeat(v, n);
  $("players").replaceChildren(...info.players.map((p, i) => {
    const s = info.seats[i];
    const turn = v && !v.terminal && v.current_player === i;
    const words = said[i];
    const tile = el("div", { class: "player" + (turn ? " on-turn" : "") + (i === game.seat ? " me" : ""), "data-testid": `player-${i}`,
      "data-turn": turn ? "true" : "false", role: "group", "aria-label": p + (turn ? " – " + t("onTurn") : "") },
      el("div", { class: "who" }, el("span", { class: "nm" }, el("span", { class: "dot " + (s.connected ? "on" : "off"),
        "data-testid": `seat-status-${i}`, "data-connected": s.connected ? "true" : "false", title: s.connected ? t("connected") : t("offline"),
        role: "img", "aria-label": s.connected ? t("connected") : t("offline") }), el("b", { text: p })), i === game.seat ? el("small", { text: " " + t("youSuffix") }) : null,
        s.bot ? el("span", { class: "tag", text: t("botTag") }) : null, v && v.dealer === i ? el("span", { class: "tag", text: t("dealer") }) : null),
      el("div", { class: "meta" },
        v ? el("span", { text: t("cardsOf", { n: v.hand_sizes[i] }) }) : null,
        v ? el("span", { text: t("tricksOf", { n: v.tricks_won[i] }) }) : null,
        info.balances ? el("span", { "data-testid": `balance-${i}`, text: t("balanceOf", { n: info.balances[i] }) }) : null),
      el("div", { class: "said", "data-testid": `said-${i}` }, ...words.map((w, k) => el("span", {
        class: "say" + (k === words.length - 1 ? " last" : ""), title: w.phrase, text: w.word }))));
    return place(tile, seatPlace(i, n, info.clockwise));
  }));
}

// The middle of the felt: the upcard (Tippen) and the talon, the tapp face down until it is
// taken (Tapp), the bid to beat, who takes the trick.
function renderCenter(info, v) {
  cardList($("upcard"), v && v.upcard ? [v.upcard] : [], false);
  $("upcard-box").hidden = !(v && v.upcard) || info.family === "tapp";
  const talon = v && typeof v.talon_size === "number" && v.talon_size > 0 && !v.terminal ? v.talon_size : 0;
  $("talon-box").hidden = !talon;
  if (talon) $("talon-box").replaceChildren(el("div", { class: "label", text: t("talon") }),
    el("div", { class: "backs", role: "img", "aria-label": t("talonCards", { n: talon }) },
      el("span", { class: "cardback" }), el("span", { class: "count", text: String(talon) })));
  // the tapp lies face down in the middle until the declarer takes it (his discard says so);
  // then only he sees what he laid away, beside the felt
  const taken = v && v.log.some(([, a]) => a.startsWith("discard:"));
  const tapp = info.family === "tapp" && v && !v.terminal && !taken;
  $("tapp-box").hidden = !tapp;
  if (tapp) $("tapp-box").replaceChildren(el("div", { class: "label", text: t("tappLabel") }),
    el("div", { class: "backs", role: "img", "aria-label": t("tappHidden") }, el("span", { class: "cardback" })));
  const mine = v && !v.terminal && Array.isArray(v.discards) ? v.discards : [];
  $("laid-away-box").hidden = !mine.length;
  cardList($("laid-away"), mine, false);
  const st = v && v.standing;
  $("standing").hidden = !st || v.terminal;
  if (st) {
    const bid = st.bid || "";
    const j = bid.indexOf(":");
    const c = j < 0 ? bid : bid.slice(j + 1);
    const word = ACTION_WORDS.has(bid) ? t("a_" + bid) : contractName(c);
    $("standing").textContent = t("standingBid", { bid: word, name: name(st.seat) });
  }
}

// the allowed counts of a card choice, from the legal list alone: "up to 3", "3", "1 to 2"
function pickPrompt(h, list, chosen) {
  const sizes = [...new Set(list.map((a) => argCards(a).length))].sort((a, b) => a - b);
  const min = sizes[0], max = sizes[sizes.length - 1];
  const what = has("web.pick_" + h) ? t("pick_" + h) : h;
  const key = min === max ? (max === 1 ? "pickOne" : "pickExactly") : (min === 0 ? "pickUpTo" : "pickRange");
  return t(key, { min, max, what }) + " — " + t("pickChosen", { n: chosen });
}

function renderHand(v) {
  const legal = v ? v.legal_actions : [];
  const playable = new Set(legal.filter((a) => a.startsWith("play:")).map((a) => a.slice(5)));
  const groups = {};
  for (const a of legal) { const h = a.split(":")[0]; (groups[h] = groups[h] || []).push(a); }
  const hand = v ? v.hand : [];
  const inHand = new Set(hand);
  const fromTapp = new Set(v && Array.isArray(v.tapp) && v.phase === "discard" ? v.tapp : []);
  const selectHeads = Object.keys(groups).filter((h) => h !== "play" && groups[h].every((a) => {
    const cs = argCards(a); return cs !== null && cs.every((c) => inHand.has(c));
  }));
  const selectable = new Set();
  for (const h of selectHeads) for (const a of groups[h]) for (const c of argCards(a)) selectable.add(c);
  const selecting = selectHeads.length > 0;
  game.hand = { selecting, selectable, playable };
  const choosing = selecting || playable.size > 0;
  $("hand").classList.toggle("choosing", choosing);
  if (!hand.includes(game.handFocus)) game.handFocus = hand.find((c) => (selecting ? selectable : playable).has(c)) || hand[0] || null;
  const trump = v ? v.trump : null;
  // each card is a button with its name; a card that cannot be chosen now says so (aria-disabled)
  // and, while a choice is due, is dimmed and not raised; the keyboard walks all of them
  keepOrReplace($("hand"), hand.map((c) => {
    const legalCard = selecting ? selectable.has(c) : playable.has(c);
    const isTrump = trump && c[0] === trump;
    let label = cardName(c);
    if (isTrump) label += ", " + t("trumpMark");
    if (fromTapp.has(c)) label += ", " + t("fromTapp");
    return cardEl(c, { class: [legalCard ? "legal" : "", game.selected.has(c) ? "selected" : "", fromTapp.has(c) ? "from-tapp" : "",
      isTrump ? "trump" : ""].filter(Boolean).join(" "), label,
    "data-testid": `card-${c}`, "data-legal": legalCard ? "true" : "false", role: "button",
    tabindex: c === game.handFocus ? "0" : "-1", "aria-disabled": legalCard ? null : "true",
    "aria-pressed": selecting && legalCard ? (game.selected.has(c) ? "true" : "false") : null });
  }));

  const buttons = [];
  const verb = (h) => (has("web.c_" + h) ? t("c_" + h) : h);
  let prompt = "";
  for (const h of selectHeads) {
    const sel = [...game.selected].sort().join(",");
    const match = groups[h].find((a) => argCards(a).slice().sort().join(",") === sel);
    const n = game.selected.size;
    prompt = pickPrompt(h, groups[h], n);
    const label = t("selection", { verb: verb(h),
      cards: n ? [...game.selected].map(cardShort).join(" ") : (h === "exchange" ? t("keep") : t("none")) });
    buttons.push(el("button", { type: "button", class: "primary", "data-testid": `confirm-${h}`, disabled: !match,
      "data-action": match || "", onclick: () => match && act(match), text: label }));
  }
  if (selecting && playable.size) {  // unusual: both a selection and card play are legal
    const one = game.selected.size === 1 ? [...game.selected][0] : null;
    buttons.push(el("button", { type: "button", "data-testid": "confirm-play", disabled: !(one && playable.has(one)),
      onclick: () => act("play:" + one), text: t("c_play") }));
  }
  // the server's words for each legal action (goal and value of a contract), where it sent them
  const choices = game.msg && Array.isArray(game.msg.choices) && game.msg.choices.length === legal.length ? game.msg.choices : null;
  for (const [h, list] of Object.entries(groups)) {
    if (selectHeads.includes(h)) continue;
    // a card to name that is not in the hand (a Rufer's call): one button per card
    if (h !== "play" && !prompt && list.every((a) => { const cs = argCards(a); return cs && cs.length === 1; })) {
      prompt = t("pickButton", { what: has("web.pick_" + h) ? t("pick_" + h) : h });
    }
    for (const a of list) {
      if (a.startsWith("play:")) continue;  // cards are played by clicking them in the hand
      const said = choices ? choices[legal.indexOf(a)] : null;  // null for a card to play or to choose
      const choice = said ? renderText(said) : null;
      const cs = argCards(a);
      const long = choice && (h === "bid" || h === "contract" || h === "trump");
      const content = long ? choiceContent(said, choice)
        : cs && cs.length === 1 ? [el("span", { text: verb(h) + " " }), cardEl(cs[0], { class: "mini" })] : [actionLabel(a)];
      buttons.push(el("button", { type: "button", class: long ? "choice" : null, "data-testid": `action-${a}`, "data-action": a,
        title: choice || null,
        "aria-label": long ? choice : cs && cs.length === 1 ? (choice || actionPhrase(a, null)) : null,
        onclick: () => act(a) }, ...content));
    }
  }
  $("prompt").hidden = !prompt;
  $("prompt").textContent = prompt;
  keepOrReplace($("actions"), buttons);
}

// A contract's button: its name and value on the first line, its goal smaller below (the whole
// sentence is the button's name for a screen reader); other choices as the server says them.
function choiceContent(said, choice) {
  const p = said.params || {};
  if (said.key !== "choice.contract" && said.key !== "choice.contract_no_value") return [choice];
  // a value in cents is short ("5 ¢"); a formula (historic Tapp) goes below, with the goal
  const short = p.value && p.value.key === "value.cents" ? t("valueShort", p.value.params) : null;
  const head = renderText(p.contract) + (short ? " · " + short : "");
  const below = [p.value && !short ? renderText(p.value) : null, renderText(p.goal || "")].filter(Boolean).join("; ");
  return [el("span", { class: "name", text: head }), el("span", { class: "goal", text: below })];
}

// a card chosen in the hand (click, Enter or Space): played, or added to / taken from the choice
function chooseCard(c) {
  const h = game.hand;
  if (h.selecting ? !h.selectable.has(c) : !h.playable.has(c)) return;
  game.handFocus = c;
  if (h.selecting) { game.selected.has(c) ? game.selected.delete(c) : game.selected.add(c); render(); }
  else act("play:" + c);
}

function initHand() {
  const hand = $("hand");
  hand.addEventListener("click", (ev) => {
    const card = ev.target.closest(".card");
    if (card) chooseCard(card.dataset.card);
  });
  // the arrow keys walk the hand (one tab stop), Enter or Space chooses the card
  hand.addEventListener("keydown", (ev) => {
    const cards = [...hand.querySelectorAll(".card")];
    const i = cards.indexOf(document.activeElement);
    if (i < 0) return;
    let j = null;
    if (ev.key === "ArrowRight" || ev.key === "ArrowDown") j = Math.min(cards.length - 1, i + 1);
    else if (ev.key === "ArrowLeft" || ev.key === "ArrowUp") j = Math.max(0, i - 1);
    else if (ev.key === "Home") j = 0;
    else if (ev.key === "End") j = cards.length - 1;
    else if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); chooseCard(cards[i].dataset.card); return; }
    if (j === null) return;
    ev.preventDefault();
    cards[i].tabIndex = -1;
    cards[j].tabIndex = 0;
    game.handFocus = cards[j].dataset.card;
    cards[j].focus();
  });
}

// Where the keyboard was before a render replaced the elements, and where it goes after: the same
// card or button if it is still there; else, for a player who was at the table, what is due now.
function focusZone() {
  const a = document.activeElement;
  if (!a || !a.closest) return null;
  for (const id of ["hand", "actions", "result"]) if (a.closest("#" + id)) return { zone: id, testid: a.dataset.testid || null };
  return null;
}
// The focus moves without scrolling the page (focus() alone would pull the hand to the middle of
// a phone's screen and push the felt off its top): the page is scrolled by bringPlayIntoView, or,
// for a target out of sight, just as far as it takes to show it.
function focusInPlace(target) {
  target.focus({ preventScroll: true });
  const r = target.getBoundingClientRect();
  if (r.top < 0 || r.bottom > window.innerHeight) target.scrollIntoView({ block: "nearest" });
}
function restoreFocus(was) {
  if (!was || (document.activeElement && document.activeElement !== document.body && focusZone())) return;
  const same = was.testid && document.querySelector(`#${was.zone} [data-testid="${CSS.escape(was.testid)}"]`);
  if (same && !same.disabled) { focusInPlace(same); return; }
  const h = game.hand;
  const legalCard = [...$("hand").querySelectorAll(".card[data-legal=true]")];
  const button = $("actions").querySelector("button:not([disabled])");
  const next = $("result").hidden ? null : $("result").querySelector("[data-testid=next-deal]:not([disabled])");
  const card = $("hand").querySelector(".card[tabindex='0']");
  const target = (h.playable.size || h.selecting) && legalCard.length ? (legalCard.find((c) => c.tabIndex === 0) || legalCard[0])
    : button || next || card;
  if (target) {
    if (target.classList.contains("card")) {
      $("hand").querySelectorAll(".card").forEach((c) => { c.tabIndex = c === target ? 0 : -1; });
      game.handFocus = target.dataset.card;
    }
    focusInPlace(target);
  }
}

// A new deal, this player's turn and a choice to make bring the felt and the hand (with the
// buttons under it) into view, however far the page was scrolled (to the score sheet, the chat,
// the Next deal button): the page moves as little as it can, the felt's top first where not all
// of it fits. Not while the player types (a chat line).
function bringPlayIntoView() {
  const typing = document.activeElement && document.activeElement.matches("input, textarea, select");
  if (typing || $("table").hidden) return;
  const margin = 4, room = window.innerHeight - 2 * margin;
  const top = $("felt").getBoundingClientRect().top - margin;
  const hand = $("hand").getBoundingClientRect().bottom + margin;
  const actions = Math.max(hand, $("actions").getBoundingClientRect().bottom + margin);
  const bottom = actions - top <= room ? actions : hand - top <= room ? hand : null;
  let by = 0;
  if (bottom === null || top < 0) by = top;
  else if (bottom > window.innerHeight) by = bottom - window.innerHeight;
  if (by) window.scrollBy({ left: 0, top: by, behavior: "instant" });
}

function renderResult(info, v) {
  const res = $("result");
  if (!(v && v.terminal)) { res.hidden = true; clearInterval(game.timer); return; }
  res.hidden = false;
  const rows = info.players.map((p, i) => el("tr", {}, el("td", { text: p }),
    el("td", { class: "num", "data-testid": `net-${i}`, text: (v.net[i] > 0 ? "+" : "") + v.net[i] })));
  const kids = [el("h2", { text: resultHeading(v) }),
    el("table", {}, el("tr", {}, el("th", { text: t("player") }), el("th", { text: t("net") })), ...rows)];
  const why = info.explanation;  // every payment and its reason, as catalogue messages
  if (why) kids.push(el("ul", { "data-testid": "explanation", class: "explanation" }, ...why.map((line) => el("li", { text: renderText(line) }))));
  // the next deal: with a person seated it waits until every seated person pressed Next deal
  const ready = info.next_ready || [];
  const waits = info.pace === "wait" && !info.closed;  // an ended table deals no more
  if (game.seat !== null && !info.closed) {
    const done = waits && ready.includes(game.seat);
    kids.push(el("button", { type: "button", class: "primary", "data-testid": "next-deal", disabled: done,
      "data-ready": done ? "true" : "false", onclick: () => send({ type: "next" }), text: done ? t("nextDealPressed") : t("nextDeal") }));
  }
  if (waits) {
    const people = info.seats.map((s, i) => [s, i]).filter(([s]) => !s.bot);
    kids.push(el("ul", { class: "ready-list", "data-testid": "next-ready", "aria-label": t("readyTitle") },
      ...people.map(([s, i]) => el("li", { "data-seat": String(i), "data-ready": ready.includes(i) ? "true" : "false",
        text: t(ready.includes(i) ? "isReady" : s.connected ? "notReady" : "isAway", { name: name(i) }) }))));
  }
  const nd = el("small", { "data-testid": "next-deal-countdown" });
  kids.push(nd);
  kids.push(el("button", { type: "button", "data-testid": "analysis-btn", onclick: () => loadAnalysis(info.deal_number), text: t("analysis") }));
  kids.push(el("button", { type: "button", "data-testid": "replay-btn", onclick: () => startReplay(info.deal_number), text: t("replay") }));
  const a = game.analysis;
  if (a && a.deal === info.deal_number) kids.push(analysisPanel(a, ""));
  res.replaceChildren(...kids);
  clearInterval(game.timer);
  const tick = () => {
    if (!info.next_deal_at || waits || info.closed) { nd.textContent = ""; return; }
    nd.textContent = " " + t("nextIn", { s: Math.max(0, Math.round(info.next_deal_at - Date.now() / 1000)) });
  };
  tick(); game.timer = setInterval(tick, 1000);
}

function render() {
  page.render = render;
  if (replay.on) { renderReplay(); return; }
  const m = game.msg;
  $("error").textContent = shownError();
  if (game.dead && !m) { $("turn").textContent = t("connectionEnded"); return; }
  if (!m) return;
  const was = focusZone();
  // an ended table (closed, or archived) is read-only: its score sheet, deals and record; the
  // last deal's result if it was finished, never the hand of a deal it broke off
  const info = m.table, ended = !!info.closed, v = ended && m.view && !m.view.terminal ? null : m.view;
  const opts = (v && v.options) || info.options || {};
  germanSuits = opts.suits === "german" || (info.options && info.options.suits === "german");
  $("t-title").textContent = rulesetTitle(info.ruleset, info.title);
  $("t-direction").textContent = info.clockwise === false ? t("counterClockwise") : t("clockwise");
  $("t-deal").textContent = String(info.deal_number);
  $("t-deal").parentElement.hidden = !info.started;  // before the start: no "Deal 0", no trump
  $("t-trump-box").hidden = !info.started;
  // Modern Tapp (and historic Tapp without pot=true) has no pot: don't show one
  const hasPot = info.family !== "tapp" || opts.pot === true || opts.pot === "true";
  $("t-pot").parentElement.hidden = !hasPot;
  // The pot as it stands now: the view's during a deal (antes paid, tricks paid out), else the
  // ledger's; the top bar and the score sheet's total show this same number.
  const potNow = v ? v.pot + (v.reserve || 0) : info.pot + info.reserve;
  $("t-pot").textContent = String(potNow);
  $("t-trump").textContent = v && v.trump ? trumpWords(v.trump) : "–";
  $("t-contract-box").hidden = !(v && v.contract);
  $("t-contract").textContent = v && v.contract ? (v.declarer !== null && v.declarer !== undefined
    ? t("contractBy", { contract: contractName(v.contract), name: name(v.declarer) }) : contractName(v.contract)) : "";
  $("lobby-wait").hidden = info.started;
  // the host (this browser made the table: "My tables") starts it; a guest waits for him
  const host = game.seat !== null && madeHere(game.tableId);
  $("start-ws").hidden = !host;
  $("not-started").textContent = host ? t("notStarted") : t("waitForHost");
  $("start-ws").onclick = () => send({ type: "start" });
  // during play the download leaves out the cards this link did not see; once the table has
  // ended, a seat's or the admin's link downloads the whole record that replay and analyze read
  const full = info.closed && game.role !== "spectator";
  $("record-link").textContent = t(full ? "recordFull" : "recordRedacted");
  $("record-link").dataset.full = full ? "true" : "false";
  $("record-note").textContent = full ? t("recordFullNote") : t("recordRedactedNote");
  $("admin-box").hidden = !(game.role === "admin" && !info.closed);
  renderHint(info, v);
  $("deals-btn").hidden = false;
  $("deals-btn").disabled = finishedDeals(info) === 0;
  if (game.deals.open && game.deals.total !== finishedDeals(info)) renderDeals();  // a deal ended meanwhile

  renderSeatTiles(info, v);
  renderCenter(info, v);
  // the trick: each card in front of its player; a just finished trick stays a moment, its winner
  // marked (cut short when this player must follow a card already led to the next trick)
  if (game.held && v && v.trick.length && v.current_player === game.seat && !v.terminal) game.held = null;
  const held = game.held;
  const where = (seat) => seatPlace(seat, info.players.length, info.clockwise);
  $("trick").dataset.finished = held ? "true" : "false";
  if (held) showTrick($("trick"), $("trick-winner"), held.trick, where);
  else { cardList($("trick"), v ? v.trick : [], true, null, where); $("trick-winner").textContent = ""; }
  moveTrick(held, where);
  showTrick($("last-trick"), $("last-trick-winner"), held ? held.previous : (v && v.last_trick) || null);
  // during a deal the last trick keeps its room, empty before the first trick is taken: the hand
  // below does not move down when it comes
  $("last-trick-box").hidden = !v || (v.terminal && !$("last-trick").children.length);
  $("last-trick-box").classList.toggle("empty", !$("last-trick").children.length);
  $("open-hand-box").hidden = !(v && v.open_hand && v.open_hand.length && v.declarer !== game.seat);
  if (v && v.open_hand) cardList($("open-hand"), v.open_hand, false);

  // whose turn, and what to do
  let turnText = "";
  const legal = v ? v.legal_actions : [];
  if (ended) turnText = t("tableEnded");
  else if (!info.started) turnText = t("waiting");
  else if (v && v.terminal) turnText = "";  // the result below says it
  else if (v && v.current_player === game.seat) turnText = legal.some((a) => a.startsWith("play:")) ? t("yourTurnPlay") : t("yourTurn");
  else if (v) turnText = t("turnOf", { name: name(v.current_player) });
  if (game.seat === null && info.started && !ended) turnText = t("spectatingSuffix", { turn: turnText });
  $("turn").textContent = turnText;
  $("turn").dataset.mine = v && !v.terminal && v.current_player === game.seat ? "true" : "false";
  $("legal").textContent = JSON.stringify(legal);
  renderHand(v);
  if (v && !v.terminal) dealHand(info.deal_number);
  renderResult(info, v);

  // log: every action in words, "you" for one's own
  const log = v ? v.log : [];
  const items = log.map(([s, a]) => el("li", { text: actionPhrase(a, s === game.seat ? null : name(s)) }));
  // who asked for a hint this deal, each after the action it was asked at
  for (const h of (game.hintNotices || []).filter((x) => x.deal === info.deal_number).reverse()) {
    items.splice(Math.min(h.at, items.length), 0, el("li", { class: "notice", "data-notice": "hintAsked" }, el("i", { text: t("hintAsked", { name: h.name }) })));
  }
  $("log").replaceChildren(...items);

  // score sheet
  const potCell = (text, tag = "td") => (hasPot ? [el(tag, { class: tag === "td" ? "num" : "", text })] : []);
  const head = el("tr", {}, el("th", { text: "#" }), ...info.players.map((p) => el("th", { text: p })), ...potCell(t("pot"), "th"));
  const rows = info.score.map((e) => el("tr", { "data-testid": `score-row-${e.deal}` }, el("td", { text: String(e.deal) }),
    ...e.net.map((x) => el("td", { class: "num", text: (x > 0 ? "+" : "") + x })), ...potCell(String(e.pot))));
  const total = el("tr", { class: "total" }, el("td", { text: t("total") }), ...info.balances.map((b) => el("td", { class: "num", text: String(b) })),
    ...potCell(String(potNow)));
  if (hasPot) total.lastChild.dataset.testid = "score-pot";
  const earlier = info.score_earlier ? [el("tr", { class: "earlier", "data-testid": "score-earlier" },
    el("td", { colspan: String(info.players.length + 1 + (hasPot ? 1 : 0)), text: t("scoreEarlier", { n: info.score_earlier }) }))] : [];
  // a rematch keeps the evening's tally: the tables before this one, and the evening's total
  const evening = info.evening;
  const numbers = (xs) => xs.map((b) => el("td", { class: "num", text: String(b) }));
  const before = evening ? evening.tables.map((e, i) => el("tr", { class: "earlier-table", "data-testid": `evening-table-${i + 1}` },
    el("td", { text: t(e.deals === 1 ? "eveningTable_one" : "eveningTable", { n: i + 1, deals: e.deals }) }), ...numbers(e.balances), ...potCell(""))) : [];
  const eveningTotal = evening ? [el("tr", { class: "total evening", "data-testid": "evening-total" },
    el("td", { text: t("eveningTotal") }), ...numbers(evening.total), ...potCell(""))] : [];
  $("score").replaceChildren(el("thead", {}, head), el("tbody", {}, ...before, ...earlier, ...rows, total, ...eveningTotal));
  const live = hasPot && v && !v.terminal && potNow !== info.pot + info.reserve;
  $("score-note").textContent = live ? t("potNow") : "";
  social.renderTable(info, v);
  restoreFocus(was);
  // what is due now: a new deal, a new turn of this player's, a choice that was not asked before
  const seen = game.inView, prompting = !$("prompt").hidden;
  const mine = $("turn").dataset.mine === "true" && legal.length > 0;
  showTurnInTitle(mine);
  if (info.deal_number !== seen.deal || (mine && m.event !== seen.event) || (prompting && !seen.prompt)) bringPlayIntoView();
  Object.assign(seen, { deal: info.deal_number, prompt: prompting, event: mine ? m.event : seen.event });
}

// ---------------------------------------------------------------- analysis of a finished deal

// "Where did I lose points?": the server solves the finished deal with all cards open
// (GET /api/tables/{id}/analysis/{deal}); the answer is kept until the next deal. It comes in
// parts (one JSON object a line): the cards played with their verdict first, the whole
// analysis when its decisions are judged; ``onPart`` shows each part as it comes.
async function fetchAnalysis(deal, onPart = () => {}) {
  try {
    const opts = withToken();
    opts.headers.accept = "application/x-ndjson";
    const r = await fetch(`/api/tables/${game.tableId}/analysis/${deal}`, opts);
    if (!r.ok || !r.body) {
      const data = await r.json().catch(() => ({ error: r.statusText }));
      return r.ok ? { deal, data } : { deal, error: { message: data.error || r.statusText, rule: data.rule || null } };
    }
    const reader = r.body.getReader(), decoder = new TextDecoder();
    let buffered = "", last = null;
    for (;;) {
      const { value, done } = await reader.read();
      buffered += decoder.decode(value || new Uint8Array(), { stream: !done });
      let cut;
      while ((cut = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, cut).trim();
        buffered = buffered.slice(cut + 1);
        if (!line) continue;
        const part = JSON.parse(line);
        if (part.part === "error") return { deal, error: { message: part.error, rule: part.rule || null } };
        last = { deal, data: part, more: part.part !== "all" };
        if (last.more) onPart(last);
      }
      if (done) break;
    }
    return last && !last.more ? last : { deal, error: { key: "analysisFailed" } };
  } catch (e) {
    return { deal, error: { key: "analysisFailed" } };
  }
}
async function loadAnalysis(deal) {
  game.analysis = { deal, loading: true };
  render();
  const shown = (a) => { if (game.analysis && game.analysis.deal === deal) { game.analysis = a; render(); } };
  shown(await fetchAnalysis(deal, shown));
}

function analysisValue(value, players) {
  if (value !== null && typeof value === "object") {
    return Object.entries(value).map(([seat, x]) => `${players[Number(seat)]} ${x}`).join(", ");
  }
  return String(value);
}

// prefix: "" in the result, "deal-" in the Deals panel (their test ids apart)
function analysisPanel(a, prefix) {
  const box = el("div", { class: "analysis", "data-testid": prefix + "analysis",
    "data-state": a.loading ? "loading" : a.error ? "error" : a.more ? "partial" : "done" });
  if (a.loading) { box.append(el("p", { text: t("analysisLoading") })); return box; }
  if (a.error) {
    const e = a.error;
    box.append(el("p", { class: "error", text: e.key ? t(e.key) : errorText(e.message, e.rule) }));
    return box;
  }
  const d = a.data;
  if (!d.played) { box.append(el("p", { text: t("analysisNoPlay") })); return box; }
  if (Array.isArray(d.lines) && d.lines.length) {
    // the server's lines (catalogue messages): each mistake with its trick, the better cards and
    // its cost from the player's side; the decisions before the play; the par of the deal.
    // A line's leading spaces say its level.
    box.append(el("ul", { "data-testid": prefix + "analysis-lines", class: "analysis-lines" }, ...d.lines.map((m) => {
      const text = renderText(m);
      const level = text.length - text.trimStart().length;
      return el("li", { "data-level": String(Math.min(3, Math.floor(level / 2))), text: text.trim() });
    })));
    // the first part: the verdict on the cards; the decisions and the par are still being judged
    if (a.more) box.append(el("p", { "data-testid": prefix + "analysis-more", class: "hint", text: t("analysisMore") }));
    box.append(el("p", { class: "note", text: t("analysisNote") }));
    return box;
  }
  const measure = t("measure." + d.measure);
  box.append(el("p", { "data-testid": prefix + "analysis-start", text: t("analysisStart", { measure, value: analysisValue(d.start_value, d.players) }) }));
  const who = (seat) => (seat === game.seat ? null : d.players[seat]);
  const lines = d.mistakes.map((m) => el("li", { text: t("analysisMistake", {
    play: actionPhrase(m.action, who(m.seat)), before: m.before, after: m.after, loss: m.loss }) }));
  box.append(lines.length ? el("ol", { "data-testid": prefix + "analysis-mistakes" }, ...lines)
    : el("p", { "data-testid": prefix + "analysis-clean", text: t("analysisClean") }));
  box.append(el("p", { class: "note", text: t("analysisNote") }));
  return box;
}

// ---------------------------------------------------------------- Deals: any finished deal again

function finishedDeals(info) { return info ? (info.score_earlier || 0) + (info.score ? info.score.length : 0) : 0; }

// GET /api/tables/{id}/deals/{n}: that deal's players, last view, explanation and tricks
async function openDeal(n) {
  const d = game.deals;
  Object.assign(d, { deal: n, data: null, error: null, analysis: null, loading: true });
  renderDeals();
  try {
    const r = await fetch(`/api/tables/${game.tableId}/deals/${n}`, withToken());
    const data = await r.json().catch(() => ({ error: r.statusText }));
    if (d.deal !== n) return;
    if (r.ok) d.data = data; else d.error = { message: data.error || r.statusText, rule: data.rule || null };
  } catch (e) {
    if (d.deal === n) d.error = { key: "dealFailed" };
  }
  d.loading = false;
  renderDeals();
}

function renderDeals() {
  const d = game.deals;
  const info = game.info;
  const total = d.total = finishedDeals(info);
  $("deals-list").replaceChildren(...Array.from({ length: total }, (_, k) => total - k).map((n) => el("li", {},
    el("button", { type: "button", "data-testid": `deal-${n}`, "aria-current": d.deal === n ? "true" : null,
      text: t("dealN", { n }), onclick: () => openDeal(n) }))));
  const box = $("deal-detail");
  if (d.deal === null) { box.replaceChildren(el("p", { class: "hint", text: total ? t("dealsPick") : t("dealsNone") })); return; }
  if (d.loading) { box.replaceChildren(el("p", { text: t("dealLoading") })); return; }
  if (d.error) {
    const e = d.error;
    box.replaceChildren(el("p", { class: "error", "data-testid": "deal-error", text: e.key ? t(e.key) : errorText(e.message, e.rule) }));
    return;
  }
  const data = d.data, v = data.view || {};
  const players = data.players || (info ? info.players : []);
  const who = (s) => players[s] || String(s);
  const kids = [el("h3", { "data-testid": "deal-heading", text: t("dealN", { n: data.deal }) + (v.terminal ? " – " + resultHeading(v) : "") })];
  if (Array.isArray(v.net)) {
    kids.push(el("table", { class: "score" }, el("tr", {}, el("th", { text: t("player") }), el("th", { text: t("net") })),
      ...players.map((p, i) => el("tr", {}, el("td", { text: p }), el("td", { class: "num", text: (v.net[i] > 0 ? "+" : "") + v.net[i] })))));
  }
  kids.push(el("h4", { text: t("explanationTitle") }),
    el("ul", { "data-testid": "deal-explanation", class: "explanation" }, ...(data.explanation || []).map((line) => el("li", { text: renderText(line) }))));
  kids.push(el("h4", { text: t("tricksTitle") }));
  const tricks = data.tricks || [];
  kids.push(tricks.length ? el("ol", { "data-testid": "deal-tricks", class: "deal-tricks" }, ...tricks.map((tr, k) => {
    const cards = el("span", { class: "cards small" }, ...tr.cards.map(([s, c]) => el("span", {
      class: "played" + (s === tr.winner ? " winner" : ""), "data-seat": String(s), "data-winner": s === tr.winner ? "true" : null },
    cardEl(c, { label: t("playedBy", { card: cardName(c), name: who(s) }) }), el("small", { text: who(s), "aria-hidden": "true" }))));
    return el("li", { "data-testid": `deal-trick-${k + 1}` }, cards, " ", el("span", { text: t("trickWinner", { name: who(tr.winner) }) }));
  })) : el("p", { class: "hint", text: t("analysisNoPlay") }));
  kids.push(el("button", { type: "button", class: "primary", "data-testid": "deal-replay-btn", onclick: () => startReplay(data.deal), text: t("replay") }), " ");
  kids.push(el("button", { type: "button", "data-testid": "deal-analysis-btn", onclick: async () => {
    const n = data.deal;
    d.analysis = { deal: n, loading: true }; renderDeals();
    const shown = (a) => { if (d.deal === n) { d.analysis = a; renderDeals(); } };
    shown(await fetchAnalysis(n, shown));
  }, text: t("analysis") }));
  if (d.analysis && d.analysis.deal === data.deal) {
    const a = d.analysis.data ? { ...d.analysis, data: { ...d.analysis.data, players: d.analysis.data.players || players } } : d.analysis;
    kids.push(analysisPanel(a, "deal-"));
  }
  box.replaceChildren(...kids);
}

function initDeals() {
  const dlg = $("deals-panel");
  $("deals-btn").addEventListener("click", () => {
    game.deals.open = true;
    if (game.deals.deal === null) {
      const n = finishedDeals(game.info);
      if (n) openDeal(n);
    }
    renderDeals();
    if (!dlg.open) dlg.showModal();
  });
  $("deals-close").addEventListener("click", () => dlg.close());
  dlg.addEventListener("close", () => { game.deals.open = false; $("deals-btn").focus(); });
}

// ---------------------------------------------------------------- hints at a practice table

// the why-line names the action itself ("♣K: takes this trick in 41 of 48 deals …")
function hintLine(h) { return t("hintIs", { why: renderText(h.why) }); }

function renderHint(info, v) {
  const onTurn = !!(v && !v.terminal && game.seat !== null && v.current_player === game.seat);
  $("hint-box").hidden = !(info.hints && onTurn);
  const h = game.hint;
  // a hint answers one state: it goes when the table moves on
  $("hint-text").textContent = h && h.event === game.lastEvent ? hintLine(h) : "";
  $("hint-btn").disabled = !!(h && h.event === game.lastEvent);
}

function initAdmin() {
  $("hint-btn").addEventListener("click", () => { game.error = null; send({ type: "hint" }); });
  $("end-table").addEventListener("click", async () => {
    if (!confirm(t("endConfirm"))) return;
    try { await api(`/api/tables/${game.tableId}/close`, { token: game.token }); $("admin-error").textContent = ""; }
    catch (e) { $("admin-error").textContent = apiError(e); }
  });
}

// The table's token goes to the server in a header (GET) or a body (POST), never in a URL: a
// URL is written to the logs of every proxy on the way (the server refuses a token there).
function withToken() { return { headers: { authorization: `Bearer ${game.token}` } }; }

// The record: fetched with the token in its header, then saved from a Blob under the server's
// file name (a plain link would have to carry the token in its URL).
async function downloadRecord(ev) {
  ev.preventDefault();
  const note = $("record-error");
  note.textContent = "";
  try {
    const r = await fetch(`/api/tables/${game.tableId}/record`, withToken());
    if (!r.ok) {
      const data = await r.json().catch(() => ({ error: r.statusText }));
      note.textContent = errorText(data.error || r.statusText, data.rule || null);
      return;
    }
    const name = (/filename="([^"]+)"/.exec(r.headers.get("content-disposition") || "") || [])[1]
      || `stammtisch-${game.tableId}.json`;
    const url = URL.createObjectURL(await r.blob());
    const a = el("a", { href: url, download: name, hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  } catch (e) {
    note.textContent = t("recordFailed");
  }
}

function showTable(id) {
  $("table").hidden = false;
  document.addEventListener("visibilitychange", () => { if (!document.hidden) showTurnInTitle(false); else if (page.render) page.render(); });
  game.tableId = id;
  game.token = decodeURIComponent(location.hash.slice(1));
  if (!game.token) { $("turn").textContent = t("badLink"); return; }
  initHand();
  initDeals();
  initAdmin();
  social.initTable();
  alive.initTable();
  $("record-link").addEventListener("click", downloadRecord);
  connect();
}

// The Rules panel (rules.js): how to play the rule set of this table, or the one chosen in the lobby.
$("rules-btn").addEventListener("click", () => {
  if (!window.stammtischRules) return;
  const table = game.msg ? game.msg.table : null;
  window.stammtischRules.openRulesPanel({
    ruleset: table ? table.ruleset : $("ruleset").value,
    lang,
    options: table ? table.options : collectOptions(),
  });
});

const textsLoaded = loadTexts();

async function main() {
  // the page is shown once its texts are in; should they never come, after a few seconds anyway
  const reveal = () => document.documentElement.classList.remove("loading");
  const late = setTimeout(reveal, 4000);
  // the lobby's controls answer from the start (a file may be chosen before the texts are in)
  initReplay();
  await textsLoaded;
  applyLang();
  clearTimeout(late);
  reveal();
  const m = location.pathname.match(/^\/t\/([A-Za-z0-9_-]+)$/);
  if (m) showTable(m[1]); else showLobby();
}
main();
