"""Learn the inference model of the Master level from self-play records.

Every decision with more than one legal action in the records (``stammtisch simulate
--records``) becomes one row per legal action: its features (``inference.action_features``,
from the actor's observation and the heuristic's choice) and whether it was the action taken.
A logistic regression (scikit-learn, the ``train`` extra: ``pip install 'stammtisch[train]'``)
fits the weights, read at play time as a conditional logit over the legal actions
(``LearnedPolicy``: ``P(a) ∝ exp(w · f(a))``; the intercept cancels there). The weights go
into ``stammtisch/bots/inference_weights.json`` with the counts they were learned from.

    stammtisch simulate tapp/modern -n 3 --deals 300 --seed 21 --bots expert --records rec/tapp
    stammtisch simulate tippen/grupp-1975 -n 4 --deals 300 --seed 21 --bots expert --records rec/tippen
    python scripts/train_inference.py --records tapp=rec/tapp --records tippen=rec/tippen
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stammtisch.bots.inference import FEATURES, WEIGHTS_FILE, Guide, action_features  # noqa: E402
from stammtisch.record import replay  # noqa: E402
from stammtisch.table import Table  # noqa: E402


def decisions(folder: Path, family: str) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], int, int]:
    """Rows of features and labels (1: the action taken) of every real decision in the
    records of ``folder``; with the number of decisions and of deals."""
    rows: list[np.ndarray[Any, Any]] = []
    labels: list[np.ndarray[Any, Any]] = []
    guide = Guide(family)
    count = deals = 0

    def on_action(table: Table, text: str) -> None:
        nonlocal count
        state = table.current_state()
        legal = state.legal_actions()
        if len(legal) < 2:
            return
        actor = state.current_player()
        action = state.string_to_action(text)
        x = action_features(state.observation(actor), legal, guide(state, actor))
        y = np.zeros(len(legal))
        y[legal.index(action)] = 1.0
        rows.append(x)
        labels.append(y)
        count += 1

    def on_deal(table: Table) -> None:
        nonlocal deals
        deals += 1

    for path in sorted(folder.glob("*.json")):
        replay(path, on_deal=on_deal, on_action=on_action)
    return np.concatenate(rows), np.concatenate(labels), count, deals


def main(argv: list[str] | None = None) -> None:
    from sklearn.linear_model import LogisticRegression

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", action="append", required=True, metavar="FAMILY=FOLDER",
                        help="a game family (tapp, tippen) and a folder of its records; repeatable")
    parser.add_argument("--out", type=Path, default=WEIGHTS_FILE)
    parser.add_argument("--C", type=float, default=1.0, help="inverse regularisation strength")
    args = parser.parse_args(argv)
    weights: dict[str, list[float]] = {}
    trained_on: dict[str, dict[str, Any]] = {}
    for item in args.records:
        family, _, folder = item.partition("=")
        x, y, count, deals = decisions(Path(folder), family)
        model = LogisticRegression(C=args.C, max_iter=2000)
        model.fit(x, y)
        weights[family] = [round(float(w), 5) for w in model.coef_[0]]
        trained_on[family] = {"deals": deals, "decisions": count, "rows": len(y)}
        print(json.dumps({"family": family, **trained_on[family],
                          "weights": dict(zip(FEATURES, weights[family], strict=True))}))
    data = {"features": list(FEATURES), "weights": weights, "trained_on": trained_on}
    args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
