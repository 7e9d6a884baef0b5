"""Data in and out: the importer, what readers yield (`records`), the readers (`formats`), the
writers (`exports`), uploads from the browser.
"""
