/* The one renderer of the course's explorers (src/posenc_course/explorers.py), an ES module.
 *
 * It computes what each explorer shows from its slider values (the same
 * numbers as explorers.py's *_data functions, which the tests compare it
 * with) and draws them on canvas. Three places use it:
 *
 * - Jupyter: the module of an anywidget (`export default { render }`). The
 *   model's traits are the slider values; ipywidgets sliders are linked to
 *   them in the browser (jslink), so a step redraws without the kernel.
 * - The static book: the explorer's text/html output holds a
 *   div.posenc-explorer[data-spec] and this module inline (the book keeps one
 *   copy a page, which mounts them all); mountAll() gives
 *   each such div range inputs and a small model shim with the same get /
 *   set / on interface, and renders into it with the same render().
 * - Tests: window.posencExplorers.compute(kind, values, constants) returns the numbers,
 *   .drawn(root) what the last redraw used, .boxes(root) where every title,
 *   legend entry, tick label and plot area ended up.
 *
 * DOM contract (read by the browser tests): the root div.posenc-explorer
 * holds the canvases (one per panel) and, in the book, labelled
 * input[type=range] sliders; after each redraw it carries data-updates (a
 * count) and data-last-update-ms (compute + draw time of that redraw).
 *
 * Layout: titles and legends are HTML above each canvas (they wrap, never
 * cover the data, and read as text); the canvas holds axes, ticks and data.
 * Panels sit side by side from 600 px and stack below; a ResizeObserver
 * lays them out again. Colours follow the page's theme: pydata's
 * data-theme (--pst-color-*) in the book, --jp-* variables in JupyterLab.
 */

const TWO_PI = 2 * Math.PI;
const NARROW_PX = 600; // below this width, panels stack
const OKABE_ITO = { blue: "#0072B2", orange: "#E69F00", green: "#009E73", vermillion: "#D55E00",
  purple: "#CC79A7", sky: "#56B4E9", yellow: "#F0E442" };

// ------------------------------------------------------------------ numbers
// What each explorer draws; mirrors explorers.py (formula_data, base_data, ...). Each kind computes from the
// slider values `v` and the explorer's constants `c` (its spec's "constants", sent by explorers.py): a number
// both languages need is written in Python only.

const pairs = (d) => Math.ceil(d / 2);
const RULE_NAMES = { linear: "position interpolation", dynamic: "dynamic NTK", yarn: "YaRN", llama3: "Llama 3" };
const range = (lo, hi) => Array.from({ length: hi - lo + 1 }, (_, j) => lo + j);

function frequencies(d, base) {
  return Float64Array.from({ length: pairs(d) }, (_, i) => Math.pow(base, (-2 * i) / d));
}

function wavelengths(d, base) {
  return Array.from(frequencies(d, base), (w) => TWO_PI / w);
}

/** PE(p), interleaved: channel 2i = sin(p w_i), 2i+1 = cos(p w_i). */
function encode(p, d, w) {
  const row = new Float64Array(d);
  for (let c = 0; c < d; c++) {
    const angle = p * w[c >> 1];
    row[c] = c % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
  }
  return row;
}

function dot(a, b) {
  let s = 0;
  for (let j = 0; j < a.length; j++) s += a[j] * b[j];
  return s;
}

// Round a double to a binary format with `bits` significand bits (with the
// implicit one), minimum normal exponent `emin` and largest finite `max`, to
// nearest, ties to even: what float16 / bfloat16 arithmetic does.
function roundTo(x, bits, emin, max) {
  if (!isFinite(x) || x === 0) return x;
  const a = Math.abs(x);
  let e = Math.floor(Math.log2(a));
  if (Math.pow(2, e) > a) e -= 1;
  if (Math.pow(2, e + 1) <= a) e += 1;
  const ulp = Math.pow(2, Math.max(e, emin) - (bits - 1)), y = x / ulp;
  let r = Math.round(y);
  if (Math.abs(y - Math.trunc(y)) === 0.5) r = 2 * Math.round(y / 2);
  r *= ulp;
  return Math.abs(r) > max ? (r > 0 ? Infinity : -Infinity) : r;
}

/** Rounding to each low-precision format of `formats` (name -> significand bits, smallest normal exponent, largest
 * finite value), in its order. */
const rounders = (formats) =>
  Object.entries(formats).map(([name, f]) => [name, (x) => roundTo(x, f.bits, f.emin, f.max)]);

function twoProduct(a, b) { // a * b = hi + lo exactly (Dekker / Veltkamp)
  const hi = a * b, s = 134217729;
  const a1 = a * s - (a * s - a), a2 = a - a1, b1 = b * s - (b * s - b), b2 = b - b1;
  return [hi, a2 * b2 - (((hi - a1 * b1) - a2 * b1) - a1 * b2)];
}

const wrapAngle = (x) => (((x + Math.PI) % TWO_PI) + TWO_PI) % TWO_PI - Math.PI;

// The attention explorer's fixed tables (explorers.py: attention_setup, attention_data)

/** explorers.py _hashed: a number in [-1, 1) from a 32-bit integer hash of (salt, row, column), bit for bit. */
function hashed(salt, r, c) {
  let h = salt * 1048576 + r * 1024 + c;
  h = Math.imul(h, 0x9E3779B1) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  h = Math.imul(h, 0x45D9F3B) >>> 0;
  h = (h ^ (h >>> 16)) >>> 0;
  return h / 2147483648 - 1;
}

const hashedTable = (salt, rows, cols, scale) =>
  Array.from({ length: rows }, (_, r) => Float64Array.from({ length: cols }, (_, c) => scale * hashed(salt, r, c)));

const SETUPS = new WeakMap(); // constants -> (d -> the tables): for one explorer they depend on the head width only
function attentionSetup(d, c) {
  if (!SETUPS.has(c)) SETUPS.set(c, new Map());
  const setups = SETUPS.get(c);
  if (!setups.has(d)) {
    const unit = Math.sqrt(3), vocabulary = [...new Set(c.sentence)], n = c.sentence.length;
    const embed = hashedTable(1, vocabulary.length, d, unit);
    setups.set(d, {
      tokens: c.sentence.map((word) => embed[vocabulary.indexOf(word)]),
      w_q: hashedTable(2, d, d, unit / Math.sqrt(d)),
      w_k: hashedTable(3, d, d, unit / Math.sqrt(d)),
      learned: hashedTable(4, n, d, c.learned_scale * unit),
      t5: hashedTable(5, c.t5_buckets.num_buckets, 1, c.t5_scale).map((row) => row[0]),
    });
  }
  return setups.get(d);
}

/** Row vector x times matrix w (rows of w: x's channels). */
function times(x, w) {
  const out = new Float64Array(w[0].length);
  for (let r = 0; r < x.length; r++) for (let c = 0; c < out.length; c++) out[c] += x[r] * w[r][c];
  return out;
}

/** RoPE (posenc.apply_rope, interleaved): pair (2i, 2i+1) of x turned by the angle p w_i. */
function rotate(x, p, w) {
  const out = new Float64Array(x.length);
  for (let i = 0; 2 * i + 1 < x.length; i++) {
    const s = Math.sin(p * w[i]), c = Math.cos(p * w[i]), a = x[2 * i], b = x[2 * i + 1];
    out[2 * i] = a * c - b * s; out[2 * i + 1] = a * s + b * c;
  }
  return out;
}

