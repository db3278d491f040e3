/* The script of a self-check quiz (src/posenc_course/quizzes.py), inlined after each quiz's HTML.
 *
 * It judges nothing itself: the course's choice engine (posenc_course/choices.py) judged every choice
 * when the HTML was made, and wrote the verdict on its button (data-correct) and its feedback, hidden,
 * into the question's live region (data-why names it). A click marks the button and shows that feedback.
 * Without this script the buttons stay disabled and the written-out answers stay open.
 *
 * A section's link (a.pe-quiz-ref) comes with the chapter notebook and the cell of the section's heading
 * as its href, which JupyterLab follows by itself (it resolves an output's links before the output's script
 * runs). This script moves the link only where that notebook is out of reach:
 *   - on a page Sphinx built (<html data-content_root>), to "#label" when that section is on this very page
 *     (the single-page book, and its PDF, has every chapter on one page), else to the book's page and anchor
 *     (data-book). Sections further down the page are not parsed yet when this script runs: the links are
 *     placed again once the page is read;
 *   - in Colab, where the chapters are not beside the notebook, nowhere: the link becomes plain text.
 *
 * It finds its own quiz through document.currentScript; where a page runs scripts without one (an
 * eval), it wires every quiz not wired yet. No network, no globals: one function, called at once.
 */
(function () {
  var own = document.currentScript && document.currentScript.closest(".pe-quiz");
  var roots = own ? [own] : document.querySelectorAll(".pe-quiz");
  var book = document.documentElement.hasAttribute("data-content_root");
  var colab = !!(window.google && window.google.colab);
  function place(root) {
    Array.prototype.forEach.call(root.querySelectorAll("a.pe-quiz-ref"), function (link) {
      var label = link.getAttribute("data-label");
      if (book) {
        link.setAttribute("href", document.getElementById(label) ? "#" + label : link.getAttribute("data-book"));
      } else if (colab) {
        link.removeAttribute("href");
      }
    });
  }
  Array.prototype.forEach.call(roots, function (root) {
    place(root);
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", function () { place(root); });
    }
    if (root.getAttribute("data-ready")) { return; }
    root.setAttribute("data-ready", "1");
    var fallback = root.querySelector(".pe-quiz-fallback");
    if (fallback) { fallback.open = true; fallback.classList.add("pe-quiz-printed"); }
    Array.prototype.forEach.call(root.querySelectorAll(".pe-quiz-question"), function (question) {
      var out = question.querySelector(".pe-quiz-feedback");
      var buttons = question.querySelectorAll("button.pe-quiz-choice");
      Array.prototype.forEach.call(buttons, function (button) {
        button.disabled = false;
        button.addEventListener("click", function () {
          var right = button.getAttribute("data-correct") === "true";
          Array.prototype.forEach.call(buttons, function (other) {
            other.setAttribute("aria-pressed", other === button ? "true" : "false");
            other.classList.remove("pe-quiz-right", "pe-quiz-wrong");
          });
          button.classList.add(right ? "pe-quiz-right" : "pe-quiz-wrong");
          var why = root.querySelector("#" + button.getAttribute("data-why"));
          Array.prototype.forEach.call(out.querySelectorAll(".pe-quiz-why"), function (other) {
            other.hidden = other !== why;
          });
          if (window.MathJax && window.MathJax.typesetPromise) { window.MathJax.typesetPromise([why]); }
        });
      });
    });
  });
})();
