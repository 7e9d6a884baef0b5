"""Streamlit custom components of this app (version 2: HTML, CSS and JavaScript in the page, no iframe), each in a
folder of its own with its code; the app sends that code to the browser with the page."""
