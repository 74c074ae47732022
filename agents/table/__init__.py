"""The browser table (`quiddler-play`, `python play.py`): a local web page where a person plays the agents,
and a replay viewer. `session` (the game, kept by the server), `server` (HTTP + JSON API), `replay` (the
viewer's positions), `static/` (the page)."""
