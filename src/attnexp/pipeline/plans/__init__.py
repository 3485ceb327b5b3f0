"""The parts of the plan (`attnexp.pipeline.plan.Plan`, their one facade), one per paper or stage.

- `core`: the validated config, the datasets each paper runs on, the grid and the Hugging Face runs (`PlanCore`).
- `data`: raw, generated and preprocessed files.  `jw`: J&W's models, analyses, tables and figures (the Hugging
  Face runs' included).  `wp`: W&P's runs and targets.  `az`: A&Z's runs, tables, figures and pronoun examples.
- `hf`: the Hugging Face stage's targets.  `erasure`: the erasure tests.  `report`: the comparison with the
  published values, the targets across papers and what each figure job draws.
"""
