// Stammtisch web client: plain JavaScript, no build step.
// The server is the only authority: this page shows view(seat) and sends action strings.
"use strict";

const SUIT = { H: "♥", D: "♦", C: "♣", S: "♠" };
const SUIT_DE = { H: "Herz", D: "Karo", C: "Kreuz", S: "Pik" };
const SUIT_DE_GERMAN = { H: "Herz", D: "Schellen", C: "Eichel", S: "Laub" };
const SUIT_EN = { H: "hearts", D: "diamonds", C: "clubs", S: "spades" };

const T = {
  en: {
    brand: "Stammtisch", newTable: "New table", ruleset: "Rule set", options: "Options",
    rules: "Rules", seats: "Seats", addSeat: "+ seat", removeSeat: "− seat", create: "Create table",
    invite: "Invite links", inviteHint: "Send each player his own link. The links are shown only now (they are kept in this browser).",
    start: "Start the game", myTables: "My tables", deal: "Deal", pot: "Pot", trump: "Trump",
    contract: "Contract", upcard: "Upcard / tapp", trick: "Trick", lastTrick: "Last trick",
    openHand: "Open hand", notStarted: "The table has not started yet.", log: "Log",
    scoreSheet: "Score sheet", record: "Download the game record (finished deals)",
    human: "human", bot_random: "bot: random", bot_heuristic: "bot: heuristic",
    name: "Name", seat: "Seat", spectator: "spectator", you: "you", yourTurn: "Your turn",
    turnOf: "{name} to act", waiting: "Waiting…", dealOver: "Deal over", nextDeal: "Next deal",
    nextIn: "next deal in {s} s", connected: "online", offline: "offline", reconnecting: "connection lost – reconnecting…", clockwise: "↻ clockwise", counterClockwise: "↺ counter-clockwise", notConnected: "not connected – your action was not sent; try again when the connection is back",
    balance: "balance", tricks: "tricks", cards: "cards", dealer: "dealer", net: "Net",
    outcome: "Outcome", confirm: "Confirm", selected: "selected", none: "none",
    keep: "keep my hand", openSeat: "open", badLink: "This link is not valid.",
    phase: "Phase", spectating: "You are watching.", total: "Total",
    a_tap: "Tap (I play)", a_pass: "Pass", a_shove: "Shove", a_deal: "Deal", a_sniff: "Sniff",
    a_knock: "Knock", a_look: "Look at my hand", a_turn: "Turn up", a_drop: "Drop out", a_stay: "Stay", a_rob: "Rob",
    "a_no-rob": "Don't rob", a_hold: "Hold", a_tout: "Tout!", "a_no-tout": "No tout",
    a_play: "I play", a_weg: "Pass (weg)", c_exchange: "Exchange", c_discard: "Discard",
    c_give: "Give", c_play: "Play", call: "Call", trumpIs: "Trump",
  },
  de: {
    brand: "Stammtisch", newTable: "Neuer Tisch", ruleset: "Regelwerk", options: "Optionen",
    rules: "Regeln", seats: "Plätze", addSeat: "+ Platz", removeSeat: "− Platz", create: "Tisch anlegen",
    invite: "Einladungslinks", inviteHint: "Jeder Spieler bekommt seinen eigenen Link. Die Links werden nur jetzt gezeigt (dieser Browser merkt sie sich).",
    start: "Spiel beginnen", myTables: "Meine Tische", deal: "Spiel", pot: "Pott", trump: "Trumpf",
    contract: "Spiel", upcard: "Trumpfkarte / Tapp", trick: "Stich", lastTrick: "Letzter Stich",
    openHand: "Offene Hand", notStarted: "Der Tisch hat noch nicht begonnen.", log: "Verlauf",
    scoreSheet: "Abrechnung", record: "Spielprotokoll herunterladen (fertige Spiele)",
    human: "Mensch", bot_random: "Bot: Zufall", bot_heuristic: "Bot: Heuristik",
    name: "Name", seat: "Platz", spectator: "Zuschauer", you: "du", yourTurn: "Du bist dran",
    turnOf: "{name} ist dran", waiting: "Warten…", dealOver: "Spiel vorbei", nextDeal: "Nächstes Spiel",
    nextIn: "nächstes Spiel in {s} s", connected: "da", offline: "weg", reconnecting: "Verbindung verloren – verbinde neu…", clockwise: "↻ im Uhrzeigersinn", counterClockwise: "↺ gegen den Uhrzeigersinn", notConnected: "keine Verbindung – der Zug wurde nicht gesendet; bitte wiederholen, sobald die Verbindung steht",
    balance: "Stand", tricks: "Stiche", cards: "Karten", dealer: "Geber", net: "Gewinn",
    outcome: "Ausgang", confirm: "Bestätigen", selected: "gewählt", none: "keine",
    keep: "Hand behalten", openSeat: "öffnen", badLink: "Dieser Link ist ungültig.",
    phase: "Phase", spectating: "Du schaust zu.", total: "Summe",
    a_tap: "Ich tippe", a_pass: "Passe", a_shove: "Schieben", a_deal: "Geben", a_sniff: "Schnuppern",
    a_knock: "Klopfen", a_look: "Karten ansehen", a_turn: "Aufdecken", a_drop: "Aussteigen", a_stay: "Bleiben", a_rob: "Rauben",
    "a_no-rob": "Nicht rauben", a_hold: "Halten", a_tout: "Tout!", "a_no-tout": "Kein Tout",
    a_play: "Ich spiele", a_weg: "Weg", c_exchange: "Tauschen", c_discard: "Ablegen",
    c_give: "Geben", c_play: "Spielen", call: "Rufe", trumpIs: "Trumpf",
  },
};
const CONTRACTS = {
  frage: ["Frage", "Frage"], herzsolo: ["Heart solo", "Herzsolo"], bettel: ["Bettel", "Bettel"],
  herzrufer: ["Heart Rufer", "Herzrufer"], "bettel-ouvert": ["Bettel ouvert", "Bettel ouvert"],
  herzdurch: ["Heart solo tout", "Herzdurch"], solo: ["Solo", "Solo"], rufer: ["Rufer", "Rufer"],
  durch: ["Solo tout", "Durch"], ramsch: ["Ramsch", "Ramsch"],
};

