"""The training session: interruption and resumption bit for bit, models in lockstep against
separate runs, schedules, the divergence guard, the stopping rule and the progress lines."""

import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from linearlens.models.mlp import mlp
from linearlens.train.batches import EpochBatches, GeneratorBatches, seeded_generator
from linearlens.train.learners import LockstepLearner, SupervisedLearner
from linearlens.train.progress import Progress
from linearlens.train.schedules import AnyOf, AtSteps, Every, LossThresholds, StepDecay, Warmup, log_steps
from linearlens.train.session import Checkpoint, DivergenceGuard, Scheduled, Session, TrainingInterrupted
from linearlens.train.tasks import accuracy


def toy_task(n=40, features=5, classes=3, seed=0):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=generator, dtype=torch.float64)
    return x, (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long() * (classes - 2)


def new_model(seed=0, features=5, classes=3):
    torch.manual_seed(seed)
    return mlp(features, [16], classes).double()


def parameters(model):
    return {name: p.detach().clone() for name, p in model.named_parameters()}


class Fit:
    """A probe: training accuracy, and the mean training loss since the last evaluation."""

    def __init__(self, model, x, y):
        self.model, self.x, self.y = model, x, y

    def __call__(self, session):
        with torch.no_grad():
            return {"accuracy": accuracy(self.model(self.x), self.y), "loss": session.mean_loss()}


def augmented_session(state_path, interrupt_at=None, order="generator"):
    """Adam with warm-up and step decay, augmentation drawn from the generator that also draws
    the batch order (or from the step), a probe every 5 steps, snapshots at 10 and 30."""
    x, y = toy_task()
    model = new_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    generator = torch.Generator().manual_seed(7)
    batches = GeneratorBatches(len(x), 12, generator) if order == "generator" else EpochBatches(len(x), 12, 7)

    def noisy(inputs, step):  # draws from the order's generator, or from one seeded by the step
        draws = generator if order == "generator" else seeded_generator(7, 1, step)
        return inputs + 0.1 * torch.randn(inputs.shape, generator=draws, dtype=inputs.dtype)

    decay = StepDecay([20], 0.5)
    learner = SupervisedLearner(model, optimizer, F.cross_entropy, x, y, augment=noisy,
                                learning_rate=lambda step: Warmup(5)(step) * decay(step))
    probes = [Fit(model, x, y)]
    if interrupt_at is not None:
        def interrupt(session):
            if session.step == interrupt_at:
                os.kill(os.getpid(), signal.SIGTERM)  # what SLURM sends before it kills a job
            return {}
        probes.append(interrupt)
    session = Session(learner, batches, 40, probes=probes, evaluate_at=Every(5), snapshot_at=AtSteps([10, 30]),
                      checkpoint=Checkpoint(state_path, key="run-a", every_s=3600))
    return session, model


@pytest.mark.parametrize("order", ["generator", "epochs"])
def test_an_interrupted_session_resumes_to_the_same_parameters_bit_for_bit(tmp_path, order):
    whole, whole_model = augmented_session(tmp_path / "whole.pt", order=order)
    expected = whole.run()
    state = tmp_path / "state.pt"
    interrupted, _ = augmented_session(state, interrupt_at=15, order=order)
    with pytest.raises(TrainingInterrupted, match="interrupted at step 15/40"):
        interrupted.run()
    assert state.exists()
    resumed, resumed_model = augmented_session(state, order=order)  # a fresh process would build this
    record = resumed.run()
    assert not state.exists()  # a finished run leaves no state behind
    for name, value in parameters(whole_model).items():
        assert torch.equal(parameters(resumed_model)[name], value), name
    pd.testing.assert_frame_equal(record.frame(), expected.frame())
    assert record.steps == 40 and record.ended == "finished"
    assert sorted(record.snapshots) == [10, 30]
    for step in (10, 30):
        for name, value in expected.snapshots[step]["model"].items():
            assert torch.equal(record.snapshots[step]["model"][name], value)


def test_a_state_from_another_run_is_not_resumed(tmp_path, caplog):
    state = tmp_path / "state.pt"
    session, _ = augmented_session(state)
    session.run(max_steps=12)
    assert state.exists()
    expected, expected_model = augmented_session(tmp_path / "other.pt")
    expected.run()
    other, other_model = augmented_session(state)
    other.checkpoint.key = "run-b"
    with caplog.at_level(logging.INFO, logger="linearlens.train"):
        record = other.run()
    assert "state of another run" in caplog.text
    assert record.rows[0]["step"] == 0
    for name, value in parameters(expected_model).items():
        assert torch.equal(parameters(other_model)[name], value)


def test_a_damaged_state_is_reported_and_training_starts_afresh(tmp_path, caplog):
    state = tmp_path / "state.pt"
    state.write_bytes(b"PK\x03\x04 not a checkpoint")
    session, _ = augmented_session(state)
    with caplog.at_level(logging.INFO, logger="linearlens.train"):
        record = session.run()
    assert "damaged" in caplog.text and str(state) in caplog.text
    assert record.steps == 40


@pytest.mark.parametrize("optimiser", [
    lambda params: torch.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-3),
    lambda params: torch.optim.Adam(params, lr=0.01),
])
def test_models_in_lockstep_match_separate_runs(optimiser):
    """S and S′ differ in example 3 (Karp ch. 2), beside a third member on another sample: the
    members of one batched computation end where separate sessions on the same batches end."""
    x, y = toy_task()
    pool_x = torch.cat([x, torch.full((1, 5), 2.0, dtype=torch.float64)])  # z = the last pool row
    pool_y = torch.cat([y, torch.tensor([2])])
    s = torch.arange(len(x))
    s_prime = s.clone()
    s_prime[3] = len(x)  # S′: example 3 replaced by z
    other_sample = torch.randperm(len(x) + 1, generator=torch.Generator().manual_seed(5))[:len(x)]
    examples = torch.stack([s, s_prime, other_sample])  # a pair, and a member of another pair
    steps, batch = 25, 8
    separate = []
    for member in range(len(examples)):
        model = new_model()
        learner = SupervisedLearner(model, optimiser(model.parameters()), F.cross_entropy, pool_x[examples[member]],
                                    pool_y[examples[member]], learning_rate=Warmup(3))
        Session(learner, EpochBatches(len(x), batch, 11), steps).run()
        separate.append(parameters(model))
    start = parameters(new_model())
    lockstep = LockstepLearner(new_model(), [start] * len(examples), optimiser, F.cross_entropy, pool_x, pool_y, examples,
                               learning_rate=Warmup(3))
    record = Session(lockstep, EpochBatches(len(x), batch, 11), steps).run()
    assert record.steps == steps and lockstep.member_losses.shape == (3,)
    for member in range(len(examples)):
        trained = lockstep.member(member)
        for name, value in separate[member].items():
            torch.testing.assert_close(trained[name], value, rtol=0, atol=1e-12)
    first = next(iter(start))
    assert not torch.equal(lockstep.member(0)[first], lockstep.member(1)[first])


