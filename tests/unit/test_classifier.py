from pathlib import Path

import numpy as np
import pytest

from todeval.nodes.judges.classifier import MLPClassifier, TrainingConfig, best_f1_threshold


def _xor_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    # Not linearly separable: the hidden layer has to do real work.
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, 2)).astype(np.float32)
    y = (x[:, 0] * x[:, 1]) > 0
    return x, y


def test_fit_learns_a_nonlinear_boundary_and_round_trips(tmp_path: Path) -> None:
    x, y = _xor_data(4000, 0)
    xv, yv = _xor_data(1000, 1)
    model = MLPClassifier.fit(
        x, y, valid_features=xv, valid_labels=yv, config=TrainingConfig(hidden=32, epochs=40)
    )
    xt, yt = _xor_data(1000, 2)
    accuracy = float(np.mean((model.predict_proba(xt) >= model.threshold) == yt))
    assert accuracy > 0.9

    path = tmp_path / "model.npz"
    model.save(path)
    loaded = MLPClassifier.load(path)
    assert loaded.threshold == model.threshold
    # Weights are stored in float16: predictions agree closely, not bit for bit.
    np.testing.assert_allclose(loaded.predict_proba(xt), model.predict_proba(xt), atol=2e-3)


def test_best_f1_threshold_prefers_the_separating_cut() -> None:
    probabilities = np.array([0.1, 0.2, 0.3, 0.72, 0.8, 0.9], dtype=np.float32)
    labels = np.array([False, False, False, True, True, True])
    threshold = best_f1_threshold(probabilities, labels)
    assert 0.3 < threshold <= 0.72


def test_blocks_of_rows_get_the_bits_of_one_call_per_block() -> None:
    """Issue 32: the element-wise steps run over every block at once, the products per block."""
    rng = np.random.default_rng(3)
    model = MLPClassifier(
        w1=rng.standard_normal((43, 128)).astype(np.float32),
        b1=rng.standard_normal(128).astype(np.float32),
        w2=rng.standard_normal((128, 1)).astype(np.float32),
        b2=rng.standard_normal(1).astype(np.float32),
        mean=rng.standard_normal(43).astype(np.float32),
        scale=rng.uniform(0.5, 2.0, 43).astype(np.float32),
    )
    for block, blocks in ((1, 5), (37, 1), (37, 9), (64, 3)):
        rows = rng.standard_normal((block * blocks, 43)).astype(np.float32)
        one_by_one = [model.predict_proba(rows[k : k + block]) for k in range(0, len(rows), block)]
        assert (
            model.predict_proba_blocks(rows, block).tobytes()
            == np.concatenate(one_by_one).tobytes()
        )
    with pytest.raises(ValueError, match="runs of 4"):
        model.predict_proba_blocks(np.zeros((6, 43), np.float32), 4)
