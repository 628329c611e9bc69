"""A task set as an environment for another trainer: `tracegym tasks export SET --to FORMAT`.

`row` makes the row every format is built from (prompt, ids, harness, reference, the gates' verdicts, the scorer
binding); `bundle` writes the self-contained data folder an export carries and its manifest; `formats/` holds one
module per target format (`registry` finds them); `runtime` is what an exported package imports to score an
attempt with the task's own tracegym scorer, through the task's own harness.
"""
