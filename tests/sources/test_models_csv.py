"""The bundled model-architecture table: valid against its schema, every row cited, and its
figures consistent with one another (so a typo in a head count or a parameter count shows)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from pipeline.inputs.evidence.estimate import read_reference, reference_file
from schemas.architecture import MODEL_ARCHITECTURES
from schemas.table import ValidationFailed


@pytest.fixture(scope="module")
def models() -> pl.DataFrame:
    return read_reference(reference_file(MODEL_ARCHITECTURES), MODEL_ARCHITECTURES)


def test_table_validates_and_holds_the_issue_models(models):
    wanted = {"Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.1-405B", "Qwen2.5-7B", "Qwen2.5-72B",
              "Mixtral-8x7B-v0.1", "Mixtral-8x22B-Instruct-v0.1"}
    assert wanted <= set(models["model"])
    assert models.height >= 10


def test_every_row_cites_its_config(models):
    for row in models.iter_rows(named=True):
        assert row["source_url"].startswith("https://huggingface.co/")
        assert row["source_url"].endswith("/config.json")
        # the cited repository is the model itself
        assert f"/{row['model']}/" in row["source_url"]
        assert row["source_date"] is not None
        assert row["licence"]


def test_grouped_query_attention_is_consistent(models):
    # query heads are a whole multiple of KV heads (GQA groups), MoE columns come together,
    # active parameters never exceed the resident ones and equal them for a dense model
    assert (models["q_heads"] % models["kv_heads"] == 0).all()
    moe = models.filter(pl.col("experts").is_not_null())
    dense = models.filter(pl.col("experts").is_null())
    assert moe["experts_per_token"].null_count() == 0
    assert (moe["active_params"] < moe["params"]).all()
    assert dense["experts_per_token"].null_count() == dense.height
    assert (dense["active_params"] == dense["params"]).all()


def test_parameter_counts_follow_from_the_architecture(models):
    # Parameters ~ layers x (attention q,o: 2 x hidden x q_heads x head_dim; k,v: 2 x hidden x
    # kv_heads x head_dim; MLP: 3 x hidden x intermediate per expert) + vocab x hidden x
    # (1 if tied else 2). Norms, biases and routers are under 0.1%. E.g. Llama-3.1-8B:
    # 32 x (2 x 4096 x 4096 + 2 x 4096 x 1024 + 3 x 4096 x 14336) + 2 x 128256 x 4096
    # = 32 x 218,103,808 + 1,050,673,152 = 8,029,995,008 vs 8,030,261,248 stored (0.003%).
    h, hd = pl.col("hidden_size"), pl.col("head_dim")
    attention = 2 * h * pl.col("q_heads") * hd + 2 * h * pl.col("kv_heads") * hd
    mlp = 3 * h * pl.col("intermediate_size")
    embeddings = pl.col("vocab_size") * h * pl.when(pl.col("tied_embeddings")).then(1).otherwise(2)
    checked = models.with_columns(
        (pl.col("layers") * (attention + pl.col("experts").fill_null(1) * mlp) + embeddings)
        .alias("total"),
        (pl.col("layers") * (attention + pl.col("experts_per_token").fill_null(1) * mlp)
         + embeddings).alias("active"),
    ).with_columns(
        ((pl.col("params") / pl.col("total") - 1).abs()).alias("total_gap"),
        ((pl.col("active_params") / pl.col("active") - 1).abs()).alias("active_gap"),
    )
    off = checked.filter((pl.col("total_gap") > 1e-3) | (pl.col("active_gap") > 1e-3))
    assert off.height == 0, off.select("model", "params", "total", "active_params", "active")


def test_a_broken_row_is_rejected_with_its_column(tmp_path: Path):
    text = reference_file(MODEL_ARCHITECTURES).content.decode("utf-8").splitlines()
    header, first = text[0], text[1].split(",")
    first[header.split(",").index("kv_heads")] = "0"
    broken = tmp_path / "models.csv"
    broken.write_text("\n".join([header, ",".join(first)]) + "\n", encoding="utf-8")
    with pytest.raises(ValidationFailed) as err:
        read_reference(reference_file(MODEL_ARCHITECTURES, broken), MODEL_ARCHITECTURES)
    assert "kv_heads" in err.value.report()
    assert str(broken) in err.value.report()
