"""Reader for the CIFAR-10 consistency scores (C-scores) of Jiang et al. (2021)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

CIFAR10_TRAIN_SIZE = 50_000


def read_cscores(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Per-example C-scores and labels, in the original CIFAR-10 training-set order."""
    with np.load(path) as contents:
        missing = {"scores", "labels"} - set(contents.files)
        if missing:
            raise ValueError(f"{path} lacks arrays {sorted(missing)}; has {contents.files}")
        scores = contents["scores"].astype(np.float64)
        labels = contents["labels"].astype(np.int64)
    # No checksum is published for this file, so its contents are what we can check.
    problems = []
    if scores.shape != (CIFAR10_TRAIN_SIZE,) or labels.shape != (CIFAR10_TRAIN_SIZE,):
        problems.append(f"expected {CIFAR10_TRAIN_SIZE} scores and labels, found "
                        f"{scores.shape} and {labels.shape}")
    if scores.size and not (np.all(scores >= 0) and np.all(scores <= 1)):
        problems.append("scores outside [0, 1]")
    if labels.size and not np.all((labels >= 0) & (labels <= 9)):
        problems.append("labels outside 0..9")
    if problems:
        raise ValueError(f"{path} is not the CIFAR-10 C-scores file: {'; '.join(problems)}")
    return scores, labels


def load_cscores(raw_dir: Path) -> dict[str, np.ndarray]:
    scores, labels = read_cscores(raw_dir / "cifar10-cscores-orig-order.npz")
    return {"scores": scores, "labels": labels}


# --- the hold-out estimator (Jiang et al. 2021; George thesis eq. 5.3.2) and decile groups ----------

def ridge_fit_predict(x_train: np.ndarray, y_train: np.ndarray, x_eval: np.ndarray) -> np.ndarray:
    """Classes predicted by a ridge classifier (scikit-learn's, α = 1) fitted on the training part:
    the cheap model of the quick-scale proxy C-scores."""
    from sklearn.linear_model import RidgeClassifier  # imported here: scikit-learn loads slowly

    return RidgeClassifier().fit(x_train, y_train).predict(x_eval)


CSCORE_MODELS = {"ridge": ridge_fit_predict}


def holdout_cscores(x: np.ndarray, y: np.ndarray, ratios, repeats: int, seed: int,
                    fit_predict=ridge_fit_predict) -> np.ndarray:
    """Consistency scores by the hold-out estimator of eq. 5.3.2: for each subset size n = ratio · N,
    ``repeats`` subsets D drawn uniformly without the example; a model fitted on D predicts every
    example outside it, and an example's consistency at that size is the share of the models that
    did not see it which classify it right. Its C-score is the mean over the sizes (those at which it
    was held out at least once). ``fit_predict(x_D, y_D, x_rest)`` returns the predicted classes."""
    x = np.asarray(x, dtype=np.float64).reshape(len(x), -1)
    y = np.asarray(y)
    n = len(y)
    rng = np.random.default_rng(seed)
    consistency = np.full((len(ratios), n), np.nan)
    for row, ratio in enumerate(ratios):
        size = int(round(ratio * n))
        if not 0 < size < n:
            raise ValueError(f"subset ratio {ratio} leaves {size} of {n} examples to fit on")
        hits, held_out = np.zeros(n), np.zeros(n)
        for _ in range(repeats):
            outside = np.ones(n, dtype=bool)
            outside[rng.choice(n, size=size, replace=False)] = False
            predictions = fit_predict(x[~outside], y[~outside], x[outside])
            hits[outside] += predictions == y[outside]
            held_out[outside] += 1
        seen = held_out > 0
        consistency[row, seen] = hits[seen] / held_out[seen]
    never = np.isnan(consistency).all(axis=0)
    if never.any():
        raise ValueError(f"{int(never.sum())} examples were never held out: raise repeats or lower the ratios")
    return np.nanmean(consistency, axis=0)


