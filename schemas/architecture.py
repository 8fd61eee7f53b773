"""Model architectures: the shape figures a capacity estimate needs (layers, query and KV heads,
head dim, widths, vocabulary, whether the embedding is tied and looked up, total and
active parameters, experts), each row citing the model's
published config.json.

Counts are plain numbers whose unit is the column's name (`layers`, `kv_heads`, `params`).
Bounds (declared with the fields, in schemas/fields.toml) only catch typos and unit slips (a
parameter count given in billions, a head dim of 0).
"""

from __future__ import annotations

from schemas.market import CITED
from schemas.table import Table

MODEL_ARCHITECTURES = Table(
    "core__model_architectures",
    "Open-weight LLM architectures from their published config.json, for capacity estimates.",
    ("model", "layers", "q_heads", "kv_heads", "head_dim", "hidden_size",
     "intermediate_size", "vocab_size", "tied_embeddings", "lookup_embeddings", "params",
     "active_params", "experts", "experts_per_token", "note", *CITED),
    key=("model",),
    required=("layers", "q_heads", "kv_heads", "head_dim", "hidden_size",
              "intermediate_size", "vocab_size", "tied_embeddings", "lookup_embeddings", "params",
              "active_params", *CITED),
)
