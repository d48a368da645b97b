"""CAPE dashboard: `make run` (or `streamlit run app.py`). The pages are listed in pages/catalog.py."""

from pages.navigation import run_app

run_app()
