// Stammtisch web client: plain JavaScript, no build step.
// The server is the only authority: this page shows view(seat) and sends action strings.
"use strict";

const SUIT = { H: "♥", D: "♦", C: "♣", S: "♠" };

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
function rankShort(r) { return "AKQJT".includes(r) ? tc("rank_short." + r) : r; }
function cardShort(c) { return tc("card.short", { symbol: SUIT[c[0]], rank: rankShort(c[1]) }); }
function cardName(c) { return isCard(c) ? tc("card.name", { suit: suitName(c[0]), rank: tc("rank." + c[1]) }) : c; }
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

function applyLang() {
  document.documentElement.lang = lang;
  $("lang").textContent = lang === "de" ? "EN" : "DE";
  document.querySelectorAll("[data-i18n]").forEach((n) => { n.textContent = t(n.dataset.i18n); });
}
$("lang").addEventListener("click", () => {
  lang = lang === "de" ? "en" : "de";
  localStorage.setItem("stammtisch.lang", lang);
  applyLang();
  if (page.render) page.render();
});

// ---------------------------------------------------------------- cards and labels

function cardEl(c, attrs = {}) {
  const red = c[0] === "H" || c[0] === "D";
  return el("span", { class: "card" + (red ? " red" : "") + (attrs.class ? " " + attrs.class : ""),
    title: cardName(c), "data-card": c, ...Object.fromEntries(Object.entries(attrs).filter(([k]) => k !== "class")) },
    el("span", { class: "rank", text: rankShort(c[1]) }), el("span", { class: "suit", text: SUIT[c[0]] }));
}

// a button's label for a legal action
function actionLabel(a) {
  const [head, ...rest] = a.split(":");
  const arg = rest.join(":");
  if (!arg) return has("web.a_" + head) ? t("a_" + head) : a;
  if (head === "bid" || head === "contract") return arg === "pass" ? t("a_pass") : contractName(arg);
  if (head === "trump") return t("trumpIs", { symbol: SUIT[arg], suit: suitName(arg) });
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
  const sel = el("select", { "data-testid": `seat-bot-${i}`, class: "bot" },
    ...bots.map((b) => el("option", { value: b, text: botLabel(b), selected: b === bot })));
  return el("div", { class: "seat-row" }, el("span", { text: `${i + 1}.` }),
    el("input", { "data-testid": `seat-name-${i}`, class: "name", value: name, maxlength: 24, required: true,
      "aria-label": t("name") }), sel);
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
    old[i] ? old[i][1] : (i === 0 ? "" : "heuristic"))));
}

// keep: option values to show instead of the defaults (a language switch keeps what was chosen)
function renderOptions(keep = {}, seats = null) {
  const rs = currentRuleset();
  $("ruleset-title").textContent = rs ? rulesetTitle(rs.id, rs.title) : "";
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

function renderMine() {
  const list = JSON.parse(localStorage.getItem("stammtisch.tables") || "[]");
  $("mine").hidden = list.length === 0;
  $("mine-list").replaceChildren(...list.map((e) => el("li", {}, el("b", { text: e.ruleset + " " }),
    ...e.links.map((l) => el("a", { href: l.link, class: "chip", text: l.seat === null ? t("spectator") : l.name })))));
}

function renderLobby() {
  // the texts only: what was typed and chosen stays
  const names = [...$("seats").querySelectorAll(".seat-row")];
  renderOptions(collectOptions(), names.length || null);
  renderMine();
}

async function showLobby() {
  $("lobby").hidden = false;
  page.render = renderLobby;
  rulesets = await api("/api/rulesets");
  $("ruleset").replaceChildren(...rulesets.map((r) => el("option", { value: r.id, text: r.id })));
  $("ruleset").value = rulesets.some((r) => r.id === "tippen/grupp-1975") ? "tippen/grupp-1975" : rulesets[0].id;
  $("ruleset").addEventListener("change", () => renderOptions());
  renderOptions();
  renderMine();
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
    try {
      const res = await api("/api/tables", { ruleset: $("ruleset").value, options, seats, ...social.createFields(seats) });
      const links = res.seats.filter((s) => s.link && !s.open).map((s) => ({ name: s.name, link: s.link, seat: s.seat }));
      links.push({ name: t("spectator"), link: res.spectator.link, seat: null });
      rememberTable({ id: res.id, ruleset: res.ruleset, links });
      $("links").replaceChildren(...links.map((l) => {
        const abs = location.origin + l.link;
        const testid = l.seat === null ? "link-spectator" : `link-seat-${l.seat}`;
        const copy = el("button", { type: "button", class: "copy", "data-testid": `copy-${testid}`, text: t("copy"),
          onclick: async () => {
            try { await navigator.clipboard.writeText(abs); copy.textContent = t("copied"); } catch (e) { copy.textContent = t("copyFailed"); }
          } });
        return el("li", {}, el("b", { text: (l.seat === null ? t("spectator") : l.name) + ": " }),
          el("a", { href: l.link, target: "_blank", "data-testid": testid, text: abs }), " ", copy);
      }));
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
    } catch (e) { $("create-error").textContent = apiError(e); }
  });
}