function softmax(xs) {
  const top = Math.max(...xs), e = xs.map((x) => Math.exp(x - top)), sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

/** explorers.py _first_largest: the first index within `tie` of the largest. */
const firstLargest = (xs, tie) => xs.findIndex((x) => x >= Math.max(...xs) - tie);

/** Where each logarithmic bucket e + j, j = 1 ... n - e - 1, starts: posenc._t5_starts, in exact integers. */
function t5Starts(n, exact, maxDistance) {
  const wide = n - exact, starts = [], pow = (r, k) => BigInt(r) ** BigInt(k);
  for (let j = 1; j < wide; j++) {
    const target = pow(maxDistance, j) * pow(exact, wide - j);
    let r = Math.max(exact, Math.floor(exact * Math.pow(maxDistance / exact, j / wide)));
    while (pow(r, wide) < target) r += 1;
    while (pow(r - 1, wide) >= target) r -= 1;
    starts.push(r);
  }
  return starts;
}

/** posenc.t5_relative_position_bucket of the offset k = query - key, bucket for bucket (its keyword arguments). */
function t5Bucket(k, { bidirectional, num_buckets, max_distance }) {
  const n = bidirectional ? Math.floor(num_buckets / 2) : num_buckets, exact = Math.floor(n / 2);
  const starts = t5Starts(n, exact, max_distance), kc = Math.min(Math.max(k, -max_distance), max_distance);
  const r = bidirectional ? Math.abs(kc) : Math.max(kc, 0);
  const bucket = r < exact ? r : exact + starts.filter((s) => s <= r).length;
  return bidirectional && kc < 0 ? bucket + n : bucket;
}

const compute = {
  formula(v, c) {
    const i = Math.min(v.i, pairs(v.d_model) - 1), xs = range(0, c.positions_shown - 1);
    const w = frequencies(v.d_model, v.base)[i], hasCos = 2 * i + 1 < v.d_model;
    return {
      x: xs, i,
      sin: xs.map((p) => Math.sin(p * w)),
      cos: hasCos ? xs.map((p) => Math.cos(p * w)) : null,
      row: Array.from(encode(v.pos, v.d_model, frequencies(v.d_model, v.base))),
      omega: w, wavelength: TWO_PI / w,
    };
  },

  base(v, c) {
    const threshold = c.threshold, w = frequencies(v.d_model, v.base), lam = wavelengths(v.d_model, v.base);
    let fine = 0, constant = 0, wraps = 0;
    for (let i = 0; i < w.length; i++) {
      if (2 * Math.sin(Math.min(w[i], Math.PI) / 2) >= threshold) fine++;
      if (v.length * w[i] < threshold) constant++;
      if (lam[i] <= v.length) wraps++;
    }
    return {
      i: range(0, w.length - 1), wavelength: lam,
      fine_below: TWO_PI / (2 * Math.asin(threshold / 2)),
      wrap_below: v.length, constant_above: (TWO_PI * v.length) / threshold,
      fine, constant, wraps,
    };
  },

  offset(v, c) {
    const p0 = c.p0, h = pairs(v.d_model), w = frequencies(v.d_model, v.base);
    const top = Math.max(Math.floor(h / 2), Math.min(3, h - 1)), chosen = [];
    for (let n = 0; n < 4; n++) {
      const idx = Math.round((top * n) / 3); // np.round(np.linspace(0, top, 4)); thirds never tie
      if (!chosen.includes(idx)) chosen.push(idx);
    }
    chosen.sort((a, b) => a - b);
    const now = encode(p0, v.d_model, w), later = encode(p0 + v.k, v.d_model, w), ks = range(-c.curve, c.curve);
    return {
      pairs: chosen,
      now: chosen.map((i) => [now[2 * i + 1], now[2 * i]]),
      later: chosen.map((i) => [later[2 * i + 1], later[2 * i]]),
      arcs: chosen.map((i) => {
        const start = Math.atan2(now[2 * i], now[2 * i + 1]), turn = wrapAngle(v.k * w[i]);
        const last = c.arc_points - 1;
        return range(0, last).map((j) => [Math.cos(start + (turn * j) / last), Math.sin(start + (turn * j) / last)]);
      }),
      omega: chosen.map((i) => w[i]),
      ks,
      dots: ks.map((k) => dot(encode(p0 + k, v.d_model, w), now)),
      dot_k: dot(now, later),
    };
  },

  rope(v) {
    const plain = wavelengths(v.d_model, v.base);
    const raisedBase = v.base * Math.pow(v.scale, v.d_model / (v.d_model - 2));
    const raised = wavelengths(v.d_model, raisedBase), interp = plain.map((l) => l * v.scale);
    const above = (xs) => xs.filter((l) => l > v.length).length;
    return {
      i: range(0, plain.length - 1), plain, interpolated: interp, raised, raised_base: raisedBase,
      length: v.length, target: v.length * v.scale,
      unseen_plain: above(plain), unseen_raised: above(raised), unseen_interpolated: above(interp),
    };
  },

  rope_rules(v, c) {
    // mirrors posenc.rope_parameters for the four rules of the slider (explorers.py: rope_rules_data)
    const d = v.d_head, base = v.base, L = v.length, n = Math.max(v.target, L);
    const rule = c.rules[v.rule], s = Math.max(v.target / L, 1.0);
    const before = frequencies(d, base);
    let after = before, attention = 1.0;
    if (rule === "linear") {
      after = before.map((w) => w / s);
    } else if (rule === "dynamic") {
      after = frequencies(d, base * Math.pow((1.0 * n) / L - (1.0 - 1), d / (d - 2)));
    } else if (rule === "yarn") {
      const pairAt = (turns) => (d * Math.log(L / (turns * 2 * Math.PI))) / (2 * Math.log(base));
      const { beta_fast, beta_slow } = c.settings.yarn;
      let low = Math.max(Math.floor(pairAt(beta_fast)), 0), high = Math.min(Math.ceil(pairAt(beta_slow)), d - 1);
      if (low === high) high += 0.001;
      after = before.map((w, j) => {
        const ramp = Math.min(Math.max((j - low) / (high - low), 0), 1), keep = 1 - ramp;
        return (w / s) * (1 - keep) + w * keep;
      });
      attention = s <= 1 ? 1.0 : 0.1 * Math.log(s) + 1.0;
    } else {  // llama3, bands at L / low_freq_factor and L / high_freq_factor
      const { low_freq_factor: low, high_freq_factor: high } = c.settings.llama3;
      after = before.map((w) => {
        const lam = (2 * Math.PI) / w, scaled = lam > L / low ? w / s : w;
        if (lam < L / high || lam > L / low) return scaled;
        const g = (L / lam - low) / (high - low);
        return ((1 - g) * scaled) / s + g * scaled;
      });
    }
    const lb = Array.from(before, (w) => TWO_PI / w), la = Array.from(after, (w) => TWO_PI / w);
    return {
      i: range(0, lb.length - 1), before: lb, after: la, rule, factor: s, attention_factor: attention,
      length: L, target: v.target,
      turn_in_length: lb.filter((l) => l <= L).length, turn_in_target: la.filter((l) => l <= v.target).length,
      kept: Array.from(after).filter((w, j) => Math.abs(w / before[j] - 1) <= c.kept_rel).length,
    };
  },

  precision(v, c) {
    const p = Math.round(v.position), w = frequencies(v.d_model, v.base), errors = {}, collides = [];
    for (const [name, f] of rounders(c.formats)) {
      const err = [];
      let same = true;
      for (let i = 0; i < w.length; i++) {
        const wf = f(w[i]), got = f(f(p) * wf), next = f(f(p + 1) * wf);
        if (got !== next) same = false;
        if (!isFinite(got)) { err.push(NaN); continue; }
        const exact = twoProduct(p, w[i]); // the float64 frequency, product kept exact
        err.push(Math.abs(wrapAngle((got - exact[0]) - exact[1])));
      }
      errors[name] = err;
      if (same) collides.push(name);
    }
    const unit_roundoff = Object.fromEntries(Object.entries(c.formats).map(([name, f]) => [name, Math.pow(2, -f.bits)]));
    return { i: range(0, w.length - 1), errors, collides, unit_roundoff };
  },

  attention(v, c) {
    const d = v.d, p = v.query, scheme = c.schemes[v.scheme], setup = attentionSetup(d, c);
    const keys = range(0, p), n = c.sentence.length, w = frequencies(d, v.base), norm = Math.sqrt(d);
    const content = (x, rope = false) => {
      const at = (row, m) => (rope ? rotate(times(x[row], m), row, w) : times(x[row], m));
      const q = at(p, setup.w_q);
      return keys.map((s) => dot(at(s, setup.w_k), q) / norm);
    };
    const plus = (table) => setup.tokens.map((row, j) => row.map((a, c) => a + table[j][c]));
    const plain = content(setup.tokens);
    let scores = plain;
    if (scheme === "sinusoidal") scores = content(plus(range(0, n - 1).map((j) => encode(j, d, w))));
    else if (scheme === "learned") scores = content(plus(setup.learned));
    else if (scheme === "rope") scores = content(setup.tokens, true);
    else if (scheme === "alibi") {
      scores = plain.map((x, s) => x - c.alibi_slope * (p - s));
    } else if (scheme === "t5") scores = plain.map((x, s) => x + setup.t5[t5Bucket(p - s, c.t5_buckets)]);
    const weights = softmax(scores), none = softmax(plain);
    return {
      keys, scheme, scores, scores_none: plain, weights, weights_none: none,
      difference: weights.map((x, s) => x - none[s]),
      argmax: firstLargest(weights, c.tie), argmax_none: firstLargest(none, c.tie),
      buckets: keys.map((s) => t5Bucket(p - s, c.t5_buckets)),
    };
  },
};

// ------------------------------------------------------------------ text
// Numbers for people: 3 significant digits, thousands separators, a true
// minus sign, powers of ten with superscripts (10⁴, 3.98×10⁶).

const SUPERSCRIPT = { 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹", "-": "⁻", "+": "" };
const sup = (s) => String(s).replace(/[0-9+-]/g, (c) => SUPERSCRIPT[c]);
const minus = (s) => String(s).replace(/-/g, "−");

const DECIMAL = new Intl.NumberFormat("en-US", { maximumFractionDigits: 6 });
const INTEGER = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

function num(v, digits = 3) {
  if (Number.isNaN(v)) return "NaN";
  if (!isFinite(v)) return v > 0 ? "∞" : "−∞";
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e-3 && a < 1e6) {
    return minus(DECIMAL.format(Number(v.toPrecision(digits))));
  }
  const [m, e] = v.toExponential(digits - 1).split("e");
  const mantissa = String(Number(m));
  return minus((mantissa === "1" ? "" : mantissa === "-1" ? "-" : mantissa + "×") + "10" + sup(Number(e)));
}

const int = (v) => minus(INTEGER.format(Math.round(v)));
/** A slider's value as its readout shows it (and as the text alternative says it): a named slider's name. */
const readout = (c, x) => (c.names ? c.names[Math.round(x)] : c.log && c.digits ? num(x, c.digits) : int(x));
const signed = (v) => (v >= 0 ? "+ " : "− ") + int(Math.abs(v));

// ------------------------------------------------------------------ theme

const STYLE_ID = "posenc-explorer-style";
const STYLE = `
.posenc-explorer {
  --posenc-fg: var(--jp-content-font-color1, var(--pst-color-text-base, #1f1f1f));
  --posenc-muted: var(--jp-content-font-color2, var(--pst-color-text-muted, #5a5a5a));
  --posenc-grid: var(--jp-border-color2, var(--pst-color-border, #d9d9d9));
  --posenc-bg: var(--jp-layout-color0, var(--pst-color-background, #ffffff));
  color: var(--posenc-fg); background: var(--posenc-bg);
  font-family: var(--jp-ui-font-family, var(--pst-font-family-base, system-ui, sans-serif));
  font-size: 14px; line-height: 1.35; max-width: 100%; box-sizing: border-box; margin: 0.25rem 0;
}
.posenc-explorer *, .posenc-explorer *::before, .posenc-explorer *::after { box-sizing: border-box; }
.posenc-controls { display: grid; grid-template-columns: repeat(auto-fill, minmax(270px, 1fr)); gap: 4px 28px; margin: 0 0 10px; }
.posenc-controls label { display: grid; grid-template-columns: 7.5em minmax(80px, 1fr) 4.5em; align-items: center; gap: 8px; margin: 0; }
.posenc-controls input[type=range] { width: 100%; margin: 0; accent-color: ${OKABE_ITO.blue}; }
.posenc-controls.posenc-named label { grid-template-columns: 7.5em minmax(80px, 1fr) 6em; }
.posenc-controls output { font-variant-numeric: tabular-nums; white-space: nowrap; }
.posenc-view { width: 100%; }
.posenc-panels { display: grid; gap: 14px 28px; }
.posenc-panel { min-width: 0; }
.posenc-title { font-weight: 600; margin: 0 0 2px; overflow-wrap: anywhere; }
.posenc-legend { list-style: none; margin: 0 0 4px; padding: 0; display: flex; flex-wrap: wrap; gap: 0 16px; font-size: 13px; }
.posenc-legend li { display: inline-flex; align-items: center; gap: 6px; margin: 0; padding: 0; }
.posenc-legend svg { flex: none; }
.posenc-panel canvas { display: block; width: 100%; }
.posenc-explorer sub, .posenc-explorer sup { font-size: 75%; line-height: 0; }
`;

function ensureStyle(doc) {
  if (doc.getElementById(STYLE_ID)) return;
  const style = doc.createElement("style");
  style.id = STYLE_ID;
  style.textContent = STYLE;
  doc.head.appendChild(style);
}

function luminance(color) {
  const m = color.match(/[\d.]+/g);
  if (!color.startsWith("rgb") || !m) return 1;
  const [r, g, b] = m.slice(0, 3).map(Number);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}

/** The colours to draw with, from the theme's CSS variables (resolved on the root, once it is in the page). */
function readTheme(root) {
  const css = getComputedStyle(root), get = (name) => css.getPropertyValue(name).trim();
  if (!root.isConnected || !css.color) return { ...readTheme.light, font: "sans-serif" };
  const bg = css.backgroundColor && css.backgroundColor !== "rgba(0, 0, 0, 0)" ? css.backgroundColor : get("--posenc-bg");
  const dark = luminance(bg) < 0.5;
  return {
    dark, bg, fg: css.color || get("--posenc-fg"), muted: get("--posenc-muted") || css.color,
    grid: get("--posenc-grid") || "#ccc", font: css.fontFamily || "sans-serif",
    // Okabe-Ito; on a dark page its dark blue becomes its sky blue, which stays readable
    blue: dark ? OKABE_ITO.sky : OKABE_ITO.blue, orange: OKABE_ITO.orange, green: OKABE_ITO.green,
    vermillion: OKABE_ITO.vermillion, purple: OKABE_ITO.purple,
  };
}
readTheme.light = { dark: false, bg: "#ffffff", fg: "#1f1f1f", muted: "#5a5a5a", grid: "#d9d9d9", blue: OKABE_ITO.blue,
  orange: OKABE_ITO.orange, green: OKABE_ITO.green, vermillion: OKABE_ITO.vermillion, purple: OKABE_ITO.purple };

// ------------------------------------------------------------------ axes

const FONT_PX = 12;
const WIDTHS = new Map(); // ctx.font -> (text -> width): tick labels repeat from one redraw to the next

/** A cached measureText(text).width for the context's current font. */
function textWidths(ctx) {
  if (!WIDTHS.has(ctx.font)) WIDTHS.set(ctx.font, new Map());
  const cache = WIDTHS.get(ctx.font);
  return (text) => {
    let w = cache.get(text);
    if (w === undefined) cache.set(text, (w = ctx.measureText(text).width));
    return w;
  };
}

/** "Nice" ticks (1, 2, 5 x 10^n) over [lo, hi], at most `count` of them; whole numbers only on an `integer` axis. */
function niceTicks(lo, hi, count, integer = false) {
  const raw = (hi - lo) / Math.max(1, count), mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const steps = [1, 2, 2.5, 5, 10].map((m) => m * mag).filter((s) => !integer || (s >= 1 && Number.isInteger(s)));
  const step = steps.find((s) => (hi - lo) / s <= count) || Math.max(integer ? 1 : 0, 10 * mag);
  const out = [];
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + 1e-9 * (hi - lo); t += step) out.push(Math.abs(t) < 1e-9 * step ? 0 : t);
  return out;
}

