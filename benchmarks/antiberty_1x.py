"""antiberty 1.x's own runner against glauber's AntiBERTy: the same model, logit for logit.

antiberty 1.0.0 ships no weights; it reads ``$ANTIBERTY_WEIGHTS_DIR`` (``config.json`` with
``model.safetensors`` or ``pytorch_model.bin``). This check points it at the 0.1.3 checkpoint
that glauber loads, runs antiberty 1.0.0's ``AntiBERTyRunner`` on every shipped chain with one
masked residue every 7 positions, and compares its MLM logits (``prediction_logits`` at the
mask, log-softmaxed over the 20 amino acids in float64) with glauber's log-conditionals
(``load_antiberty``, float64 head). The target is agreement to float32 rounding of the head
(``<= 1e-4`` in log-probability) and the same argmax everywhere.

It needs the package index once: antiberty 1.0.0's wheel is fetched with ``pip download
--no-deps`` into a temporary folder and imported from there, so the 0.1.3 install stays.
Run ``python benchmarks/antiberty_1x.py [--json PATH]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Sequence

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.report import publish, row
from glauber.mlm_backend import load_antiberty
from glauber.mlm_backend.antiberty import WEIGHTS_DIR_ENV, antiberty_files
from glauber.mlm_backend.sequences import ANTIBODY_SEQUENCES

VERSION = "1.0.0"
TOLERANCE = 1e-4
EVERY = 7


def import_antiberty_1x(folder: Path) -> object:
    """antiberty ``VERSION``'s ``AntiBERTyRunner`` class, from its wheel unpacked in ``folder``."""
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    f"antiberty=={VERSION}", "-d", str(folder)], check=True)
    wheel = next(folder.glob(f"antiberty-{VERSION}-*.whl"))
    with zipfile.ZipFile(wheel) as z:
        z.extractall(folder / "pkg")
    for name in [k for k in sys.modules if k == "antiberty" or k.startswith("antiberty.")]:
        del sys.modules[name]  # the 0.1.3 install, imported by glauber's loader
    sys.path.insert(0, str(folder / "pkg"))
    from antiberty import AntiBERTyRunner

    return AntiBERTyRunner


def run() -> dict:
    """Every shipped chain, a masked residue every ``EVERY`` positions (module docstring)."""
    import torch

    checkpoint, _ = antiberty_files()
    with tempfile.TemporaryDirectory() as tmp:
        weights = Path(tmp) / "weights"
        weights.mkdir()
        for name in ("config.json", "pytorch_model.bin"):
            (weights / name).symlink_to(Path(checkpoint) / name)
        os.environ[WEIGHTS_DIR_ENV] = str(weights)
        runner = import_antiberty_1x(Path(tmp))(device="cpu")
        worst, sites_total, agree = 0.0, 0, True
        for name, seq in ANTIBODY_SEQUENCES.items():
            mlm = load_antiberty(n=len(seq))
            x = mlm.encode(seq)
            sites = np.arange(0, len(seq), EVERY)
            ours = np.asarray(mlm.scores(np.repeat(x[None], len(sites), 0), sites), np.float64)
            ours -= np.logaddexp.reduce(ours, axis=1, keepdims=True)
            masked = ["".join("_" if k == s else c for k, c in enumerate(seq)) for s in sites]
            tok = runner.tokenizer(masked)
            with torch.no_grad():
                out = runner.model(input_ids=tok["input_ids"],
                                   attention_mask=tok["attention_mask"])
            logits = out.prediction_logits[torch.arange(len(sites)), torch.as_tensor(sites) + 1]
            aa = [runner.tokenizer.token_to_id[a] for a in mlm.labels]
            theirs = torch.log_softmax(logits[:, aa].double(), -1).numpy()
            diff = float(np.abs(ours - theirs).max())
            same = bool((ours.argmax(1) == theirs.argmax(1)).all())
            print(f"{name}: {len(sites)} masked sites, max |log p diff| {diff:.3g}, "
                  f"argmax {'the same' if same else 'DIFFERS'}", flush=True)
            worst, sites_total, agree = max(worst, diff), sites_total + len(sites), agree and same
    met = worst <= TOLERANCE and agree
    return {"max_abs_diff": worst, "sites": sites_total, "argmax_agree": agree,
            "rows": [row(f"antiberty {VERSION} runner vs glauber's AntiBERTy ({sites_total} masked "
                         "sites, 4 chains)", worst, "max |log p diff|", target=f"<= {TOLERANCE}",
                         met=met, note="argmax the same" if agree else "argmax differs")]}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args(argv)
    publish(run(), args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
