"""nbval holds under other CPU kernels (issue #39): the committed outputs of the SOP/NSP
chapter (its bag-of-pieces logistic regressions run on OpenBLAS; a six-digit weight of
one read 1.228064 on one CPU and 1.228063 on another) compare equal when the notebook
runs under another OpenBLAS core type, PyTorch's other vector kernels and two torch
threads (tests/nbval_variants.py).

Here the notebook reads the smoke runs that nbval's run of the committed notebooks
trained into this worker's store (the root conftest.py runs this file in the book's
group, after them); the
documented check of every notebook, trained afresh under each variant, is
``make nbval-variants`` (the same module).
"""
import shutil

import pytest

from nbval_variants import ROOT, kernels, openblas_coretype, run_nbval, variant_env, variants

NOTEBOOK = ROOT / "notebooks" / "04_sop_nsp.ipynb"
EXPECTED = {"openblas": ("openblas", [openblas_coretype()]),
            "aten-default": ("aten", "DEFAULT"),
            "aten-avx2": ("aten", "AVX2"),
            "threads-2": ("torch_threads", 2)}


def test_openblas_variant_is_the_kernel_this_machine_does_not_run():
    assert openblas_coretype({"avx2", "avx512f"}) == "Haswell"
    assert openblas_coretype({"avx", "avx2"}) == "Sandybridge"
    assert set(EXPECTED) == set(variants())


@pytest.mark.slow
@pytest.mark.parametrize("name", tuple(variants()))
def test_nbval_passes_under_variant(name, tmp_path):
    env = variant_env(name)
    key, value = EXPECTED[name]
    ran = kernels(env)
    assert ran[key] == value, ran  # the variant took: threadpoolctl / torch report it
    # a copy outside the repository, so that the root conftest.py's fresh store does not
    # apply: the kernel reads this worker's $ALBERT_RERUN_RESULTS
    target = tmp_path / NOTEBOOK.name
    shutil.copyfile(NOTEBOOK, target)
    result = run_nbval([target], env, tmp_path)
    assert result.returncode == 0, f"{name} ({variants()[name]}, {ran}):\n" \
        + result.stdout[-8000:]
