"""Import and export (admins): upload files or .zips of them, see what they hold, import them in one transaction;
download any export format as a .zip of exactly the files `python -m annotator export` writes.

The formats come from the registries (`annotator.import_export.formats.FORMATS`,
`annotator.import_export.exports.EXPORTS`); the work is `annotator.import_export.uploads`'s.
"""

from functools import partial

import pandas as pd
import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from annotator.accounts import auth
from annotator.accounts.policies import Capability
from annotator.database.engine import read_session
from annotator.import_export import exports
from annotator.import_export import uploads as transfer
from annotator.import_export.formats import InputError, InputErrors, ReadOptions, aliases, registry
from annotator.import_export.formats.table import parse_mapping
from annotator.labelling.queue import labels_wanted
from ui import guard
from ui.markdown import escape_markdown
from ui.snapshot import overview_snapshot
from ui.writes import authorize, signed_out, writes

DETECT = "detect from the file"

engine, user = guard.require_page(__file__)
st.session_state.setdefault("import_round", 0)


def _uploads() -> list[tuple[str, bytes]]:
    files = st.session_state.get(f"import_files_{st.session_state['import_round']}") or []
    return [(file.name, file.getvalue()) for file in files]


def _choices() -> tuple[str | None, ReadOptions]:
    """The import options as the command line takes them (`--format`, `--map`, `--annotator`, `--data-source`,
    `--model`, `--prompt`, `--id-field`); raises ValueError for a mapping that is not `field=column,...`."""
    chosen = st.session_state.get("import_format", DETECT)
    options = ReadOptions(
        mapping=parse_mapping(st.session_state.get("import_map")),
        annotator=st.session_state.get("import_annotator") or None,
        data_source=st.session_state.get("import_data_source") or None,
        model=st.session_state.get("import_model") or None,
        prompt=st.session_state.get("import_prompt") or None,
        id_field=st.session_state.get("import_id_field") or None,
    )
    return (None if chosen == DETECT else chosen), options


def _errors(exc: Exception) -> list[str]:
    """Every bad file's error, one each (`InputErrors`), or the one error."""
    return [str(error) for error in exc.errors] if isinstance(exc, InputErrors) else [str(exc)]


@writes(Capability.administer)  # importing changes the project: checked when the button acts, not only when drawn
def _import() -> None:
    try:
        format, options = _choices()
        with transfer.unpacked(_uploads()) as upload:
            summary = transfer.import_upload(
                upload, engine=engine, format=format, options=options,
                update=bool(st.session_state.get("import_update")),
                authorize=authorize(user),
            )
    except auth.AccountDisabled as exc:
        signed_out(exc)
        return
    except (InputError, ValueError) as exc:
        st.session_state["import_outcome"] = ("error", _errors(exc))
        return
    except OSError as exc:  # e.g. the disk is full while unpacking
        st.session_state["import_outcome"] = ("error", [f"the upload could not be unpacked, nothing was stored: {exc}"])
        return
    except SQLAlchemyError as exc:
        # E.g. the database is busy: one line, nothing stored (the import is one transaction).
        st.session_state["import_outcome"] = ("error", [f"the database refused the import, nothing was stored: "
                                                        f"{str(exc).splitlines()[0]}"])
        return
    st.session_state["import_outcome"] = ("success", [summary.text()])
    st.session_state["import_round"] += 1  # a fresh, empty file input


st.title("Import and export")
st.header("Import")
limit = st.get_option("server.maxUploadSize")
st.caption(
    f"Every format `python -m annotator import` reads, detected the same way; several files, or a .zip of them "
    f"(a ReliableMath release folder is read whole). Up to {limit} MB per file: the server's "
    "`server.maxUploadSize` setting (`.streamlit/config.toml`)."
)
if outcome := st.session_state.pop("import_outcome", None):
    kind, messages = outcome
    for message in messages:
        (st.success if kind == "success" else st.error)(escape_markdown(message))  # it quotes files and records

st.file_uploader("Files or .zip archives", accept_multiple_files=True,
                 key=f"import_files_{st.session_state['import_round']}")
