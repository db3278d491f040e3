// What a reader sees on one book page, measured in the page (Playwright evaluates this function).
//
// Returns an object with:
//   pan        the page scrolls sideways: how far, and the outermost elements sticking out
//   clipped    content wider than its box, with no scrollbar that reaches it
//   scrolled   content wider than its box, reachable only by scrolling that box (by kind)
//   wideMath   display formulas wider than the room their column leaves them (beside the equation's number):
//              each {id, text, content, room}, content and room in px; they scroll, and a fade is all that says so
//   spuriousStops  boxes given a tab stop for scrolling whose visible content is not wider than them
//   rawTex     TeX shown as text: in the prose, or inside rendered math (\_ in \text{...})
//   mathErrors MathJax error boxes
//   text       the visible text of the article (for authoring-marker checks)
//   title      the page's <title> and its first heading
//   figures    every image in the article: rendered and natural width, its column's width, vector or not,
//              the background behind it
//   glyphsCut  glyphs of typeset math not inside the painted area of the box that clips them
//   uncued     boxes that scroll sideways with no fade at the edge where there is more (data-more, book.js)
//   panels     the background behind every result table and figure (dark mode: no light panel)
//   quizzes    how many quizzes the page has, and how many show their written-out answers
//   searchBoxes how many search controls are visible
//   punctuationAlone  punctuation after an inline formula that starts a line of its own (below the formula)
//   bracketAlone      an opening bracket before an inline formula that ends a line (the formula starts the next)
//   squeezed   inline formulas holding a fraction or a matrix (MathJax sets their parts at script size in text)
//   codeScrolls  code cells whose code scrolls sideways (a line wider than the cell): each {first, scroll,
//              client}, the cell's first line and its code's width against the room the cell gives it, in px
//   seams      stretched braces (MathJax's mjx-stretchy-h) whose neighbouring pieces do not overlap: where the
//              joint falls mid-pixel, a hairline of background shows through
//
// "Content" is measured from the descendants' boxes, not from scrollWidth alone: glyphs
// that are positioned absolutely (MathJax 2) do not count in scrollWidth but are cut all
// the same. A box "clips" when its computed overflow-x is not visible; a nested clipping
// box stands for its own subtree (it is measured on its own).
() => {
  const SLACK = 1;  // px: sub-pixel rounding
  const vw = document.documentElement.clientWidth;
  const article = document.querySelector('main#main-content article') || document.querySelector('article')
                  || document.body;
  const clips = el => {  // overflow does not apply to inline boxes, whatever the computed value says
    const s = getComputedStyle(el);
    return s.overflowX !== 'visible' && s.display !== 'inline' && s.display !== 'contents';
  };
  const invisible = el => {
    if (!el.checkVisibility({opacityProperty: true, visibilityProperty: true})) return true;
    const s = getComputedStyle(el);
    // screen-reader-only text (MathJax's assistive MathML, skip links) is clipped to nothing on purpose;
    // MathJax 2 also clips its glyph boxes with clip: rect(...), which leaves them visible
    const rect = /rect\(\s*([-\d.]+)px,?\s*([-\d.]+)px,?\s*([-\d.]+)px,?\s*([-\d.]+)px/.exec(s.clip || '');
    if (rect && (rect[2] - rect[4] <= 1 || rect[3] - rect[1] <= 1)) return true;
    return /inset\(50%/.test(s.clipPath || '');
  };
  // boxes strictly inside a math rendering belong to MathJax's layout; the rendering's own box counts
  const insideMath = el => !!(el.parentElement && el.parentElement.closest('mjx-container, .MathJax, .MathJax_Display, .MathJax_SVG'));
  const describe = el => {
    const cls = typeof el.className === 'string' && el.className.trim()
      ? '.' + el.className.trim().split(/\s+/).slice(0, 3).join('.') : '';
    const section = el.closest('section[id]');
    const text = (el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 60);
    return `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}${cls}`
         + `${section ? ' in #' + section.id : ''}: "${text}"`;
  };
  const kindOf = el => {
    if (el.closest('mjx-container, .MathJax_Display, div.math, .math')) return 'math';
    if (el.closest('.cell_output, .output')) return 'output';
    if (el.closest('table')) return 'table';
    if (el.closest('pre, .highlight')) return 'code';
    return 'other';
  };

  // The horizontal extent of what `box` shows: its descendants' boxes and text runs, nested clipping
  // boxes as a whole.
  const range = document.createRange();
  const extent = box => {
    let left = Infinity, right = -Infinity;
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode: node => {
        if (node.nodeType === Node.TEXT_NODE) {
          if (node.textContent.trim()) {
            range.selectNodeContents(node);
            const r = range.getBoundingClientRect();
            if (r.width > 0) { left = Math.min(left, r.left); right = Math.max(right, r.right); }
          }
          return NodeFilter.FILTER_SKIP;
        }
        if (invisible(node)) return NodeFilter.FILTER_REJECT;
        const r = node.getBoundingClientRect();
        if (r.width > 0 && r.height > 0 && getComputedStyle(node).position !== 'fixed') {
          left = Math.min(left, r.left); right = Math.max(right, r.right);
        }
        return node !== box && clips(node) && !insideMath(node) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
      },
    });
    while (walker.nextNode()) { /* acceptNode does the work */ }
    return {left, right};
  };

  const clipped = [], scrolled = [], uncued = [];
  const boxes = [article, ...article.querySelectorAll('*')].filter(
    el => clips(el) && !insideMath(el) && !invisible(el));
  for (const box of boxes) {
    const r = box.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) continue;
    const innerLeft = r.left + box.clientLeft, innerRight = innerLeft + box.clientWidth;
    const {left, right} = extent(box);
    if (!(right > innerRight + SLACK || left < innerLeft - SLACK)) continue;
    const s = getComputedStyle(box);
    const scrollable = (s.overflowX === 'auto' || s.overflowX === 'scroll') && box.scrollWidth > box.clientWidth + SLACK;
    const reach = innerLeft - box.scrollLeft + box.scrollWidth;
    const item = {what: describe(box), kind: kindOf(box), width: Math.round(r.width),
                  content: Math.round(right - left), cut: Math.round(Math.max(right - innerRight, innerLeft - left))};
    if (scrollable && right <= reach + SLACK && left >= innerLeft - box.scrollLeft - SLACK) {
      scrolled.push(item);
      if (!box.dataset.more || getComputedStyle(box).maskImage === 'none') uncued.push(item.what);
    } else clipped.push(item);
  }

  // Display formulas wider than their room: the formula (mjx-math, drawn whole however its box scrolls) against
  // the inner width of the box that holds it (mjx-container, which the equation's number floats beside).
  const wideMath = [];
  for (const div of article.querySelectorAll('div.math')) {
    const box = div.querySelector('mjx-container'), math = box && box.querySelector('mjx-math');
    if (!math || !div.checkVisibility()) continue;
    const content = math.getBoundingClientRect().width;
    if (content > box.clientWidth + SLACK) {
      const mml = box.querySelector('mjx-assistive-mml');
      wideMath.push({id: div.id || null, text: (mml ? mml.textContent : '').replace(/\s+/g, ' ').trim().slice(0, 60),
                     content: Math.round(content), room: box.clientWidth});
    }
  }

  // A glyph of typeset math must sit inside the painted area of every box between it and the formula's
  // container that clips (display math scrolls sideways, so it clips at top and bottom too): its nominal box
  // (MathJax's height and depth of the character) at least GLYPH_ROOM px inside, as the ink of some
  // characters (the transpose sign's crossbar) reaches a little beyond it.
  const GLYPH_ROOM = 1;
  const glyphsCut = [];
  for (const math of article.querySelectorAll('mjx-container')) {
    const clippers = [];
    for (let a = math; a && a !== article; a = a.parentElement) {
      const st = getComputedStyle(a);
      if (st.overflowY !== 'visible' && st.display !== 'inline' && st.display !== 'contents') clippers.push(a);
      if (a.matches('div.math, span.math')) break;
    }
    if (!clippers.length || !math.checkVisibility()) continue;
    for (const box of clippers) {
      const r = box.getBoundingClientRect(), top = r.top + box.clientTop, bottom = top + box.clientHeight;
      for (const g of math.querySelectorAll('mjx-c')) {
        const q = g.getBoundingClientRect();
        if (q.height === 0 || q.width === 0) continue;
        if (q.top < top + GLYPH_ROOM || q.bottom > bottom - GLYPH_ROOM) {
          glyphsCut.push(`${describe(box)}: ${getComputedStyle(g, '::before').content} from ${(q.top - top).toFixed(2)} `
                         + `to ${(q.bottom - top).toFixed(2)} px in a ${box.clientHeight} px box`);
          break;
        }
      }
    }
  }

  // Punctuation right after an inline formula ("$x$.") and an opening bracket right before one ("($x$"),
  // inside its span (math_prerender.py) or just outside it, must stay on the formula's line: a line that starts
  // with the period, or ends with the bracket, reads as a typo.
  const punctuationAlone = [], bracketAlone = [];
  const textNode = node => node && node.nodeType === Node.TEXT_NODE ? node : null;
  const charBox = (text, at) => {
    const range = document.createRange();
    range.setStart(text, at);
    range.setEnd(text, at + 1);
    return range.getBoundingClientRect();
  };
  for (const span of article.querySelectorAll('span.math')) {
    const math = span.querySelector('mjx-container');
    if (!math || !span.checkVisibility()) continue;
    const rects = math.getClientRects(), start = rects[0], end = rects[rects.length - 1];
    const after = [span.lastChild, span.nextSibling].map(textNode).find(t => t && /^[.,;:!?)\]]/.test(t.data));
    if (after && end) {
      const mark = charBox(after, 0);
      if (mark.height > 0 && mark.top >= end.bottom - SLACK)
        punctuationAlone.push(`"${after.data[0]}" after ${describe(span)} starts a line ${Math.round(mark.top - end.top)} px below`);
    }
    const inside = textNode(span.firstChild), outside = textNode(span.previousSibling);
    const [before, at] = inside && /^[(\[]/.test(inside.data) ? [inside, 0]
      : outside && /[(\[]$/.test(outside.data) ? [outside, outside.data.length - 1] : [null, 0];
    if (before && start) {
      const mark = charBox(before, at);
      if (mark.height > 0 && mark.bottom <= start.top + SLACK)
        bracketAlone.push(`"${before.data[at]}" before ${describe(span)} ends a line ${Math.round(start.top - mark.top)} px above it`);
    }
  }

  // A fraction or a matrix in running text is typeset in text style: numerator, denominator and entries at
  // script size (70 %), with their own sub- and superscripts smaller still. They belong in display math.
  const squeezed = [...article.querySelectorAll('span.math')]
    .filter(span => span.checkVisibility() && span.querySelector('mjx-container:not([display="true"]) :is(mjx-mfrac, mjx-mtable)'))
    .map(span => describe(span));

  // A stretched brace is drawn in pieces (end, bar, tip, bar, end); a bar is its clipped box, any other piece its
  // glyph. Pieces that only touch leave a gap wherever the joint is not on a device pixel's edge.
  const SEAM_OVERLAP = 0.5;  // px
  const seams = [];
  for (const brace of article.querySelectorAll('mjx-stretchy-h')) {
    if (!brace.checkVisibility()) continue;
    const ink = [...brace.children]
      .map(piece => (piece.localName === 'mjx-ext' ? piece : piece.querySelector('mjx-c') || piece).getBoundingClientRect())
      .filter(r => r.width > 0);
    for (let k = 1; k < ink.length; k++) {
      const overlap = ink[k - 1].right - ink[k].left;
      if (overlap < SEAM_OVERLAP) {
        seams.push(`${describe(brace)}: pieces ${k} and ${k + 1} overlap by ${overlap.toFixed(2)} px`);
        break;
      }
    }
  }

  // Code cells (their input: the code itself) that scroll sideways; the first line of code names the cell.
  const codeScrolls = [...article.querySelectorAll('.cell_input pre')]
    .filter(pre => pre.checkVisibility() && pre.scrollWidth > pre.clientWidth + SLACK)
    .map(pre => ({first: (pre.textContent.split('\n').find(line => line.trim()) || '').slice(0, 80),
                  scroll: pre.scrollWidth, client: pre.clientWidth}));

  // Sideways pan: the document is wider than the window. Report the outermost elements that stick out.
  const root = document.scrollingElement;
  let pan = null;
  if (root.scrollWidth > root.clientWidth + SLACK) {
    const out = [];
    const cutByBox = el => {  // inside a box that clips it within the window: not what makes the page pan
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement)
        if (clips(a) && a.getBoundingClientRect().right <= vw + SLACK) return true;
      return false;
    };
    for (const el of document.body.querySelectorAll('*')) {
      // (transparent elements count: a permalink icon shown on hover takes its room all the time)
      if (!el.checkVisibility() || el.closest('dialog:not([open])') || cutByBox(el)) continue;
      const r = el.getBoundingClientRect();
      if (r.right > vw + SLACK && r.width > 0 && !(el.parentElement && el.parentElement.getBoundingClientRect().right > vw + SLACK))
        out.push(describe(el) + ` (right edge ${Math.round(r.right)} px)`);
    }
    pan = {by: root.scrollWidth - root.clientWidth, offenders: out.slice(0, 10)};
  }

  // Raw TeX: in the visible prose, and inside rendered math.
  const rawTex = [];
  const skip = 'script, style, pre, code, textarea, noscript, mjx-container, .MathJax, .MathJax_Display, .MathJax_Preview, .highlight, .cell_input';
  const tex = /\\\(|\\\)|\\\[|\\\]|\$\$|\\(frac|mathrm|mathbf|mathtt|sin|cos|omega|sum|cdot|big|left|right|begin|end|lceil|lfloor|text|times)\b|\\_/;
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest(skip) || !parent.checkVisibility()) continue;
    if (tex.test(node.textContent)) rawTex.push('prose: ' + node.textContent.trim().slice(0, 100));
  }
  const textMacro = /\\(text|mbox|textrm|textit|textbf|textsf|texttt)\s*\{[^{}]*\\/;
  // MathJax 3 (typeset at build time or in the page): the MathML it keeps for screen readers says what is shown
  for (const math of document.querySelectorAll('mjx-assistive-mml math')) {
    const shown = [...math.querySelectorAll('mtext')].map(t => t.textContent).filter(t => t.includes('\\'));
    if (shown.length) rawTex.push(`math: ${math.textContent.slice(0, 80)} shows ${JSON.stringify(shown)}`);
  }
  if (window.MathJax && MathJax.Hub && MathJax.Hub.getAllJax) {          // MathJax 2
    for (const jax of MathJax.Hub.getAllJax())
      if (textMacro.test(jax.originalText)) rawTex.push(`math: ${jax.originalText.slice(0, 80)}`);
  }
  const mathErrors = [...document.querySelectorAll('mjx-merror, .MathJax_Error, .merror')]
    .map(el => el.textContent.trim().slice(0, 80));

  // A tab stop given to a box because it scrolls (book.js marks those) must be on a box whose visible
  // content really is wider than it.
  const spuriousStops = [...document.querySelectorAll('[data-scroll-stop]')].filter(box => {
    const r = box.getBoundingClientRect(), {left, right} = extent(box);
    const innerLeft = r.left + box.clientLeft;
    return !(right > innerLeft + box.clientWidth + SLACK || left < innerLeft - SLACK);
  }).map(describe);

  // Search controls a reader can see (the theme once showed two side by side on wide screens)
  const searchBoxes = [...document.querySelectorAll('input[type=search], .search-button, .search-button-field')]
    .filter(el => el.checkVisibility({visibilityProperty: true}) && el.getBoundingClientRect().width > 0
                  && !el.closest('dialog:not([open])')).length;

  const heading = article.querySelector('h1');
  // the nearest background behind an element: its own or an ancestor's (not transparent)
  const backdrop = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor;
      if (c && c !== 'transparent' && !/rgba\([^)]*,\s*0\)$/.test(c)) return c;
    }
    return null;
  };
  const figures = [...article.querySelectorAll('img')].filter(img => img.naturalWidth > 0 && img.checkVisibility())
    .map(img => {
      const column = img.closest('.cell_output, figure, p, div') || article;
      return {src: img.getAttribute('src'), shown: Math.round(img.getBoundingClientRect().width),
              natural: img.naturalWidth, column: column.clientWidth, vector: /\.svg(\?|$)/.test(img.currentSrc),
              backdrop: backdrop(img)};
    });
  const panels = [...article.querySelectorAll('.cell_output table, .cell_output img')]
    .filter(el => el.checkVisibility())
    .map(el => ({what: describe(el.closest('.cell_output')), backdrop: backdrop(el)}));
  const page = backdrop(document.body);
  const quizzes = {count: article.querySelectorAll('.pe-quiz').length,
                   answers: [...article.querySelectorAll('.pe-quiz-fallback')].filter(a => a.checkVisibility()).length};
  return {vw, pan, clipped, scrolled, wideMath, uncued, glyphsCut, spuriousStops, rawTex, mathErrors, figures, panels, page, quizzes,
          searchBoxes, punctuationAlone, bracketAlone, squeezed, seams, codeScrolls,
          text: article.innerText, title: document.title, heading: heading ? heading.textContent.replace('#', '').trim() : null};
}