def test_lockstep_members_keep_their_own_batch_norm_statistics():
    """A BatchNorm network in lockstep (ResNet-20 in Karp ch. 2): each member's parameters and
    running statistics end where a separate run on its own set ends, and evaluation uses them."""
    x, y = toy_task()
    pool_x = torch.cat([x, torch.full((1, 5), 2.0, dtype=torch.float64)])
    pool_y = torch.cat([y, torch.tensor([2])])
    s = torch.arange(len(x))
    s_prime = s.clone()
    s_prime[3] = len(x)
    examples = torch.stack([s, s_prime])

    def new_bn_model():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(5, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3)).double()

    def optimiser(params):
        return torch.optim.SGD(params, lr=0.05, momentum=0.9)

    steps, batch = 20, 8
    separate = []
    for member in range(len(examples)):
        model = new_bn_model()
        learner = SupervisedLearner(model, optimiser(model.parameters()), F.cross_entropy, pool_x[examples[member]],
                                    pool_y[examples[member]])
        Session(learner, EpochBatches(len(x), batch, 11), steps).run()
        separate.append(model)
    model = new_bn_model()
    lockstep = LockstepLearner(model, [parameters(model)] * 2, optimiser, F.cross_entropy, pool_x, pool_y, examples)
    Session(lockstep, EpochBatches(len(x), batch, 11), steps).run()
    evaluated = lockstep.outputs(x, train=False, shared_inputs=True)
    for member, alone in enumerate(separate):
        for name, value in alone.state_dict().items():
            torch.testing.assert_close(lockstep.member_state(member)[name], value, rtol=0, atol=1e-12)
        alone.eval()
        torch.testing.assert_close(evaluated[member], alone(x).detach(), rtol=0, atol=1e-12)
    assert not torch.equal(lockstep.member_state(0)["1.running_mean"], lockstep.member_state(1)["1.running_mean"])


