// Stammtisch web client, the table's sounds and calls: a sound for a card played, a trick won
// and this player's turn, and a notification when the turn comes while the page is in the
// background (its title says so too: app.js's showTurnInTitle). Loaded before app.js like
// social.js; its functions run only after app.js has set up $, t and game, replay.js replay.
// Both switches are remembered in this browser. The sounds are the project's own, made by
// scripts/make_sounds.py.
"use strict";

const alive = {
  audio: {},   // one element per sound, made when first wanted
  note: null,  // the notification of this turn, closed when the turn passes or the page is seen

  // sound is on unless switched off: a browser that blocks it before the first click refuses quietly
  soundOn: () => localStorage.getItem("stammtisch.sound") !== "off",
  canNotify: () => typeof window.Notification === "function",
  notifyOn: () => alive.canNotify() && Notification.permission === "granted" && localStorage.getItem("stammtisch.notify") === "on",

  initTable() {
    $("switches").hidden = false;  // (a replay of a record file has no table to hear)
    $("sound-btn").addEventListener("click", () => {
      localStorage.setItem("stammtisch.sound", alive.soundOn() ? "off" : "on");
      alive.renderSwitches();
    });
    $("notify-btn").addEventListener("click", async () => {
      let on = !alive.notifyOn();
      // the browser is asked only here, on the player's click (unprompted, it refuses or buries the question)
      if (on && Notification.permission !== "granted") on = (await Notification.requestPermission()) === "granted";
      localStorage.setItem("stammtisch.notify", on ? "on" : "off");
      $("notify-note").textContent = on || Notification.permission !== "denied" ? "" : t("notifyDenied");
      alive.renderSwitches();
    });
    document.addEventListener("visibilitychange", () => { if (!document.hidden) alive.closeNote(); });
    if (alive.soundOn()) ["card", "trick", "turn"].forEach(alive.sound);  // loaded before they are wanted
    alive.renderSwitches();
  },

  renderSwitches() {
    // a spectator has no turn to be called for
    $("notify-btn").hidden = !alive.canNotify() || game.seat === null;
    $("sound-btn").setAttribute("aria-pressed", String(alive.soundOn()));
    $("notify-btn").setAttribute("aria-pressed", String(alive.notifyOn()));
  },

  sound(name) {
    if (!alive.audio[name]) alive.audio[name] = new Audio(`/static/sounds/${name}.wav`);
    return alive.audio[name];
  },

  play(name) {
    if (!alive.soundOn()) return;
    try {
      const a = alive.sound(name);
      a.currentTime = 0;
      const playing = a.play();
      if (playing && playing.catch) playing.catch(() => {});  // blocked until the page is clicked
    } catch (e) { /* no sound, the game goes on */ }
  },

  // What a new state changed (app.js's changes()): the sounds for it, and the call of a player
  // whose turn came while he looks at another tab. The steps of a replay never come here; while
  // a replay is open only the player's own turn sounds.
  onChange(c) {
    alive.renderSwitches();
    if (!c) return;
    // the card that ends a trick sounds as the trick (whose sound begins with cards swept together)
    if (!replay.on && c.trick) alive.play("trick");
    else if (!replay.on && c.actions.some(([, a]) => a.startsWith("play:"))) alive.play("card");
    if (c.myTurn) {
      alive.play("turn");
      alive.callPlayer();
    } else if (!c.mine) alive.closeNote();
  },

  // once per turn (a turn comes once), as soon as it comes: before a turn timer's stand-in acts.
  // It names the table, never a card.
  callPlayer() {
    if (!document.hidden || !alive.notifyOn()) return;
    alive.closeNote();
    try {
      alive.note = new Notification(t("yourTurn"), { body: t("notifyBody", { table: $("t-title").textContent }),
        tag: `stammtisch-${game.tableId}` });
      alive.note.onclick = () => { window.focus(); alive.closeNote(); };
    } catch (e) { /* a browser that shows notifications only from a service worker */ }
  },

  closeNote() {
    if (alive.note) alive.note.close();
    alive.note = null;
  },
};