function tickText(t, log) {
  if (log) return "10" + sup(Math.round(Math.log10(t)));
  if (Number.isInteger(t)) return int(t);
  return minus(String(Number(t.toFixed(2))));
}

/**
 * One plot panel on a canvas of CSS size W x H: the y-axis label written
 * horizontally above the plot, tick labels, grid, then data clipped to the
 * plot area. Every piece of text it writes is recorded in `boxes` (CSS px of
 * the canvas) and never overlaps an earlier one: a tick label that would is
 * left out.
 */
class Axes {
  constructor(ctx, W, H, theme, { x, y, equal = false }) {
    Object.assign(this, { ctx, W, H, theme, xs: x, ys: y, boxes: [] });
    ctx.font = `${FONT_PX}px ${theme.font}`;
    this.widths = textWidths(ctx);
    const m = ctx.measureText("0123456789−");
    this.lineH = Math.ceil((m.fontBoundingBoxAscent || 10) + (m.fontBoundingBoxDescent || 3));
    const lh = this.lineH;
    // vertical bands: y label | (half a label of room for the top tick) plot | tick labels | x label
    const top = (y.label ? lh + 4 : 2) + Math.ceil(lh / 2);
    const bottom = 4 + lh + (x.label ? 4 + lh : 0) + 2;
    let plotH = Math.max(40, H - top - bottom);
    const yTicks = this.ticks(y, plotH, lh + 8, (t) => 0);
    const yWidth = Math.max(0, ...yTicks.map((t) => this.widths(tickText(t, y.log))));
    const left = Math.ceil(yWidth) + 8;
    const lastX = this.widths(tickText(x.lim[1], x.log));
    const right = Math.ceil(lastX / 2) + 4;
    let plotW = Math.max(40, W - left - right), px = left, py = top;
    if (equal) { // square plot, centred
      const side = Math.min(plotW, plotH);
      px = left + (plotW - side) / 2; plotW = side; plotH = side;
    }
    this.plot = { x: px, y: py, w: plotW, h: plotH };
    this.yTicks = yTicks;
    this.xTicks = this.ticks(x, plotW, 0, (t) => this.widths(tickText(t, x.log)));
  }