def test_loss_thresholds_fire_once_at_the_first_crossing_and_remember_it():
    thresholds = LossThresholds([1.0, 0.5, 0.25])
    fired = [step for step, loss in enumerate([2.0, 0.9, 0.95, 0.4, 0.3, 0.2, 0.1], start=1)
             if thresholds.due(step, loss)]
    assert fired == [2, 4, 6]  # 0.4 crosses 0.5 only; 0.2 crosses 0.25
    resumed = LossThresholds([1.0, 0.5, 0.25])
    resumed.load_state_dict(thresholds.state_dict())
    assert not resumed.due(8, 0.05)
    both = LossThresholds([1.0, 0.5])
    assert both.due(1, 0.3) and both.crossed == [1.0, 0.5] and not both.due(0, None)


def test_schedules_combine_and_every_stateful_part_sees_every_step():
    thresholds = LossThresholds([0.5])
    schedule = Every(10) | AtSteps([3]) | thresholds
    assert isinstance(schedule, AnyOf) and len(schedule.parts) == 3
    assert [s for s in range(12) if schedule.due(s, 1.0)] == [0, 3, 10]
    assert schedule.due(5, 0.1) and thresholds.crossed == [0.5]  # asked even though AtSteps was not due
    steps = log_steps(1000, 20)
    assert steps[:30] == list(range(30)) and steps[-1] == 1000 and len(steps) < 60


def test_the_last_step_is_always_evaluated_and_a_stopping_rule_ends_the_run():
    x, y = toy_task()
    model = new_model()
    learner = SupervisedLearner(model, torch.optim.SGD(model.parameters(), lr=0.1), F.cross_entropy, x, y)
    record = Session(learner, EpochBatches(len(x), 10, 0), 30, probes=[Fit(model, x, y)],
                     evaluate_at=AtSteps([0, 5]), stop=lambda session: session.step == 8,
                     stop_at=Every(4)).run()
    assert [row["step"] for row in record.rows] == [0, 5, 8] and record.ended == "stopped"
    assert record.rows[1]["loss"] == pytest.approx(record.rows[1]["loss"])  # mean over steps 1–5: a number
    finished = Session(SupervisedLearner(model, torch.optim.SGD(model.parameters(), lr=0.1), F.cross_entropy, x, y),
                       EpochBatches(len(x), 10, 0), 7, probes=[Fit(model, x, y)], evaluate_at=AtSteps([0])).run()
    assert [row["step"] for row in finished.rows] == [0, 7] and finished.ended == "finished"


def test_the_divergence_guard_ends_a_run_whose_loss_explodes():
    x, y = toy_task()
    model = new_model()
    learner = SupervisedLearner(model, torch.optim.SGD(model.parameters(), lr=50.0), F.cross_entropy, x, y)
    record = Session(learner, EpochBatches(len(x), 10, 0), 200, probes=[Fit(model, x, y)],
                     evaluate_at=Every(5), guard=DivergenceGuard(3.0)).run()
    assert record.diverged and record.steps < 200 and record.rows[-1]["step"] == record.steps


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_progress_lines_say_step_loss_rate_and_time_left(caplog):
    clock = FakeClock()
    progress = Progress(100, every_s=30, clock=clock, name="toy")
    with caplog.at_level(logging.INFO, logger="linearlens.train"):
        progress.start(0)
        for step in range(1, 101):
            clock.now += 1.0  # one step per second: a line every 30 steps
            progress.step(step, torch.tensor(0.5))
        progress.event("probe cheap", 50, 0.2)
        progress.event("probe gram", 60, 4.0)
        progress.end(100, "finished")
    lines = [r.getMessage() for r in caplog.records]
    periodic = [line for line in lines if "left" in line]
    assert len(periodic) == 3
    assert periodic[0] == "step 30/100 (30%): loss 0.5, 1 steps/s, 1:10 left"
    assert any("probe gram (4.0 s)" in line for line in lines)
    assert not any("probe cheap" in line for line in lines)  # quick runs stay quiet
    assert lines[0] == "toy: 100 steps" and "finished at step 100/100 after 1:40" in lines[-1]


README_IMPORTS = """
import torch
import torch.nn.functional as F
from linearlens.train.batches import EpochBatches
from linearlens.train.learners import SupervisedLearner
from linearlens.train.schedules import LossThresholds, log_spaced
from linearlens.train.session import Checkpoint, Session, run_key
from linearlens.train.tasks import classification_metrics
"""


