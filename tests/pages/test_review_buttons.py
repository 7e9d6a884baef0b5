"""The Review page's verdict buttons name their keys alike (AppTest, real SQLite file): "Refused · R" as
"Successful · S": `ui.keys` binds all three (R is reserved by Streamlit, so it cannot be a `shortcut=`), so none
carries Streamlit's own key badge beside its label."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from annotator.database.engine import get_engine
from tests.support.candidates import add_user, sign_in_app
from tests.support.transcripts import add_transcripts

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "review.py")


def test_the_verdict_buttons_label_their_keys_alike(tmp_path: Path) -> None:
    engine = get_engine(f"sqlite:///{tmp_path / 'review.sqlite'}")
    add_transcripts(engine, [{"judge_class": "incorrect"}])
    app = AppTest.from_file(PAGE, default_timeout=60)
    sign_in_app(app, engine, add_user(engine, "rev", role="reviewer"))
    app.session_state["review_ready"] = True
    app.run()
    assert not app.exception, app.exception
    labels = {key: app.button(key=f"verdict_{key}").label for key in ("S", "R", "F")}
    assert labels == {"S": "Successful · S", "R": "Refused · R", "F": "Failed · F"}
    assert [app.button(key=f"verdict_{key}").proto.shortcut for key in ("S", "R", "F")] == ["", "", ""]
