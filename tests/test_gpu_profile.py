"""The gpu profile without a GPU: a gpu notebook on a CPU stops with its predicted time
unless allowed."""
import pytest
import torch

from albert_rerun.book.setup import notebook_setup


def test_a_gpu_notebook_on_a_cpu_states_its_predicted_time(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match=r"would train for about [\d,]+ hours here") as info:
        notebook_setup("gpu")
    assert "allow_cpu=True" in str(info.value)
    assert notebook_setup("gpu", allow_cpu=True).profile.name == "gpu"
    assert notebook_setup("cpu").profile.name == "cpu"