  /** Ticks for one axis: as many as fit `length` px with `gap` between labels. */
  ticks(axis, length, minSpacing, widthOf) {
    const [lo, hi] = axis.lim;
    if (axis.log) {
      const e0 = Math.ceil(Math.log10(lo) - 1e-9), e1 = Math.floor(Math.log10(hi) + 1e-9), n = e1 - e0 + 1;
      for (let every = 1; ; every++) { // every decade, every other one, ...
        const t = range(0, Math.floor((n - 1) / every)).map((j) => Math.pow(10, e0 + j * every));
        if (t.length <= 2 || this.fits(axis, t, length, minSpacing, widthOf)) return t;
      }
    }
    for (let count = Math.max(2, Math.floor(length / 30)); count >= 2; count--) {
      const t = niceTicks(lo, hi, count, axis.integer);
      if (this.fits(axis, t, length, minSpacing, widthOf)) return t;
    }
    return niceTicks(lo, hi, 2, axis.integer);
  }

  fits(axis, t, length, minSpacing, widthOf) {
    const [lo, hi] = axis.lim, f = axis.log ? Math.log10 : (v) => v;
    const pos = t.map((v) => ((f(v) - f(lo)) / (f(hi) - f(lo))) * length);
    for (let j = 1; j < t.length; j++) {
      const need = minSpacing || (widthOf(t[j - 1]) + widthOf(t[j])) / 2 + 10;
      if (pos[j] - pos[j - 1] < need) return false;
    }
    return true;
  }

  X(v) {
    const { lim, log } = this.xs, f = log ? Math.log10 : (u) => u;
    return this.plot.x + ((f(v) - f(lim[0])) / (f(lim[1]) - f(lim[0]))) * this.plot.w;
  }

  Y(v) {
    const { lim, log } = this.ys, f = log ? Math.log10 : (u) => u;
    return this.plot.y + this.plot.h - ((f(v) - f(lim[0])) / (f(lim[1]) - f(lim[0]))) * this.plot.h;
  }

  /** Write `text` with its box's anchor at (x, y); false (and nothing drawn) if it would overlap. */
  text(text, x, y, align, baseline, kind, optional = true) {
    const c = this.ctx, w = this.widths(text), h = this.lineH;
    const left = align === "center" ? x - w / 2 : align === "right" ? x - w : x;
    const topY = baseline === "middle" ? y - h / 2 : baseline === "bottom" ? y - h : y;
    const box = { kind, text, x: left, y: topY, w, h };
    const hit = (b) => box.x < b.x + b.w && b.x < box.x + box.w && box.y < b.y + b.h && b.y < box.y + box.h;
    if (optional && (this.boxes.some(hit) || box.x < 0 || box.x + w > this.W)) return false;
    c.textAlign = "left"; c.textBaseline = "middle";
    c.fillText(text, left, topY + h / 2);
    this.boxes.push(box);
    return true;
  }

  frame() {
    const { ctx: c, plot: p, theme } = this;
    c.save();
    c.font = `${FONT_PX}px ${theme.font}`;
    c.fillStyle = theme.fg; c.strokeStyle = theme.grid; c.lineWidth = 1;
    if (this.ys.label) this.text(this.ys.label, 0, 1, "left", "top", "label", false);
    if (this.xs.label) this.text(this.xs.label, p.x + p.w / 2, p.y + p.h + 4 + this.lineH + 4, "center", "top", "label", false);
    const snap = (v) => Math.round(v) + 0.5; // 1-px lines on pixel centres: crisp
    for (const t of this.xTicks) {
      const x = snap(this.X(t));
      c.beginPath(); c.moveTo(x, p.y); c.lineTo(x, p.y + p.h); c.stroke();
      this.text(tickText(t, this.xs.log), this.X(t), p.y + p.h + 4, "center", "top", "tick");
    }
    for (const t of this.yTicks) {
      const y = snap(this.Y(t));
      c.beginPath(); c.moveTo(p.x, y); c.lineTo(p.x + p.w, y); c.stroke();
      this.text(tickText(t, this.ys.log), p.x - 6, this.Y(t), "right", "middle", "tick");
    }
    c.strokeStyle = theme.muted;
    c.beginPath(); c.moveTo(snap(p.x), p.y); c.lineTo(snap(p.x), snap(p.y + p.h)); c.lineTo(p.x + p.w, snap(p.y + p.h)); c.stroke();
    c.restore();
    this.boxes.push({ kind: "plot", text: "", x: p.x, y: p.y, w: p.w, h: p.h });
  }

  clipped(fn) {
    const { ctx: c, plot: p } = this;
    c.save(); c.beginPath(); c.rect(p.x - 1, p.y - 1, p.w + 2, p.h + 2); c.clip(); fn(c); c.restore();
  }

  line(xs, ys, color, { width = 1.8, dash = [] } = {}) {
    this.clipped((c) => {
      c.strokeStyle = color; c.lineWidth = width; c.setLineDash(dash); c.lineJoin = "round";
      c.beginPath();
      let pen = false;
      for (let j = 0; j < xs.length; j++) {
        if (!isFinite(ys[j])) { pen = false; continue; }
        const x = this.X(xs[j]), y = this.Y(ys[j]);
        if (pen) c.lineTo(x, y); else c.moveTo(x, y);
        pen = true;
      }
      c.stroke();
    });
  }

  points(xs, ys, color, { r = 4, hollow = false } = {}) {
    this.clipped((c) => {
      c.lineWidth = 1.5; c.setLineDash([]);
      for (let j = 0; j < xs.length; j++) {
        if (!isFinite(ys[j])) continue;
        c.beginPath(); c.arc(this.X(xs[j]), this.Y(ys[j]), r, 0, TWO_PI);
        c.fillStyle = hollow ? this.theme.bg : color; c.fill();
        c.strokeStyle = color; c.stroke();
      }
    });
  }

  /** Bars of `width` (data units) centred on xs, from `from` to ys (each recorded whole, as a box of kind "bar";
   * `up`: it grows up from `from`). */
  bars(xs, ys, color, { width = 0.7, from = 0 } = {}) {
    this.clipped((c) => {
      c.fillStyle = color;
      for (let j = 0; j < xs.length; j++) {
        if (!isFinite(ys[j]) || ys[j] === from) continue;
        const x0 = this.X(xs[j] - width / 2), x1 = this.X(xs[j] + width / 2), y0 = this.Y(from), y1 = this.Y(ys[j]);
        const bar = { kind: "bar", text: "", x: x0, y: Math.min(y0, y1), w: x1 - x0, h: Math.max(1, Math.abs(y1 - y0)), up: y1 < y0 };
        this.boxes.push(bar);
        c.fillRect(bar.x, bar.y, bar.w, bar.h);
      }
    });
  }

  /** A faint band over x0 ... x1, the plot's whole height. */
  shade(x0, x1, color) {
    this.clipped((c) => {
      c.globalAlpha = 0.45; c.fillStyle = color;
      c.fillRect(this.X(x0), this.plot.y, this.X(x1) - this.X(x0), this.plot.h);
    });
  }

