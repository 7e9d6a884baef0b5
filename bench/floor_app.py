"""The bare Streamlit floor for bench_annotate_browser.py: a sign-in form, `st.navigation`, and a page whose
button shortcut only bumps a counter and reruns. No database. The annotate page is compared with this."""

import streamlit as st

PASSWORD = "floor"


def counter_page() -> None:
    st.session_state.setdefault("count", 0)

    def bump() -> None:
        st.session_state["count"] += 1

    st.button("Next", key="next", shortcut="1", on_click=bump)
    # In the form bench_keypress.py's probe waits for: a heading naming item N, and its text "(rewrite rNx)".
    count = st.session_state["count"]
    st.markdown(f"#### bench_{count}_floor ·\n\n(rewrite r{count}x)")


if not st.session_state.get("signed_in"):
    st.navigation([st.Page(counter_page, title="Counter", default=True)], position="hidden")
    st.title("Sign in")
    with st.form("sign_in"):
        name = st.text_input("Name")
        password = st.text_input("Password", type="password")
        submitted = st.form_submit_button("Sign in")
    if submitted and password == PASSWORD:
        st.session_state["signed_in"] = True
        st.rerun()
    st.stop()

st.sidebar.caption("Signed in")
st.navigation([st.Page(counter_page, title="Counter", default=True)]).run()
