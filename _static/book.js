// Boxes that scroll sideways: wide display math, code, outputs and tables on a phone; and
// inline math wider than its line, which is let scroll only when it needs to (class
// "scrolls", see book.css). Each gets a tab stop so that it can be scrolled from the
// keyboard, and a fade at the edge where there is more to see (data-more, see book.css).
// Checked once the math's web fonts have loaded (the math is typeset at build time; its
// width depends on them) and again when the window is resized; a box that no longer
// scrolls loses what it was given.
(() => {
  // (code and text output get theirs from pydata-sphinx-theme)
  const BOXES = 'mjx-container[display="true"], .cell_output';
  const scrolls = box => box.scrollWidth > box.clientWidth + 1 && /auto|scroll/.test(getComputedStyle(box).overflowX);
  // which sides have more to see: the fade of book.css ([data-more]) marks them
  const more = box => {
    const left = box.scrollLeft > 1, right = box.scrollLeft + box.clientWidth < box.scrollWidth - 1;
    const side = left && right ? "both" : left ? "left" : right ? "right" : null;
    if (side) box.dataset.more = side;
    else delete box.dataset.more;
  };
  const cue = (box, on) => {
    if (on && !box.dataset.cue) {
      box.dataset.cue = "";
      box.addEventListener("scroll", () => more(box), {passive: true});
    }
    if (on) more(box);
    else delete box.dataset.more;
  };
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
      cue(span, wide);
    }
    for (const box of document.querySelectorAll(BOXES)) {
      stop(box, scrolls(box));
      cue(box, scrolls(box));
    }
    // code and text output (the theme gives them their tab stop) and tables' wrappers (which get one here)
    for (const box of document.querySelectorAll("article pre")) cue(box, scrolls(box));
    for (const box of document.querySelectorAll("article .pe-table-wrap, article .pst-scrollable-table-container")) {
      stop(box, scrolls(box));
      cue(box, scrolls(box));
    }
  };
  const start = () => document.fonts.ready.then(mark);
  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
  let timer;
  window.addEventListener("resize", () => { clearTimeout(timer); timer = setTimeout(mark, 200); });
})();
