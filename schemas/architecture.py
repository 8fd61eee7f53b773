"""Model architectures: the shape figures a capacity estimate needs (layers, query and KV heads,
head dim, widths, vocabulary, total and active parameters), each row citing the model's
published config.json.

Counts are plain numbers whose unit is the column's name (`layers`, `kv_heads`, `params`).
Bounds only catch typos and unit slips (a parameter count given in billions, a head dim of 0).
"""

from __future__ import annotations

import polars as pl

from schemas.fields import declare
from schemas.market import CITED
from schemas.table import Table

declare("model", pl.String(), "Model id as its publisher names it (the Hugging Face repository "
        "name without the organisation), e.g. Llama-3.1-8B.",
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
declare("layers", pl.Int64(), "Transformer decoder layers (num_hidden_layers).", unit="layers",
        ge=1, le=1_000)
declare("q_heads", pl.Int64(), "Attention query heads per layer (num_attention_heads).",
        unit="heads", ge=1, le=1_024)
declare("kv_heads", pl.Int64(), "Key/value heads per layer (num_key_value_heads): fewer than "
        "the query heads under GQA, 1 under MQA.", unit="heads", ge=1, le=1_024)
declare("head_dim", pl.Int64(), "Width of one attention head (head_dim, or hidden_size / "
        "num_attention_heads when the config gives none).", unit="dimensions", ge=1, le=4_096)
declare("hidden_size", pl.Int64(), "Residual stream width (hidden_size).", unit="dimensions",
        ge=1, le=100_000)
declare("intermediate_size", pl.Int64(), "MLP inner width (intermediate_size; per expert for "
        "a mixture of experts).", unit="dimensions", ge=1, le=1_000_000)
declare("vocab_size", pl.Int64(), "Tokenizer vocabulary (vocab_size): rows of the embedding "
        "and of the LM head.", unit="tokens", ge=1, le=10_000_000)
declare("tied_embeddings", pl.Boolean(), "Whether the LM head shares the embedding matrix "
        "(tie_word_embeddings).")
declare("params", pl.Float64(), "Total parameters held in memory (all experts of a MoE), "
        "counted from the architecture.", unit="parameters", gt=1e6, le=1e13)
declare("active_params", pl.Float64(), "Parameters used for one token (equal to params for a "
        "dense model; shared layers plus the routed experts for a MoE).", unit="parameters",
        gt=1e6, le=1e13)
declare("experts", pl.Int64(), "Routed experts per MoE layer (num_local_experts); null for a "
        "dense model.", unit="experts", ge=2, le=10_000)
declare("experts_per_token", pl.Int64(), "Experts each token is routed to "
        "(num_experts_per_tok); null for a dense model.", unit="experts", ge=1, le=10_000)


MODEL_ARCHITECTURES = Table(
    "core__model_architectures",
    "Open-weight LLM architectures from their published config.json, for capacity estimates.",
    ("model", "layers", "q_heads", "kv_heads", "head_dim", "hidden_size",
     "intermediate_size", "vocab_size", "tied_embeddings", "params", "active_params",
     "experts", "experts_per_token", "note", *CITED),
    key=("model",),
    required=("layers", "q_heads", "kv_heads", "head_dim", "hidden_size",
              "intermediate_size", "vocab_size", "tied_embeddings", "params", "active_params",
              *CITED),
)