// --- social (web8a) ---
// Texts of the turn timer, the lobby's open tables, rematch and chat (social.js).
Object.assign(T.en, {
  turnTimer: "Turn timer in seconds (0 = off): then a bot plays for a player who does not act",
  listTable: "List this table in the lobby (seats marked “open seat” are for anyone)",
  bot_open: "open seat (lobby)", openSeatLink: "free seat for a player from the lobby",
  openTables: "Open tables", noOpenTables: "No open tables right now.",
  seatsTakenFree: "{taken} seated, {free} free", takeSeat: "Take a seat",
  yourName: "Your name (at a table that has not started yet)",
  playedByBot: "played by bot", openTag: "free seat",
  awayYou: "A bot is playing for you because your time ran out.", imBack: "I'm back",
  turnLeft: "{s} s left to act", timerShort: "turn timer {s} s", rematch: "Rematch (same seats, new table)",
  chat: "Chat", chatSend: "Send", chatPlaceholder: "Say something…",
});
Object.assign(T.de, {
  turnTimer: "Zugzeit in Sekunden (0 = aus): danach spielt ein Bot für einen Spieler, der nicht zieht",
  listTable: "Tisch in der Lobby zeigen (als „offener Platz“ markierte Plätze sind für alle)",
  bot_open: "offener Platz (Lobby)", openSeatLink: "freier Platz für einen Spieler aus der Lobby",
  openTables: "Offene Tische", noOpenTables: "Gerade keine offenen Tische.",
  seatsTakenFree: "{taken} besetzt, {free} frei", takeSeat: "Platz nehmen",
  yourName: "Dein Name (an einem Tisch, der noch nicht begonnen hat)",
  playedByBot: "Bot spielt", openTag: "freier Platz",
  awayYou: "Ein Bot spielt für dich, weil deine Zeit abgelaufen ist.", imBack: "Ich bin zurück",
  turnLeft: "noch {s} s für den Zug", timerShort: "Zugzeit {s} s", rematch: "Revanche (gleiche Plätze, neuer Tisch)",
  chat: "Tischgespräch", chatSend: "Senden", chatPlaceholder: "Schreib etwas…",
});
// --- end social (web8a) ---

