"""The grader: right answers pass, known-wrong answers fail with the right hint,
garbage gets a message (never an exception), and progress is reported honestly."""

import math
import re
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
from torch import nn

import grading
import posenc
from grading import QUESTIONS, check
from support.grading_session import feedback, fresh_progress  # noqa: F401  (an autouse fixture)

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ["01", "02", "03", "04", "05"]


# --------------------------------------------------------------------------
# Real-world bugs, written the way people write them
# --------------------------------------------------------------------------

def doubled_frequencies(d_model, base=10000.0):
    """Loop over channels 0, 2, 4, ... and still put 2 * i in the exponent."""
    return np.array([1.0 / base ** (2 * i / d_model) for i in range(0, d_model, 2)])


def doubled_table(positions, d_model):
    pe = np.zeros((len(positions), d_model))
    for row, pos in enumerate(positions):
        for i in range(0, d_model, 2):
            angle = pos / 10000 ** (2 * i / d_model)
            pe[row, i] = math.sin(angle)
            if i + 1 < d_model:
                pe[row, i + 1] = math.cos(angle)
    return pe


def float32_table(positions, d_model):
    """The PyTorch tutorial recipe, computed for given positions (odd d_model patched)."""
    position = torch.as_tensor(np.asarray(positions), dtype=torch.float32).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(len(positions), d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)[:, : d_model // 2]
    return pe.numpy()


def tutorial_table(positions, d_model):
    """The tutorial recipe as is: breaks for odd d_model."""
    position = np.asarray(positions, dtype=np.float64)[:, None]
    div_term = np.exp(np.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    pe = np.zeros((len(position), d_model))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return pe


def swapped_table(positions, d_model):
    angles = np.outer(positions, np.repeat(posenc.frequencies(d_model), 2)[:d_model])
    return np.where(np.arange(d_model) % 2 == 0, np.cos(angles), np.sin(angles))


class LearnedTable(nn.Module):
    """The common tutorial layer: token embedding + learned position table."""

    def __init__(self, vocab_size, d_model, max_len=128):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(max_len, d_model)

    def forward(self, x):
        positions = torch.arange(x.shape[1]).unsqueeze(0).expand_as(x)
        return self.token_embedding(x) + self.position_embedding(positions)


class FixedMaxLen(nn.Module):
    """Sinusoidal buffer of max_len rows, as in the tutorial class: fails past max_len."""

    def __init__(self, vocab_size, d_model, max_len=512):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.scale = math.sqrt(d_model)
        self.register_buffer("pe", torch.from_numpy(posenc.sinusoidal(max_len, d_model, dtype=np.float32)))

    def forward(self, tokens):
        return self.tok(tokens) * self.scale + self.pe[: tokens.shape[1]]


class Clamped(FixedMaxLen):
    """Past max_len, reuse the last row: silently wrong."""

    def forward(self, tokens):
        idx = torch.arange(tokens.shape[1]).clamp(max=self.pe.shape[0] - 1)
        return self.tok(tokens) * self.scale + self.pe[idx]


class Unscaled(FixedMaxLen):
    def forward(self, tokens):
        return self.tok(tokens) + torch.from_numpy(posenc.sinusoidal(tokens.shape[1], self.tok.embedding_dim, dtype=np.float32))


class Concatenated(FixedMaxLen):
    def forward(self, tokens):
        pe = posenc.sinusoidal(tokens.shape[1], self.tok.embedding_dim, layout="concatenated", dtype=np.float32)
        return self.tok(tokens) * self.scale + torch.from_numpy(pe)


class TutorialOddBreaks(nn.Module):
    """Builds the table on the fly with the tutorial recipe: no length limit, but odd d_model fails."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.d = d_model

    def forward(self, tokens):
        pe = torch.from_numpy(tutorial_table(np.arange(tokens.shape[1]), self.d)).float()
        return self.tok(tokens) * math.sqrt(self.d) + pe


class ReturnsNumpy(FixedMaxLen):
    def forward(self, tokens):
        return (self.tok(tokens) * self.scale).detach().numpy()


class MutatesTokens(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.d = d_model

    def forward(self, tokens):
        tokens.clamp_(max=0)
        pe = torch.from_numpy(posenc.sinusoidal(tokens.shape[1], self.d, dtype=np.float32))
        return self.tok(tokens) * math.sqrt(self.d) + pe


def in_place_add(x):
    x += posenc.sinusoidal(*x.shape)
    return x


def rotation_transposed(k, d):
    if d % 2:
        raise ValueError("odd")
    return posenc.rotation(k, d).T


def rotation_doubled(k, d):
    if d % 2:
        raise ValueError("odd")
    t = np.zeros((d, d))
    for j, w in enumerate(doubled_frequencies(d)):
        c, s = math.cos(k * w), math.sin(k * w)
        t[2 * j:2 * j + 2, 2 * j:2 * j + 2] = [[c, s], [-s, c]]
    return t


def rotation_odd_silently(k, d):
    t = np.eye(d)
    t[: d - d % 2, : d - d % 2] = posenc.rotation(k, d - d % 2) if d > 1 else 1
    return t


def rotation_index_error(k, d):
    t = np.zeros((d, d))
    w = posenc.frequencies(d)
    for j in range(len(w)):
        c, s = math.cos(k * w[j]), math.sin(k * w[j])
        t[2 * j, 2 * j], t[2 * j, 2 * j + 1], t[2 * j + 1, 2 * j], t[2 * j + 1, 2 * j + 1] = c, s, -s, c
    return t


def to_concat_in_place(t):
    t[:] = np.concatenate([t[:, 0::2], t[:, 1::2]], axis=1)
    return t


PI2 = 2 * math.pi

# qid -> [(wrong answer, a word the feedback must contain)], at least three per question
WRONG = {
    "01.1": [("B", "sort"), ("AD", "D: "), ("A", "more option"), ("ABCD", "not right")],
    "01.2": [(4.0, "sqrt(d_model)"), (8.0, "squared norm"), (2 * math.sqrt(8), "factor of 2")],
    "01.3": [(in_place_add, "changed its input"),
             (lambda x: x + posenc.sinusoidal(np.arange(1, len(x) + 1), x.shape[1]), "start at 1"),
             (lambda x: x + posenc.sinusoidal(len(x), x.shape[1], layout="concatenated"), "concatenated"),
             (lambda x: x + tutorial_table(np.arange(len(x)), x.shape[1]), "odd"),
             (lambda x: x + doubled_table(np.arange(len(x)), x.shape[1]), "doubled")],
    "01.4": [(2, "L = 5"), (7, "off by one"), (8.5, "whole number")],
    "01.5": [(1000, "start at 0"), (3996, "divide by the token norm"), (999 / 4, "too low")],
    "01.6": [("ABCD", "C: "), ("AB", "more option"), ("ABDE", "E: ")],
    "01.7": [("A", "permuted order"), ("AB", "exactly one"), ("C", "exact rule")],
    "02.1": [("A", "doubled-exponent"), ("C", "position is p"), ("BD", "exactly one")],
    "02.2": [(doubled_table([4], 6)[0], "doubled"),
             (posenc.sinusoidal([4], 6, layout="concatenated")[0], "concatenated"),
             (posenc.sinusoidal([4], 6)[0][[1, 0, 3, 2, 5, 4]], "swapped"),
             ([-0.757, -0.653, 0.185, 0.983, 0.009, 1.000], "more decimals"),
             (posenc.sinusoidal([4], 6)[0][:3], "shape")],
    "02.3": [(1e-4, "doubled"), (0.01 / PI2, "cycles per position"), (PI2 * 100, "wavelength"), (0.02, "factor of 2")],
    "02.4": [(1e-4, "does not exist"), (doubled_frequencies(512)[-1], "doubled"),
             (posenc.frequencies(512)[-2], "pair 254")],
    "02.5": [(doubled_frequencies, "doubled"),
             (lambda d, base=10000.0: base ** (-2.0 * np.arange(d // 2) / d), "ceil(d/2)"),
             (lambda d, base=10000.0: (base ** (-2.0 * np.arange((d + 1) // 2) / d)).astype(np.float32), "float32"),
             (lambda d, base=10000.0: list(base ** (-2.0 * np.arange((d + 1) // 2) / d)), "numpy array"),
             (lambda d, base=10000.0: base ** (-1.0 * np.arange((d + 1) // 2) / d), "factor 2")],
    "02.6": [(lambda p, d, layout="interleaved": doubled_table(p, d), "doubled"),
             (lambda p, d, layout="interleaved": float32_table(p, d), "float32"),
             (lambda p, d, layout="interleaved": tutorial_table(p, d), "odd"),
             (lambda p, d, layout="interleaved": posenc.sinusoidal(p, d, layout="concatenated"), "concatenated"),
             (lambda p, d, layout="interleaved": swapped_table(p, d), "swapped"),
             (lambda p, d, layout="interleaved": posenc.sinusoidal(p, d), "for layout='concatenated'"),
             (lambda p, d, layout="interleaved": posenc.sinusoidal(p, d, layout=layout)[:, ::-1].copy(), "element"),
             (lambda p, d, layout="interleaved": torch.from_numpy(posenc.sinusoidal(p, d)), "torch tensor")],
    "02.7": [(lambda t: t[:, np.argsort(posenc.layout_permutation(t.shape[1]))], "inverse permutation"),
             (lambda t: np.concatenate([t[:, 1::2], t[:, 0::2]], axis=1), "cosines first"),
             (lambda t: t.copy(), "unchanged"), (to_concat_in_place, "changed its input")],
    "03.1": [([PI2, PI2 * 10, PI2 * 100, PI2 * 1000, PI2 * 10000], "i = 256"),
             (PI2 / doubled_frequencies(512)[[0, 64, 128, 192, 255]], "doubled"),
             (posenc.frequencies(512)[[0, 64, 128, 192, 255]], "frequencies"),
             (1 / posenc.frequencies(512)[[0, 64, 128, 192, 255]], "2π"),
             ([PI2, PI2 * 10, PI2 * 100, PI2 * 1000], "shape")],
    "03.2": [(115, "do NOT complete"), (int(np.sum(PI2 / doubled_frequencies(512) <= 1000)), "doubled"), (140, "too low")],
    "03.3": [("ABC", "C: "), ("CD", "not right"), ("A", "more option")],
    "03.4": [("C", "fewer pairs are fast"), ("ABD", "D: "), ("BC", "C: ")],
    "03.5": [(PI2 * 500000, "never reaches"), (PI2 * 500000 ** (2 * 126 / 128), "doubled"),
             (posenc.wavelengths(128)[-1], "base 10,000")],
    "03.6": [(0.0625, "gap between"), (np.spacing(1e6) / 2, "float64"), (float(np.finfo(np.float32).eps), "relative precision")],
    "03.7": [(float32_table, "float32"), (lambda p, d: posenc.sinusoidal(p, d), "dtype float32"),
             (lambda p, d: posenc.sinusoidal(p, d, dtype=np.float16), "dtype float32"),
             (lambda p, d: doubled_table(p, d).astype(np.float32), "doubled")],
    "04.1": [(posenc.rotation(3, 8)[2:4, 2:4].T, "transpose"), (posenc.rotation(3, 2), "k radians"),
             (rotation_doubled(3, 8)[2:4, 2:4], "doubled"), (np.eye(2).ravel(), "shape")],
    "04.2": [(rotation_transposed, "T(-k)"), (rotation_doubled, "doubled"), (rotation_odd_silently, "should raise ValueError"),
             (lambda k, d: posenc.rotation(k, d, layout="concatenated"), "concatenated"),
             (rotation_index_error, "IndexError")],
    "04.3": [("C", "C: "), ("ABC", "not right"), ("A", "more option")],
    "04.4": [("ABD", "extrapolation"), ("AE", "E: "), ("ABCDE", "C, D and E are not right")],
    "04.5": [(32.0, "offset 0"), (float(posenc.sinusoidal([0], 64)[0] @ posenc.sinusoidal([7], 64)[0]) / 32, "cosine similarity"),
             (float(np.sum(np.cos(7 * doubled_frequencies(64)))), "doubled")],
    "04.6": [("A", "A: "), ("C", "C: "), ("AB", "exactly one")],
    "04.7": [(posenc.rotation(2, 6), "interleaved"),
             (posenc.rotation(2, 6)[np.ix_(*[np.argsort(posenc.layout_permutation(6))] * 2)], "wrong way"),
             (posenc.rotation(2, 6, layout="concatenated").T, "transpose")],
    "05.1": [("C", "C: "), ("ABD", "D: "), ("A", "more option")],
    "05.2": [("D", "D: "), ("AB", "more option"), ("ABCD", "D: ")],
    "05.3": [(475, "off by one"), (477, "off by one"), (0, "every position from 1024")],
    "05.4": [(512 + 768, "multiply"), (0, "sinusoidal"), (2 * 512 * 768, "one table")],
    "05.5": [("B", "extrapolate"), ("C", "RoPE"), ("AD", "exactly one")],
    "05.6": [("C", "C: "), ("AB", "more option"), ("ABCD", "C: ")],
    "05.7": [(LearnedTable, "trainable parameters"), (FixedMaxLen, "no length limit"), (Clamped, "clamped"),
             (Unscaled, "sqrt(d_model)"), (Concatenated, "concatenated"), (TutorialOddBreaks, "odd"),
             (ReturnsNumpy, "torch tensor"), (MutatesTokens, "changed its input")],
}
WRONG_CASES = [(qid, n) for qid, answers in WRONG.items() for n in range(len(answers))]


def test_every_question_has_at_least_three_wrong_answers():
    assert set(WRONG) == set(QUESTIONS)
    assert all(len(WRONG[q]) >= 3 for q in QUESTIONS)


def test_every_chapter_has_six_questions_of_mixed_kinds():
    for chapter in CHAPTERS:
        kinds = [q.kind for qid, q in QUESTIONS.items() if qid.startswith(chapter + ".")]
        assert len(kinds) >= 6, chapter
        assert "function" in kinds and "choice" in kinds and {"numeric", "array"} & set(kinds), chapter


@pytest.mark.parametrize("qid", list(QUESTIONS))
def test_reference_answer_passes(qid, capsys):
    verdict, out = feedback(capsys, qid, QUESTIONS[qid].reference())
    assert verdict, out
    assert out.startswith(f"{qid} ✓ correct")


@pytest.mark.parametrize("qid,n", WRONG_CASES, ids=[f"{q}-{n}" for q, n in WRONG_CASES])
def test_known_wrong_answer_fails_with_the_right_hint(qid, n, capsys):
    answer, expected = WRONG[qid][n]
    verdict, out = feedback(capsys, qid, answer)
    assert not verdict, out
    assert f"{qid} ✗" in out and expected in out, out
    assert "could not check" not in out


# --------------------------------------------------------------------------
# Plausible correct answers written differently from the references
# --------------------------------------------------------------------------

def loop_table(positions, d_model):
    pe = np.zeros((len(positions), d_model))
    for row, pos in enumerate(positions):
        for i in range((d_model + 1) // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            pe[row, 2 * i] = math.sin(angle)
            if 2 * i + 1 < d_model:
                pe[row, 2 * i + 1] = math.cos(angle)
    return pe


class TorchLayer(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, d_model)
        self.pe = posenc.SinusoidalPositionalEncoding(d_model)
        self.d_model = d_model

    def forward(self, tokens):
        return self.pe(self.emb(tokens) * math.sqrt(self.d_model))


@pytest.mark.parametrize("qid,answer", [
    ("02.6", lambda p, d, layout="interleaved": (loop_table(p, d) if layout == "interleaved"
                                                 else loop_table(p, d)[:, posenc.layout_permutation(d)])),
    ("02.6", lambda p, d, *, layout: loop_table(p, d)[:, posenc.layout_permutation(d) if layout == "concatenated" else slice(None)]),
    ("03.7", lambda p, d: loop_table(p, d).astype(np.float32)),
    ("02.5", lambda d, base=10000.0: np.exp(-2 * np.arange((d + 1) // 2) * np.log(base) / d)),
    ("01.3", lambda x: np.add(x, posenc.sinusoidal(x.shape[0], x.shape[1]))),
    ("05.7", TorchLayer), ("05.7", type("Inherits", (TorchLayer,), {})),
    ("01.1", "a, c"), ("01.1", ["C", "A"]), ("03.4", "A and B"), ("02.1", " b "),
    ("01.2", np.float32(math.sqrt(8))), ("05.4", torch.tensor(512 * 768)), ("02.2", torch.from_numpy(posenc.sinusoidal([4], 6)[0])),
])
def test_other_correct_forms_pass(qid, answer, capsys):
    verdict, out = feedback(capsys, qid, answer)
    assert verdict, out


# --------------------------------------------------------------------------
# Garbage: a message every time, never an exception
# --------------------------------------------------------------------------

def raising(*args, **kwargs):
    raise RuntimeError("boom")


def wrong_type(*args, **kwargs):
    return "hello"


def mutating(*args, **kwargs):
    for a in args:
        if isinstance(a, np.ndarray):
            a[...] = 0
        if isinstance(a, torch.Tensor):
            a.zero_()
    return np.zeros(3)


def slow(*args, **kwargs):
    time.sleep(0.5)
    return np.zeros(3)


def endless(*args, **kwargs):
    while True:
        pass


def exits(*args, **kwargs):
    raise SystemExit(3)


GARBAGE = {
    "None": None, "string": "hello", "NaN": float("nan"), "inf": float("inf"), "wrong shape": np.zeros((3, 7)),
    "bool": True, "dict": {"a": 1}, "object": object(), "ragged": [[1, 2], [3]], "complex": 1j,
    "raising function": raising, "wrong return type": wrong_type, "mutating function": mutating,
    "slow function": slow, "endless loop": endless, "exiting function": exits, "empty string": "", "tensor": torch.zeros(2, 2),
}


@pytest.mark.parametrize("name", list(GARBAGE))
@pytest.mark.parametrize("qid", list(QUESTIONS))
def test_garbage_gets_a_message(qid, name, capsys, monkeypatch):
    monkeypatch.setattr(grading.kinds, "TIME_LIMIT", 0.2)
    verdict, out = feedback(capsys, qid, GARBAGE[name])
    assert not verdict
    assert out.startswith(qid) and ("✗" in out or "not answered" in out), out
    assert "could not check" not in out, out
    assert len(out.strip().splitlines()) == 1


FUNCTIONS = [q for q, question in QUESTIONS.items() if question.kind == "function"]


@pytest.mark.parametrize("qid", FUNCTIONS)
def test_function_garbage_messages_are_specific(qid, capsys, monkeypatch):
    monkeypatch.setattr(grading.kinds, "TIME_LIMIT", 0.2)
    expectations = [(raising, "raised RuntimeError: boom"), (slow, "too slow"), (endless, "too slow"),
                    (exits, "raised SystemExit"),
                    (wrong_type, "the string 'hello'")]
    if qid != "05.7":
        expectations.append((lambda *a, **k: np.zeros((3, 7)), "expected shape"))
    for answer, expected in expectations:
        verdict, out = feedback(capsys, qid, answer)
        assert not verdict and expected in out, out


@pytest.mark.parametrize("qid", [q for q in FUNCTIONS if q != "05.7"])
def test_function_returning_nan_is_named(qid, capsys):
    reference = QUESTIONS[qid].reference()

    def nan_answer(*args, **kwargs):
        out = np.array(reference(*args, **kwargs), copy=True)
        out[...] = np.nan
        return out

    verdict, out = feedback(capsys, qid, nan_answer)
    assert not verdict and "NaN" in out, out


def test_a_layer_returning_nan_is_named(capsys):
    class NanLayer(TorchLayer):
        def forward(self, tokens):
            return super().forward(tokens) * float("nan")

    verdict, out = feedback(capsys, "05.7", NanLayer)
    assert not verdict and "NaN" in out, out


def test_an_answer_too_strange_to_inspect_gets_a_message(capsys):
    class Evil(float):
        def __float__(self):
            raise RuntimeError("no")

    verdict, out = feedback(capsys, "02.3", Evil(0.01))
    assert not verdict and "could not check" in out


def test_unknown_question_id(capsys):
    for qid in ["02.99", 2.3, None]:
        verdict, out = feedback(capsys, qid, 1.0)
        assert not verdict and "not a question id" in out


def test_check_shows_nothing_extra_in_jupyter():
    verdict = check("02.3", 0.01)
    assert verdict == True and bool(verdict) and repr(verdict) == "True"  # noqa: E712
    assert verdict._ipython_display_() is None


# --------------------------------------------------------------------------
# Unanswered and progress
# --------------------------------------------------------------------------

def stub(*args, **kwargs):
    ...  # what the exercise's `def f(...): ...` placeholder does


class Stub(nn.Module):
    ...


@pytest.mark.parametrize("qid", list(QUESTIONS))
def test_placeholders_are_not_answered_yet(qid, capsys):
    placeholder = ... if QUESTIONS[qid].kind != "function" else (Stub if qid == "05.7" else stub)
    verdict, out = feedback(capsys, qid, placeholder)
    assert not verdict and "not answered yet" in out, out
    assert grading.progress(qid[:2])[qid] == "unanswered"


def answer_all(chapter, skip=()):
    for qid, q in QUESTIONS.items():
        if qid.startswith(chapter + ".") and qid not in skip:
            check(qid, q.reference())


def test_summary_counts_and_lists(capsys):
    answer_all("02", skip={"02.3", "02.5", "02.7"})
    check("02.3", 1e-4)   # wrong
    check("02.5", ...)    # unanswered; 02.7 never checked
    capsys.readouterr()
    grading.summary("02")
    out = capsys.readouterr().out
    assert "Chapter 02: 4 of 7 correct." in out
    assert re.search(r"wrong: 02\.3", out) and re.search(r"not answered yet: 02\.5", out)
    assert re.search(r"not checked yet.*02\.7", out)
    assert "All answers are correct" not in out
    with pytest.raises(AssertionError, match=r"02\.3 \(wrong\).*02\.5 \(unanswered\).*02\.7 \(unchecked\)"):
        grading.assert_all_correct("02")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_never_all_correct_while_something_is_missing(chapter, capsys):
    qids = [q for q in QUESTIONS if q.startswith(chapter + ".")]
    for missing in qids:
        grading.reset()
        answer_all(chapter, skip={missing})
        check(missing, ...)
        capsys.readouterr()
        grading.summary(chapter)
        out = capsys.readouterr().out
        assert f"{len(qids) - 1} of {len(qids)} correct" in out and "All answers are correct" not in out
        with pytest.raises(AssertionError, match=re.escape(missing)):
            grading.assert_all_correct(chapter)
    grading.reset()
    answer_all(chapter)
    capsys.readouterr()
    grading.summary(chapter)
    assert "All answers are correct" in capsys.readouterr().out
    grading.assert_all_correct(chapter)


def test_a_later_wrong_answer_replaces_an_earlier_right_one():
    check("02.3", 0.01)
    check("02.3", 0.02)
    assert grading.progress("02")["02.3"] == "wrong"


def test_unknown_chapter(capsys):
    grading.summary("99")
    assert "No questions" in capsys.readouterr().out
    with pytest.raises(AssertionError):
        grading.assert_all_correct("99")


# --------------------------------------------------------------------------
# The notebooks and the bank agree
# --------------------------------------------------------------------------

SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))


def test_one_solution_notebook_per_chapter():
    assert [p.name[:2] for p in SOLUTIONS] == CHAPTERS


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_solution_notebook_checks_every_question_once_and_asserts_last(path):
    nb = nbformat.read(path, as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    chapter = path.name[:2]
    checked = re.findall(r'check\("(\d\d\.\d+)"', "\n".join(code))
    assert sorted(checked) == sorted(q for q in QUESTIONS if q.startswith(chapter + "."))
    assert len(checked) == len(set(checked))
    assert code[-1].strip() == f'# BEGIN SOLUTION\ngrading.assert_all_correct("{chapter}")\n# END SOLUTION'
    assert f'summary("{chapter}")' in code[-2]
    titles = [c.source for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("# ")]
    assert len(titles) == 1 and titles[0].startswith("# Practice: ")


def test_hints_only_where_they_apply(capsys):
    """A type or dtype problem does not come with an unrelated bug hint."""
    for qid, answer in [("02.6", lambda p, d, layout: torch.from_numpy(posenc.sinusoidal(p, d))),
                        ("03.7", lambda p, d: posenc.sinusoidal(p, d))]:
        verdict, out = feedback(capsys, qid, answer)
        assert not verdict and "Hint" not in out, out


def test_an_endless_loop_is_stopped(capsys, monkeypatch):
    import threading
    monkeypatch.setattr(grading.kinds, "TIME_LIMIT", 0.2)
    before = threading.active_count()
    verdict, out = feedback(capsys, "02.5", endless)
    assert not verdict and "too slow" in out
    time.sleep(0.3)
    assert threading.active_count() <= before  # the worker was interrupted, not left spinning


# --------------------------------------------------------------------------
# Chapter 06 (appended as one block): precision and implementations
# --------------------------------------------------------------------------

from posenc_course import bug_zoo  # noqa: E402

CHAPTERS.append("06")  # the chapter-level tests above read this list when they run or are collected


def half_angle_table(positions, d_model):
    """Bug 6 in numpy: positions, frequencies and angles in float16."""
    p = np.asarray(positions).astype(np.float16)[:, None]
    w = (10000.0 ** (-2.0 * np.arange((d_model + 1) // 2) / d_model)).astype(np.float16)
    angle = p * w
    out = np.empty((len(p), 2 * w.size), dtype=np.float16)
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    return out[:, :d_model]


def buggy_06(positions, d_model):
    """The function of question 06.7 as given: the cosine's own exponent, and an IndexError for odd d."""
    positions = np.asarray(positions, dtype=np.float64)
    pe = np.zeros((len(positions), d_model))
    for i in range(0, d_model, 2):
        pe[:, i] = np.sin(positions / 10000 ** (i / d_model))
        pe[:, i + 1] = np.cos(positions / 10000 ** ((i + 1) / d_model))
    return pe


def exponent_fixed_odd_breaks(positions, d_model):
    positions = np.asarray(positions, dtype=np.float64)
    pe = np.zeros((len(positions), d_model))
    for i in range(0, d_model, 2):
        pe[:, i] = np.sin(positions / 10000 ** (i / d_model))
        pe[:, i + 1] = np.cos(positions / 10000 ** (i / d_model))
    return pe


def fixed_06(positions, d_model):
    """A learner's fix of 06.7: same loop, one exponent per pair, guard for the lone last sine."""
    positions = np.asarray(positions, dtype=np.float64)
    pe = np.zeros((len(positions), d_model))
    for i in range(0, d_model, 2):
        angle = positions / 10000 ** (i / d_model)
        pe[:, i] = np.sin(angle)
        if i + 1 < d_model:
            pe[:, i + 1] = np.cos(angle)
    return pe


def along_batch_06(x):
    return x + posenc.sinusoidal(x.shape[0], x.shape[2])[:, None, :]


def flat_table_batch_slice(x):
    return x + posenc.sinusoidal(64, x.shape[2])[: x.shape[0]]


def in_place_batch_first(x):
    x += posenc.sinusoidal(x.shape[1], x.shape[2])
    return x


BF16_BELOW_20000 = 20000 - len(torch.unique(torch.arange(20000, dtype=torch.float64).to(torch.bfloat16)))

WRONG_06 = {
    "06.1": [(256, "still exact"), (2049, "float16"), (2**24 + 1, "float32"), (256.5, "whole number")],
    "06.2": [("C", "C: "), ("E", "E: "), ("CD", "exactly one"), ("A", "2^53")],
    "06.3": [(5347, "distinct vectors"), (BF16_BELOW_20000, "bfloat16"), (20000 - 2049, "spacing"),
             (0, "only up to 2048")],
    "06.4": [(half_angle_table, "half precision"), (lambda p, d: float32_table(p, d).astype(np.float16), "float32"),
             (lambda p, d: posenc.sinusoidal(p, d, dtype=np.float32), "dtype float16"),
             (lambda p, d: posenc.sinusoidal(p, d, layout="concatenated").astype(np.float16), "concatenated")],
    "06.5": [("A", "alternates"), ("D", "fairseq"), ("C", "cosines first"), ("AB", "exactly one")],
    "06.6": [("AB", "more option"), ("ABCE", "C: "), ("D", "1e-4"), ("ABDE", "D: ")],
    "06.7": [(buggy_06, "(2i+1)/d"), (exponent_fixed_odd_breaks, "IndexError"),
             (lambda p, d: doubled_table(p, d), "doubled"), (float32_table, "float32"),
             (swapped_table, "swapped")],
    "06.8": [(along_batch_06, "axis 1"), (lambda x: x + posenc.sinusoidal(1, x.shape[2]), "PE(0)"),
             (flat_table_batch_slice, "raised ValueError"), (in_place_batch_first, "changed its input"),
             (lambda x: x + posenc.sinusoidal(x.shape[1], x.shape[2], layout="concatenated"), "concatenated"),
             (lambda x: np.broadcast_to(posenc.sinusoidal(x.shape[1], x.shape[2]), x.shape).copy(), "encoding alone")],
}
WRONG.update(WRONG_06)
WRONG_CASES_06 = [(qid, n) for qid, answers in WRONG_06.items() for n in range(len(answers))]


@pytest.mark.parametrize("qid,n", WRONG_CASES_06, ids=[f"{q}-{n}" for q, n in WRONG_CASES_06])
def test_chapter_06_known_wrong_answer_fails_with_the_right_hint(qid, n, capsys):
    test_known_wrong_answer_fails_with_the_right_hint(qid, n, capsys)


@pytest.mark.parametrize("qid,answer", [
    ("06.4", lambda p, d: loop_table(p, d).astype(np.float16)),
    ("06.4", lambda p, d: torch.from_numpy(posenc.sinusoidal(p, d)).half().numpy()),
    ("06.7", fixed_06), ("06.7", loop_table),
    ("06.8", lambda x: x + posenc.sinusoidal(x.shape[1], x.shape[2])),
    ("06.8", lambda x: posenc.SinusoidalPositionalEncoding(x.shape[2])(torch.from_numpy(x)).numpy()),
    ("06.1", np.float32(257)), ("06.3", torch.tensor(14653)), ("06.5", "b"), ("06.6", "A, B and E"),
])
def test_chapter_06_other_correct_forms_pass(qid, answer, capsys):
    verdict, out = feedback(capsys, qid, answer)
    assert verdict, out


def test_chapter_06_answers_agree_with_the_chapter_tools():
    assert QUESTIONS["06.3"].reference() == bug_zoo.duplicate_rows(
        bug_zoo.low_precision_table(np.arange(20000), 8, dtype=torch.float16))
    assert bug_zoo.identify_variant(bug_zoo.mystery_table(2)) == "concatenated"
    assert QUESTIONS["06.5"].reference() == "B"
    assert QUESTIONS["06.2"].reference() == "D"
    rows = bug_zoo.low_precision_table([1000, 1001], 8, dtype=torch.float16)
    assert not np.array_equal(rows[0], rows[1])  # float16 keeps them apart, bfloat16 does not



# --------------------------------------------------------------------------
# Chapter 07 (appended as one block): rotary embeddings (RoPE) and ALiBi
# --------------------------------------------------------------------------

CHAPTERS.append("07")


def rope_loop(x, p, layout="interleaved", base=10000.0, sign=1.0, exponent=2.0, dtype=np.float64):
    """RoPE of one vector written with a loop over pairs; the keywords model real mistakes."""
    d = len(x)
    out = np.array(x, dtype=np.float64)
    for i in range(d // 2):
        k = 2 * i if exponent == "channel" else i   # "channel": i counts channels 0, 2, 4, ... (doubled exponent)
        w = dtype(base) ** (dtype(-2.0 * k / d))
        angle = float(dtype(sign * p) * w)
        a, b = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + d // 2)
        out[a] = x[a] * math.cos(angle) - x[b] * math.sin(angle)
        out[b] = x[a] * math.sin(angle) + x[b] * math.cos(angle)
    return out


def rope_complex(x, p, layout="interleaved"):
    """A correct answer written with complex numbers."""
    d = len(x)
    pairs = x[0::2] + 1j * x[1::2] if layout == "interleaved" else x[: d // 2] + 1j * x[d // 2:]
    z = pairs * np.exp(1j * p * 10000.0 ** (-2.0 * np.arange(d // 2) / d))
    return np.stack([z.real, z.imag], -1).reshape(-1) if layout == "interleaved" else np.concatenate([z.real, z.imag])


def rope_in_place(x, p, layout="interleaved"):
    x[:] = rope_loop(x, p, layout)
    return x


ALIBI_ROW = posenc.alibi_bias(4, 6)[1, 5]

WRONG_07 = {
    "07.1": [("B", "small angles"), ("C", "adds nothing"), ("D", "composition rule"), ("AB", "exactly one")],
    "07.2": [(lambda x, p, layout="interleaved": rope_loop(x, p, layout, sign=-1.0), "-p·ω_i"),
             (lambda x, p, layout="interleaved": rope_loop(x, p, layout, exponent="channel"), "doubled"),
             (lambda x, p, layout="interleaved": rope_loop(x, p), "for layout='concatenated'"),
             (lambda x, p, layout="interleaved": rope_loop(x, p, "concatenated"), "for layout='interleaved'"),
             (lambda x, p, layout="interleaved": rope_loop(x, p, layout, dtype=np.float32), "float32"),
             (rope_in_place, "changed its input"),
             (lambda x, p, layout="interleaved": torch.from_numpy(rope_loop(x, p, layout)), "torch tensor")],
    "07.3": [(0.125, "8 heads"), (0.5, "counted from h = 1"), (0.25, "head 4"), (2 ** (-3 / 16), "factor 8")],
    "07.4": [("ABCD", "C: "), ("AB", "more option"), ("ABDE", "E: ")],
    "07.5": [(4, "squeezes"), (12288, "difference"), (1 / 16384, "L_train / L_new")],
    "07.6": [(40000, "d/(d-2) makes it exactly s"), (1e4 * 4 ** (126 / 128), "upside down"), (2500, "must grow")],
    "07.7": [(-ALIBI_ROW, "sign"), (ALIBI_ROW[::-1], "reverse order"), (posenc.alibi_bias(4, 6)[2, 5], "head 3"),
             (ALIBI_ROW[1:], "shape"), (np.round(ALIBI_ROW, 1), "elements are wrong")],
    "07.8": [("C", "C: "), ("ABD", "D: "), ("A", "more option")],
}
WRONG.update(WRONG_07)
WRONG_CASES_07 = [(qid, n) for qid, answers in WRONG_07.items() for n in range(len(answers))]


@pytest.mark.parametrize("qid,n", WRONG_CASES_07, ids=[f"{q}-{n}" for q, n in WRONG_CASES_07])
def test_chapter_07_known_wrong_answer_fails_with_the_right_hint(qid, n, capsys):
    test_known_wrong_answer_fails_with_the_right_hint(qid, n, capsys)


@pytest.mark.parametrize("qid,answer", [
    ("07.2", rope_complex), ("07.2", lambda x, p, layout="interleaved": rope_loop(x, p, layout)),
    ("07.2", lambda x, p, *, layout: rope_complex(x, p, layout)),
    ("07.4", "a, b, d"), ("07.5", np.float32(0.25)), ("07.5", 4095 / 16383), ("07.3", 2 ** -1.5),
    ("07.7", torch.from_numpy(ALIBI_ROW)), ("07.8", "B A"),
])
def test_chapter_07_other_correct_forms_pass(qid, answer, capsys):
    verdict, out = feedback(capsys, qid, answer)
    assert verdict, out


def test_chapter_07_answers_agree_with_the_chapter():
    stretch = posenc.wavelengths(128, QUESTIONS["07.6"].reference()) / posenc.wavelengths(128)
    assert math.isclose(stretch[0], 1.0) and math.isclose(stretch[-1], 4.0)  # fastest pair kept, slowest slowed by s
    assert QUESTIONS["07.3"].reference() == posenc.alibi_slopes(16)[2] == 2 ** -1.5
    assert np.array_equal(QUESTIONS["07.7"].reference(), -(5 - np.arange(6)) / 16)
    q, k = np.random.default_rng(7).normal(size=(2, 1, 32))
    score = lambda p, s: float((posenc.apply_rope(q, [p]) @ posenc.apply_rope(k, [s]).T)[0, 0])  # noqa: E731
    assert math.isclose(score(3, 10), score(103, 110)) and math.isclose(score(0, 7), score(1000, 1007))
    assert math.isclose(score(5, 5), score(9, 9)) and not math.isclose(score(3, 10), score(10, 3))
    assert not math.isclose(score(2, 4), score(4, 8))
