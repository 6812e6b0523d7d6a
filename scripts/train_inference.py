"""Learn the inference model of the Master level from self-play records.

Every decision with more than one legal action in the records (``stammtisch simulate
--records``) becomes one row per legal action: its features (``inference.action_features``,
from the actor's observation and the heuristic's choice) and whether it was the action taken.
A logistic regression (scikit-learn, the ``train`` extra: ``pip install 'stammtisch[train]'``)
fits "was this action taken" per row; from its coefficients the conditional logit over each
decision's legal actions, as ``LearnedPolicy`` reads them (``P(a) ∝ exp(w · f(a))``), is then
fitted exactly (scipy's L-BFGS, installed with scikit-learn). The weights go into
``stammtisch/bots/inference_weights.json`` with the counts they were learned from and each
family's ``temper`` (given here, chosen with ``bench/inference.py --temper`` on other deals).

    stammtisch simulate tapp/modern -n 3 --deals 300 --seed 21 --bots expert --records rec/tapp
    stammtisch simulate tippen/grupp-1975 -n 4 --deals 300 --seed 21 --bots expert --records rec/tippen
    python scripts/train_inference.py --records tapp=rec/tapp --records tippen=rec/tippen \\
        --temper tapp=0.25 --temper tippen=0.5
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


def decisions(folder: Path, family: str) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], list[int], int]:
    """Rows of features and labels (1: the action taken) of every real decision in the
    records of ``folder``, the first row of each decision, and the number of deals."""
    rows: list[np.ndarray[Any, Any]] = []
    labels: list[np.ndarray[Any, Any]] = []
    starts: list[int] = []
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
        starts.append(count)
        rows.append(x)
        labels.append(y)
        count += len(legal)

    def on_deal(table: Table) -> None:
        nonlocal deals
        deals += 1

    for path in sorted(folder.glob("*.json")):
        replay(path, on_deal=on_deal, on_action=on_action)
    return np.concatenate(rows), np.concatenate(labels), starts, deals


def conditional_logit(x: np.ndarray[Any, Any], y: np.ndarray[Any, Any], starts: list[int], start: np.ndarray[Any, Any],
                      l2: float) -> np.ndarray[Any, Any]:
    """The weights that maximise the conditional likelihood of the actions taken (softmax over
    each decision's legal actions, as ``LearnedPolicy`` reads them), from ``start``, with an L2
    penalty ``l2``: scipy's L-BFGS (scipy comes with scikit-learn)."""
    from scipy.optimize import minimize

    sizes = np.diff(np.append(starts, len(y)))
    taken = np.flatnonzero(y)

    def loss(w: np.ndarray[Any, Any]) -> tuple[float, np.ndarray[Any, Any]]:
        z = x @ w
        top = np.maximum.reduceat(z, starts)
        e = np.exp(z - np.repeat(top, sizes))
        total = np.add.reduceat(e, starts)
        p = e / np.repeat(total, sizes)
        value = -(z[taken].sum() - (np.log(total) + top).sum()) + l2 * float(w @ w)
        grad = -(x[taken].sum(axis=0) - p @ x) + 2 * l2 * w
        return float(value), grad

    return np.asarray(minimize(loss, start, jac=True, method="L-BFGS-B").x)


def main(argv: list[str] | None = None) -> None:
    from sklearn.linear_model import LogisticRegression

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", action="append", required=True, metavar="FAMILY=FOLDER",
                        help="a game family (tapp, tippen) and a folder of its records; repeatable")
    parser.add_argument("--out", type=Path, default=WEIGHTS_FILE)
    parser.add_argument("--C", type=float, default=1.0, help="inverse regularisation strength")
    parser.add_argument("--temper", action="append", default=[], metavar="FAMILY=T",
                        help="the power the likelihood is raised to when worlds are weighed (default 1), "
                             "chosen with bench/inference.py --temper on deals of another seed")
    args = parser.parse_args(argv)
    weights: dict[str, list[float]] = {}
    trained_on: dict[str, dict[str, Any]] = {}
    for item in args.records:
        family, _, folder = item.partition("=")
        x, y, starts, deals = decisions(Path(folder), family)
        model = LogisticRegression(C=args.C, max_iter=2000)
        model.fit(x, y)
        w = conditional_logit(x, y, starts, model.coef_[0], 0.5 / (args.C * len(starts)))
        weights[family] = [round(float(v), 5) for v in w]
        trained_on[family] = {"deals": deals, "decisions": len(starts), "rows": len(y)}
        print(json.dumps({"family": family, **trained_on[family],
                          "weights": dict(zip(FEATURES, weights[family], strict=True))}))
    temper = {family: t for family, _, t in (item.partition("=") for item in args.temper)}
    data = {"features": list(FEATURES), "weights": weights,
            "temper": {family: float(temper.get(family, 1.0)) for family in weights}, "trained_on": trained_on}
    args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
