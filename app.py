"""CAPE dashboard: `make run` (or `streamlit run app.py`). The pages are listed in pages/shared/catalog.py."""

from pages.shared.navigation import run_app

run_app()