let lang = localStorage.getItem("stammtisch.lang") || ((navigator.language || "").startsWith("de") ? "de" : "en");
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
const t = (key, vars = {}) => {
  let s = (T[lang] && T[lang][key]) || T.en[key] || key;
  for (const [k, v] of Object.entries(vars)) s = s.replace("{" + k + "}", v);
  return s;
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

let germanSuits = false;
function suitName(s) { return lang === "de" ? (germanSuits ? SUIT_DE_GERMAN : SUIT_DE)[s] : SUIT_EN[s]; }
function rankText(r) { return r === "T" ? "10" : r; }
function cardTitle(c) { return `${suitName(c[0])} ${rankText(c[1])}`; }
function cardEl(c, attrs = {}) {
  const red = c[0] === "H" || c[0] === "D";
  return el("span", { class: "card" + (red ? " red" : "") + (attrs.class ? " " + attrs.class : ""),
    title: cardTitle(c), "data-card": c, ...Object.fromEntries(Object.entries(attrs).filter(([k]) => k !== "class")) },
    el("span", { class: "rank", text: rankText(c[1]) }), el("span", { class: "suit", text: SUIT[c[0]] }));
}
const isCard = (s) => /^[HDCS][AKQJT2-9]$/.test(s);

function contractLabel(c) {
  if (!c) return "";
  const plus = c.endsWith("+tout") ? " + Tout" : "";
  c = c.replace("+tout", "");
  const [name, suit] = c.split(":");
  const pair = CONTRACTS[name];
  let s = pair ? pair[lang === "de" ? 1 : 0] : name;
  if (suit) s += " " + SUIT[suit];
  return s + plus;
}

function actionLabel(a) {
  const [head, ...rest] = a.split(":");
  const arg = rest.join(":");
  if (!arg) return t("a_" + head) !== "a_" + head ? t("a_" + head) : a;
  if (head === "bid" || head === "contract") return contractLabel(arg);
  if (head === "trump") return `${t("trumpIs")} ${SUIT[arg]} ${suitName(arg)}`;
  if (head === "call") return `${t("call")} ${SUIT[arg[0]]}${rankText(arg[1])}`;
  if (isCard(arg)) return `${t("c_" + head)} ${SUIT[arg[0]]}${rankText(arg[1])}`;
  return a;
}

// ---------------------------------------------------------------- lobby

const page = { render: null };
let rulesets = [];

async function api(path, body) {
  const r = await fetch(path, body === undefined ? {} : {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const data = await r.json().catch(() => ({ error: r.statusText }));
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

function currentBots() {
  const rs = rulesets.find((r) => r.id === $("ruleset").value);
  return social.seatChoices(["", ...(rs ? rs.bots : [])]);
}

function seatRow(i, name, bot) {
  const bots = currentBots();
  if (!bots.includes(bot)) bot = bots[bots.length - 1];
  const sel = el("select", { "data-testid": `seat-bot-${i}`, class: "bot" },
    ...bots.map((b) => el("option", { value: b, text: b ? t("bot_" + b) : t("human"), selected: b === bot })));
  return el("div", { class: "seat-row" }, el("span", { text: `${i + 1}.` }),
    el("input", { "data-testid": `seat-name-${i}`, class: "name", value: name, maxlength: 24, required: true,
      "aria-label": t("name") }), sel);
}

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
  const defaults = lang === "de" ? ["Anna", "Bernd", "Carla", "Dieter", "Erika", "Fritz", "Grete", "Hans", "Ilse", "Jörg"]
    : ["Anna", "Bernd", "Carla", "Dieter", "Erika", "Fritz", "Grete", "Hans", "Ilse", "Jörg"];
  box.replaceChildren(...Array.from({ length: n }, (_, i) => seatRow(i, old[i] ? old[i][0] : defaults[i],
    old[i] ? old[i][1] : (i === 0 ? "" : "heuristic"))));
}

function renderOptions() {
  const rs = rulesets.find((r) => r.id === $("ruleset").value);
  $("ruleset-title").textContent = rs ? rs.title : "";
  const box = $("options");
  box.replaceChildren();
  if (!rs) return;
  for (const o of rs.options) {
    if (o.name === "players") continue;
    let input;
    const tid = `option-${o.name}`;
    if (o.kind === "bool") input = el("input", { type: "checkbox", "data-testid": tid, checked: !!o.default });
    else if (o.kind === "choice") input = el("select", { "data-testid": tid }, ...o.choices.map((c) => el("option", { value: c, text: c, selected: c === o.default })));
    else input = el("input", { type: "text", inputmode: "numeric", "data-testid": tid, value: o.default === null ? "none" : String(o.default), size: 5 });
    input.dataset.option = o.name;
    input.dataset.default = JSON.stringify(o.default);
    box.append(el("label", { class: "option", title: o.help }, el("span", { text: o.name }), input, el("small", { text: o.help })));
  }
  renderSeats(rs.players);
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
    ...e.links.map((l) => el("a", { href: l.link, class: "chip", text: l.name })))));
}

