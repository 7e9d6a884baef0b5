"""Team: how the annotators work and how far they agree (reviewers and admins).

Agreement is `python -m annotator agreement`'s (Krippendorff's alpha, Fleiss' kappa, Gwet's AC1, Cohen's kappa
per pair and against the majority, each annotator's Dawid-Skene accuracy); per person, labels, pace and time per
item; labels per day as a chart.
Admins also see the accounts whose failed sign-ins make attempts wait, each with an Unlock button.
"""

from datetime import timedelta
from typing import Any

import pandas as pd
import streamlit as st

from annotator.accounts import auth, throttle
from annotator.accounts.policies import Capability
from annotator.database.engine import read_session
from annotator.figures.agreement import COEFFICIENTS
from annotator.figures.pages import TEAM, TEAM_AGREEMENT
from annotator.figures.snapshots import Snapshot
from ui import charts, guard
from ui.markdown import escape_markdown
from ui.snapshot import show_freshness
from ui.writes import page_write, saves

TTL_SECONDS = 30
SMALL_LABELS = 50_000  # up to this many labels the coefficients are computed in this server, and waited for

engine, user = guard.require_page(__file__)
unlocking = st.session_state.setdefault("team_unlock", {"message": None, "unlocked": None})


@st.cache_resource
def _snapshot(url: str) -> Snapshot:
    # Seconds of work over many labels: the latest figures are stored in the database for every app server
    # and recomputed by one of them once labels change or they are older than TTL_SECONDS
    # (`annotator.figures.snapshots`: the page waits a few seconds for new figures). One per process and database.
    return Snapshot(engine, TEAM, ttl=TTL_SECONDS)


@st.cache_resource
def _agreement_snapshot(url: str) -> Snapshot:
    # The coefficients read the whole label matrix: seconds of work, done in a child process of this server.
    return Snapshot(engine, TEAM_AGREEMENT, ttl=TTL_SECONDS, process="annotator.figures.pages:TEAM_AGREEMENT")


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _gold(person: dict[str, Any] | None) -> str:
    """Gold accuracy as text: a dash for someone who has labelled no gold item (not "None")."""
    return "—" if not person else f"{person['gold_accuracy']:.3f}"


def _coefficients(block: dict[str, Any]) -> None:
    # A row that wraps: each figure as wide as its title (fixed columns cut "Krippendorff's alpha" at 1024 px).
    row = st.container(horizontal=True, gap="medium")
    row.metric("Items", block["items"], width="content")
    for coefficient in COEFFICIENTS:
        row.metric(coefficient.label, _figure(block[coefficient.key]), help=coefficient.citation, width="content")
    undefined = block.get("undefined", {})
    notes = [f"{c.label}: {undefined[c.key]}" for c in COEFFICIENTS if c.key in undefined]
    notes += [f"{c.label} {note}" for c in COEFFICIENTS if (note := c.note(block))]
    if notes:
        st.caption(" · ".join(notes))


ACCURACY_HELP = ("The expected share of the annotator's human_check labels that are right, from a Dawid-Skene model "
                 "of everyone's labels (gold items fixed at their gold label); the interval is a 95% bootstrap over "
                 "the candidates.")


def _accuracy(accuracy: dict[str, Any] | None) -> None:
    """Each annotator's accuracy on human_check with its interval and the items it rests on."""
    if not accuracy:
        return
    st.subheader("Accuracy on human_check")
    rows = pd.DataFrame([
        {"annotator": escape_markdown(row["annotator"]), "accuracy": _figure(row["accuracy"]),
         "95% interval": "—" if row["accuracy_low"] is None
         else f"{row['accuracy_low']:.3f} – {row['accuracy_high']:.3f}",
         "items": row["items"]}
        for row in accuracy["annotators"]
    ])
    # A few rows as a plain table: read aloud and found by search. Its cells are Markdown: names escaped.
    st.table(rows.set_index("annotator"))
    st.caption(f"{ACCURACY_HELP} Dawid-Skene (1979) over {int(accuracy['items']):,} candidates "
               f"({int(accuracy['gold_items']):,} gold), {int(accuracy['resamples'])} bootstrap samples; the model "
               f"takes {round(accuracy['prior_unsolvable'], 3):.1%} of them to be truly unsolvable.")


@saves(unlocking, "unlock", capability=Capability.administer)
def _unlock(name: str) -> None:
    unlocking["message"] = unlocking["unlocked"] = None
    with page_write(engine, user=user) as session:
        auth.unlock(session, name=name)
    unlocking["unlocked"] = name