  hline(y, color, dash) { this.line(this.xs.lim, [y, y], color, { width: 1.5, dash }); }
  vline(x, color, dash) {
    this.clipped((c) => {
      c.strokeStyle = color; c.lineWidth = 1; c.setLineDash(dash || []);
      c.beginPath(); c.moveTo(this.X(x), this.plot.y); c.lineTo(this.X(x), this.plot.y + this.plot.h); c.stroke();
    });
  }
}

// ------------------------------------------------------------------ the explorers
// Each kind: its panels (grid share, height / width), and view(v, data, theme, constants)
// returning per panel a title (HTML), legend entries, axes and a plot function,
// and a text alternative for its canvas that states the values and the numbers
// the chapter's caption asks the reader to look at.

const DASH = { dashed: [7, 4], dotted: [2, 3], dashdot: [8, 3, 2, 3] };

const SCHEME_NAMES = { none: "no positions", sinusoidal: "sinusoidal added", learned: "learned table added",
  rope: "RoPE", alibi: "ALiBi", t5: "T5 bias" };
const plusSign = (x) => (x > 0 ? "+" : "") + num(x);
/** Round lo ... hi out to multiples of step. */
const outTo = (lo, hi, step) => [Math.floor(lo / step + 1e-9) * step, Math.ceil(hi / step - 1e-9) * step];
/** Limits [a, b] widened at an end that data (lo ... hi) come within `room` of the range to: so that no bar ends on
 * the frame, where it would look cut off. An end at 0 that bars grow from stays. */
const headroom = ([a, b], lo, hi, room = 0.06) => {
  const r = room * (b - a);
  return [a < 0 && lo < a + r ? a - r : a, hi > b - r ? b + r : b];
};