async function showLobby() {
  $("lobby").hidden = false;
  rulesets = await api("/api/rulesets");
  $("ruleset").replaceChildren(...rulesets.map((r) => el("option", { value: r.id, text: r.id })));
  $("ruleset").value = rulesets.some((r) => r.id === "tippen/grupp-1975") ? "tippen/grupp-1975" : rulesets[0].id;
  $("ruleset").addEventListener("change", renderOptions);
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
    if (seats.length !== (rulesets.find((r) => r.id === $("ruleset").value) || {}).players) options.players = String(seats.length);
    try {
      const res = await api("/api/tables", { ruleset: $("ruleset").value, options, seats, ...social.createFields(seats) });
      const links = res.seats.filter((s) => s.link && !s.open).map((s) => ({ name: s.name, link: s.link, seat: s.seat }));
      links.push({ name: t("spectator"), link: res.spectator.link, seat: null });
      rememberTable({ id: res.id, ruleset: res.ruleset, links });
      $("links").replaceChildren(...links.map((l) => {
        const abs = location.origin + l.link;
        return el("li", {}, el("b", { text: l.name + ": " }),
          el("a", { href: l.link, target: "_blank", "data-testid": l.seat === null ? "link-spectator" : `link-seat-${l.seat}`, text: abs }));
      }));
      $("created").hidden = false;
      $("create-form").hidden = true;
      $("start").onclick = async () => {
        try { await api(`/api/tables/${res.id}/start`, { token: res.admin_token }); $("start").disabled = true; $("start").textContent = "✓"; }
        catch (e) { $("create-error").textContent = e.message; }
      };
      renderMine();
    } catch (e) { $("create-error").textContent = e.message; }
  });
}

// ---------------------------------------------------------------- the table