def _wait_text(wait: timedelta) -> str:
    seconds = round(wait.total_seconds())
    return "the next failure waits again" if seconds <= 0 else f"attempts wait {seconds} s more"


def _locked_sign_ins() -> None:
    """The accounts whose failed sign-ins make attempts wait (`throttle.locked_accounts`), with Unlock buttons."""
    with read_session(engine) as session:
        locked = throttle.locked_accounts(session)
    if message := unlocking["message"]:  # our words (a busy database)
        st.warning(message)
    if name := unlocking["unlocked"]:
        st.success(f"Unlocked {escape_markdown(name)}: its failed sign-ins are forgotten.")
    unlocking["message"] = unlocking["unlocked"] = None  # said once
    if not locked:
        return
    st.subheader("Locked sign-ins")
    st.caption("Failed sign-ins make further attempts at these accounts wait (from clients the account has not "
               "signed in from, or from one client). Unlock forgets them.")
    for name, wait in locked.items():
        row = st.container(horizontal=True, vertical_alignment="center")
        row.markdown(f"**{escape_markdown(name)}** · {_wait_text(wait)}")
        row.button(f"Unlock {escape_markdown(name)}", key=f"unlock_{name}", on_click=_unlock, args=(name,))


st.title("Team")
if auth.allows(user, Capability.administer):
    _locked_sign_ins()
snapshot, agreement_snapshot = _snapshot(str(engine.url)), _agreement_snapshot(str(engine.url))
with st.spinner("Counting labels..."):
    reading = snapshot.get()
    small = sum(person["labels"] for person in reading.value["activity"].values()) <= SMALL_LABELS
    # A small team's coefficients are a fraction of a second's work here; a big one's never hold up the page.
    agreement_reading = agreement_snapshot.get(here=True) if small else agreement_snapshot.latest()
show_freshness(snapshot, reading, ttl=TTL_SECONDS, key="team",
               parts=[("Agreement", agreement_snapshot, agreement_reading)])
team, agreed = reading.value, agreement_reading.value or {}
report, activity = agreed.get("agreement"), team["activity"]
if not activity:
    st.info("Nobody has labelled anything yet.")
    st.stop()

st.subheader("People")
majority = {row["name"]: row for row in report["human_check"]["annotators"]} if report else {}
people = pd.DataFrame([
    {
        "annotator": name,
        "labels": person["labels"],
        "labels per hour": None if person["per_hour"] is None else round(person["per_hour"], 1),
        "median seconds": _rounded((majority.get(name) or {}).get("median_seconds"), 1),
        "kappa vs majority": _rounded((majority.get(name) or {}).get("kappa_vs_majority"), 3),
        "gold accuracy": _gold(team["gold"].get(name)),
        "gold items": (team["gold"].get(name) or {}).get("gold_items", 0),
    }
    for name, person in activity.items()
])
GOLD_HELP = "Share of gold items labelled as the gold label; — without gold items"
st.dataframe(people, hide_index=True, width="stretch",
             column_config={"annotator": st.column_config.TextColumn(pinned=True),
                            "gold accuracy": st.column_config.TextColumn(help=GOLD_HELP)})
if not team["gold"]:
    st.caption("Gold accuracy shows here once an admin marks gold items (Browse) and annotators label them.")

_accuracy(agreed.get("accuracy"))

names = list(activity)
if report:
    st.altair_chart(charts.agreement_chart(charts.agreement_rows(report, names), names), width="stretch",
                    key="chart_agreement")
    st.caption("Each annotator's labels against the strict majority of the others' on the same items; the number "
               "is how many items had such a majority.")
st.altair_chart(
    charts.per_day_chart([{"day": day, "annotator": name, "labels": n} for name, person in activity.items()
                          for day, n in person["per_day"].items()], by="annotator"),
    width="stretch", key="chart_per_day",
)

if not report:
    st.info("Agreement and accuracy are being computed: they show here when ready." if agreement_reading.error is None
            else f"Agreement could not be computed: {escape_markdown(agreement_reading.error)}. Recompute now tries "
            "again.")
    st.stop()
for label in ("human_check", "difficulty_eval"):
    st.subheader(f"Agreement on {label}")
    _coefficients(report[label])
    if pairs := report[label]["pairwise"]:
        with st.expander(f"Cohen's kappa for each pair ({len(pairs)})"):
            st.dataframe(pd.DataFrame(pairs), hide_index=True, width="stretch")
