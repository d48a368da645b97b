"""What the dashboard's pages share: the page list (catalog), the router (navigation), the page state (state: the
scenario in session state, links, cached plans) and the widget helpers (widgets). Kept out of the top of ``pages/``
so that Streamlit's legacy discovery of ``pages/*.py`` sees only real pages (see shared/navigation.py)."""
