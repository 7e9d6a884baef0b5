"""The one table of the app's pages: file, title, icon, address and the capability that opens it.

`app.py` builds the navigation from it; each page's guard asks it for the page's capability
(`guard.require_page(__file__)`), so a page's capability is written here and nowhere else. Adding a page is a
file in `FOLDER` and a row here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from annotator.accounts.policies import Capability

FOLDER = Path(__file__).resolve().parent.parent / "app_pages"


@dataclass(frozen=True)
class Page:
    file: str  # in FOLDER
    title: str
    icon: str
    url_path: str  # the address (`/url_path`)
    capability: Capability  # who may open it (`policies.allows`)
    default: bool = False  # the start page: the app's root (`/`) opens it

    @property
    def path(self) -> Path:
        return FOLDER / self.file


PAGES: tuple[Page, ...] = (
    Page("annotate.py", "Annotate", ":material/edit_note:", "annotate", Capability.annotate, default=True),
    Page("browse.py", "Browse", ":material/table_rows:", "browse", Capability.annotate),
    Page("overview.py", "Overview", ":material/insights:", "overview", Capability.annotate),
    Page("team.py", "Team", ":material/groups:", "team", Capability.see_everyones_labels),
    Page("adjudicate.py", "Adjudicate", ":material/gavel:", "adjudicate", Capability.adjudicate),
    Page("review.py", "Review", ":material/fact_check:", "review", Capability.review),
    Page("report.py", "Report", ":material/analytics:", "report", Capability.review),
    Page("generate.py", "Generate", ":material/auto_awesome:", "generate", Capability.administer),
    Page("evaluate.py", "Evaluate", ":material/model_training:", "evaluate", Capability.administer),
    Page("import_export.py", "Import and export", ":material/swap_vert:", "import_export", Capability.administer),
)


def page(file: str | Path) -> Page:
    """The table's row for a page file (a page passes its `__file__`)."""
    name = Path(file).name
    found = next((row for row in PAGES if row.file == name), None)
    if found is None:
        raise LookupError(f"{name} is not in ui.pages.PAGES")
    return found
