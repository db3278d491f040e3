// Boxes that scroll sideways: wide display math, a figure on a phone; and
// inline math wider than its line, which is let scroll only when
// it needs to (class "scrolls", see book.css). Each gets a tab stop so that
// it can be scrolled from the keyboard. Checked once the math's web fonts
// have loaded (the math is typeset at build time; its width depends on them) and again when the window is resized; a box that no longer
// scrolls loses what it was given.
(() => {
  // (code and text output get theirs from pydata-sphinx-theme)
  const BOXES = 'mjx-container[display="true"], .cell_output';
  const scrolls = box => box.scrollWidth > box.clientWidth + 1 && /auto|scroll/.test(getComputedStyle(box).overflowX);
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
    for (const span of document.querySelectorAll("article span.math")) {  // not the sidebars' contents
      // the rendered formula against the width of its line (not scrollWidth: MathJax's hidden
      // MathML for screen readers is laid out too, and is wider than what is shown)
      const math = span.querySelector("mjx-container");
      let line = span.parentElement;  // the block the formula's line belongs to
      while (line && /^(inline|contents)$/.test(getComputedStyle(line).display)) line = line.parentElement;
      if (!math || !line || !span.checkVisibility()) continue;
      const style = getComputedStyle(line);
      const room = line.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      const wide = math.getBoundingClientRect().width > room + 1;
      span.classList.toggle("scrolls", wide);
      stop(span, wide);
    }
    for (const box of document.querySelectorAll(BOXES)) stop(box, scrolls(box));
  };
  const start = () => document.fonts.ready.then(mark);
  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
  let timer;
  window.addEventListener("resize", () => { clearTimeout(timer); timer = setTimeout(mark, 200); });
})();