const game = { ws: null, tableId: null, token: null, seat: null, role: null, msg: null, info: null,
  selected: new Set(), lastEvent: -1, retry: 0, dead: false, error: "", timer: null };

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
      if (m.event !== game.lastEvent) { game.selected.clear(); game.error = ""; }
      game.lastEvent = m.event; game.msg = m; document.body.dataset.event = String(m.event); game.info = m.table;
      render();
    } else if (m.type === "presence") { if (game.info) { game.info.seats = m.seats; render(); } }
    else if (m.type === "chat" || m.type === "rematch") social.onMessage(m);
    else if (m.type === "error") {
      game.error = m.message + (m.rule ? ` (${m.rule})` : "");
      if (m.rule === "token" || m.rule === "unknown table") { game.dead = true; game.error = t("badLink"); }
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

function send(obj) {
  if (game.ws && game.ws.readyState === 1) { game.ws.send(JSON.stringify(obj)); return; }
  // never drop a click silently: say why nothing happened
  game.error = t("notConnected");
  render();
}
// every action names the state it answers: a double click or a second tab cannot act on a newer one
function act(a) { game.error = ""; send({ type: "action", action: a, event: game.lastEvent }); }

function name(seat) { return game.info ? game.info.players[seat] : String(seat); }

function cardList(box, cards, withNames) {
  box.replaceChildren(...cards.map((x) => {
    if (!withNames) return cardEl(x);
    const [seat, c] = x;
    return el("span", { class: "played" }, cardEl(c), el("small", { text: name(seat) }));
  }));
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
  $("error").textContent = game.error;
  if (game.dead && !m) { $("turn").textContent = t("badLink"); return; }
  if (!m) return;
  const info = m.table, v = m.view;
  germanSuits = info.options && info.options.suits === "german";
  $("t-title").textContent = info.title;
  $("t-direction").textContent = info.clockwise === false ? t("counterClockwise") : t("clockwise");
  $("t-deal").textContent = String(info.deal_number);
  // Modern Tapp (and historic Tapp without pot=true) has no pot: don't show one
  const opts = (v && v.options) || info.options || {};
  const hasPot = info.family !== "tapp" || opts.pot === true || opts.pot === "true";
  $("t-pot").parentElement.hidden = !hasPot;
  $("t-pot").textContent = String(v ? v.pot + (v.reserve || 0) : info.pot + info.reserve);
  $("t-trump").textContent = v && v.trump ? `${SUIT[v.trump]} ${suitName(v.trump)}` : "–";
  $("t-contract-box").hidden = !(v && v.contract);
  $("t-contract").textContent = v && v.contract ? contractLabel(v.contract) + (v.declarer !== null && v.declarer !== undefined ? ` (${name(v.declarer)})` : "") : "";
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
        el("b", { text: p }), i === game.seat ? el("small", { text: ` (${t("you")})` }) : null,
        s.bot ? el("span", { class: "tag", text: "bot" }) : null, v && v.dealer === i ? el("span", { class: "tag", text: t("dealer") }) : null),
      el("div", { class: "meta" },
        v ? el("span", { text: `${t("cards")} ${v.hand_sizes[i]}` }) : null,
        v ? el("span", { text: `${t("tricks")} ${v.tricks_won[i]}` }) : null,
        el("span", { "data-testid": `balance-${i}`, text: `${t("balance")} ${info.balances[i]}` }),
        v && v.declared && v.declared[i] ? el("span", { class: "tag", text: actionLabel(v.declared[i]) }) : null));
  }));

  // upcard / tapp, trick, last trick, open hand
  const up = [];
  if (v && v.upcard) up.push(v.upcard);
  if (v && Array.isArray(v.tapp)) up.push(...v.tapp);
  cardList($("upcard"), up, false);
  cardList($("trick"), v ? v.trick : [], true);
  cardList($("last-trick"), v && v.last_trick ? v.last_trick.cards : [], true);
  $("open-hand-box").hidden = !(v && v.open_hand && v.open_hand.length && v.declarer !== game.seat);
  if (v && v.open_hand) cardList($("open-hand"), v.open_hand, false);

  // whose turn
  let turnText = "";
  if (!info.started) turnText = t("waiting");
  else if (v && v.terminal) turnText = t("dealOver");
  else if (v && v.current_player === game.seat) turnText = t("yourTurn");
  else if (v) turnText = t("turnOf", { name: name(v.current_player) });
  if (game.seat === null && info.started) turnText += " · " + t("spectating");
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
  const selectHeads = Object.keys(groups).filter((h) => h !== "play" && groups[h].every((a) => {
    const cs = argCards(a); return cs !== null && cs.every((c) => inHand.has(c));
  }));
  const selectable = new Set();
  for (const h of selectHeads) for (const a of groups[h]) for (const c of argCards(a)) selectable.add(c);
  const selecting = selectHeads.length > 0;

  $("hand").replaceChildren(...hand.map((c) => {
    const legalCard = selecting ? selectable.has(c) : playable.has(c);
    const e = cardEl(c, { class: (legalCard ? "legal" : "") + (game.selected.has(c) ? " selected" : ""),
      "data-testid": `card-${c}`, "data-legal": legalCard ? "true" : "false", role: "button",
      "aria-pressed": game.selected.has(c) ? "true" : "false" });
    if (legalCard) e.addEventListener("click", () => {
      if (selecting) { game.selected.has(c) ? game.selected.delete(c) : game.selected.add(c); render(); }
      else act("play:" + c);
    });
    return e;
  }));

  const buttons = [];
  for (const h of selectHeads) {
    const sel = [...game.selected].sort().join(",");
    const match = groups[h].find((a) => argCards(a).slice().sort().join(",") === sel);
    const n = game.selected.size;
    const label = `${t("c_" + h) !== "c_" + h ? t("c_" + h) : h}: ${n ? [...game.selected].map((c) => SUIT[c[0]] + rankText(c[1])).join(" ") : (h === "exchange" ? t("keep") : t("none"))}`;
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
      const content = cs && cs.length === 1 ? [el("span", { text: (h === "call" ? t("call") : h) + " " }), cardEl(cs[0], { class: "mini" })] : [actionLabel(a)];
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
    const kids = [el("h3", { text: t("dealOver") + (v.outcome ? ` – ${v.outcome}` : v.contract ? ` – ${contractLabel(v.contract)}` : "") }),
      el("table", {}, el("tr", {}, el("th", { text: "" }), el("th", { text: t("net") })), ...rows)];
    const why = info.explanation && info.explanation[lang];  // every payment and its reason
    if (why) kids.push(el("ul", { "data-testid": "explanation", class: "explanation" }, ...why.map((line) => el("li", { text: line }))));
    if (game.seat !== null) kids.push(el("button", { type: "button", class: "primary", "data-testid": "next-deal", onclick: () => send({ type: "next" }), text: t("nextDeal") }));
    const nd = el("small", { "data-testid": "next-deal-countdown" });
    kids.push(nd);
    res.replaceChildren(...kids);
    clearInterval(game.timer);
    const tick = () => {
      if (!info.next_deal_at) { nd.textContent = ""; return; }
      nd.textContent = " " + t("nextIn", { s: Math.max(0, Math.round(info.next_deal_at - Date.now() / 1000)) });
    };
    tick(); game.timer = setInterval(tick, 1000);
  } else { res.hidden = true; clearInterval(game.timer); }

  // log
  const log = v ? v.log : [];
  $("log").replaceChildren(...log.map(([s, a]) => el("li", { text: `${name(s)}: ${actionLabel(a)}` })));

  // score sheet
  const potCell = (text, tag = "td") => (hasPot ? [el(tag, { class: tag === "td" ? "num" : "", text })] : []);
  const head = el("tr", {}, el("th", { text: "#" }), ...info.players.map((p) => el("th", { text: p })), ...potCell(t("pot"), "th"));
  const rows = info.score.map((e) => el("tr", { "data-testid": `score-row-${e.deal}` }, el("td", { text: String(e.deal) }),
    ...e.net.map((x) => el("td", { class: "num", text: (x > 0 ? "+" : "") + x })), ...potCell(String(e.pot))));
  const total = el("tr", { class: "total" }, el("td", { text: t("total") }), ...info.balances.map((b) => el("td", { class: "num", text: String(b) })),
    ...potCell(String(info.pot + info.reserve)));
  $("score").replaceChildren(el("thead", {}, head), el("tbody", {}, ...rows, total));
  social.renderTable(info, v);
}

function showTable(id) {
  $("table").hidden = false;
  game.tableId = id;
  game.token = decodeURIComponent(location.hash.slice(1));
  if (!game.token) { $("turn").textContent = t("badLink"); return; }
  social.initTable();
  connect();
}

applyLang();
const m = location.pathname.match(/^\/t\/([A-Za-z0-9_-]+)$/);
if (m) showTable(m[1]); else showLobby();

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