// ---------------------------------------------------------------- the table

const game = { ws: null, tableId: null, token: null, seat: null, role: null, msg: null, info: null,
  selected: new Set(), lastEvent: -1, retry: 0, dead: false, error: null, timer: null,
  // a finished trick stays in the middle for a moment before it moves to "last trick"
  lastTrickKey: null, held: null, heldTimer: null };

const TRICK_HOLD_MS = 1200;

// Called with each new state: if a trick was just completed, hold it in the middle for a moment.
function noteTrick(v, first) {
  const key = v && v.last_trick ? JSON.stringify(v.last_trick) : null;
  if (key !== game.lastTrickKey && key !== null && !first) {
    const previous = game.lastTrickKey === null ? null : JSON.parse(game.lastTrickKey);
    game.held = { trick: v.last_trick, previous };
    clearTimeout(game.heldTimer);
    game.heldTimer = setTimeout(() => { game.held = null; render(); }, TRICK_HOLD_MS);
  } else if (key === null) {
    game.held = null;  // a new deal
  }
  game.lastTrickKey = key;
}

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${proto}//${location.host}/ws/${encodeURIComponent(game.tableId)}?token=${encodeURIComponent(game.token)}`);
  game.ws = ws;
  ws.onopen = () => { game.retry = 0; $("conn-status").textContent = ""; $("conn-status").dataset.state = "open"; };
  ws.onmessage = (ev) => {
    const m = JSON.parse(ev.data);
    if (m.type === "hello") { game.seat = m.seat; game.role = m.role; }
    else if (m.type === "state") {
      // a refusal (e.g. "stale": the click answered an older state) stays shown until the state moves on
      if (m.event !== game.lastEvent) { game.selected.clear(); game.error = null; }
      const first = game.msg === null;
      // the table's info comes only when it changed; else the last one holds, but for its event number
      if (m.table) game.info = m.table; else if (game.info) { game.info.events = m.event; m.table = game.info; }
      game.lastEvent = m.event; game.msg = m; document.body.dataset.event = String(m.event);
      noteTrick(m.view, first);
      render();
    } else if (m.type === "presence") { if (game.info) { game.info.seats = m.seats; render(); } }
    else if (m.type === "chat" || m.type === "rematch") social.onMessage(m);
    else if (m.type === "error") {
      // kept as message and code, so that a language switch shows it in the other language
      game.error = { message: m.message, rule: m.rule || null };
      if (m.rule === "token" || m.rule === "unknown table") { game.dead = true; game.error = { key: "badLink" }; }
      render();
    }
  };
  ws.onclose = (ev) => {
    $("conn-status").dataset.state = "closed";
    if (game.dead || ev.code === 4401 || ev.code === 4404) { game.dead = true; render(); return; }
    $("conn-status").textContent = t("reconnecting");
    const delay = Math.min(10000, 500 * 2 ** game.retry++);
    setTimeout(connect, delay);
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

// withNames: cards are [seat, card] pairs, shown with the player's name; winner: that seat's card is marked
function cardList(box, cards, withNames, winner = null) {
  box.replaceChildren(...cards.map((x) => {
    if (!withNames) return cardEl(x);
    const [seat, c] = x;
    const won = seat === winner;
    return el("span", { class: "played" + (won ? " winner" : ""), "data-seat": String(seat), "data-winner": won ? "true" : null },
      cardEl(c), el("small", { text: name(seat) }));
  }));
}

// A trick as it is shown: its cards, the winner's card marked, and who took it.
function showTrick(box, label, trick) {
  cardList(box, trick ? trick.cards : [], true, trick ? trick.winner : null);
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

function render() {
  page.render = render;
  const m = game.msg;
  $("error").textContent = shownError();
  if (game.dead && !m) { $("turn").textContent = t("badLink"); return; }
  if (!m) return;
  const info = m.table, v = m.view;
  germanSuits = info.options && info.options.suits === "german";
  $("t-title").textContent = rulesetTitle(info.ruleset, info.title);
  $("t-direction").textContent = info.clockwise === false ? t("counterClockwise") : t("clockwise");
  $("t-deal").textContent = String(info.deal_number);
  // Modern Tapp (and historic Tapp without pot=true) has no pot: don't show one
  const opts = (v && v.options) || info.options || {};
  const hasPot = info.family !== "tapp" || opts.pot === true || opts.pot === "true";
  $("t-pot").parentElement.hidden = !hasPot;
  // The pot as it stands now: the view's during a deal (antes paid, tricks paid out), else the
  // ledger's; the top bar and the score sheet's total show this same number.
  const potNow = v ? v.pot + (v.reserve || 0) : info.pot + info.reserve;
  $("t-pot").textContent = String(potNow);
  $("t-trump").textContent = v && v.trump ? t("trumpSuit", { symbol: SUIT[v.trump], suit: suitName(v.trump) }) : "–";
  $("t-contract-box").hidden = !(v && v.contract);
  $("t-contract").textContent = v && v.contract ? (v.declarer !== null && v.declarer !== undefined
    ? t("contractBy", { contract: contractName(v.contract), name: name(v.declarer) }) : contractName(v.contract)) : "";
  $("lobby-wait").hidden = info.started;
  $("start-ws").hidden = game.seat === null;
  $("start-ws").onclick = () => send({ type: "start" });
  $("record-link").href = `/api/tables/${info.id}/record?token=${encodeURIComponent(game.token)}`;

  // players
  $("players").replaceChildren(...info.players.map((p, i) => {
    const s = info.seats[i];
    const turn = v && !v.terminal && v.current_player === i;
    return el("div", { class: "player" + (turn ? " on-turn" : "") + (i === game.seat ? " me" : ""), "data-testid": `player-${i}`,
      "data-turn": turn ? "true" : "false" },
      el("div", {}, el("span", { class: "dot " + (s.connected ? "on" : "off"), "data-testid": `seat-status-${i}`,
        "data-connected": s.connected ? "true" : "false", title: s.connected ? t("connected") : t("offline") }),
        el("b", { text: p }), i === game.seat ? el("small", { text: " " + t("youSuffix") }) : null,
        s.bot ? el("span", { class: "tag", text: t("botTag") }) : null, v && v.dealer === i ? el("span", { class: "tag", text: t("dealer") }) : null),
      el("div", { class: "meta" },
        v ? el("span", { text: t("cardsOf", { n: v.hand_sizes[i] }) }) : null,
        v ? el("span", { text: t("tricksOf", { n: v.tricks_won[i] }) }) : null,
        el("span", { "data-testid": `balance-${i}`, text: t("balanceOf", { n: info.balances[i] }) }),
        v && v.declared && v.declared[i] ? el("span", { class: "tag", text: actionLabel(v.declared[i]) }) : null));
  }));

  // the upcard (Tippen); the tapp once taken is in the declarer's hand, not on the table
  cardList($("upcard"), v && v.upcard ? [v.upcard] : [], false);
  $("upcard").parentElement.hidden = info.family === "tapp";
  // trick and last trick: a just finished trick stays in the middle for a moment, its winner marked
  // (cut short when this player must follow a card already led to the next trick: he needs to see it)
  if (game.held && v && v.trick.length && v.current_player === game.seat && !v.terminal) game.held = null;
  const held = game.held;
  $("trick").dataset.finished = held ? "true" : "false";
  if (held) showTrick($("trick"), $("trick-winner"), held.trick);
  else { cardList($("trick"), v ? v.trick : [], true); $("trick-winner").textContent = ""; }
  showTrick($("last-trick"), $("last-trick-winner"), held ? held.previous : (v && v.last_trick) || null);
  $("open-hand-box").hidden = !(v && v.open_hand && v.open_hand.length && v.declarer !== game.seat);
  if (v && v.open_hand) cardList($("open-hand"), v.open_hand, false);

  // whose turn
  let turnText = "";
  if (!info.started) turnText = t("waiting");
  else if (v && v.terminal) turnText = t("dealOver");
  else if (v && v.current_player === game.seat) turnText = t("yourTurn");
  else if (v) turnText = t("turnOf", { name: name(v.current_player) });
  if (game.seat === null && info.started) turnText = t("spectatingSuffix", { turn: turnText });
  $("turn").textContent = turnText;
  $("turn").dataset.mine = v && !v.terminal && v.current_player === game.seat ? "true" : "false";

  // legal actions: cards to play, card selections (exchange, discard, give) and buttons
  const legal = v ? v.legal_actions : [];
  $("legal").textContent = JSON.stringify(legal);
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

  // cards that cannot be played now look like any card in a hand (not greyed out); the playable
  // ones are raised, outlined and clickable
  $("hand").replaceChildren(...hand.map((c) => {
    const legalCard = selecting ? selectable.has(c) : playable.has(c);
    const e = cardEl(c, { class: (legalCard ? "legal" : "") + (game.selected.has(c) ? " selected" : "") + (fromTapp.has(c) ? " from-tapp" : ""),
      "data-testid": `card-${c}`, "data-legal": legalCard ? "true" : "false", role: legalCard ? "button" : null,
      tabindex: legalCard ? "0" : null, "aria-pressed": legalCard ? (game.selected.has(c) ? "true" : "false") : null });
    if (fromTapp.has(c)) e.title = `${cardName(c)} · ${t("fromTapp")}`;
    if (legalCard) e.addEventListener("click", () => {
      if (selecting) { game.selected.has(c) ? game.selected.delete(c) : game.selected.add(c); render(); }
      else act("play:" + c);
    });
    if (legalCard) e.addEventListener("keydown", (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); e.click(); } });
    return e;
  }));

  const buttons = [];
  const verb = (h) => (has("web.c_" + h) ? t("c_" + h) : h);
  for (const h of selectHeads) {
    const sel = [...game.selected].sort().join(",");
    const match = groups[h].find((a) => argCards(a).slice().sort().join(",") === sel);
    const n = game.selected.size;
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
  for (const [h, list] of Object.entries(groups)) {
    if (selectHeads.includes(h)) continue;
    for (const a of list) {
      if (a.startsWith("play:")) continue;  // cards are played by clicking them in the hand
      const cs = argCards(a);
      const content = cs && cs.length === 1 ? [el("span", { text: verb(h) + " " }), cardEl(cs[0], { class: "mini" })] : [actionLabel(a)];
      buttons.push(el("button", { type: "button", "data-testid": `action-${a}`, "data-action": a, onclick: () => act(a) }, ...content));
    }
  }
  $("actions").replaceChildren(...buttons);

  // result of the deal, next deal
  const res = $("result");
  if (v && v.terminal) {
    res.hidden = false;
    const rows = info.players.map((p, i) => el("tr", {}, el("td", { text: p }),
      el("td", { class: "num", "data-testid": `net-${i}`, text: (v.net[i] > 0 ? "+" : "") + v.net[i] })));
    const what = v.outcome ? (has("outcome." + v.outcome) ? tc("outcome." + v.outcome) : v.outcome) : v.contract ? contractName(v.contract) : "";
    const kids = [el("h3", { text: what ? t("dealOverWith", { what }) : t("dealOver") }),
      el("table", {}, el("tr", {}, el("th", { text: "" }), el("th", { text: t("net") })), ...rows)];
    const why = info.explanation;  // every payment and its reason, as catalogue messages
    if (why) kids.push(el("ul", { "data-testid": "explanation", class: "explanation" }, ...why.map((line) => el("li", { text: renderText(line) }))));
    if (game.seat !== null) kids.push(el("button", { type: "button", class: "primary", "data-testid": "next-deal", onclick: () => send({ type: "next" }), text: t("nextDeal") }));
    const nd = el("small", { "data-testid": "next-deal-countdown" });
    kids.push(nd);
    kids.push(el("button", { type: "button", "data-testid": "analysis-btn", onclick: () => loadAnalysis(info.deal_number), text: t("analysis") }));
    const a = game.analysis;
    if (a && a.deal === info.deal_number) kids.push(analysisPanel(a));
    res.replaceChildren(...kids);
    clearInterval(game.timer);
    const tick = () => {
      if (!info.next_deal_at) { nd.textContent = ""; return; }
      nd.textContent = " " + t("nextIn", { s: Math.max(0, Math.round(info.next_deal_at - Date.now() / 1000)) });
    };
    tick(); game.timer = setInterval(tick, 1000);
  } else { res.hidden = true; clearInterval(game.timer); }

  // log: every action in words, "you" for one's own
  const log = v ? v.log : [];
  $("log").replaceChildren(...log.map(([s, a]) => el("li", { text: actionPhrase(a, s === game.seat ? null : name(s)) })));

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
  $("score").replaceChildren(el("thead", {}, head), el("tbody", {}, ...earlier, ...rows, total));
  const live = hasPot && v && !v.terminal && potNow !== info.pot + info.reserve;
  $("score-note").textContent = live ? t("potNow") : "";
  social.renderTable(info, v);
}

// ---------------------------------------------------------------- analysis of a finished deal

// "Where did I lose points?": the server solves the finished deal with all cards open
// (GET /api/tables/{id}/analysis/{deal}); the answer is kept until the next deal.
async function loadAnalysis(deal) {
  game.analysis = { deal, loading: true };
  render();
  try {
    const r = await fetch(`/api/tables/${game.tableId}/analysis/${deal}?token=${encodeURIComponent(game.token)}`);
    const data = await r.json().catch(() => ({ error: r.statusText }));
    game.analysis = r.ok ? { deal, data } : { deal, error: errorText(data.error || r.statusText, data.rule || null) };
  } catch (e) {
    game.analysis = { deal, error: t("analysisFailed") };
  }
  render();
}

function analysisValue(value, players) {
  if (value !== null && typeof value === "object") {
    return Object.entries(value).map(([seat, x]) => `${players[Number(seat)]} ${x}`).join(", ");
  }
  return String(value);
}

function analysisPanel(a) {
  const box = el("div", { class: "analysis", "data-testid": "analysis" });
  if (a.loading) { box.append(el("p", { text: t("analysisLoading") })); return box; }
  if (a.error) { box.append(el("p", { class: "error", text: a.error })); return box; }
  const d = a.data;
  if (!d.played) { box.append(el("p", { text: t("analysisNoPlay") })); return box; }
  const measure = t("measure." + d.measure);
  box.append(el("p", { "data-testid": "analysis-start", text: t("analysisStart", { measure, value: analysisValue(d.start_value, d.players) }) }));
  const who = (seat) => (seat === game.seat ? null : d.players[seat]);
  const lines = d.mistakes.map((m) => el("li", { text: t("analysisMistake", {
    play: actionPhrase(m.action, who(m.seat)), before: m.before, after: m.after, loss: m.loss }) }));
  box.append(lines.length ? el("ol", { "data-testid": "analysis-mistakes" }, ...lines)
    : el("p", { "data-testid": "analysis-clean", text: t("analysisClean") }));
  box.append(el("p", { class: "note", text: t("analysisNote") }));
  return box;
}

function showTable(id) {
  $("table").hidden = false;
  game.tableId = id;
  game.token = decodeURIComponent(location.hash.slice(1));
  if (!game.token) { $("turn").textContent = t("badLink"); return; }
  social.initTable();
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

async function main() {
  await loadTexts();
  applyLang();
  const m = location.pathname.match(/^\/t\/([A-Za-z0-9_-]+)$/);
  if (m) showTable(m[1]); else showLobby();
}
main();
