// Typesets TeX with MathJax 3 in Node.js, for math_prerender.py (run at book build time).
//
//   node math_prerender.js <MathJax es5 directory>  < request.json  > reply.json
//
// request: {"pages": [[[tex, display], ...], ...]}
// reply:   {"pages": [{"html": [...], "css": "...", "errors": [[index, message], ...]}, ...]}
//
// Each formula becomes CommonHTML markup with its assistive MathML (what screen readers read).
// Each page gets the style sheet for exactly the characters it uses; its web fonts are at
// url("FONTS/<name>.woff"), for the caller to point at the book's copy. A TeX error (an
// undefined macro included) is reported, never drawn in red on the page.
"use strict";

const MATHJAX = process.argv[2] && require("path").resolve(process.argv[2]);
if (!MATHJAX) {
  console.error("usage: node math_prerender.js <MathJax es5 directory>");
  process.exit(2);
}

global.MathJax = {
  loader: {
    paths: {mathjax: MATHJAX},
    load: ["adaptors/liteDOM", "input/tex", "output/chtml", "a11y/assistive-mml"],
    require: require,
  },
  tex: {
    packages: {"[-]": ["noundefined"]},      // an unknown macro is an error, not red text
    formatError: (jax, error) => { throw error; },
  },
  chtml: {fontURL: "FONTS", adaptiveCSS: true},
  startup: {typeset: false},
};
require(MATHJAX + "/startup.js");

function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on("data", c => chunks.push(c));
    process.stdin.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    process.stdin.on("error", reject);
  });
}

Promise.all([MathJax.startup.promise, readStdin()]).then(([, text]) => {
  const adaptor = MathJax.startup.adaptor;
  const request = JSON.parse(text);
  const pages = request.pages.map(formulas => {
    MathJax.startup.output.clearCache();   // the style sheet then covers this page's characters only
    const html = [], errors = [];
    formulas.forEach(([tex, display], index) => {
      try {
        html.push(adaptor.outerHTML(MathJax.tex2chtml(tex, {display})));
      } catch (error) {
        html.push("");
        errors.push([index, String((error && error.message) || error)]);
      }
    });
    return {html, css: adaptor.textContent(MathJax.chtmlStylesheet()), errors};
  });
  process.stdout.write(JSON.stringify({pages}));
}).catch(error => {
  console.error(String((error && error.stack) || error));
  process.exit(1);
});