def test_the_documented_session_example_runs(tmp_path):
    readme = (Path(__file__).parents[1] / "docs" / "library.md").read_text()
    block = re.search(r"```python\n# a training run[^\n]*\n(.*?)```", readme, re.S).group(1)
    x, y = toy_task()
    names = {"model": new_model(), "x_train": x[:30], "y_train": y[:30], "x_test": x[30:], "y_test": y[30:],
             "seed": 0, "steps": 12, "state_path": tmp_path / "state.pt", "run": {"lr": 0.1}, "inputs_version": "v1"}
    exec(compile(README_IMPORTS + block, "docs/library.md", "exec"), names)
    frame = names["record"].frame()
    assert list(frame.columns) == ["step", "test_accuracy", "train_loss"] and frame["step"].iloc[-1] == 12


def test_a_probe_with_its_own_schedule_runs_only_then():
    x, y = toy_task()
    model = new_model()
    learner = SupervisedLearner(model, torch.optim.SGD(model.parameters(), lr=0.1), F.cross_entropy, x, y)
    calls = []

    def gram(session):
        calls.append(session.step)
        return {"gram_trace": float(sum(p.detach().pow(2).sum() for p in model.parameters()))}

    record = Session(learner, EpochBatches(len(x), 10, 0), 12, probes=[Fit(model, x, y), Scheduled(gram, AtSteps([0, 7]))],
                     evaluate_at=Every(4), snapshot_at=Every(6)).run()
    assert [row["step"] for row in record.rows] == [0, 4, 7, 8, 12]
    assert calls == [0, 7, 12]  # and at the last step, where every probe runs
    assert "gram_trace" not in record.rows[1] and "accuracy" not in record.rows[2]
    assert sorted(record.snapshots) == [0, 6, 12]


SLOW_RUN = """
import logging, sys, time
logging.basicConfig(level=logging.INFO)
sys.path.insert(0, {tests!r})
from test_session import augmented_session

session, _ = augmented_session({state!r})
session.probes.append(lambda s: time.sleep(0.05) or {{}})  # slow enough to be stopped mid-run
session.progress.every_s = 0
session.run()
"""


def test_a_job_stopped_by_sigterm_saves_its_state_and_the_rerun_finishes_it(tmp_path):
    """What SLURM does to a job at its time limit: SIGTERM to the process, which ends its step,
    saves and exits non-zero; the rerun resumes and ends where an uninterrupted run ends."""
    state = tmp_path / "state.pt"
    code = SLOW_RUN.format(tests=str(Path(__file__).parent), state=str(state))
    job = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
    for line in job.stderr:
        if "step 6/40" in line:  # well into the run
            job.send_signal(signal.SIGTERM)
            break
    _, rest = job.communicate(timeout=120)
    assert job.returncode != 0 and "TrainingInterrupted" in rest and state.exists()
    saved_step = torch.load(state, weights_only=False)["session"]["step"]
    assert 6 <= saved_step < 40
    resumed, resumed_model = augmented_session(state)
    record = resumed.run()
    whole, whole_model = augmented_session(tmp_path / "whole.pt")
    expected = whole.run()
    for name, value in parameters(whole_model).items():
        assert torch.equal(parameters(resumed_model)[name], value), name
    pd.testing.assert_frame_equal(record.frame(), expected.frame())


def test_a_long_probe_keeps_the_log_alive(caplog):
    progress = Progress(10, every_s=0.05, event_s=0.0)
    with caplog.at_level(logging.INFO, logger="linearlens.train"):
        with progress.activity("probe gram", 4):
            time.sleep(0.28)
    lines = [r.getMessage() for r in caplog.records]
    assert 3 <= sum("probe gram still running after" in line for line in lines) <= 6
    assert lines[-1].startswith("step 4: probe gram (0.")


def test_a_session_evaluates_where_the_training_loss_first_crosses_each_threshold():
    def session(evaluate_at):
        x, y = toy_task()
        model = new_model()
        learner = SupervisedLearner(model, torch.optim.SGD(model.parameters(), lr=0.5), F.cross_entropy, x, y)
        return Session(learner, EpochBatches(len(x), None, 0), 60, probes=[lambda s: {"loss": float(s.losses[-1])}
                                                                           if s.losses else {}],
                       evaluate_at=evaluate_at)

    every_step = session(Every(1)).run().frame().dropna()
    thresholds = [1.0, 0.8, 0.6]
    expected = sorted({int(every_step.loc[every_step["loss"] < t, "step"].min()) for t in thresholds})
    record = session(LossThresholds(thresholds)).run()
    assert [row["step"] for row in record.rows] == [*expected, 60] and len(expected) >= 2
