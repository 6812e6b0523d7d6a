// Rules panel: how to play the table's rule set, and the table's options beside their defaults.
// An ES module with no build step. It creates its own <dialog> on first use, so the page needs
// only a button that calls openRulesPanel (see the module's export and window.stammtischRules).
//
//   import { openRulesPanel } from "/static/rules.js";
//   openRulesPanel({ ruleset: "tippen/grupp-1975", lang: "de", options: { robbing: true } });
//   openRulesPanel({ ruleset: "tapp/modern", lang: "en", part: "all" });  // from the basics on
//
// The text comes from GET /api/guide/{ruleset}?lang=… (HTML made by the server from our own
// pages, raw HTML escaped there); the option table from GET /api/rulesets, built here with
// textContent only.

// Its texts come from the catalogue of the page's language (GET /api/texts/{lang}, keys
// "web.rules_*" and the rule sets' option names, help and values), as app.js's do.
const catalogues = {};
let rulesetsCache = null;

async function loadCatalogue(lang) {
  if (!catalogues[lang]) {
    const r = await fetch(`/api/texts/${encodeURIComponent(lang)}`).catch(() => null);
    catalogues[lang] = r && r.ok ? await r.json() : {};
  }
  return catalogues[lang];
}

function texts(cat) {
  const has = (key) => Object.prototype.hasOwnProperty.call(cat, key);
  const tr = (key, vars = {}) => (has("web.rules_" + key) ? cat["web.rules_" + key] : key)
    .replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
  const optionName = (name) => (has("option.name." + name) ? cat["option.name." + name] : name);
  const optionHelp = (family, o) => cat[`option.help.${family}.${o.name}`] || o.help;
  const optionValue = (v) => {
    if (v === true || v === "true") return cat["web.yes"] || "yes";
    if (v === false || v === "false") return cat["web.no"] || "no";
    const key = "option.choice." + (v === null || v === undefined ? "none" : v);
    return has(key) ? cat[key] : String(v);
  };
  return { tr, optionName, optionHelp, optionValue };
}

function node(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  e.append(...children);
  return e;
}

async function fetchGuide(path, lang, part = "all") {
  const r = await fetch(`${path}?lang=${encodeURIComponent(lang)}&part=${part}`);
  if (!r.ok) {
    const data = await r.json().catch(() => ({ error: r.statusText }));
    throw new Error(data.error || r.statusText);
  }
  return r.text();
}

async function rulesetInfo(id) {
  if (!rulesetsCache) {
    const r = await fetch("/api/rulesets");
    rulesetsCache = r.ok ? await r.json() : [];
  }
  return rulesetsCache.find((rs) => rs.id === id) || null;
}

function shown(v) {
  return v === null || v === undefined ? "none" : String(v);
}

// The table's options beside the rule set's defaults; changed ones are marked.
function optionsTable(info, options, tx) {
  const { tr, optionName, optionHelp, optionValue } = tx;
  const table = node("table", { class: "score", "data-testid": "rules-options" });
  table.append(node("tr", {}, ...["option", "value", "default", "meaning"].map((k) => node("th", { text: tr(k) }))));
  for (const o of info.options) {
    const has = options && Object.prototype.hasOwnProperty.call(options, o.name);
    const value = has ? options[o.name] : o.default;
    const changed = has && shown(value) !== shown(o.default);
    const row = node("tr", changed ? { class: "changed", title: tr("changed") } : {},
      node("td", {}, optionName(o.name), " ", node("code", { text: o.name })),
      node("td", {}, changed ? node("b", { text: optionValue(value) }) : optionValue(value)),
      node("td", { text: optionValue(o.default) }),
      node("td", { text: optionHelp(info.family, o) }));
    table.append(row);
  }
  return table;
}

function panel() {
  let dlg = document.getElementById("rules-panel");
  if (!dlg) {
    dlg = node("dialog", { id: "rules-panel", "data-testid": "rules-panel", class: "rules-panel",
      "aria-labelledby": "rules-title" });
    // Its own few styles, so that the panel works before style.css knows about it; nothing in it
    // is wider than the panel (tables scroll in their own box), so Close stays in reach on a phone.
    dlg.style.cssText = "width:min(60rem,96vw);max-width:96vw;max-height:90vh;overflow-x:hidden;overflow-y:auto;"
      + "padding:0 .8rem 1rem;box-sizing:border-box;overflow-wrap:anywhere;";
    document.body.append(dlg);
  }
  return dlg;
}

// Open the panel for a rule set. options: the table's options ({name: value}); omitted in the
// lobby, where only the defaults are shown. part: "section" (the rule set's own section, the
// family basics on request) or "all" (from the family basics on: for a newcomer).
export async function openRulesPanel({ ruleset, lang = "en", options = null, part = "section" }) {
  const tx = texts(await loadCatalogue(lang));
  const { tr } = tx;
  const dlg = panel();
  const body = node("div", { class: "rules-body", "data-testid": "rules-text" });
  const close = node("button", { type: "button", "data-testid": "rules-close", text: tr("close") });
  close.addEventListener("click", () => dlg.close());
  const basics = node("button", { type: "button", "data-testid": "rules-basics", text: tr("basics") });
  const glossary = node("a", { href: "#", "data-testid": "rules-glossary", text: tr("glossary") });
  const header = node("div", { class: "rules-head" }, node("h2", { id: "rules-title", text: tr("title") }), close);
  header.style.cssText = "position:sticky;top:0;z-index:1;background:#fff;display:flex;justify-content:space-between;"
    + "align-items:center;gap:1rem;border-bottom:1px solid #ccc;";
  dlg.replaceChildren(header, body);
  if (typeof dlg.showModal === "function" && !dlg.open) dlg.showModal();
  else dlg.setAttribute("open", "");
  const path = "/api/guide/" + ruleset.split("/").map(encodeURIComponent).join("/");
  const show = async (url, part) => {
    try {
      body.innerHTML = await fetchGuide(url, lang, part);  // server-made HTML of our own pages
    } catch (e) {
      body.replaceChildren(node("p", { class: "error", text: tr("failed", { reason: e.message }) }));
    }
  };
  // The rule set's own section first (short), the family basics and the glossary on request;
  // or, for a newcomer, the whole page from the basics on.
  await show(path, part === "all" ? "all" : "section");
  if (part === "all") basics.remove();
  basics.addEventListener("click", () => { basics.remove(); show(path, "all"); });
  glossary.addEventListener("click", (ev) => { ev.preventDefault(); show("/api/guide/glossary", "all"); });
  // Links between the pages (glossary.md, tippen.md …) are file links in docs/; here the
  // glossary opens in the panel and the others stay put.
  body.addEventListener("click", (ev) => {
    const a = ev.target.closest && ev.target.closest("a[href$='.md']");
    if (!a) return;
    ev.preventDefault();
    if (a.getAttribute("href").endsWith("glossary.md")) show("/api/guide/glossary", "all");
  });
  const info = await rulesetInfo(ruleset);
  const extra = [basics, " ", glossary];
  if (info) {
    const box = node("div", { class: "scroll", tabindex: "0", role: "region", "aria-label": tr("options") },
      optionsTable(info, options, tx));
    box.style.cssText = "overflow-x:auto;max-width:100%;";
    extra.push(node("h3", { text: tr("options") }), box);
  }
  dlg.append(node("div", { class: "rules-foot" }, ...extra));
}

// For the classic (non-module) app.js.
window.stammtischRules = { openRulesPanel };
