// Stammtisch web client, the social part: turn timer, lobby list of open tables,
// rematch, table chat. Loaded before app.js; its functions run only after app.js has set up
// $, el, t, game, send, api, rulesets and rememberTable, and are called from there.
// Every text a player typed is shown with textContent (el's "text"), never as HTML.
"use strict";

const social = {
  chat: [],        // the table's chat lines, oldest first
  ticker: null,    // the turn timer's countdown
  rematchTicker: null,  // the countdown of an open rematch question
  lobbyTimer: null,
  seatTimer: null,  // the invite links' look at their open seats
  openTables: null,  // the lobby list's last answer
  LISTED_TIMER: 60,  // seconds: the turn timer a listed table gets by default

  // ------------------------------------------------------------ lobby

  initLobby() {
    $("listed").addEventListener("change", () => {
      // strangers may walk away: a listed table gets a turn timer unless one was chosen
      const timer = $("turn-seconds");
      if ($("listed").checked && timer.value === "0") timer.value = String(social.LISTED_TIMER);
      else if (!$("listed").checked && timer.value === String(social.LISTED_TIMER)) timer.value = "0";
      renderSeats($("seats").children.length);
    });
    $("guest-name").value = localStorage.getItem("stammtisch.name") || "";
    social.refreshOpenTables();
    clearInterval(social.lobbyTimer);
    social.lobbyTimer = setInterval(social.refreshOpenTables, 10000);
  },

  // the seat rows offer "open seat" besides human and bots (a person from the lobby)
  seatChoices(bots) { return $("listed") && $("listed").checked ? [...bots, "open"] : bots; },

  // the social fields of a new table; an "open" seat is a human seat a stranger may take
  createFields(seats) {
    for (const s of seats) if (s.bot === "open") { s.bot = null; s.open = true; }
    const secs = Number($("turn-seconds").value || 0);
    return { turn_seconds: Number.isFinite(secs) ? Math.round(secs) : 0, listed: $("listed").checked };
  },

  async refreshOpenTables() {
    if ($("lobby").hidden) return;
    try { social.openTables = (await api("/api/tables")).tables; } catch (e) { return; }
    social.renderOpenTables();
  },

  // drawn from the last answer, so that a switch of language redraws the list at once
  renderOpenTables() {
    const tables = social.openTables;
    if (!tables) return;
    $("open-none").hidden = tables.length > 0;
    $("open-list").replaceChildren(...tables.map((x) => el("li", { "data-testid": `open-table-${x.id}` },
      el("b", { text: rulesetTitle(x.ruleset, x.title) + " " }),
      el("span", { class: "muted", text: `${x.seats.map((s) => (s.free ? `(${t("openTag")})` : s.name)).join(", ")} · ` +
        t("seatsTakenFree", { taken: x.taken, free: x.free }) +
        (x.turn_seconds ? " · " + t("timerShort", { s: x.turn_seconds }) : "") +
        (x.hints ? " · " + t("hintsShort") : "") + " " }),
      el("button", { type: "button", class: "primary", "data-testid": `take-seat-${x.id}`, text: t("takeSeat"),
        onclick: () => social.takeSeat(x) }))));
  },

  // the invite links just made: a seat left open for the lobby shows who took it, as soon as
  // somebody does (the table's public info, asked again every few seconds until every such
  // seat is taken or the page moves on)
  watchOpenSeats(id, seats) {
    clearTimeout(social.seatTimer);
    let waiting = seats.slice();
    const look = async () => {
      if (!waiting.length || $("created").hidden) return;
      try {
        const info = await api(`/api/tables/${id}`);
        waiting = waiting.filter((i) => {
          const s = info.seats[i];
          if (!s || s.open) return true;
          const row = document.querySelector(`[data-testid=lobby-seat-${i}]`);
          if (row) {
            row.dataset.taken = "true";
            row.replaceChildren(el("b", { text: s.name + ": " }),
              el("span", { "data-name": s.name, text: t("lobbySeatTaken", { name: s.name }) }));
          }
          return false;
        });
      } catch (e) { if (e.rule === "unknown table" || e.rule === "archived") return; }
      social.seatTimer = setTimeout(look, 2000);
    };
    social.seatTimer = setTimeout(look, 2000);
  },

  async takeSeat(x) {
    $("open-error").textContent = "";
    try {
      const name = $("guest-name").value.trim();
      localStorage.setItem("stammtisch.name", name);
      // a table that has started keeps the names of its deals: the seat's name stays
      const res = await api(`/api/tables/${x.id}/take`, { seat: null, name: name && !x.started ? name : null });
      rememberTable({ id: x.id, ruleset: x.ruleset, links: [{ name: res.name, link: res.link, seat: res.seat }] });
      location.assign(res.link);
    } catch (e) { $("open-error").textContent = apiError(e); social.refreshOpenTables(); }
  },

  // ------------------------------------------------------------ the table

  onMessage(m) {
    if (m.type === "chat") {
      social.chat = m.history ? m.messages.slice() : social.chat.concat(m.messages).slice(-100);
      social.renderChat();
    } else if (m.type === "rematch") {
      const info = game.info || {};
      rememberTable({ id: m.table, ruleset: info.ruleset || "", links: [{ name: game.seat === null ? t("spectator") : name(game.seat), link: m.link, seat: game.seat }] });
      location.assign(m.link);  // every seat goes to its own seat of the new table
    }
  },

  renderChat() {
    $("chat-box").hidden = false;
    const box = $("chat-log");
    // a notice of the table (e.g. "Anna asked for a hint") is rendered in the reader's language
    box.replaceChildren(...social.chat.map((x) => (x.notice
      ? el("li", { class: "notice", "data-notice": x.notice }, el("i", { text: t(x.notice, { name: x.name }) }))
      : el("li", x.spectator ? { class: "spectator" } : {}, el("b", { text: social.speaker(x) + ": " }),
        el("span", { class: "chat-text", text: x.text })))));
    box.scrollTop = box.scrollHeight;
  },

  // who wrote a line: a seat by its name, a spectator marked as one
  speaker(x) {
    if (!x.spectator) return x.name;
    return x.name ? t("spectatorLine", { name: x.name }) : t("spectatorAnonymous");
  },

  renderTable(info, v) {
    const seated = game.seat !== null;
    // the seats a stand-in bot plays for, and the seats free for the lobby
    info.seats.forEach((s, i) => {
      const tile = document.querySelector(`[data-testid=player-${i}] > div`);
      if (!tile) return;
      if (s.away) tile.append(el("span", { class: "tag away", "data-testid": `away-${i}`, text: t("playedByBot") }));
      if (s.open) tile.append(el("span", { class: "tag", "data-testid": `open-${i}`, text: t("openTag") }));
    });
    $("away-box").hidden = !(seated && info.seats[game.seat] && info.seats[game.seat].away);
    // the turn timer of the seat on turn
    clearInterval(social.ticker);
    const timer = $("turn-timer");
    const tick = () => {
      const running = info.turn_deadline && v && !v.terminal;
      const left = running ? Math.max(0, Math.round(info.turn_deadline - Date.now() / 1000)) : 0;
      timer.textContent = running ? t("turnLeft", { s: left }) : "";
      // and on the seat whose turn it is: the seconds it has left
      const tile = running ? document.querySelector(`[data-testid=player-${v.current_player}]`) : null;
      if (!tile) return;
      let badge = tile.querySelector(".countdown");
      if (!badge) {
        badge = el("span", { class: "countdown", "data-testid": `countdown-${v.current_player}`, role: "timer" });
        tile.querySelector(".who").append(badge);
      }
      badge.textContent = String(left);
      badge.setAttribute("aria-label", t("turnLeft", { s: left }));
      badge.classList.toggle("low", left <= 5);
    };
    tick();
    if (info.turn_deadline) social.ticker = setInterval(tick, 1000);
    // rematch: when no deal is being played; once asked, every seated player agrees or declines
    const votes = info.rematch_votes || [];
    // (an archived table is read-only: its page has no connection to ask on)
    const between = seated && info.started && !info.broken && !info.archived && (info.closed || !v || v.terminal) && !info.rematch;
    $("rematch").hidden = !between || votes.length > 0;
    $("rematch-asked").hidden = !(between && votes.length > 0);
    if (votes.length) {
      $("rematch-who").textContent = t("rematchAsked", { names: votes.map(name).join(", ") });
      $("rematch-yes").hidden = votes.includes(game.seat);
    }
    // whom the question waits for, and the seconds until it ends unanswered (as declined)
    clearInterval(social.rematchTicker);
    const waiting = info.rematch_waiting || [];
    const rematchTick = () => {
      const left = Math.max(0, Math.round((info.rematch_deadline || 0) - Date.now() / 1000));
      $("rematch-wait").textContent = waiting.length && info.rematch_deadline
        ? t("rematchWaiting", { names: waiting.map(name).join(", "), s: left }) : "";
    };
    rematchTick();
    if (votes.length && info.rematch_deadline) social.rematchTicker = setInterval(rematchTick, 1000);
    // chat: the seats write, and the spectators while the players let them; everybody reads
    // (an archived table is read-only)
    $("chat-box").hidden = false;
    const open = info.spectator_chat !== false;
    $("chat-form").hidden = !!info.archived;
    $("chat-off").hidden = seated || open || !!info.archived;
    for (const id of ["chat-input", "chat-send", "chat-name"]) $(id).disabled = !seated && !open;
    $("chat-name").hidden = seated;
    $("chat-name").placeholder = t("chatName");
    $("chat-name").setAttribute("aria-label", t("chatName"));
    $("chat-input").placeholder = t("chatPlaceholder");
    $("chat-input").setAttribute("aria-label", t("chat"));
    // a seated player or the admin lets the spectators chat or not
    $("spectator-chat-box").hidden = !(seated || game.role === "admin") || !!info.archived;
    $("spectator-chat").checked = open;
  },

  initTable() {
    $("back").addEventListener("click", () => send({ type: "back" }));
    $("rematch").addEventListener("click", () => send({ type: "rematch" }));
    $("rematch-yes").addEventListener("click", () => send({ type: "rematch", agree: true }));
    $("rematch-no").addEventListener("click", () => send({ type: "rematch", agree: false }));
    $("chat-name").value = localStorage.getItem("stammtisch.name") || "";
    $("spectator-chat").addEventListener("change", () => send({ type: "spectator chat", on: $("spectator-chat").checked }));
    $("chat-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const text = $("chat-input").value.trim();
      if (!text) return;
      if (game.seat === null) {
        const name = $("chat-name").value.trim();
        localStorage.setItem("stammtisch.name", name);
        send({ type: "chat", text, name: name || null });
      } else send({ type: "chat", text });
      $("chat-input").value = "";
    });
  },
};
