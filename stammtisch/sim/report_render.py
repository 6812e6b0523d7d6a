"""Writing a report: numbers as JSON and CSV, plots as PNG (matplotlib), one self-contained HTML page.

matplotlib is the optional extra ``stammtisch[report]`` and is imported only here, only when a
report is written. Several runs (rule sets) side by side make a comparison: one table and one
plot per figure, one column or series per rule set.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

from ..bots.equilibrium import entry_for, tap_blocks, tap_table
from ..i18n import t
from .report import ReportRun
from .simulate import has_pot, unit_of


class ReportError(Exception):
    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise ReportError("no-matplotlib", t("report.no_matplotlib")) from None
    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def _round(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else round(x, digits)


# --- numbers ----------------------------------------------------------------------------------


def run_numbers(run: ReportRun) -> dict[str, Any]:
    """Everything of one run as JSON-able data (the report's JSON; the CSVs and plots read it)."""
    rules = run.job.rules
    summary = run.summary
    data: dict[str, Any] = summary.to_json(rules.family)
    data.update(ruleset=rules.id, unit=unit_of(rules), has_pot=has_pot(rules), seed=run.seed,
                chunk_deals=run.chunk_deals, bots=list(run.job.bots), complete=run.outcome.complete,
                problems=run.outcome.problems())
    data["net_distribution"] = {name: {str(k): v for k, v in sorted(summary.seats[i].net_counts.items())}
                                for i, name in enumerate(summary.players)}
    stats = run.stats
    dealer = stats.dealer.mean()
    data["dealer_net"] = dealer.to_json(4) if dealer else None
    if rules.family == "tippen":
        classes = []
        for label in sorted(stats.hand_classes):
            entry = stats.hand_classes[label]
            tap, trick, net = entry.decisions.rate(), entry.played.rate(), entry.played.mean()
            classes.append({
                "hand_class": label, "decisions": entry.decisions.count, "taps": entry.decisions.successes,
                "tap_rate": _round(tap.estimate if tap.n else None), "tap_rate_ci": [_round(tap.low), _round(tap.high)],
                "played": entry.played.count, "with_a_trick": entry.played.successes,
                "trick_rate": _round(trick.estimate if trick.n else None),
                "trick_rate_ci": [_round(trick.low), _round(trick.high)],
                "mean_net_tapping": _round(net.estimate) if net else None,
                "mean_net_tapping_ci": net.to_json(4)["ci"] if net else None,
            })
        data["hand_classes"] = classes
        data["pot_by_deal"] = [round(total / n, 3) for total, n in zip(stats.pot_after_deal, stats.pot_sessions,
                                                                        strict=True)]
        data["pot_emptied"] = {"count": stats.pot_emptied, "of": summary.deals}
        if entry_for(rules) is not None:  # the trained "when to tap" tables of these rules
            data["equilibrium"] = tap_table(rules.id, rules.players)
    else:
        contracts = []
        for name, tally in sorted(stats.contracts.items(), key=lambda item: -item[1].count):
            win, value = tally.rate(), tally.mean()
            contracts.append({
                "contract": name, "deals": tally.count, "declarer_wins": tally.successes,
                "win_rate": _round(win.estimate), "win_rate_ci": [_round(win.low), _round(win.high)],
                "mean_declarer_net": _round(value.estimate) if value else None,
                "mean_declarer_net_ci": value.to_json(4)["ci"] if value else None,
            })
        data["contract_table"] = contracts
        data["declarer_points"] = {str(k): v for k, v in sorted(stats.declarer_points.items())}
        ramsch = sum(stats.ramsch_loser_points.values())
        data["ramsch"] = {"deals": ramsch, "jungfer_deals": stats.ramsch_jungfer,
                          "loser_points": {str(k): v for k, v in sorted(stats.ramsch_loser_points.items())}}
    return data


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: json.dumps(v) if isinstance(v, list) else v for k, v in row.items()})


