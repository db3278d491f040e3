"""Choice questions, defined once: the graded ones of the practice notebooks and the chapters' quizzes.

A question has a prompt and choices A, B, C ... in order; each :class:`Choice` has its text, whether it is
right, and ``why`` it is right or wrong (the feedback that choice earns). The key is the set of right letters:
one letter, or several for a question that asks for all that apply. :meth:`ChoiceQuestion.judgement` decides, for
a set of chosen letters, whether it is right and what the learner is told:

* the key: right, and every choice's explanation (``explained``);
* one right letter, one wrong letter chosen: that choice's explanation. It is the learner's only letter, so it
  tells nothing that "wrong" does not, and trying every letter is no faster than guessing;
* one right letter, several chosen: choose exactly one;
* several right letters, a wrong set: the same prompt on the reasoning (``nudge``) for every wrong set, apart
  from "you chose every option". Nothing names a letter to drop, so no blind strategy beats guessing
  (``tools/grading_bot.py``).

Two front ends show the judgements. The grader (``grading.kinds.Choice``) reads a typed answer ("B", "a and
c", ["A", "C"]) into letters, prints the judgement's ``message`` and records it; its choices' texts are in the
notebook, next to the question. A quiz (``posenc_course.quizzes``) judges every click a reader can make when
its HTML is made and writes each judgement into the page: its script only shows the one a click picks.

Only ``arguments`` is imported here: a chapter's quiz does not load the grader.
"""

from __future__ import annotations

from dataclasses import dataclass

from posenc_course.arguments import Bool, InstanceOf, Items, Text, accepts, refuse

__all__ = ["Choice", "ChoiceQuestion", "LETTERS"]

LETTERS = "ABCDEFGH"


# a Choice may be blank: the question it joins says what is missing
@accepts(text=InstanceOf(str, "a string"), correct=Bool(), why=InstanceOf(str, "a string"))
@dataclass(frozen=True)
class Choice:
    """One choice: its text (blank for a graded question, whose notebook shows it), whether it is right, and
    why (the feedback it earns)."""

    text: str
    correct: bool
    why: str


@dataclass(frozen=True)
class Judgement:
    """What :meth:`ChoiceQuestion.judgement` decides about a set of letters (made there, not by callers)."""

    correct: bool
    message: str  # what the grader prints after its mark (✓ correct / ✗)
    why: str = ""  # the chosen choice's explanation, when one letter of a one-letter key was chosen


@accepts(
    prompt=Text(what="a non-empty string (the question)"),
    choices=Items(InstanceOf(Choice), what="a tuple of Choice"),
    nudge=InstanceOf(str, "a string"),
)
class ChoiceQuestion:
    """A prompt and its choices (lettered A, B, ... in order); ``nudge``, for a question with several right
    choices, is the feedback on the reasoning that every wrong set gets."""

    several = True  # may the key have several letters (a quiz, answered by one click, says no)

    def __init__(self, prompt: str, choices, nudge: str = ""):
        self.prompt, self.choices, self.nudge = prompt, tuple(choices), nudge
        where = repr(prompt)
        if not 2 <= len(self.choices) <= len(LETTERS):
            refuse(
                "choices",
                message=f"choices must be 2 to {len(LETTERS)} choices, not {len(self.choices)}: {where}.",
            )
        self.letters = LETTERS[: len(self.choices)]
        self.key = frozenset(letter for letter, c in zip(self.letters, self.choices) if c.correct)
        if len(self.key) != 1 and not self.several:
            refuse("choices", message=f"choices must have exactly one choice correct: {where}.")
        if not self.key:
            refuse("choices", message=f"choices must have at least one choice correct: {where}.")
        missing = [letter for letter, c in zip(self.letters, self.choices) if not c.why.strip()]
        if missing:
            refuse(
                "choices",
                message=f"every choice needs a reason (its why); {', '.join(missing)} "
                f"{'has' if len(missing) == 1 else 'have'} none: {where}.",
            )
        if len(self.key) > 1 and not nudge.strip():
            refuse(
                "nudge",
                message=f"a question with several right choices needs a nudge (feedback on the reasoning): {where}.",
            )

    @property
    def explanations(self) -> dict[str, str]:
        """{letter: why}, in order."""
        return {letter: c.why for letter, c in zip(self.letters, self.choices)}

    def explained(self) -> str:
        """Every choice's explanation, one per line: what is shown once solved or revealed."""
        return "\n".join(
            f"  {letter} ({'right' if c.correct else 'wrong'}): {c.why}"
            for letter, c in zip(self.letters, self.choices)
        )

    def judgement(self, chosen) -> Judgement:
        """Whether the letters ``chosen`` (a set of capitals) are the key, and what the learner is told."""
        chosen = set(chosen)
        unknown = sorted(chosen - set(self.letters))
        if unknown:
            return Judgement(False, f"unknown option {', '.join(unknown)}: the options are {', '.join(self.letters)}.")
        # one letter of a one-letter key earns its explanation; a letter of a set would tell which to drop
        why = self.explanations[next(iter(chosen))] if len(chosen) == 1 == len(self.key) else ""
        if chosen == self.key:
            return Judgement(True, "— why each option is right or wrong:\n" + self.explained(), why)
        if len(self.key) == 1:
            if len(chosen) != 1:
                return Judgement(False, "choose exactly one letter.")
            (letter,) = chosen
            return Judgement(False, f"{letter} is not right. {letter}: {why}", why)
        if chosen == set(self.letters):
            return Judgement(
                False,
                "you chose every option: decide for each one on its own whether it holds, and choose "
                f"only those. {self.nudge}",
            )
        return Judgement(False, f"not the right set of options. {self.nudge}")
