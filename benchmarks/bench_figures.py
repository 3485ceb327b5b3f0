"""CPU seconds to draw and save each figure (PNG + PDF) of one model, and the cost of a figure job's imports.

Usage (after `snakemake --cores 2 analyses`, or on generated contract-shaped tables with --fake):
    PYTHONPATH=src python benchmarks/bench_figures.py [--dataset syn_nli] [--model lstm-tanh] [--fake] [--repeat 2]

Prints one line per figure (draw, save) and the total per model, which sets the cost of the `figures` target:
about (imports + models x total) CPU seconds per dataset job.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

start_imports = time.process_time()
import numpy as np  # noqa: E402
import yaml  # noqa: E402

from attnexp import paths  # noqa: E402
from attnexp.config import PACKAGED_SCHEMA, validate_config  # noqa: E402
from attnexp.pipeline.settings import FigureLook  # noqa: E402
from attnexp.report.jw.data import load_model_results  # noqa: E402
from attnexp.report.jw.render import MODEL_FIGURES  # noqa: E402
from attnexp.report.style import paper_style, save_figure  # noqa: E402

IMPORT_SECONDS = time.process_time() - start_imports
REPO = Path(__file__).resolve().parents[1]
CONFIG, SCHEMA = REPO / "config/config.yaml", PACKAGED_SCHEMA  # the default run's options


def fake_model(folder: Path) -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.fakes import write_fake_dataset, write_fake_model

    rng = np.random.default_rng(0)
    meta, instances = write_fake_dataset(folder, "syn_nli", "nli", ["contradiction", "entailment", "neutral"], rng, n=200)
    write_fake_model(folder, "syn_nli", "lstm", "tanh", 0, meta, instances, rng)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="syn_nli")
    parser.add_argument("--model", default="lstm-tanh")
    parser.add_argument("--fake", action="store_true", help="use generated tables of 200 instances instead of results/")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp())
    if args.fake:
        workdir, dataset, (encoder, attention) = fake_model(scratch), "syn_nli", ("lstm", "tanh")
    else:
        workdir, dataset, (encoder, attention) = Path("."), args.dataset, args.model.split("-")
    analyses = paths.analysis_files(dataset, encoder, attention, 0)
    preprocessed = paths.preprocessed_files(dataset)
    tables = {f"{t}_path": workdir / analyses[t] for t in ("importance", "kendall", "permutation", "adversary")}
    results = load_model_results(
        dataset,
        encoder,
        attention,
        0,
        workdir / preprocessed["meta"],
        **tables,
        instances_path=workdir / preprocessed["instances"],
    )
    options = FigureLook.from_config(validate_config(yaml.safe_load(CONFIG.read_text()), SCHEMA)).options()
    print(f"imports: {IMPORT_SECONDS:.2f} s CPU; {len(results.adversary)} test instances; dpi {options.dpi}")
    total = 0.0
    with paper_style():
        for name, draw in MODEL_FIGURES.items():
            draw_s, save_s = [], []
            for _ in range(args.repeat):
                t0 = time.process_time()
                fig = draw(results, options)
                t1 = time.process_time()
                save_figure(fig, [scratch / f"{name}.png", scratch / f"{name}.pdf"], dpi=options.dpi)
                draw_s.append(t1 - t0)
                save_s.append(time.process_time() - t1)
            total += min(draw_s) + min(save_s)
            print(f"{name:22s} draw {min(draw_s):.2f} s  save png+pdf {min(save_s):.2f} s")
    print(f"total per model: {total:.2f} s CPU (best of {args.repeat})")


if __name__ == "__main__":
    main()