def write_tables(numbers: list[dict[str, Any]], out: Path) -> list[Path]:
    """The CSV files: per player, and per hand class / per contract, one row per rule set and item."""
    players, classes, contracts = [], [], []
    for data in numbers:
        rid = data["ruleset"]
        for seat, (name, entry) in enumerate(data["per_player"].items()):
            mean = entry["mean_per_deal"] or {}
            players.append({"ruleset": rid, "player": name, "bot": data["bots"][seat],
                            "balance": data["balances"][name], "deals": data["deals"], "unit": data["unit"],
                            "mean_per_deal": mean.get("estimate"),
                            "ci_low": (mean.get("ci") or [None, None])[0],
                            "ci_high": (mean.get("ci") or [None, None])[1], "ci_method": mean.get("method")})
        classes += [{"ruleset": rid, **row} for row in data.get("hand_classes", [])]
        contracts += [{"ruleset": rid, **row} for row in data.get("contract_table", [])]
    paths = []
    for name, rows in (("per_player.csv", players), ("hand_classes.csv", classes), ("contracts.csv", contracts)):
        if rows:
            _write_csv(out / name, rows)
            paths.append(out / name)
    return paths


# --- plots ------------------------------------------------------------------------------------


def _png(plt: Any, fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    return buffer.getvalue()


def _errors(estimates: list[float], lows: list[float | None], highs: list[float | None]) -> list[list[float]]:
    return [[max(0.0, e - lo) if lo is not None else 0.0 for e, lo in zip(estimates, lows, strict=True)],
            [max(0.0, hi - e) if hi is not None else 0.0 for e, hi in zip(estimates, highs, strict=True)]]


def _grouped_bars(plt: Any, title: str, labels: list[str], series: dict[str, list[tuple[float, Any, Any]]],
                  ylabel: str) -> bytes:
    """One group of bars per label, one bar per series (rule set), with error bars."""
    fig, ax = plt.subplots(figsize=(min(16.0, max(6.0, 0.9 * len(labels) * max(1, len(series)))), 3.6))
    width = 0.8 / max(1, len(series))
    for k, (name, values) in enumerate(series.items()):
        xs = [i + k * width for i in range(len(labels))]
        estimates = [v[0] if v[0] is not None else 0.0 for v in values]
        ax.bar(xs, estimates, width, label=name,
               yerr=_errors(estimates, [v[1] for v in values], [v[2] for v in values]), capsize=3)
    ax.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(labels))], labels, rotation=20, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if len(series) > 1:
        ax.legend(fontsize=7)
    ax.axhline(0, color="grey", linewidth=0.5)
    return _png(plt, fig)


