/* Browser renderer for the course's explorers (src/explorers.py).
 *
 * The HTML book has no kernel, so each explorer's text/html output carries
 * this script: it computes the same numbers as explorers.formula_data,
 * base_data and offset_data (tests compare them with posenc at many
 * settings) and draws them on a canvas whenever a slider moves.
 *
 * DOM contract (used by the browser tests): every explorer is a
 * div.posenc-explorer holding labelled input[type=range] sliders and one
 * canvas; after each redraw the div carries data-updates (a count) and
 * data-last-update-ms (compute + draw time of the last update).
 */
(function () {
  "use strict";
  if (window.posencExplorers) {
    window.posencExplorers.mountAll();
    return;
  }

  var TWO_PI = 2 * Math.PI;
  var POSITIONS_SHOWN = 200;
  var COLORS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"];

  // ---------------------------------------------------------------- math
  function pairs(d) { return Math.ceil(d / 2); }

  function frequencies(d, base) {
    var h = pairs(d), out = new Float64Array(h);
    for (var i = 0; i < h; i++) out[i] = Math.pow(base, (-2 * i) / d);
    return out;
  }

  function wavelengths(d, base) {
    return Array.from(frequencies(d, base), function (w) { return TWO_PI / w; });
  }

  function encode(p, d, base) {  // interleaved: channel 2i = sin, 2i+1 = cos
    var w = frequencies(d, base), row = new Float64Array(d);
    for (var c = 0; c < d; c++) {
      var angle = p * w[c >> 1];
      row[c] = c % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
    }
    return row;
  }

  function dot(a, b) { var s = 0; for (var j = 0; j < a.length; j++) s += a[j] * b[j]; return s; }

  function range(lo, hi) { var out = []; for (var v = lo; v <= hi; v++) out.push(v); return out; }

  var compute = {
    formula: function (v) {
      var i = Math.min(v.i, pairs(v.d_model) - 1), xs = range(0, POSITIONS_SHOWN - 1);
      var w = frequencies(v.d_model, v.base)[i], hasCos = 2 * i + 1 < v.d_model;
      return {
        x: xs,
        sin: xs.map(function (p) { return Math.sin(p * w); }),
        cos: hasCos ? xs.map(function (p) { return Math.cos(p * w); }) : null,
        row: Array.from(encode(v.pos, v.d_model, v.base)),
        omega: w,
        wavelength: TWO_PI / w,
        i: i,
      };
    },
    base: function (v, threshold) {
      threshold = threshold || 0.1;
      var w = frequencies(v.d_model, v.base), lam = wavelengths(v.d_model, v.base);
      var fine = 0, constant = 0, wraps = 0;
      for (var i = 0; i < w.length; i++) {
        if (2 * Math.sin(Math.min(w[i], Math.PI) / 2) >= threshold) fine++;
        if (v.length * w[i] < threshold) constant++;
        if (lam[i] <= v.length) wraps++;
      }
      return {
        i: range(0, w.length - 1), wavelength: lam,
        fine_below: TWO_PI / (2 * Math.asin(threshold / 2)),
        wrap_below: v.length, constant_above: (TWO_PI * v.length) / threshold,
        fine: fine, constant: constant, wraps: wraps,
      };
    },
    offset: function (v, p0) {
      p0 = p0 === undefined ? 3 : p0;
      var h = pairs(v.d_model), w = frequencies(v.d_model, v.base);
      var top = Math.max(Math.floor(h / 2), Math.min(3, h - 1)), chosen = [];
      for (var n = 0; n < 4; n++) {
        var idx = Math.round((top * n) / 3);  // np.round(np.linspace(0, top, 4)); thirds never tie
        if (chosen.indexOf(idx) < 0) chosen.push(idx);
      }
      chosen.sort(function (a, b) { return a - b; });
      var now = encode(p0, v.d_model, v.base), later = encode(p0 + v.k, v.d_model, v.base);
      var ks = range(-200, 200);
      return {
        pairs: chosen,
        now: chosen.map(function (i) { return [now[2 * i + 1], now[2 * i]]; }),
        later: chosen.map(function (i) { return [later[2 * i + 1], later[2 * i]]; }),
        arcs: chosen.map(function (i) {
          var start = Math.atan2(now[2 * i], now[2 * i + 1]);
          var turn = ((v.k * w[i] + Math.PI) % TWO_PI + TWO_PI) % TWO_PI - Math.PI;
          return range(0, 29).map(function (j) {
            var a = start + (turn * j) / 29;
            return [Math.cos(a), Math.sin(a)];
          });
        }),
        ks: ks,
        dots: ks.map(function (k) { return dot(encode(p0 + k, v.d_model, v.base), now); }),
        dot_k: dot(now, later),
      };
    },
  };

  compute.rope = function (v) {
    var plain = wavelengths(v.d_model, v.base);
    var raisedBase = v.base * Math.pow(v.scale, v.d_model / (v.d_model - 2));
    var raised = wavelengths(v.d_model, raisedBase);
    var interp = plain.map(function (l) { return l * v.scale; });
    function above(xs) { return xs.filter(function (l) { return l > v.length; }).length; }
    return {
      i: range(0, plain.length - 1), plain: plain, interpolated: interp, raised: raised, raised_base: raisedBase,
      length: v.length, target: v.length * v.scale,
      unseen_plain: above(plain), unseen_raised: above(raised), unseen_interpolated: above(interp),
    };
  };

  // Round a double to a binary format with `bits` significand bits (incl. the
  // implicit one), minimum normal exponent `emin` and largest finite `max`,
  // to nearest, ties to even: what float16 / bfloat16 / float32 arithmetic does.
  function roundTo(x, bits, emin, max) {
    if (!isFinite(x) || x === 0) return x;
    var a = Math.abs(x), e = Math.floor(Math.log2(a));
    if (Math.pow(2, e) > a) e -= 1;
    if (Math.pow(2, e + 1) <= a) e += 1;
    var ulp = Math.pow(2, Math.max(e, emin) - (bits - 1)), y = x / ulp, r = Math.round(y);
    if (Math.abs(y - Math.trunc(y)) === 0.5) r = 2 * Math.round(y / 2);
    r *= ulp;
    return Math.abs(r) > max ? (r > 0 ? Infinity : -Infinity) : r;
  }
  var FORMATS = {
    float32: function (x) { return Math.fround(x); },
    float16: function (x) { return roundTo(x, 11, -14, 65504); },
    bfloat16: function (x) { return roundTo(x, 8, -126, 3.3895313892515355e38); },
  };
  function twoProduct(a, b) {  // a * b = hi + lo exactly (Dekker / Veltkamp)
    var hi = a * b, s = 134217729;
    var a1 = a * s - (a * s - a), a2 = a - a1, b1 = b * s - (b * s - b), b2 = b - b1;
    return [hi, a2 * b2 - (((hi - a1 * b1) - a2 * b1) - a1 * b2)];
  }
  compute.precision = function (v) {
    var p = Math.round(v.position), w = frequencies(v.d_model, v.base), errors = {}, collides = [];
    Object.keys(FORMATS).forEach(function (name) {
      var f = FORMATS[name], err = [], same = true;
      for (var i = 0; i < w.length; i++) {
        var wf = f(w[i]), got = f(f(p) * wf), next = f(f(p + 1) * wf);
        if (got !== next) same = false;
        if (!isFinite(got)) { err.push(NaN); continue; }
        var exact = twoProduct(p, w[i]);  // the float64 frequency, product kept exact
        var diff = (got - exact[0]) - exact[1];
        diff = ((diff + Math.PI) % TWO_PI + TWO_PI) % TWO_PI - Math.PI;
        err.push(Math.abs(diff));
      }
      errors[name] = err;
      if (same) collides.push(name);
    });
    return { i: range(0, w.length - 1), errors: errors, collides: collides,
      unit_roundoff: { float32: Math.pow(2, -24), float16: Math.pow(2, -11), bfloat16: Math.pow(2, -8) } };
  };

  // ------------------------------------------------------------ drawing
  function niceTicks(lo, hi, n) {
    var span = hi - lo, raw = span / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 5, 10].map(function (m) { return m * mag; }).find(function (s) { return s >= raw; });
    var out = [];
    for (var t = Math.ceil(lo / step) * step; t <= hi + 1e-9 * span; t += step) out.push(Math.abs(t) < 1e-12 ? 0 : t);
    return out;
  }

  function fmt(v) {
    if (v === 0) return "0";
    var a = Math.abs(v);
    if (a >= 1e4 || a < 1e-3) return v.toExponential(0).replace("e+", "e");
    return String(Math.round(v * 1000) / 1000);
  }

  function Panel(ctx, box, xlim, ylim, opts) {
    opts = opts || {};
    this.ctx = ctx; this.box = box; this.xlim = xlim; this.ylim = ylim; this.logy = !!opts.logy;
    this.x = function (v) { return box.x + ((v - xlim[0]) / (xlim[1] - xlim[0])) * box.w; };
    var ly = this.logy ? function (v) { return Math.log10(v); } : function (v) { return v; };
    this.y = function (v) { return box.y + box.h - ((ly(v) - ly(ylim[0])) / (ly(ylim[1]) - ly(ylim[0]))) * box.h; };
    this.frame(opts.xlabel || "", opts.ylabel || "", opts.title || "", opts.aspect);
  }

  Panel.prototype.frame = function (xlabel, ylabel, title) {
    var c = this.ctx, b = this.box, self = this;
    c.save();
    c.strokeStyle = "#e3e3e3"; c.fillStyle = "#333"; c.font = "11px sans-serif"; c.lineWidth = 1;
    var xt = niceTicks(this.xlim[0], this.xlim[1], 5);
    var yt = this.logy
      ? range(Math.ceil(Math.log10(this.ylim[0])), Math.floor(Math.log10(this.ylim[1]))).map(function (e) { return Math.pow(10, e); })
      : niceTicks(this.ylim[0], this.ylim[1], 4);
    c.textAlign = "center"; c.textBaseline = "top";
    xt.forEach(function (t) {
      var px = self.x(t);
      c.beginPath(); c.moveTo(px, b.y); c.lineTo(px, b.y + b.h); c.stroke();
      c.fillText(fmt(t), px, b.y + b.h + 4);
    });
    c.textAlign = "right"; c.textBaseline = "middle";
    yt.forEach(function (t) {
      var py = self.y(t);
      c.beginPath(); c.moveTo(b.x, py); c.lineTo(b.x + b.w, py); c.stroke();
      c.fillText(self.logy ? "1e" + Math.round(Math.log10(t)) : fmt(t), b.x - 4, py);
    });
    c.strokeStyle = "#555";
    c.beginPath(); c.moveTo(b.x, b.y); c.lineTo(b.x, b.y + b.h); c.lineTo(b.x + b.w, b.y + b.h); c.stroke();
    c.textAlign = "center"; c.textBaseline = "top"; c.font = "12px sans-serif";
    c.fillText(xlabel, b.x + b.w / 2, b.y + b.h + 20);
    c.textBaseline = "bottom";
    c.fillText(title, b.x + b.w / 2, b.y - 6);
    c.translate(b.x - 40, b.y + b.h / 2); c.rotate(-Math.PI / 2); c.textBaseline = "bottom";
    c.fillText(ylabel, 0, 0);
    c.restore();
  };

  Panel.prototype.clip = function (fn) {
    var c = this.ctx, b = this.box;
    c.save(); c.beginPath(); c.rect(b.x, b.y - 1, b.w + 1, b.h + 2); c.clip(); fn(c); c.restore();
  };

  Panel.prototype.line = function (xs, ys, color, opts) {
    opts = opts || {};
    var self = this;
    this.clip(function (c) {
      c.strokeStyle = color; c.lineWidth = opts.width || 1.5; c.setLineDash(opts.dash || []);
      c.beginPath();
      for (var j = 0; j < xs.length; j++) {
        var px = self.x(xs[j]), py = self.y(ys[j]);
        if (j === 0) c.moveTo(px, py); else c.lineTo(px, py);
      }
      c.stroke();
    });
  };

  Panel.prototype.points = function (xs, ys, color, opts) {
    opts = opts || {};
    var self = this;
    this.clip(function (c) {
      for (var j = 0; j < xs.length; j++) {
        c.beginPath(); c.arc(self.x(xs[j]), self.y(ys[j]), opts.r || 4, 0, TWO_PI);
        c.fillStyle = opts.hollow ? "#fff" : color; c.fill();
        c.strokeStyle = color; c.lineWidth = 1.5; c.stroke();
      }
    });
  };

  Panel.prototype.hline = function (y, color, dash) {
    this.line([this.xlim[0], this.xlim[1]], [y, y], color, { dash: dash });
  };

  function legend(ctx, x, y, entries) {
    ctx.save(); ctx.font = "11px sans-serif"; ctx.textBaseline = "middle";
    var width = 30 + Math.max.apply(null, entries.map(function (e) { return ctx.measureText(e[0]).width; }));
    ctx.fillStyle = "rgba(255,255,255,0.85)"; ctx.fillRect(x - 4, y - 9, width, entries.length * 16 + 2);
    entries.forEach(function (e, n) {
      ctx.strokeStyle = e[1]; ctx.lineWidth = 2; ctx.setLineDash(e[2] || []);
      ctx.beginPath(); ctx.moveTo(x, y + n * 16); ctx.lineTo(x + 18, y + n * 16); ctx.stroke();
      ctx.fillStyle = "#333"; ctx.fillText(e[0], x + 24, y + n * 16);
    });
    ctx.restore();
  }

  function g3(v) { return Number(v).toPrecision(3).replace(/\.?0+(e|$)/, "$1"); }

  var draw = {
    formula: function (ctx, W, H, v) {
      var data = compute.formula(v), split = Math.round(W * 0.56);
      var left = new Panel(ctx, { x: 50, y: 26, w: split - 70, h: H - 74 }, [0, POSITIONS_SHOWN - 1], [-1.15, 1.15],
        { xlabel: "position p", ylabel: "value",
          title: "pair i=" + data.i + ": \u03c9=" + g3(data.omega) + ", \u03bb=" + g3(data.wavelength) + " positions" });
      left.line(data.x, data.sin, COLORS[0]);
      if (data.cos) left.line(data.x, data.cos, COLORS[1], { dash: [5, 3] });
      left.line([v.pos, v.pos], [-1.15, 1.15], "#555", { width: 1 });
      left.points([v.pos], [data.sin[v.pos]], "#000");
      if (data.cos) left.points([v.pos], [data.cos[v.pos]], "#000");
      legend(ctx, left.box.x + left.box.w - 130, left.box.y + left.box.h - 28,
        [["sin, channel 2i", COLORS[0]], ["cos, channel 2i+1", COLORS[1], [5, 3]]]);
      var channels = range(0, v.d_model - 1);
      var right = new Panel(ctx, { x: split + 40, y: 26, w: W - split - 55, h: H - 74 }, [-0.5, v.d_model - 0.5], [-1.15, 1.15],
        { xlabel: "channel", ylabel: "PE(pos)", title: "PE(" + v.pos + ") for d_model=" + v.d_model + ", base=" + g3(v.base) });
      right.line(channels, data.row, COLORS[2], { width: 1 });
      var pair = [2 * data.i, 2 * data.i + 1].filter(function (c) { return c < v.d_model; });
      right.points(pair, pair.map(function (c) { return data.row[c]; }), COLORS[3], { r: 5 });
      return "Left: sine and cosine of pair " + data.i + " over positions 0 to 199 with position " + v.pos +
        " marked; right: the " + v.d_model + " channels of PE(" + v.pos + ").";
    },
    base: function (ctx, W, H, v) {
      var data = compute.base(v);
      var p = new Panel(ctx, { x: 60, y: 26, w: W - 80, h: H - 74 }, [0, Math.max(1, data.i.length - 1)], [1, 1e9],
        { logy: true, xlabel: "pair i", ylabel: "wavelength (positions)",
          title: "base=" + g3(v.base) + ", d_model=" + v.d_model + ", L=" + v.length + ": of " + data.i.length + " pairs, " +
            data.fine + " separate neighbours, " + data.wraps + " wrap, " + data.constant + " nearly constant" });
      p.hline(data.fine_below, COLORS[2], [2, 3]);
      p.hline(data.wrap_below, COLORS[1], [8, 3, 2, 3]);
      p.hline(data.constant_above, COLORS[3], [6, 4]);
      p.line(data.i, data.wavelength, COLORS[0], { width: 2.5 });
      legend(ctx, p.box.x + 10, p.box.y + 12, [["wavelength \u03bb_i", COLORS[0]],
        ["below: separates neighbours", COLORS[2], [2, 3]], ["below: wraps within L", COLORS[1], [8, 3, 2, 3]],
        ["above: nearly constant over L", COLORS[3], [6, 4]]]);
      return "Wavelength of each of the " + data.i.length + " pairs on a log scale: " + data.fine +
        " separate neighbours, " + data.wraps + " wrap within L=" + v.length + ", " + data.constant + " are nearly constant.";
    },
    offset: function (ctx, W, H, v) {
      var data = compute.offset(v), side = Math.min(H - 74, Math.round(W * 0.38));
      var circle = new Panel(ctx, { x: 62, y: 26, w: side, h: side }, [-1.3, 1.3], [-1.3, 1.3],
        { xlabel: "cos (channel 2i+1)", ylabel: "sin (channel 2i)", title: "open: p=3, filled: p=3" + (v.k >= 0 ? "+" : "") + v.k });
      var t = range(0, 100).map(function (j) { return (TWO_PI * j) / 100; });
      circle.line(t.map(Math.cos), t.map(Math.sin), "#bbb", { width: 1 });
      data.pairs.forEach(function (i, n) {
        var arc = data.arcs[n];
        circle.line(arc.map(function (q) { return q[0]; }), arc.map(function (q) { return q[1]; }), COLORS[n], { width: 2.5 });
        circle.points([data.now[n][0]], [data.now[n][1]], COLORS[n], { hollow: true, r: 5 });
        circle.points([data.later[n][0]], [data.later[n][1]], COLORS[n], { r: 5 });
      });
      legend(ctx, circle.box.x + side / 2 - 30, circle.box.y + side / 2 - 20,
        data.pairs.map(function (i, n) { return ["pair i=" + i, COLORS[n]]; }));
      var norm = v.d_model / 2, x0 = 62 + side + 70;
      var right = new Panel(ctx, { x: x0, y: 26, w: W - x0 - 15, h: H - 74 }, [-200, 200], [-1.05, 1.05],
        { xlabel: "offset k", ylabel: "cosine similarity",
          title: "k=" + v.k + ": PE(p)\u00b7PE(p+k) = \u03a3 cos(\u03c9_i k) = " + data.dot_k.toFixed(2) + " of " + Math.floor(v.d_model / 2) });
      right.line(data.ks, data.dots.map(function (d) { return d / norm; }), COLORS[0], { width: 1 });
      right.points([v.k], [data.dot_k / norm], COLORS[3], { r: 5 });
      return "Four sine-cosine pairs turning by k=" + v.k + " on the unit circle, and the dot product " +
        data.dot_k.toFixed(2) + " on the curve of all offsets.";
    },
  };

  draw.rope = function (ctx, W, H, v) {
    var data = compute.rope(v);
    var p = new Panel(ctx, { x: 60, y: 26, w: W - 80, h: H - 74 }, [0, data.i.length - 1], [1, 1e10],
      { logy: true, xlabel: "pair i", ylabel: "wavelength (positions)",
        title: "pairs slower than L=" + v.length + ": as trained " + data.unseen_plain + ", interpolated " +
          data.unseen_interpolated + ", raised base " + g3(data.raised_base) + ": " + data.unseen_raised +
          " (of " + data.i.length + ")" });
    p.hline(data.length, COLORS[2], [2, 3]);
    p.hline(data.target, COLORS[3], [8, 3, 2, 3]);
    p.line(data.i, data.plain, "#888", { width: 2 });
    p.line(data.i, data.interpolated, COLORS[1], { width: 2, dash: [6, 4] });
    p.line(data.i, data.raised, COLORS[0], { width: 2 });
    legend(ctx, p.box.x + 10, p.box.y + 12, [["base as trained", "#888"],
      ["position interpolation \u00f7 s", COLORS[1], [6, 4]], ["NTK-aware base \u00d7 s^(d/(d-2))", COLORS[0]],
      ["train length L", COLORS[2], [2, 3]], ["target length s \u00d7 L", COLORS[3], [8, 3, 2, 3]]]);
    return "RoPE wavelengths for head dimension " + v.d_model + " and factor " + v.scale + ": " + data.unseen_interpolated +
      " pairs slower than L with interpolation, " + data.unseen_raised + " with the raised base " + g3(data.raised_base) + ".";
  };

  draw.precision = function (ctx, W, H, v) {
    var data = compute.precision(v), p = Math.round(v.position);
    var panel = new Panel(ctx, { x: 60, y: 26, w: W - 80, h: H - 74 }, [-0.5, data.i.length - 0.5], [1e-12, 10],
      { logy: true, xlabel: "pair i", ylabel: "|angle error| (radians)",
        title: "p = " + p.toLocaleString("en-US") + ", base " + g3(v.base) + ": p and p+1 get identical vectors in: " +
          (data.collides.join(", ") || "none") });
    panel.hline(Math.PI, "#666", [2, 3]);
    ["float32", "float16", "bfloat16"].forEach(function (name, n) {
      var ys = data.errors[name].map(function (e) { return Math.max(e, 1e-12); });
      var xs = data.i.filter(function (_, j) { return isFinite(ys[j]); });
      ys = ys.filter(function (y) { return isFinite(y); });
      panel.line(xs, ys, COLORS[n], { width: 1 });
      panel.points(xs, ys, COLORS[n], { r: 2 });
    });
    legend(ctx, panel.box.x + 10, panel.box.y + panel.box.h - 60, [["float32", COLORS[0]], ["float16", COLORS[1]],
      ["bfloat16", COLORS[2]], ["\u03c0: the phase is lost", "#666", [2, 3]]]);
    return "Angle error per pair at position " + p + "; identical vectors for p and p+1 in: " + (data.collides.join(", ") || "none") + ".";
  };

  // ------------------------------------------------------------ widgets
  function mount(root) {
    if (root.dataset.mounted) return;
    root.dataset.mounted = "1";
    var spec = JSON.parse(root.dataset.spec);
    var controls = document.createElement("div");
    controls.className = "posenc-explorer-controls";
    controls.style.cssText = "display:flex;flex-wrap:wrap;gap:4px 18px;margin:4px 0;font:13px sans-serif";
    var inputs = {};
    spec.controls.forEach(function (c) {
      var label = document.createElement("label"), input = document.createElement("input"), out = document.createElement("output");
      label.style.cssText = "display:inline-flex;align-items:center;gap:6px";
      label.appendChild(document.createTextNode(c.label));
      input.type = "range"; input.min = c.min; input.max = c.max; input.step = c.step;
      input.value = c.log ? Math.log10(c.value) : c.value;
      input.setAttribute("aria-label", c.label);
      input.style.width = "130px";
      label.appendChild(input); label.appendChild(out);
      controls.appendChild(label);
      inputs[c.name] = { input: input, out: out, spec: c };
    });
    var canvas = document.createElement("canvas");
    canvas.setAttribute("role", "img");
    canvas.style.cssText = "width:100%;max-width:760px;height:320px;background:#fff;border-radius:4px";
    root.appendChild(controls);
    root.appendChild(canvas);
    var updates = 0;

    function values() {
      var v = {};
      Object.keys(inputs).forEach(function (name) {
        var it = inputs[name], x = Number(it.input.value);
        v[name] = it.spec.log ? Math.pow(10, x) : x;
      });
      return v;
    }

    function couple() {  // e.g. the pair slider's range follows d_model
      Object.keys(spec.couple || {}).forEach(function (name) {
        var d = Number(inputs[spec.couple[name]].input.value);
        inputs[name].input.max = pairs(d) - 1;
        if (Number(inputs[name].input.value) > pairs(d) - 1) inputs[name].input.value = pairs(d) - 1;
      });
    }

    function update() {
      var start = performance.now();
      couple();
      var v = values();
      Object.keys(inputs).forEach(function (name) { inputs[name].out.textContent = inputs[name].spec.log ? g3(v[name]) : String(v[name]); });
      var ratio = window.devicePixelRatio || 1, W = canvas.clientWidth || 760, H = canvas.clientHeight || 320;
      if (canvas.width !== Math.round(W * ratio)) { canvas.width = Math.round(W * ratio); canvas.height = Math.round(H * ratio); }
      var ctx = canvas.getContext("2d");
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
      var description = draw[spec.kind](ctx, W, H, v);
      canvas.setAttribute("aria-label", spec.alt + ". " + description);
      updates += 1;
      root.dataset.updates = String(updates);
      root.dataset.lastUpdateMs = (performance.now() - start).toFixed(3);
    }

    Object.keys(inputs).forEach(function (name) { inputs[name].input.addEventListener("input", update); });
    update();
    if (window.ResizeObserver) new ResizeObserver(function () { update(); }).observe(canvas);
  }

  function mountAll() {
    document.querySelectorAll("div.posenc-explorer").forEach(mount);
  }

  window.posencExplorers = {
    compute: function (kind, values) { return compute[kind](values); },
    frequencies: frequencies, encode: encode, mountAll: mountAll,
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
  else mountAll();
})();
