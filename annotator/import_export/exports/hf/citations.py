"""BibTeX for the dataset card (`card`): ReliableMath, whose workflow and release format the export follows, and
each data source the project knows by name (the names ReliableMath's release and our importers give them)."""

from __future__ import annotations

RELIABLEMATH = """
@article{xue2025reliablemath,
  title   = {ReliableMath: Benchmark of Reliable Mathematical Reasoning on Large Language Models},
  author  = {Xue, Boyang and Zhu, Qi and Wang, Rui and Wang, Sheng and Wang, Hongru and Mi, Fei and Wang, Yasheng
             and Shang, Lifeng and Liu, Qun and Wong, Kam-Fai},
  journal = {arXiv preprint arXiv:2507.03133},
  year    = {2025}
}
"""

_AIME = """
@misc{aimo2024aime,
  title        = {AIME 2024},
  author       = {{AIMO}},
  year         = {2024},
  howpublished = {\\url{https://huggingface.co/datasets/AI-MO/aimo-validation-aime}}
}
"""

_AMC = """
@misc{aimo2024amc,
  title        = {AMC},
  author       = {{AIMO}},
  year         = {2024},
  howpublished = {\\url{https://huggingface.co/datasets/AI-MO/aimo-validation-amc}}
}
"""

_MATH = """
@article{hendrycks2021measuring,
  title   = {Measuring Mathematical Problem Solving With the MATH Dataset},
  author  = {Hendrycks, Dan and Burns, Collin and Kadavath, Saurav and Arora, Akul and Basart, Steven and Tang, Eric
             and Song, Dawn and Steinhardt, Jacob},
  journal = {arXiv preprint arXiv:2103.03874},
  year    = {2021}
}
"""

_MINERVA = """
@inproceedings{lewkowycz2022solving,
  title     = {Solving Quantitative Reasoning Problems with Language Models},
  author    = {Lewkowycz, Aitor and Andreassen, Anders and Dohan, David and Dyer, Ethan and Michalewski, Henryk and
               Ramasesh, Vinay and Slone, Ambrose and Anil, Cem and Schlag, Imanol and Gutman-Solo, Theo and others},
  booktitle = {Advances in Neural Information Processing Systems},
  volume    = {35},
  pages     = {3843--3857},
  year      = {2022}
}
"""

_GSM8K = """
@article{cobbe2021training,
  title   = {Training Verifiers to Solve Math Word Problems},
  author  = {Cobbe, Karl and Kosaraju, Vineet and Bavarian, Mohammad and Chen, Mark and Jun, Heewoo and Kaiser, Lukasz
             and Plappert, Matthias and Tworek, Jerry and Hilton, Jacob and Nakano, Reiichiro and others},
  journal = {arXiv preprint arXiv:2110.14168},
  year    = {2021}
}
"""

_TREECUT = """
@inproceedings{ouyang2025treecut,
  title     = {TreeCut: A Synthetic Unanswerable Math Word Problem Dataset for LLM Hallucination Evaluation},
  author    = {Ouyang, Jialin},
  booktitle = {Proceedings of the 63rd Annual Meeting of the Association for Computational Linguistics
               (Volume 2: Short Papers)},
  pages     = {1073--1085},
  year      = {2025}
}
"""

# By data source name, lower-case.
SOURCES = {"aime": _AIME, "amc": _AMC, "math": _MATH, "minerva": _MINERVA, "gsm8k": _GSM8K, "treecut": _TREECUT}
