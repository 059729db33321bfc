"""The torch linear probe against scikit-learn's StandardScaler + LogisticRegression, the pipeline
it replaces: the same standardisation, the same optimum of the same objective, the same test
accuracy; and a probe that separates separable features and not random labels."""

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from linearlens.train.linear_probe import Standardiser, fit_linear_probe, probe_objective

torch.set_num_threads(1)


def overlapping_classes(n=900, features=30, classes=5, seed=0):
    """Gaussian classes that overlap (test accuracy well below 1, so predictions can differ),
    with a constant feature and one that is constant but for a single example (a dead unit)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    x = rng.normal(size=(n, features)) + 0.4 * rng.normal(size=(classes, features))[y]
    x[:, 0] = 3.0
    x[:, 1] = 0.0
    x[5, 1] = 1.0
    return x[:600], y[:600], x[600:], y[600:]


def nearly_separable(n=300, features=600, classes=5, seed=0):
    """More features than examples, non-negative (pooled ReLU activations, as the paper's 9,800 of
    layer 1): the probe fits the training set and its objective ends small (2e-2)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n + 100)
    x = np.maximum(rng.normal(size=(n + 100, features)) + 0.15 * rng.normal(size=(classes, features))[y], 0)
    return x[:n], y[:n], x[n:], y[n:]


def sklearn_probe(x, y, c, tol):
    scaler = StandardScaler().fit(x)
    return scaler, LogisticRegression(C=c, max_iter=10_000, tol=tol).fit(scaler.transform(x), y)


def objective_at(coef, intercept, standardised, y, c=1.0):
    """The objective (in float64) at given coefficients; y holds the class indices 0..k-1."""
    as_tensor = lambda a: torch.as_tensor(np.asarray(a, dtype=np.float64))  # noqa: E731
    return float(probe_objective(as_tensor(coef), as_tensor(intercept), as_tensor(standardised), torch.as_tensor(y), c))


def test_standardisation_is_standard_scalers_and_leaves_constant_features_unscaled():
    x, _, _, _ = overlapping_classes()
    ours = Standardiser.fit(torch.tensor(x), block=7)  # blocks of features, the last one short
    scaler = StandardScaler().fit(x)
    np.testing.assert_allclose(ours.mean.numpy(), scaler.mean_, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(ours.scale.numpy(), scaler.scale_, rtol=1e-14)
    assert ours.scale[0] == 1  # constant: centred, not divided by rounding noise
    assert ours.scale[1] != 1  # one example differs: a real (tiny) spread


# How close to the optimum's objective a probe gets, relative: at a gradient tolerance of 1e-10 both
# solvers stop at scikit-learn's other rule, a step that changes the objective by under 64 float64
# epsilons, which leaves them within 1e-11 of the optimum (measured 9e-13 and 3e-12); float32
# resolves an objective to about 1e-7 of itself (its epsilon), where L-BFGS stops (measured 1.6e-7
# and 1.1e-6, the nearly separable objective being the smaller).
TOLERANCE = {torch.float64: 1e-10, torch.float32: 2e-6}


@pytest.mark.parametrize("data", [overlapping_classes, nearly_separable])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_probe_reaches_scikit_learns_optimum(dtype, data, device):
    x, y, x_test, y_test = data()
    scaler, reference = sklearn_probe(x, y, 1.0, tol=1e-10)
    probe = fit_linear_probe(torch.tensor(x, dtype=dtype, device=device), torch.tensor(y, device=device), 1.0,
                             max_iter=10_000, tol=1e-10)
    assert probe.weight.device.type == torch.device(device).type and probe.weight.dtype == dtype
    standardised = scaler.transform(x)
    optimum = objective_at(reference.coef_, reference.intercept_, standardised, y)
    ours = objective_at(probe.weight.cpu(), probe.bias.cpu(), standardised, y)
    assert abs(ours - optimum) <= TOLERANCE[dtype] * optimum
    predicted = probe.predict(torch.tensor(x_test, dtype=dtype, device=device)).cpu().numpy()
    assert (predicted == reference.predict(scaler.transform(x_test))).all()
    accuracy = probe.accuracy(torch.tensor(x_test, dtype=dtype, device=device), torch.tensor(y_test, device=device))
    assert 0.5 < accuracy < 0.95  # predictions near the class boundaries exist


def test_a_probe_with_a_c_ten_percent_off_misses_the_optimum_by_more_than_the_tolerance():
    """The comparison above can fail: a probe fitted with C = 1.1 instead of 1 is 1.1e-5 above the
    optimum (measured), over 5 times float32's tolerance."""
    x, y, _, _ = overlapping_classes()
    scaler, reference = sklearn_probe(x, y, 1.0, tol=1e-10)
    standardised = scaler.transform(x)
    optimum = objective_at(reference.coef_, reference.intercept_, standardised, y)
    wrong = fit_linear_probe(torch.tensor(x), torch.tensor(y), 1.1, max_iter=10_000, tol=1e-10)
    assert objective_at(wrong.weight, wrong.bias, standardised, y) - optimum > 5 * TOLERANCE[torch.float32] * optimum


def test_at_scikit_learns_own_tolerance_the_probes_agree_on_the_test_set():
    """The settings the pipeline runs with (tol 1e-4): both stop near, not at, the optimum, by
    different paths; the test accuracies agree within one example in 300."""
    x, y, x_test, y_test = overlapping_classes()
    scaler, reference = sklearn_probe(x, y, 1.0, tol=1e-4)
    probe = fit_linear_probe(torch.tensor(x, dtype=torch.float32), torch.tensor(y), 1.0, 500)
    ours = probe.accuracy(torch.tensor(x_test, dtype=torch.float32), torch.tensor(y_test))
    assert abs(ours - reference.score(scaler.transform(x_test), y_test)) <= 1 / len(y_test) + 1e-12


def test_probe_separates_separable_features_and_not_random_labels():
    rng = np.random.default_rng(0)
    labels = torch.as_tensor(rng.integers(0, 3, 600))
    features = torch.as_tensor(rng.normal(size=(600, 10)) + 5 * np.eye(3, 10)[labels.numpy()], dtype=torch.float32)
    assert fit_linear_probe(features[:400], labels[:400], 1.0, 200).accuracy(features[400:], labels[400:]) == 1.0
    shuffled = labels[torch.randperm(600, generator=torch.Generator().manual_seed(0))]
    assert fit_linear_probe(features[:400], shuffled[:400], 1.0, 200).accuracy(features[400:], shuffled[400:]) < 0.5


def test_labels_absent_from_training_are_never_predicted():
    x = torch.randn(60, 4, dtype=torch.float64)
    y = torch.tensor([2, 7] * 30)  # classes 2 and 7 only, as scikit-learn's classes_
    probe = fit_linear_probe(x, y, 1.0, max_iter=100)
    assert probe.classes.tolist() == [2, 7] and set(probe.predict(torch.randn(50, 4, dtype=torch.float64)).tolist()) <= {2, 7}
