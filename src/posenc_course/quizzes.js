/* The script of a self-check quiz (src/posenc_course/quizzes.py), inlined after each quiz's HTML.
 *
 * It judges nothing itself: the course's choice engine (posenc_course/choices.py) judged every choice
 * when the HTML was made, and wrote the verdict on its button (data-correct) and its feedback, hidden,
 * into the question's live region (data-why names it). A click marks the button and shows that feedback.
 * Without this script the buttons stay disabled and the written-out answers stay open.
 *
 * It finds its own quiz through document.currentScript; where a page runs scripts without one (an
 * eval), it wires every quiz not wired yet. No network, no globals: one function, called at once.
 */
(function () {
  var own = document.currentScript && document.currentScript.closest(".pe-quiz");
  var roots = own ? [own] : document.querySelectorAll(".pe-quiz");
  Array.prototype.forEach.call(roots, function (root) {
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
