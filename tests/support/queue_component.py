"""The browser's queue component (`ui.components.queue`) under AppTest: what the page handed it, and decisions sent
as the browser sends them (its state value), without a browser."""

from __future__ import annotations

import itertools
import json
import time
import uuid
from typing import Any

KEY = "annotate_queue"
LABEL_KEYS = {"1": (1, 0), "2": (1, 1), "0": (0, None)}
_sends = itertools.count(1)


def _elements(node: Any) -> list[Any]:
    found = []
    children = getattr(node, "children", None)
    for child in (children.values() if isinstance(children, dict) else ()):
        found.append(child)
        found.extend(_elements(child))
    return found


def _instances(app: Any) -> list[dict[str, Any]]:
    """The data of each instance of the component on the page, in the page's order."""
    found = []
    for element in _elements(app._tree):
        proto = getattr(element, "proto", None)
        if type(proto).__name__ == "BidiComponent" and proto.component_name == "annotator_queue":
            kind = proto.WhichOneof("data")
            found.append(json.loads(proto.json if kind == "json" else proto.mixed.json))
    return found


def data(app: Any) -> dict[str, Any]:
    """The data the page's last run gave the component (the queue, not its outcomes sent ahead)."""
    for given in _instances(app):
        if not given.get("ack"):
            return given
    raise AssertionError("the queue component is not on the page")


def acknowledged(app: Any) -> dict[str, Any]:
    """What the page's last run sent ahead of the queue's data: the outcomes (`queue_component.acknowledge`)."""
    for given in _instances(app):
        if given.get("ack"):
            return given
    raise AssertionError("no outcomes were sent ahead of the queue")


def headings(app: Any) -> list[str]:
    """The headings of the items held, the one on screen first."""
    return [item["heading"] for item in data(app)["items"]]


def decision(item_id: int, key: str, *, comment: str = "", age_ms: float = 5) -> dict[str, Any]:
    """A decision as the browser makes it: a label key (`1`, `2`, `0`) or `s`."""
    made: dict[str, Any] = {"id": str(uuid.uuid4()), "item": item_id, "key": time.time() * 1000 - age_ms,
                            "spent": 1500}
    if key == "s":
        made["skip"] = True
    else:
        made["human_check"], made["difficulty_eval"] = LABEL_KEYS[key]
        made["comment"] = comment
    return made


def send(app: Any, decisions: list[dict[str, Any]], *, component: str = KEY, **more: Any) -> dict[str, str]:
    """Set the component's state value to these decisions (not yet answered) and run: the outcomes handed back.
    `more`: what else the page's browser sends with them (Review: its `position` and `generation`)."""
    app.session_state[component] = {"sent": {"decisions": decisions, "n": next(_sends), **more}}
    app.run()
    assert not app.exception, app.exception
    ahead = acknowledged(app)
    # Drawn before the queue (so sent first), for the same queue.
    assert [given for given in _instances(app) if not given.get("wake")][0] == ahead
    assert ahead["store"] == data(app)["store"]
    return ahead["outcomes"]


def press(app: Any, key: str, *, comment: str = "", component: str = KEY) -> dict[str, Any]:
    """Decide the item on screen with `key` (as the only decision waiting); the decision sent."""
    made = decision(data(app)["order"][0], key, comment=comment)
    outcomes = send(app, [made], component=component)
    assert outcomes.get(made["id"]) in ("saved", "skipped"), outcomes
    return made