const KINDS = {
  formula: {
    panels: [{ grow: 1.3, aspect: 0.62 }, { grow: 1, aspect: 0.75 }],
    view(v, d, t, c) {
      const i = d.i, at = (ys) => (ys ? ys[v.pos] : NaN), hasCos = d.cos !== null;
      const channels = range(0, v.d_model - 1), pair = [2 * i, 2 * i + 1].filter((c) => c < v.d_model);
      return [{
        title: `pair <i>i</i> = ${i}: ω<sub>${i}</sub> = ${num(d.omega)}, λ<sub>${i}</sub> = ${num(d.wavelength)} positions`,
        legend: [
          { label: `sin(<i>p</i>·ω<sub>${i}</sub>), channel ${2 * i}`, color: t.blue },
          hasCos ? { label: `cos(<i>p</i>·ω<sub>${i}</sub>), channel ${2 * i + 1}`, color: t.orange, dash: DASH.dashed }
            : { label: `no cosine: channel ${2 * i + 1} is past d_model`, color: t.muted, dash: DASH.dotted },
          { label: `<i>p</i> = ${v.pos}`, color: t.fg, marker: "filled", line: false },
        ],
        axes: { x: { lim: [0, c.positions_shown - 1], label: "position p", integer: true }, y: { lim: [-1.15, 1.15], label: "value" } },
        plot(ax) {
          ax.line(d.x, d.sin, t.blue);
          if (hasCos) ax.line(d.x, d.cos, t.orange, { dash: DASH.dashed });
          ax.vline(v.pos, t.muted);
          ax.points(hasCos ? [v.pos, v.pos] : [v.pos], hasCos ? [at(d.sin), at(d.cos)] : [at(d.sin)], t.fg);
        },
        alt: `Sine and cosine of pair ${i} over positions 0 to ${c.positions_shown - 1}: ω${i} = ${num(d.omega)}, wavelength ` +
          `${num(d.wavelength)} positions. At position ${v.pos}, sin = ${num(at(d.sin))}` +
          (hasCos ? `, cos = ${num(at(d.cos))}.` : `; this pair has no cosine channel (d_model is odd).`),
      }, {
        title: `PE(${v.pos}), d_model = ${v.d_model}, base = ${num(v.base)}`,
        legend: [
          { label: "PE(pos), channel by channel", color: t.green, marker: "dot" },
          { label: `pair ${i}: channel${pair.length > 1 ? "s" : ""} ${pair.join(", ")}`, color: t.vermillion, marker: "filled", line: false },
        ],
        axes: { x: { lim: [-0.5, v.d_model - 0.5], label: "channel", integer: true }, y: { lim: [-1.15, 1.15], label: "PE(pos)" } },
        plot(ax) {
          ax.line(channels, d.row, t.green, { width: 1 });
          if (v.d_model <= 128) ax.points(channels, d.row, t.green, { r: 1.6 });
          ax.points(pair, pair.map((c) => d.row[c]), t.vermillion, { r: 5 });
        },
        alt: `The ${v.d_model} channels of PE(${v.pos}) for base ${num(v.base)}; pair ${i}'s channel` +
          `${pair.length > 1 ? "s" : ""} ${pair.join(" and ")} ${pair.length > 1 ? "are" : "is"} ` +
          `${pair.map((c) => num(d.row[c])).join(" and ")}.`,
      }];
    },
  },

  base: {
    panels: [{ grow: 1, aspect: 0.5 }],
    view(v, d, t) {
      const n = d.i.length;
      return [{
        title: `of ${n} pairs: ${d.fine} separate neighbours, ${d.wraps} wrap within <i>L</i> = ${int(v.length)}, ` +
          `${d.constant} nearly constant`,
        legend: [
          { label: "wavelength λ<sub><i>i</i></sub>", color: t.blue, width: 2.5 },
          { label: `below ${num(d.fine_below)}: separates neighbours`, color: t.green, dash: DASH.dotted },
          { label: `below <i>L</i>: wraps within <i>L</i>`, color: t.orange, dash: DASH.dashdot },
          { label: `above ${num(d.constant_above)}: nearly constant over <i>L</i>`, color: t.vermillion, dash: DASH.dashed },
        ],
        axes: { x: { lim: [0, Math.max(1, n - 1)], label: "pair i", integer: true }, y: { lim: [1, 1e9], log: true, label: "wavelength λᵢ (positions)" } },
        plot(ax) {
          ax.hline(d.fine_below, t.green, DASH.dotted);
          ax.hline(d.wrap_below, t.orange, DASH.dashdot);
          ax.hline(d.constant_above, t.vermillion, DASH.dashed);
          ax.line(d.i, d.wavelength, t.blue, { width: 2.5 });
        },
        alt: `Wavelength of each of the ${n} pairs for base ${num(v.base)}, d_model ${v.d_model}, on a log scale from ` +
          `${num(d.wavelength[0])} to ${num(d.wavelength[n - 1])} positions: ${d.fine} pairs separate neighbours ` +
          `(wavelength below ${num(d.fine_below)}), ${d.wraps} wrap within L = ${int(v.length)}, ${d.constant} are nearly ` +
          `constant over L (wavelength above ${num(d.constant_above)}).`,
      }];
    },
  },

  offset: {
    panels: [{ grow: 1, aspect: 0.92 }, { grow: 1.35, aspect: 0.62 }],
    view(v, d, t, c) {
      const colors = [t.blue, t.orange, t.green, t.vermillion], norm = v.d_model / 2;
      const turns = d.pairs.map((i, n) => `pair ${i} by ${num(v.k * d.omega[n])} rad`);
      return [{
        title: `open: <i>p</i> = 3, filled: <i>p</i> + <i>k</i> = 3 ${signed(v.k)}`,
        legend: d.pairs.map((i, n) => ({ label: `<i>i</i> = ${i}: <i>k</i>ω<sub>${i}</sub> = ${num(v.k * d.omega[n])} rad`,
          color: colors[n], marker: "filled" })),
        axes: { x: { lim: [-1.3, 1.3], label: "cos (channel 2i+1)" }, y: { lim: [-1.3, 1.3], label: "sin (channel 2i)" }, equal: true },
        plot(ax) {
          const a = range(0, 120).map((j) => (TWO_PI * j) / 120);
          ax.line(a.map(Math.cos), a.map(Math.sin), t.grid, { width: 1 });
          d.pairs.forEach((_, n) => {
            ax.line(d.arcs[n].map((q) => q[0]), d.arcs[n].map((q) => q[1]), colors[n], { width: 2.5 });
            ax.points([d.now[n][0]], [d.now[n][1]], colors[n], { hollow: true, r: 5 });
            ax.points([d.later[n][0]], [d.later[n][1]], colors[n], { r: 5 });
          });
        },
        alt: `Four sine-cosine pairs on the unit circle turning from position 3 to position ${3 + v.k}: ${turns.join(", ")}.`,
      }, {
        title: `<i>k</i> = ${int(v.k)}: PE(<i>p</i>)·PE(<i>p</i>+<i>k</i>) = Σ<sub><i>i</i></sub> cos(ω<sub><i>i</i></sub><i>k</i>) = ` +
          `${minus(d.dot_k.toFixed(2))} of ${Math.floor(v.d_model / 2)}`,
        legend: [
          { label: "PE(<i>p</i>)·PE(<i>p</i>+<i>k</i>) ÷ (<i>d</i>/2), every <i>k</i>", color: t.blue, width: 1.2 },
          { label: `<i>k</i> = ${int(v.k)}`, color: t.vermillion, marker: "filled", line: false },
        ],
        axes: { x: { lim: [-200, 200], label: "offset k", integer: true }, y: { lim: [-1.05, 1.05], label: "cosine similarity" } },
        plot(ax) {
          ax.line(d.ks, d.dots.map((x) => x / norm), t.blue, { width: 1.2 });
          ax.points([v.k], [d.dot_k / norm], t.vermillion, { r: 5 });
        },
        alt: `At offset k = ${v.k}, PE(p)·PE(p+k) = ${d.dot_k.toFixed(2)} of ${Math.floor(v.d_model / 2)} ` +
          `(cosine similarity ${(d.dot_k / norm).toFixed(3)}), the same for every starting position; the curve over ` +
          `k from −${c.curve} to ${c.curve} is 1 at k = 0.`,
      }];
    },
  },

  rope: {
    panels: [{ grow: 1, aspect: 0.5 }],
    view(v, d, t) {
      const n = d.i.length;
      return [{
        title: `pairs slower than <i>L</i> = ${int(v.length)}, of ${n}: as trained ${d.unseen_plain}, ` +
          `interpolated ${d.unseen_interpolated}, raised base ${d.unseen_raised}`,
        legend: [
          { label: `base as trained, <i>b</i> = ${num(v.base)}`, color: t.muted, width: 2 },
          { label: "position interpolation, positions ÷ <i>s</i>", color: t.orange, dash: DASH.dashed, width: 2 },
          { label: `NTK-aware base <i>b</i>·<i>s</i><sup><i>d</i>/(<i>d</i>−2)</sup> = ${num(d.raised_base)}`, color: t.blue, width: 2 },
          { label: "train length <i>L</i>", color: t.green, dash: DASH.dotted },
          { label: `target length <i>s</i>·<i>L</i> = ${int(d.target)}`, color: t.vermillion, dash: DASH.dashdot },
        ],
        axes: { x: { lim: [0, n - 1], label: "pair i", integer: true }, y: { lim: [1, 1e10], log: true, label: "wavelength λᵢ (positions)" } },
        plot(ax) {
          ax.hline(d.length, t.green, DASH.dotted);
          ax.hline(d.target, t.vermillion, DASH.dashdot);
          ax.line(d.i, d.plain, t.muted, { width: 2 });
          ax.line(d.i, d.interpolated, t.orange, { width: 2, dash: DASH.dashed });
          ax.line(d.i, d.raised, t.blue, { width: 2 });
        },
        alt: `RoPE wavelengths of the ${n} pairs of a head of dimension ${v.d_model}, base ${num(v.base)}, factor ` +
          `s = ${v.scale}: pairs slower than the training length L = ${int(v.length)}: ${d.unseen_plain} as trained, ` +
          `${d.unseen_interpolated} with position interpolation, ${d.unseen_raised} with the NTK-aware base ` +
          `${num(d.raised_base)}; target length ${int(d.target)}.`,
      }];
    },
  },

  rope_rules: {
    panels: [{ grow: 1, aspect: 0.5 }],
    view(v, d, t) {
      const n = d.i.length, name = RULE_NAMES[d.rule];
      return [{
        title: `${name}, <i>s</i> = ${num(d.factor)}: ${d.turn_in_length} of ${n} pairs turn within <i>L</i> as ` +
          `trained, ${d.turn_in_target} within the target after scaling; ${d.kept} kept`,
        legend: [
          { label: `as trained, <i>b</i> = ${num(v.base)}`, color: t.muted, width: 2 },
          { label: `${name}` + (d.rule === "yarn" ? ` (attention factor ${num(d.attention_factor)})` : ""),
            color: t.blue, width: 2, marker: "dot" },
          { label: `trained length <i>L</i> = ${int(d.length)}`, color: t.green, dash: DASH.dotted },
          { label: `target length ${int(d.target)}`, color: t.vermillion, dash: DASH.dashdot },
        ],
        axes: { x: { lim: [0, n - 1], label: "pair i", integer: true }, y: { lim: [1, 1e12], log: true, label: "wavelength λᵢ (positions)" } },
        plot(ax) {
          ax.hline(d.length, t.green, DASH.dotted);
          ax.hline(d.target, t.vermillion, DASH.dashdot);
          ax.line(d.i, d.before, t.muted, { width: 2 });
          ax.line(d.i, d.after, t.blue, { width: 2 });
          ax.points(d.i, d.after, t.blue, { r: 2 });
        },
        alt: `RoPE wavelengths of the ${n} pairs of a head of ${v.d_head} channels, base ${num(v.base)}, before and ` +
          `after ${name} stretches L = ${int(d.length)} to ${int(d.target)} (s = ${num(d.factor)}): ` +
          `${d.turn_in_length} of ${n} pairs turn within L as trained, ${d.turn_in_target} within the target after ` +
          `scaling; ${d.kept} pairs kept as trained.`,
      }];
    },
  },

  precision: {
    panels: [{ grow: 1, aspect: 0.5 }],
    view(v, d, t, c) {
      const p = Math.round(v.position), names = Object.keys(c.formats);
      const colors = [t.blue, t.orange, t.green], dashes = [[], DASH.dashed, DASH.dashdot];
      const worst = (name) => {
        const e = d.errors[name];
        return e.some(Number.isNaN) ? "overflows" : `worst ${num(Math.max(...e))} rad`;
      };
      const same = d.collides.join(", ") || "none";
      return [{
        title: `<i>p</i> = ${int(p)}, base ${num(v.base)}: <i>p</i> and <i>p</i>+1 get identical vectors in: ${same}`,
        legend: [
          ...names.map((name, n) => ({ label: `${name} (${worst(name)})`, color: colors[n], dash: dashes[n], marker: "dot" })),
          { label: "π: the phase is lost", color: t.muted, dash: DASH.dotted },
        ],
        axes: { x: { lim: [-0.5, d.i.length - 0.5], label: "pair i", integer: true }, y: { lim: [1e-12, 10], log: true, label: "|angle error| (radians)" } },
        plot(ax) {
          ax.hline(Math.PI, t.muted, DASH.dotted);
          names.forEach((name, n) => {
            // an exact angle has error 0, which a log axis cannot show: drawn at the floor
            const ys = d.errors[name].map((e) => (Number.isNaN(e) ? NaN : Math.max(e, 1e-12)));
            ax.line(d.i, ys, colors[n], { width: 1.2, dash: dashes[n] });
            ax.points(d.i, ys, colors[n], { r: 2 });
          });
        },
        alt: `Angle error of each of the ${d.i.length} pairs at position ${int(p)} (base ${num(v.base)}, d_model ` +
          `${v.d_model}), log scale: ` + names.map((name) => `${name} ${worst(name)}`).join(", ") +
          `. Positions p and p+1 get identical vectors in: ${same}.`,
      }];
    },
  },
  attention: {
    panels: [{ grow: 1, aspect: 0.75 }, { grow: 1, aspect: 0.75 }, { grow: 1, aspect: 0.75 }],
    view(v, d, t, c) {
      const n = c.sentence.length, p = v.query, none = d.scheme === "none", name = SCHEME_NAMES[d.scheme];
      const quote = (s) => `“${c.sentence[s]}”`;
      const largest = (ws) => d.keys.filter((s) => ws[s] >= Math.max(...ws) - c.tie);
      const where = (ws) => {
        const top = largest(ws);
        return `${quote(top[0])} at ${top.length > 1 ? top.slice(0, -1).join(", ") + " and " + top.at(-1) + " alike" : top[0]}`;
      };
      const setting = { sinusoidal: `, base ${num(v.base)}`, rope: `, base ${num(v.base)}`,
        alibi: `, slope ${num(c.alibi_slope)}`, t5: `, ${c.t5_buckets.num_buckets} buckets` }[d.scheme] || "";
      const keyAxis = { lim: [-0.5, n - 0.5], label: "key position s", integer: true };
      const masked = (ax) => { if (p < n - 1) ax.shade(p + 0.5, n - 0.5, t.grid); };
      const maskedLegend = p < n - 1 ? [{ label: "masked", color: t.grid, width: 8 }] : [];
      const all = [...d.scores, ...d.scores_none], lo = Math.min(0, ...all), hi = Math.max(0, ...all);
      const scoreLim = headroom(outTo(lo, hi, hi - lo > 6 ? 2 : hi - lo > 3 ? 1 : 0.5), lo, hi);
      const heaviest = Math.max(...d.weights, ...d.weights_none);
      const weightLim = headroom([0, Math.max(0.1, Math.ceil(heaviest * 10 - 1e-9) / 10)], 0, heaviest);
      const change = Math.max(...d.difference.map(Math.abs));
      const changeTop = headroom([0, Math.max(0.05, Math.ceil(change * 20 - 1e-9) / 20)], 0, change)[1];
      const gain = d.difference.indexOf(Math.max(...d.difference)), loss = d.difference.indexOf(Math.min(...d.difference));
      const changed = change > c.tie;
      const moved = changed ? `key ${gain} gains most (${plusSign(d.difference[gain])}), key ${loss} loses most ` +
        `(${plusSign(d.difference[loss])})` : "no key's weight changes";
      const heading = `${name}${setting}: ${quote(p)} at ${p} attends most to ${where(d.weights)}`;
      const reference = none ? [] : [{ label: "without positions", color: t.fg, marker: "hollow", line: false }];
      return [{
        title: heading,
        legend: [{ label: name, color: t.blue, width: 8 }, ...reference, ...maskedLegend],
        axes: { x: keyAxis, y: { lim: scoreLim, label: "score q·k/√d (+ bias)" } },
        plot(ax) {
          masked(ax);
          ax.hline(0, t.muted);
          ax.bars(d.keys, d.scores, t.blue);
          if (!none) ax.points(d.keys, d.scores_none, t.fg, { r: 3, hollow: true });
        },
        alt: `${heading}. Scores of the query ${quote(p)} (position ${p}) on the keys 0 to ${p} of “${c.sentence.join(" ")}” ` +
          `with ${name}: ${d.scores.map((x) => num(x)).join(", ")}` + (none ? "." : `; without positions: ` +
          `${d.scores_none.map((x) => num(x)).join(", ")}.`),
      }, {
        title: `softmax weights: ${num(d.weights[d.argmax])} on key ${d.argmax}` +
          (none ? "" : `; without positions ${num(d.weights_none[d.argmax_none])} on key ${d.argmax_none}`),
        legend: [{ label: name, color: t.blue, width: 8 }, ...reference],
        axes: { x: keyAxis, y: { lim: weightLim, label: "attention weight" } },
        plot(ax) {
          masked(ax);
          ax.bars(d.keys, d.weights, t.blue);
          if (!none) ax.points(d.keys, d.weights_none, t.fg, { r: 3, hollow: true });
        },
        alt: `Softmax weights over the keys 0 to ${p} with ${name}: ${d.weights.map((x) => num(x)).join(", ")}; the ` +
          `largest, ${num(d.weights[d.argmax])}, on ${where(d.weights)}` + (none ? "." : `. Without positions the ` +
          `largest, ${num(d.weights_none[d.argmax_none])}, is on ${where(d.weights_none)}.`),
      }, {
        title: none ? "weights minus those without positions: none to compare with" : `weights minus those without positions: ${moved}`,
        legend: [{ label: "gained", color: t.blue, width: 8 }, { label: "lost", color: t.vermillion, width: 8 }],
        axes: { x: keyAxis, y: { lim: [-changeTop, changeTop], label: "weight difference" } },
        plot(ax) {
          masked(ax);
          ax.hline(0, t.muted);
          ax.bars(d.keys, d.difference.map((x) => Math.max(x, 0)), t.blue);
          ax.bars(d.keys, d.difference.map((x) => Math.min(x, 0)), t.vermillion);
        },
        alt: `Weights with ${name} minus weights without positions, keys 0 to ${p}: ` +
          `${d.difference.map((x) => plusSign(x)).join(", ")}; ${moved}.`,
      }];
    },
  },
};

