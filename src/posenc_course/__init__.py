"""The course's helpers that learners import next to ``posenc`` and ``grading``.

Modules (import each by its full name, e.g. ``from posenc_course.tables import Table``):

* ``explorers``: the slider figures (an anywidget in Jupyter, drawn by ``explorers.js``)
* ``quizzes``: the self-check quizzes at the end of each chapter (drawn with ``quizzes.css`` and ``quizzes.js``)
* ``choices``: the one engine of choice questions, for the quizzes and the grader's choice questions
* ``tables``: small HTML tables for printed results
* ``plotting``: the figure style
* ``toy_transformer``: the tiny Transformer and the offset-copy task of the experiments
* ``bug_zoo``: known-wrong implementations and the checks that catch them
* ``rope_audit``: checks a transformers model's rotary embedding against ``posenc`` (``check_rotary``) and
  converts q/k weights between RoPE layouts (needs the optional extra ``models``, imported only when used)
* ``timing``: fair side-by-side timing
* ``prose``: ``says``, which checks a number typed in a chapter's text against the value a cell computed
* ``arguments``: what each public function accepts; a bad argument is answered in one line

Nothing is imported here, so ``import posenc_course`` is free and each module
costs only what it needs.
"""