with st.expander("Options: format, column mapping, whose labels"):
    st.selectbox("Format", [DETECT, *registry(), *aliases()], key="import_format")
    st.text_input("Column mapping for a flat table (--map)", key="import_map",
                  placeholder="question=problem,ground_truth=answer,data_source=src")
    st.text_input("Whose labels a labelled sheet holds (--annotator)", key="import_annotator",
                  placeholder="default: import:<file name>")
    st.text_input("Data source for rows that name none (--data-source)", key="import_data_source")
    st.text_input("Transcripts from lm-eval or a Batch API file: the model (--model)", key="import_model",
                  placeholder="default: the run's results file, or the answer's model")
    st.text_input("... and the prompt name (--prompt)", key="import_prompt",
                  placeholder="default: the lm-eval task, or the custom_id's data_id/prompt")
    st.text_input("lm-eval samples: the doc's field holding the data_id (--id-field)", key="import_id_field",
                  placeholder="default: data_id")
    st.checkbox("Replace records whose id exists with different content (--update)", key="import_update")

uploads = _uploads()
if uploads:
    try:
        format, options = _choices()
        with transfer.unpacked(uploads) as upload:
            previews = transfer.preview(upload, format=format, options=options)
    except (InputError, ValueError) as exc:
        for message in _errors(exc):  # every bad file's: each names the file, the record and the field
            st.error(escape_markdown(message))
    except OSError as exc:
        st.error(escape_markdown(f"the upload could not be unpacked: {exc}"))
    else:
        st.subheader("Preview")
        st.dataframe(
            pd.DataFrame([
                {"file": p.file, "format": p.format, "problems": p.problems, "candidates": p.candidates,
                 "labels": p.labels, "transcripts": p.transcripts, "note": p.note,
                 "kept as given": "; ".join(p.oddities)}
                for p in previews
            ]),
            hide_index=True, width="stretch",
        )
        counted = transfer.totals(previews)
        st.caption(f"In all: {int(counted['problems'])} problems, {int(counted['candidates'])} candidates and "
                   f"{int(counted['labels'])} labels"
                   + (f", {int(counted['transcripts'])} transcripts" if counted["transcripts"] else "")
                   + ", each counted once"
                   + (" (a file that repeats others is not counted again)." if any(p.repeats for p in previews)
                      else "."))
        for shown in previews:
            with st.expander(f"First records of {escape_markdown(shown.file)}"):
                st.json(shown.first, expanded=True)
        st.button(f"Import {len(previews)} file(s)", type="primary", on_click=_import, key="import_run")

st.header("Export")
st.caption("Each download is a .zip of the files `python -m annotator export --format FORMAT` writes, byte for "
           "byte, with its manifest.json.")
include_incomplete = st.checkbox(
    "Release: include incomplete candidates (--include-incomplete)", key="export_include_incomplete",
    help="The release (reliablemath, and hf: the same as a Hugging Face dataset that datasets.load_dataset "
         "loads) holds only vetted candidates: labels_per_candidate labels resolving to human_check = 1, "
         "or adjudicated so. Ticked, it also holds those whose fewer labels so far resolve to 1; the manifest "
         "says which rule was used.",
)
# The release's counts from the Overview's stored figures (shared by every server, recomputed once the data's
# fingerprint moves), not counted again on every look.
reading = overview_snapshot(engine).get()
counted = reading.value["stats"]
with read_session(engine) as session:
    empty = {spec.name: spec.nothing_to_write(session) for spec in exports.EXPORTS}
# A format whose writer's extra is not installed is not offered: its download would fail.
missing = {spec.name: str(error) for spec in exports.EXPORTS if (error := spec.missing_extra())}
st.caption(
    f"The reliablemath release holds {int(counted['total']['vetted'])} vetted candidate(s) "
    f"({labels_wanted(int(counted['labels_per_candidate']), count_imported=bool(counted['imported_labels_count']))} "
    "resolving to human_check = 1, or adjudicated so) "
    + ("and" if include_incomplete else "and leaves out")
    + f" {int(counted['total']['incomplete'])} incomplete one(s)."
    + (" New counts are being computed." if reading.refreshing else "")
)
columns = st.columns(4)
for index, spec in enumerate(exports.EXPORTS):
    name = spec.name
    options = {"include_incomplete": True} if "include_incomplete" in spec.options and include_incomplete else None
    columns[index % 4].download_button(
        name, data=partial(transfer.export_zip, name, engine=engine, options=options), file_name=f"{name}.zip",
        mime="application/zip", on_click="ignore", key=f"export_{name}", icon=":material/download:",
        disabled=empty[name] is not None or name in missing,
        help=escape_markdown(missing.get(name) or (spec.description if empty[name] is None
                                                   else f"Nothing to export: {empty[name]}.")),
    )
for message in missing.values():
    st.caption(escape_markdown(message[0].upper() + message[1:] + "."))
if nothing := [name for name, reason in empty.items() if reason is not None]:
    st.caption(escape_markdown("Nothing to export yet: " + "; ".join(f"{name}: {empty[name]}" for name in nothing)))
