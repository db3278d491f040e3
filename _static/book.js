// Boxes that scroll sideways: wide display math, a figure on a phone, code,
// output; and inline math wider than its line, which is let scroll only when
// it needs to (class "scrolls", see book.css). Each gets a tab stop so that
// it can be scrolled from the keyboard. Checked after MathJax has typeset
// the page and again when the window is resized; a box that no longer
// scrolls loses what it was given.
(() => {
  const BOXES = 'mjx-container[display="true"], .cell_output, .cell_output .output, pre';
  const scrolls = box => box.scrollWidth > box.clientWidth && /auto|scroll/.test(getComputedStyle(box).overflowX);
  const stop = (box, on) => {
    if (on && !box.hasAttribute("tabindex")) {
      box.tabIndex = 0;
      box.dataset.scrollStop = "";
    } else if (!on && "scrollStop" in box.dataset) {
      box.removeAttribute("tabindex");
      delete box.dataset.scrollStop;
    }
  };
  const mark = () => {
    for (const span of document.querySelectorAll("span.math")) {
      span.classList.remove("scrolls");
      const wide = span.scrollWidth > span.clientWidth + 1;
      span.classList.toggle("scrolls", wide);
      stop(span, wide);
    }
    for (const box of document.querySelectorAll(BOXES)) stop(box, scrolls(box));
  };
  const typeset = () => (window.MathJax && MathJax.startup && MathJax.startup.promise) || Promise.resolve();
  const start = () => typeset().then(mark);
  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
  let timer;
  window.addEventListener("resize", () => { clearTimeout(timer); timer = setTimeout(mark, 200); });
})();
