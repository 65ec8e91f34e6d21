"""`make bench`'s plumbing at tiny sizes on the CPU: every implementation is timed in
its own process and lands in one record with the ratios; the CUDA path is the same
plan with the device swapped, and --device cuda without a GPU is refused at once.
Timings are never asserted."""
import json
import subprocess

import pytest
import torch

from albert_rerun.engine import bench


def _has_today() -> bool:
    from albert_rerun.paths import repo_root
    return subprocess.run(["git", "-C", str(repo_root()), "cat-file", "-e",
                           f"{bench.TODAY}^{{commit}}"], capture_output=True).returncode == 0


def test_bench_times_ours_hf_and_todays_loop_in_one_record(tmp_path, capsys):
    """Two loops side by side (``packed``) too, for a second each: the device script's
    dry run checks them on the script's command line, but it is opt-in (make test-long)."""
    output = tmp_path / "bench.json"
    result = bench.bench("smoke", "cpu", repeats=1, loop_steps=4, bare_steps=3, hf_steps=2,
                         compile=False, today=True, packed=(2,), packed_seconds=1.0,
                         threads=1, output=output)
    kinds = {(m["kind"], m["style"]) for m in result["measurements"]}
    assert {("loop", "albert"), ("bare", "albert"), ("hf", "albert"), ("bare", "bert"),
            ("hf", "bert")} <= kinds
    for m in result["measurements"]:
        assert m["tokens_per_s"] > 0 and m["fraction_of_peak"] > 0, m
        assert m["rounds"][0]["steps"] == m["steps"]
    assert {"loop_over_bare", "ours_over_hf_albert", "ours_over_hf_bert"} <= set(result["ratios"])
    if _has_today():
        assert ("today", "albert") in kinds and "ours_over_today" in result["ratios"]
    (packed,) = result["packed"]
    assert packed["parties"] == 2 and len(packed["rounds"]) == 2
    assert packed["aggregate_tokens_per_s"] == pytest.approx(
        sum(r["tokens_per_s"] for r in packed["rounds"]))
    assert all(r["tokens_per_s"] > 0 for r in packed["rounds"])
    assert result["matmul_peak_gflops"] > 0 and result["matmul_peak_after_gflops"] > 0
    stored = json.loads(output.read_text())
    assert stored["ratios"] == result["ratios"] and stored["provenance"]["git_commit"]
    bench.report(result)
    assert "loop_over_bare" in capsys.readouterr().out


def test_ratios_compare_rates_in_the_right_direction():
    def m(kind, style, compiled, step_s, tokens_per_s=1.0):
        return {"kind": kind, "style": style, "compile": compiled, "step_s": step_s,
                "cpu_step_s": step_s, "tokens_per_s": tokens_per_s}
    got = bench.ratios([m("loop", "albert", False, 0.2, 900), m("bare", "albert", False, 0.1),
                        m("today", "albert", False, 0.3, 300), m("hf", "albert", False, 0.4),
                        m("loop", "albert", True, 0.25, 700), m("bare", "albert", True, 0.08),
                        {"kind": "hf", "style": "bert", "compile": False, "rounds": []}])
    assert got["loop_over_bare"] == pytest.approx(0.5)  # the loop at half the bare rate
    assert got["ours_over_today"] == pytest.approx(3.0)
    assert got["ours_over_hf_albert"] == pytest.approx(4.0)
    assert got["compiled_over_eager_loop"] == pytest.approx(0.8)  # compiled: slower
    assert "ours_over_hf_bert" not in got  # a kind that failed gives no ratio


def test_the_cuda_path_is_the_same_plan_on_another_device():
    cpu = bench.plan("gpu", "cpu", 400, 100, 50)
    cuda = bench.plan("gpu", "cuda", 400, 100, 50)
    assert [{**s, "device": "cuda"} for s in cpu] == cuda
    assert {s["kind"] for s in cuda} == {"loop", "bare", "hf", "today"}
    assert {s["compile"] for s in cuda if s["kind"] in ("loop", "bare")} == {True, False}
    without_hf = bench.plan("gpu", "cuda", 400, 100, 50, hf=False)
    assert without_hf == [s for s in cuda if s["kind"] != "hf"]
    loop = cuda[0]  # timed over whole masking chunks
    assert loop["steps"] % 8 == 0 and loop["warmup"] % 8 == 0  # 1024 / batch 128


def test_bench_refuses_a_missing_gpu_at_once(monkeypatch, capsys):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    monkeypatch.setattr(bench, "matmul_peak", lambda *a, **k: pytest.fail("measured"))
    with pytest.raises(SystemExit):
        bench.main(["--device", "cuda"])
    assert "no CUDA device" in capsys.readouterr().err
