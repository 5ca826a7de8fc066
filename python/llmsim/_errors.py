"""The exception llmsim raises for bad input (imported by the compiled module, llmsim._core)."""

from __future__ import annotations


class ScenarioError(ValueError):
    """Bad input: the problems the CLI prints as ``error:`` lines, one per problem.

    Each names the JSON pointer (prefixed with the file, ``file.json#/parallel/tp``, when the scenario
    came from a path), the value and what was expected::

        /parallel/tp: 3: expected a divisor of the 64 attention heads ...

    ``problems`` holds the lines; ``str(error)`` joins them with newlines.
    """

    def __init__(self, problems):
        if isinstance(problems, str):
            problems = [problems]
        self.problems = [str(p) for p in problems]
        super().__init__("\n".join(self.problems))

    @property
    def pointers(self):
        """The JSON pointer (or file#pointer) each problem names: the text before its first ': '."""
        return [p.split(": ", 1)[0] for p in self.problems]
