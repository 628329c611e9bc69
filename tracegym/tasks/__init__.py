"""Task specs, task generation from failure clusters, jinja2 templates, and task-set folders."""

from tracegym.tasks.spec import TaskSpec, dump_spec, load_spec
from tracegym.tasks.taskset import TaskSet, load_task_set

__all__ = ["TaskSet", "TaskSpec", "dump_spec", "load_spec", "load_task_set"]