def rank_bins(scores: np.ndarray, n_bins: int, seed: int) -> np.ndarray:
    """Each example's bin 0 … n_bins − 1 by rank of its score (bin 0: the lowest scores), in bins
    of equal size (±1): deciles for n_bins = 10. Ties are ordered at random by ``seed``, so a block
    of equal scores (many proxy scores are exactly 1) is split between neighbouring bins instead of
    emptying them."""
    scores = np.asarray(scores, dtype=np.float64)
    order = np.lexsort((np.random.default_rng(seed).random(len(scores)), scores))
    bins = np.empty(len(scores), dtype=np.int64)
    bins[order] = np.arange(len(scores)) * n_bins // len(scores)
    return bins


def tracked_per_bin(bins: np.ndarray, n_bins: int, per_bin: int | None,
                    rng: np.random.Generator) -> list[np.ndarray]:
    """For each bin, ``per_bin`` of its examples drawn without replacement from ``rng`` (all of them
    when None or when the bin is smaller), sorted: the examples whose loss a run tracks (the author's
    code: 1000 per bin, ``np.random.default_rng(1337)``)."""
    tracked = []
    for b in range(n_bins):
        members = np.flatnonzero(bins == b)
        if per_bin is not None and per_bin < len(members):
            members = np.sort(rng.choice(members, size=per_bin, replace=False))
        tracked.append(members)
    return tracked


def binned_cscores(scores: dict[str, np.ndarray], n_bins: int, per_bin: int | None,
                   seed: int) -> dict[str, np.ndarray]:
    """Decile groups of the train and test scores, each split binned by its own scores: per split,
    the scores, each example's bin, and the tracked examples with their bins (drawn from one
    generator seeded by ``seed``, train first)."""
    rng = np.random.default_rng(seed)
    arrays: dict[str, np.ndarray] = {}
    for split in ("train", "test"):
        bins = rank_bins(scores[split], n_bins, seed)
        tracked = tracked_per_bin(bins, n_bins, per_bin, rng)
        arrays.update({f"{split}_scores": np.asarray(scores[split], dtype=np.float64), f"{split}_bins": bins,
                       f"{split}_tracked": np.concatenate(tracked),
                       f"{split}_tracked_bins": np.concatenate([np.full(len(t), b) for b, t in enumerate(tracked)])})
    return arrays


def bin_table(arrays: dict[str, np.ndarray], n_bins: int) -> list[dict]:
    """One row per split and bin: its size, how many are tracked, and its score range and mean."""
    rows = []
    for split in ("train", "test"):
        scores, bins = arrays[f"{split}_scores"], arrays[f"{split}_bins"]
        for b in range(n_bins):
            members = scores[bins == b]
            rows.append({"split": split, "bin": b, "examples": len(members),
                         "tracked": int((arrays[f"{split}_tracked_bins"] == b).sum()),
                         "score_min": float(members.min()), "score_max": float(members.max()),
                         "score_mean": float(members.mean())})
    return rows


def split_scores(prepared: dict[str, np.ndarray], settings: dict,
                 published: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """C-scores of a prepared dataset's train and test examples.

    ``settings["source"]``: ``published``, the scores of Jiang et al. read at each example's index in
    the source's training split (the test split of George ch. 5 is CIFAR-10
    train[40000:]), their labels checked against the dataset's; ``proxy``, the hold-out estimator run on
    the train and test examples together (as the published scores were computed on the whole
    training set), with the cheap model ``settings["model"]``."""
    if settings["source"] == "published":
        scores = {}
        for split in ("train", "test"):
            index = prepared[f"{split}_index"]
            if not np.array_equal(published["labels"][index], prepared[f"y_{split}"]):
                raise ValueError(f"the C-scores' labels differ from the {split} labels: the scores are not "
                                 "in this dataset's order (they follow the CIFAR-10 training set)")
            scores[split] = published["scores"][index]
        return scores
    if settings["source"] != "proxy":
        raise ValueError(f"C-score source must be 'published' or 'proxy', got {settings['source']!r}")
    x = np.concatenate([prepared["x_train"], prepared["x_test"]])
    y = np.concatenate([prepared["y_train"], prepared["y_test"]])
    pooled = holdout_cscores(x, y, settings["ratios"], settings["repeats"], settings["seed"],
                             CSCORE_MODELS[settings["model"]])
    n_train = len(prepared["y_train"])
    return {"train": pooled[:n_train], "test": pooled[n_train:]}
