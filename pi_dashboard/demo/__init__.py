"""The demo fleet `make run` starts on an empty database (issues #3, #5).

Three pi hosts built from real pi data shipped in `data/` (timestamps moved to the
present), kept busy by a pi-like writer, each shipped by a real
`pi-dashboard-agent` process; plus probe endpoints on a local scripted model server.
"""