// ------------------------------------------------------------------ the view

function swatch({ color, dash = [], marker = null, line = true, width = 2 }) {
  const lineSvg = line ? `<line x1="1" y1="7" x2="27" y2="7" stroke="${color}" stroke-width="${width}" stroke-dasharray="${dash.join(" ")}"/>` : "";
  const dotSvg = marker ? `<circle cx="14" cy="7" r="${marker === "dot" ? 2.5 : 4}" fill="${marker === "hollow" ? "none" : color}" stroke="${color}"/>` : "";
  return `<svg width="28" height="14" viewBox="0 0 28 14" aria-hidden="true">${lineSvg}${dotSvg}</svg>`;
}

function legendHtml(entries) {
  return entries.map((e) => `<li>${swatch(e)}<span>${e.label}</span></li>`).join("");
}

const THEMES = new Set(); // every mounted view's "theme changed" callback

function watchTheme(callback) {
  THEMES.add(callback);
  if (THEMES.size === 1 && typeof MutationObserver !== "undefined") {
    const redraw = () => THEMES.forEach((f) => f());
    const all = () => { redraw(); setTimeout(redraw, 250); }; // again once a theme's style sheet has loaded
    const observer = new MutationObserver(all);
    // pydata-sphinx-theme: <html data-theme>; JupyterLab: <body data-jp-theme-name>; VS Code: <body class>
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme", "class"] });
    observer.observe(document.body, { attributes: true, attributeFilter: ["data-theme", "class", "data-jp-theme-name"] });
    window.matchMedia?.("(prefers-color-scheme: dark)").addEventListener?.("change", all);
  }
  return () => THEMES.delete(callback);
}

/**
 * Draw the explorer of `model` into `el`: anywidget's render() (Jupyter) and
 * the book's, with the model shim. Returns the cleanup function.
 */
