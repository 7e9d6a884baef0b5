"""Vetting unsolvable math problems: import, annotate, judge and export ReliableMath-style datasets.

The core library: it never imports Streamlit. `python -m annotator --help` lists the commands.
"""

__version__ = "0.1.0"
