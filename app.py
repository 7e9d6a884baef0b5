"""Streamlit entry point: `streamlit run app.py`.

Asks for a name and password before any page (or, on a database without accounts, for the first admin), or,
when `.streamlit/secrets.toml` configures an identity provider (`[auth]`), offers to sign in there too; then
shows the pages the signed-in user's role allows. A sign-in lasts across reruns and page reloads
(`ui/sign_in.py`).
"""

import streamlit as st
from sqlalchemy.exc import OperationalError

from annotator.accounts import auth, throttle
from annotator.database.engine import DatabaseBusy, database_url, get_engine, read_session, write_session
from annotator.settings.environment import SettingsError, settings
from ui import guard, sign_in
from ui.markdown import escape_markdown
from ui.pages import PAGES


@st.cache_resource
def _engine(url: str):  # type: ignore[no-untyped-def]
    # Created (and the schema upgraded) once per server process and database, not on every rerun.
    return get_engine(url)


def _first_admin_form(engine) -> None:  # type: ignore[no-untyped-def]
    st.title("Welcome")
    st.write("This database has no accounts yet. Choose the name and password of the first admin.")
    with st.form("first_admin"):
        name = st.text_input("Name")
        password = st.text_input("Password", type="password")
        repeat = st.text_input("Repeat the password", type="password")
        submitted = st.form_submit_button("Create admin and sign in", type="primary")
    if submitted:
        if password != repeat:
            st.error("The passwords differ.")
            return
        try:
            with write_session(engine) as session:
                user = auth.create_first_admin(session, name=name, password=password)
                token = auth.start_sign_in(session, user=user)
        except auth.AuthError as exc:
            st.error(escape_markdown(str(exc)))  # it may quote the name typed
            return
        sign_in.sign_in(user, token)
        st.session_state["cookie_action"] = "set"
        st.rerun()


def _provider_buttons() -> None:
    """"Sign in with <provider>" for each identity provider `[auth]` configures (Streamlit's `st.login`)."""
    for provider in sign_in.providers():
        label = f"Sign in with {escape_markdown(provider.label)}"
        if st.button(label, key=f"sign_in_with_{provider.name or 'default'}", type="primary"):
            st.login(provider.name)
    if sign_in.providers():
        st.caption("Or with a name and password:")


def _identity_refused(refused: auth.IdentityRefused) -> None:
    """The page of someone the identity provider signed in whom no active account here is: who they are there,
    and what to do. Sign out ends the provider's sign-in, so another person can sign in."""
    if refused.reason == "disabled":
        st.title("Account disabled")
        st.error(f"The account of {escape_markdown(refused.identity)} is disabled; ask an admin to enable it.")
    else:
        st.title("Ask an admin")
        st.error(escape_markdown(f"You are signed in at the identity provider as {refused.identity}, but no account "
                                 f"here signs in as {refused.identity}. Ask an admin to add {refused.identity}."))
        st.caption("An admin adds it with `python -m annotator user add --oidc EMAIL --role ROLE`.")
    st.button("Sign out", on_click=st.logout, key="sign_out_provider")


def _sign_in_form(engine) -> None:  # type: ignore[no-untyped-def]
    st.title("Sign in")
    if message := st.session_state.pop("auth_message", None):
        st.info(message)
    _provider_buttons()
    with st.form("sign_in"):
        name = st.text_input("Name")
        password = st.text_input("Password", type="password")
        submitted = st.form_submit_button("Sign in", type="primary")
    if submitted:
        try:
            signed_in = auth.sign_in(engine, name=name, password=password, client=st.context.ip_address)
        except throttle.Throttled as exc:
            message = f"{str(exc)[:1].upper()}{str(exc)[1:]}."  # our words and a number of seconds: no data
            st.error(message)
            return
        except (DatabaseBusy, OperationalError):
            st.error("The database is busy; please press Sign in again.")
            return
        if signed_in is None:
            st.error("Unknown name or wrong password.")
            return
        sign_in.sign_in(*signed_in)
        st.session_state["cookie_action"] = "set"
        st.rerun()


def _pages(user: auth.User | None) -> list:  # type: ignore[type-arg]
    """The pages of the page table (`ui.pages.PAGES`) `user`'s role may see, plus the page the address asks for:
    declared, so that an address of a page kept from this role opens that page's own refusal (its guard) instead
    of "Page not found", and an address no page has opens `guard.no_such_page`.
    Signed out (None), every page is declared, hidden, so that the address survives signing in.

    Every page of the table has its own address, the start page too; the app's root (`/`) is a hidden page of no
    address of its own that opens the start page (`guard.open_start`). (Streamlit serves a page marked default at
    the root and nowhere else, yet keeps its address from every other page: `/annotate` would then be "Page not
    found", or two pages of one address.)
    """
    pages = [(st.Page(row.path, title=row.title, icon=row.icon, url_path=row.url_path), row) for row in PAGES]
    start = next(page for page, row in pages if row.default)
    asked = guard.asked_for()
    declared = [  # the start page always: the root opens it
        page for page, row in pages
        if user is None or row.default or auth.allows(user, row.capability) or page.url_path == asked
    ]
    root = st.Page(guard.open_start(start), title=start.title, url_path="", default=True, visibility="hidden")
    declared.insert(0, root)
    if asked and asked not in {page.url_path for page, _row in pages}:
        # An address no page has: a hidden page of that address says so (Streamlit would show the start page).
        declared.append(st.Page(guard.no_such_page, title="No such page", url_path=asked, visibility="hidden"))
    return declared


st.set_page_config(page_title="Unsolvable-math annotator", layout="wide")
try:
    settings()  # read once per server process; server.py has refused to start on a bad value already
except SettingsError as exc:
    st.error(escape_markdown(f"The app cannot start: {exc}"))
    st.stop()
st.session_state.setdefault("engine", _engine(database_url()))
engine = st.session_state["engine"]
user = sign_in.current_user(engine)

if user is None:
    # Every page is declared (hidden) so that the address the browser asked for survives signing in.
    st.navigation(_pages(None), position="hidden")
    if st.session_state.pop("cookie_action", None) == "clear":
        sign_in.cookie_script(None)
    refused = st.session_state.get("identity_refused")
    if refused is not None and refused.reason != "expired":
        _identity_refused(refused)
        st.stop()
    if refused is not None:
        # It names the identity (data): escaped, as every message here is Markdown.
        st.session_state.setdefault("auth_message", escape_markdown(f"{str(refused)[:1].upper()}{str(refused)[1:]}."))
    with read_session(engine) as session:
        first_run = not auth.has_accounts(session)
    (_first_admin_form if first_run else _sign_in_form)(engine)
    st.stop()

navigation = st.navigation(_pages(user))
if navigation.url_path == "":
    # The root opens the start page (`guard.open_start`), a rerun: before the sidebar, whose cookie script would be
    # dropped with this run.
    navigation.run()
with st.sidebar:
    if (action := st.session_state.pop("cookie_action", None)) in ("set", "set again"):
        sign_in.cookie_script(st.session_state.get("auth_token"))
        if action == "set":
            # Drawn on the next run too: this run may be cut short (a page chosen at once) before the browser ran it.
            st.session_state["cookie_action"] = "set again"
    st.caption(f"Signed in as **{escape_markdown(user.name)}** ({user.role})")
    st.button("Sign out", on_click=sign_in.sign_out, key="sign_out")
navigation.run()