function render({ model, el }) {
  const spec = model.get("_spec"), kind = KINDS[spec.kind], doc = el.ownerDocument;
  ensureStyle(doc);
  let root = el.closest(".posenc-explorer");
  if (!root) { root = el; root.classList.add("posenc-explorer"); root.dataset.kind = spec.kind; }
  el.classList.add("posenc-view");
  el.replaceChildren();
  const grid = doc.createElement("div");
  grid.className = "posenc-panels";
  el.appendChild(grid);
  const panels = kind.panels.map((layout) => {
    const box = doc.createElement("div"), title = doc.createElement("div"), legend = doc.createElement("ul"),
      canvas = doc.createElement("canvas");
    box.className = "posenc-panel"; title.className = "posenc-title"; legend.className = "posenc-legend";
    canvas.setAttribute("role", "img");
    box.append(title, legend, canvas);
    grid.appendChild(box);
    return { layout, box, title, legend, canvas, width: 0, height: 0, boxes: [], html: {} };
  });

  let theme = readTheme(root), updates = 0, pending = false, narrow = null;

  function values() {
    const v = {};
    for (const c of spec.controls) v[c.name] = Number(model.get(c.name));
    for (const [child, parent] of Object.entries(spec.couple || {})) // e.g. pair i <= ceil(d_model / 2) - 1
      v[child] = Math.max(0, Math.min(v[child], pairs(v[parent]) - 1));
    return v;
  }

  function setLayout(width) {
    const isNarrow = width < NARROW_PX;
    if (isNarrow === narrow) return;
    narrow = isNarrow;
    root.classList.toggle("posenc-narrow", narrow);
    grid.style.gridTemplateColumns = narrow ? "minmax(0, 1fr)" : panels.map((p) => `minmax(0, ${p.layout.grow}fr)`).join(" ");
  }

  function sizeCanvas(p, cssWidth) {
    const [minH, maxH] = narrow ? [240, 320] : [240, 340];
    const height = Math.round(Math.min(maxH, Math.max(minH, cssWidth * p.layout.aspect)));
    p.width = cssWidth; p.height = height;
    p.canvas.style.height = `${height}px`;
  }

  function update() {
    pending = false;
    const start = performance.now(), v = values(), data = compute[spec.kind](v, spec.constants);
    const views = kind.view(v, data, theme, spec.constants);
    const said = spec.controls.map((c) => `${c.label} ${readout(c, v[c.name])}`).join(", ");
    panels.forEach((p, n) => {
      const view = views[n], legend = legendHtml(view.legend);
      if (p.html.title !== view.title) p.title.innerHTML = p.html.title = view.title;
      if (p.html.legend !== legend) p.legend.innerHTML = p.html.legend = legend;
      p.canvas.setAttribute("aria-label", `${said}. ${view.alt}`);
      p.boxes = draw(p, view);
    });
    root.posencDrawn = { kind: spec.kind, values: v, constants: spec.constants, data };
    updates += 1;
    root.dataset.updates = String(updates);
    root.dataset.lastUpdateMs = (performance.now() - start).toFixed(3);
  }

  function draw(p, view) {
    if (!p.width) return [];
    const ratio = window.devicePixelRatio || 1, c = p.canvas, ctx = c.getContext("2d");
    const bw = Math.round(p.width * ratio), bh = Math.round(p.height * ratio);
    if (c.width !== bw || c.height !== bh) { c.width = bw; c.height = bh; }
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.fillStyle = theme.bg;
    ctx.fillRect(0, 0, p.width, p.height);
    const ax = new Axes(ctx, p.width, p.height, theme, view.axes);
    ax.frame();
    view.plot(ax);
    return ax.boxes;
  }

  const schedule = () => { // several trait changes in one task (a coupled slider) draw once
    if (!pending) { pending = true; queueMicrotask(update); }
  };

  let unlabel = null, attached = false;
  const resize = () => {
    const width = el.getBoundingClientRect().width;
    if (!width) return;
    if (!attached) { // Jupyter puts el in the page after render(): read the theme there
      attached = true;
      theme = readTheme(root);
      unlabel = labelJupyterSliders(el);
    }
    setLayout(width);
    let changed = false;
    for (const p of panels) {
      const w = p.canvas.getBoundingClientRect().width;
      if (w && Math.abs(w - p.width) > 0.5) { sizeCanvas(p, w); changed = true; }
    }
    if (changed) update();
  };

  const events = spec.controls.map((c) => `change:${c.name}`);
  events.forEach((e) => model.on(e, schedule));
  const observer = typeof ResizeObserver !== "undefined" ? new ResizeObserver(resize) : null;
  observer?.observe(el);
  panels.forEach((p) => observer?.observe(p.canvas));
  const unwatch = watchTheme(() => { theme = readTheme(root); update(); });
  root.posencView = { panels, update };
  resize();
  if (!updates) update();
  return () => {
    events.forEach((e) => model.off(e, schedule));
    observer?.disconnect();
    unwatch();
    unlabel?.();
  };
}

/**
 * In Jupyter the sliders are ipywidgets, whose noUiSlider handle (role=slider)
 * has no accessible name; give each the text of its description label. The
 * handles are rebuilt when a slider's range changes, so this watches them.
 */
function labelJupyterSliders(el) {
  const box = el.closest(".posenc-explorer") === el ? el.parentElement?.closest(".widget-vbox") : null;
  if (!box || typeof MutationObserver === "undefined") return null;
  const label = () => {
    for (const slider of box.querySelectorAll(".widget-slider")) {
      const name = slider.querySelector(".widget-label")?.textContent.trim();
      slider.querySelectorAll("[role=slider]").forEach((h) => name && h.getAttribute("aria-label") !== name && h.setAttribute("aria-label", name));
    }
  };
  const observer = new MutationObserver(label);
  observer.observe(box, { childList: true, subtree: true });
  label();
  return () => observer.disconnect();
}

// ------------------------------------------------------------------ the static book

/** The part of an anywidget model the view uses, over a plain object. */
function modelShim(spec) {
  const state = { _spec: spec }, handlers = {};
  for (const c of spec.controls) state[c.name] = c.value;
  return {
    get: (name) => state[name],
    set(name, value) {
      if (state[name] === value) return;
      state[name] = value;
      (handlers[`change:${name}`] || []).forEach((f) => f());
    },
    on: (event, f) => (handlers[event] ||= []).push(f),
    off: (event, f) => { handlers[event] = (handlers[event] || []).filter((g) => g !== f); },
    save_changes() {},
  };
}

/** Sliders (labelled range inputs) and the view for one div.posenc-explorer[data-spec]. */
function mountStatic(root) {
  if (root.dataset.mounted) return;
  root.dataset.mounted = "1";
  ensureStyle(root.ownerDocument);
  const spec = JSON.parse(root.dataset.spec), model = modelShim(spec), doc = root.ownerDocument;
  root.dataset.kind = spec.kind;
  root.querySelector("noscript")?.remove();
  const controls = doc.createElement("div"), view = doc.createElement("div");
  controls.className = "posenc-controls";
  // a slider that shows names: every readout of the explorer gets room for the longest ("sinusoidal"), so that the
  // sliders stay aligned
  if (spec.controls.some((c) => c.names)) controls.classList.add("posenc-named");
  const inputs = {};
  for (const c of spec.controls) {
    const label = doc.createElement("label"), name = doc.createElement("span"),
      input = doc.createElement("input"), out = doc.createElement("output");
    name.textContent = c.label;
    Object.assign(input, { type: "range", min: c.min, max: c.max, step: c.step, value: c.log ? Math.log10(c.value) : c.value });
    input.dataset.name = c.name;
    out.setAttribute("aria-hidden", "true"); // the input's aria-valuetext says the same
    label.append(name, input, out);
    controls.appendChild(label);
    inputs[c.name] = { input, out, spec: c };
  }
  const read = (name) => {
    const { input, spec: c } = inputs[name], x = Number(input.value);
    return c.log ? Math.pow(10, x) : x;
  };
  const show = () => {
    for (const [name, { input, out, spec: c }] of Object.entries(inputs)) {
      const text = readout(c, read(name));
      out.textContent = text;
      input.setAttribute("aria-valuetext", text);
    }
  };
  const couple = () => { // e.g. the pair slider's range follows d_model
    for (const [child, parent] of Object.entries(spec.couple || {})) {
      const top = pairs(read(parent)) - 1, input = inputs[child].input;
      input.max = top;
      if (Number(input.value) > top) input.value = top;
    }
  };
  for (const [name, { input }] of Object.entries(inputs)) {
    input.addEventListener("input", () => {
      couple();
      for (const other of Object.keys(inputs)) model.set(other, read(other));
      show();
    });
  }
  couple();
  for (const name of Object.keys(inputs)) model.set(name, read(name));
  show();
  view.className = "posenc-view";
  root.append(controls, view);
  render({ model, el: view });
}

function mountAll() {
  document.querySelectorAll("div.posenc-explorer[data-spec]").forEach(mountStatic);
}

// ------------------------------------------------------------------ for the tests

/** Every title, legend entry, canvas text, plot area and bar of an explorer, in viewport CSS px. */
function boxes(root) {
  const out = [], rect = (kind, r, text = "") => out.push({ kind, text, x: r.left, y: r.top, w: r.width, h: r.height });
  root.posencView.panels.forEach((p, n) => {
    const range = document.createRange();
    range.selectNodeContents(p.title);
    rect("title", range.getBoundingClientRect(), p.title.textContent);
    for (const li of p.legend.children) rect("legend", li.getBoundingClientRect(), li.textContent);
    const c = p.canvas.getBoundingClientRect();
    rect("canvas", c);
    for (const b of p.boxes) out.push({ ...b, x: c.left + b.x, y: c.top + b.y, panel: n });
  });
  const r = root.getBoundingClientRect();
  out.push({ kind: "root", text: "", x: r.left, y: r.top, w: r.width, h: r.height });
  return out;
}

const api = {
  compute: (kind, values, constants) => compute[kind](values, constants),
  drawn: (root) => root.posencDrawn,
  boxes, mountAll, render, frequencies, encode, num, t5Bucket,
};
if (typeof window !== "undefined") {
  window.posencExplorers = window.posencExplorers || api;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => window.posencExplorers.mountAll());
  else window.posencExplorers.mountAll();
}

export { api };  // for Node.js: tests/test_explorers_node.py computes every kind's numbers with it
export default { render };
