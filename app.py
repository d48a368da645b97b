"""CAPE dashboard: `make run` (or `streamlit run app.py`). Pages are listed in pages/common.py."""

from pages.common import run_app

run_app()
