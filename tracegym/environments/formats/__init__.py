"""One module per export format (`tracegym.environments.registry` reads FORMAT, SUMMARY and export from each)."""