def _distribution(plt: Any, title: str, series: dict[str, dict[str, int]], xlabel: str) -> bytes:
    fig, ax = plt.subplots(figsize=(7, 3.4))
    for name, counts in series.items():
        if not counts:
            continue
        total = sum(counts.values())
        values = {int(k): v for k, v in counts.items()}
        xs = list(range(min(values), max(values) + 1))  # every value, zeros included: no false lines
        ax.step(xs, [values.get(x, 0) / total for x in xs], where="mid", label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("share of deals")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    return _png(plt, fig)


def _equilibrium_plots(plt: Any, numbers: list[dict[str, Any]], lang: str) -> list[tuple[str, bytes]]:
    """Per trained Tippen rule set: the probability of a tap by strength bucket and position
    (nobody tapped before: solid; one tap: dashed); then every rule set's exploitability
    against the training iterations."""
    plots: list[tuple[str, bytes]] = []
    trained = [d for d in numbers if d.get("equilibrium")]
    for d in trained:
        eq = d["equilibrium"]
        level = eq["levels"][0]
        fig, ax = plt.subplots(figsize=(7, 3.4))
        xs = list(range(eq["buckets"]))
        for pos, by_taps in enumerate(level["rows"]):
            for k, style in ((0, "-"), (1, "--")):
                if k < len(by_taps):
                    ys = [p if p >= 0 else float("nan") for p in by_taps[k]]
                    ax.plot(xs, ys, style, marker="o", color=f"C{pos}",
                            label=f"{pos + 1}" if k == 0 else None)
        ax.set_xticks(xs, [f"{lo:g}" for lo in eq["low"]])
        ax.set_xlabel("hand strength (estimated tricks, from)")
        ax.set_ylabel("P(tap)")
        ax.set_ylim(-0.05, 1.05)
        ax.legend(title="position", fontsize=7)
        title = t("equilibrium.plot.tap", lang, ruleset=d["ruleset"])
        ax.set_title("\n".join(textwrap.wrap(title, 100)), fontsize=8)
        plots.append((title, _png(plt, fig)))
    if trained:
        fig, ax = plt.subplots(figsize=(7, 3.4))
        for d in trained:
            for level in d["equilibrium"]["levels"]:
                curve = [(c["iterations"], max(c["gain"])) for c in level["curve"]]
                label = d["ruleset"] + (f" (pot {level['pot']})" if level["pot_stakes"] else "")
                ax.plot([c[0] for c in curve], [max(c[1], 1e-5) for c in curve], marker="o", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("CFR iterations")
        ax.set_ylabel("counters per deal")
        title = t("equilibrium.plot.curve", lang)
        ax.set_title("\n".join(textwrap.wrap(title, 100)), fontsize=8)
        ax.legend(fontsize=6)
        plots.append((title, _png(plt, fig)))
    return plots


def make_plots(numbers: list[dict[str, Any]], lang: str = "en") -> list[tuple[str, bytes]]:
    plt = _pyplot()
    plots: list[tuple[str, bytes]] = []
    players = max((d["players"] for d in numbers), key=len)  # rule sets may seat different numbers
    units = " / ".join(dict.fromkeys(d["unit"] for d in numbers))
    mean_series: dict[str, list[tuple[Any, Any, Any]]] = {}
    for d in numbers:
        values: list[tuple[Any, Any, Any]] = []
        for name in players:
            entry = d["per_player"].get(name)
            mean = (entry or {}).get("mean_per_deal") or {"estimate": None, "ci": [None, None]}
            values.append((mean["estimate"], mean["ci"][0], mean["ci"][1]))
        mean_series[d["ruleset"]] = values
    plots.append((t("report.mean_net"), _grouped_bars(plt, t("report.mean_net"), players, mean_series,
                                                    f"net per deal ({units})")))
    merged: dict[str, dict[str, int]] = {}
    for d in numbers:
        counts: Counter[int] = Counter()
        for per_seat in d["net_distribution"].values():
            counts.update({int(k): v for k, v in per_seat.items()})
        merged[d["ruleset"]] = {str(k): v for k, v in counts.items()}
    plots.append((t("report.net_distribution"), _distribution(plt, t("report.net_distribution"), merged,
                                                           f"net of one deal ({units})")))
    dealer = {d["ruleset"]: [(d["dealer_net"]["estimate"], *d["dealer_net"]["ci"]) if d["dealer_net"]
                             else (None, None, None)] for d in numbers}
    plots.append((t("report.dealer"), _grouped_bars(plt, t("report.dealer"), ["dealer"], dealer,
                                                 f"dealer's net per deal ({units})")))
    tippen = [d for d in numbers if "hand_classes" in d]
    if tippen:
        labels = sorted({row["hand_class"] for d in tippen for row in d["hand_classes"]})

        def by_class(key: str, ci: str) -> dict[str, list[tuple[Any, Any, Any]]]:
            out = {}
            for d in tippen:
                rows = {row["hand_class"]: row for row in d["hand_classes"]}
                out[d["ruleset"]] = [(rows[c][key], (rows[c][ci] or [None, None])[0], (rows[c][ci] or [None, None])[1])
                                     if c in rows else (None, None, None) for c in labels]
            return out

        plots.append((t("report.tap_by_class"), _grouped_bars(plt, t("report.tap_by_class"), labels,
                                                           by_class("tap_rate", "tap_rate_ci"), "tap rate")))
        plots.append((t("report.trick_by_class"), _grouped_bars(plt, t("report.trick_by_class"), labels,
                                                             by_class("trick_rate", "trick_rate_ci"),
                                                             "P(at least one trick)")))
        plots.append((t("report.tap_net_by_class"), _grouped_bars(plt, t("report.tap_net_by_class"), labels,
                                                               by_class("mean_net_tapping", "mean_net_tapping_ci"),
                                                               "mean net when tapping")))
        fig, ax = plt.subplots(figsize=(7, 3.4))
        for d in tippen:
            ax.plot(range(1, len(d["pot_by_deal"]) + 1), d["pot_by_deal"], label=d["ruleset"])
        ax.set_xlabel("deal of the session")
        ax.set_ylabel("mean pot")
        ax.set_title(t("report.pot"), fontsize=10)
        ax.legend(fontsize=7)
        plots.append((t("report.pot"), _png(plt, fig)))
        plots += _equilibrium_plots(plt, tippen, lang)
    tapp = [d for d in numbers if "contract_table" in d]
    if tapp:
        labels = sorted({row["contract"] for d in tapp for row in d["contract_table"]})
        frequency: dict[str, list[tuple[Any, Any, Any]]] = {}
        wins: dict[str, list[tuple[Any, Any, Any]]] = {}
        value: dict[str, list[tuple[Any, Any, Any]]] = {}
        for d in tapp:
            rows = {row["contract"]: row for row in d["contract_table"]}
            frequency[d["ruleset"]] = [(rows[c]["deals"] / max(1, d["deals"]) if c in rows else 0.0, None, None)
                                       for c in labels]
            wins[d["ruleset"]] = [(rows[c]["win_rate"], *rows[c]["win_rate_ci"]) if c in rows else (None, None, None)
                                  for c in labels]
            value[d["ruleset"]] = [(rows[c]["mean_declarer_net"], *(rows[c]["mean_declarer_net_ci"] or [None, None]))
                                   if c in rows else (None, None, None) for c in labels]
        plots.append((t("report.contracts"), _grouped_bars(plt, t("report.contracts"), labels, frequency,
                                                           "share of deals")))
        plots.append((t("report.contract_wins"), _grouped_bars(plt, t("report.contract_wins"), labels, wins,
                                                            "declarer win rate")))
        plots.append((t("report.contract_value"), _grouped_bars(plt, t("report.contract_value"), labels, value,
                                                             f"declarer net per deal ({tapp[0]['unit']})")))
        plots.append((t("report.declarer_points"), _distribution(plt, t("report.declarer_points"),
                                                              {d["ruleset"]: d["declarer_points"] for d in tapp},
                                                              "card points of the declarer")))
        ramsch = {d["ruleset"]: d["ramsch"]["loser_points"] for d in tapp if d["ramsch"]["deals"]}
        if ramsch:
            plots.append((t("report.ramsch"), _distribution(plt, t("report.ramsch"), ramsch,
                                                            "card points of the loser")))
    return plots


# --- HTML -------------------------------------------------------------------------------------


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list):
        return "[" + ", ".join(_cell(v) for v in value) + "]"
    return str(value)


def equilibrium_html(numbers: list[dict[str, Any]], lang: str = "en") -> str:
    """The report's "when to tap" section: the trained equilibrium's tables of every Tippen rule
    set of the report that has them (empty otherwise)."""
    trained = [d for d in numbers if d.get("equilibrium")]
    if not trained:
        return ""
    parts = [f"<h2>{html.escape(t('equilibrium.section', lang))}</h2>",
             f"<p>{html.escape(t('equilibrium.intro', lang, players=trained[0]['equilibrium']['players']))}</p>"]
    for d in trained:
        parts.append(f"<h3>{html.escape(d['ruleset'])}</h3>")
        blocks = tap_blocks(d["ruleset"], lang, d["equilibrium"]["players"])
        for block in blocks:
            parts.append(f"<p>{html.escape(block['caption'])}</p>")
            parts.append(_table(block["headers"], block["rows"]))
            parts.append(f"<p>{html.escape(block['note'])}</p>")
        if blocks:
            parts.append(_table(blocks[0]["bucket_headers"], blocks[0]["bucket_rows"]))
        if d["equilibrium"]["exchange"]:
            parts.append(f"<p>{html.escape(t('equilibrium.exchange', lang))}</p>")
    return "".join(parts)


def render_html(numbers: list[dict[str, Any]], plots: list[tuple[str, bytes]], command: str,
                lang: str = "en") -> str:
    parts = [f"<h1>{html.escape(t('report.title'))}</h1>",
             f"<p class='cmd'>{html.escape(t('report.made_by', command=command))}</p>"]
    for d in numbers:
        parts.append("<p>" + html.escape(t("report.job",
            ruleset=d["ruleset"], deals=d["deals"], sessions=d["sessions"], chunk=d["chunk_deals"], seed=d["seed"],
            bots=", ".join(d["bots"]), unit=d["unit"])) + "</p>")
        if d["problems"]:
            parts.append("<p class='warn'>" + html.escape(t("report.incomplete",
                problems="; ".join(d["problems"]))) + "</p>")
    parts.append(f"<p>{html.escape(t('report.explain'))}</p>")
    rows = []
    for d in numbers:
        for seat, (name, entry) in enumerate(d["per_player"].items()):
            mean = entry["mean_per_deal"] or {}
            rows.append([d["ruleset"], name, d["bots"][seat], d["balances"][name], mean.get("estimate"),
                         mean.get("ci"), mean.get("method")])
    parts.append(f"<h2>{html.escape(t('report.mean_net'))}</h2>")
    parts.append(_table(["rule set", "player", "bot", "balance", "mean per deal", "95% interval", "interval from"],
                        rows))
    parts.append(f"<h2>{html.escape(t('report.dealer'))}</h2>")
    parts.append(_table(["rule set", "dealer's mean net per deal", "95% interval"],
                        [[d["ruleset"], (d["dealer_net"] or {}).get("estimate"), (d["dealer_net"] or {}).get("ci")]
                         for d in numbers]))
    for d in numbers:
        if "hand_classes" in d:
            parts.append(f"<h2>{html.escape(d['ruleset'])}: hand classes</h2>")
            parts.append(_table(
                ["hand class", "decisions", "taps", "tap rate", "95%", "played", "≥1 trick", "rate", "95%",
                 "mean net tapping", "95%"],
                [[r["hand_class"], r["decisions"], r["taps"], r["tap_rate"], r["tap_rate_ci"], r["played"],
                  r["with_a_trick"], r["trick_rate"], r["trick_rate_ci"], r["mean_net_tapping"],
                  r["mean_net_tapping_ci"]] for r in d["hand_classes"]]))
            parts.append(f"<p>Pot emptied after {d['pot_emptied']['count']} of {d['pot_emptied']['of']} deals; "
                         f"bêtes {d['rates']['bete_rate']['count']} of {d['rates']['bete_rate']['of']} hands played; "
                         f"left in the pots at the end: {d['pot']}.</p>")
        if "contract_table" in d:
            parts.append(f"<h2>{html.escape(d['ruleset'])}: contracts</h2>")
            parts.append(_table(
                ["contract", "deals", "declarer won", "win rate", "95%", "mean declarer net", "95%"],
                [[r["contract"], r["deals"], r["declarer_wins"], r["win_rate"], r["win_rate_ci"],
                  r["mean_declarer_net"], r["mean_declarer_net_ci"]] for r in d["contract_table"]]))
            ramsch = d["ramsch"]
            if ramsch["deals"]:
                parts.append(f"<p>Ramsch: {ramsch['deals']} deals, in {ramsch['jungfer_deals']} of them a player "
                             "took no trick (Jungfer).</p>")
    parts.append(equilibrium_html(numbers, lang))
    for title, png in plots:
        data = base64.b64encode(png).decode("ascii")
        parts.append(f"<figure><img alt='{html.escape(title)}' src='data:image/png;base64,{data}'>"
                     f"<figcaption>{html.escape(title)}</figcaption></figure>")
    style = ("body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 6px;"
             "text-align:right}th{background:#eee}.cmd{font-family:monospace}.warn{color:#a40}"
             "img{max-width:100%}figure{margin:1.5em 0}")
    return (f"<!DOCTYPE html><html lang='{html.escape(lang)}'><head><meta charset='utf-8'>"
            "<title>stammtisch report</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>\n")


def write_report(runs: list[ReportRun], out: Path, command: str, lang: str = "en") -> list[Path]:
    """Write report.json, the CSVs, and report.html (plots embedded) into ``out``; returns the paths."""
    numbers = [run_numbers(run) for run in runs]
    plots = make_plots(numbers, lang)  # first: a missing matplotlib stops before any file is written
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "report.json"]
    (out / "report.json").write_text(json.dumps({"command": command, "runs": numbers}, ensure_ascii=False, indent=1)
                                     + "\n", encoding="utf-8")
    written += write_tables(numbers, out)
    (out / "report.html").write_text(render_html(numbers, plots, command, lang), encoding="utf-8")
    written.append(out / "report.html")
    return written
