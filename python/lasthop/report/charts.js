/* lasthop's report figures: draws the charts a report.html embeds (JSON in #lasthop-charts,
   written by lasthop/report/charts.py and sweep.py) with uPlot, when the page is opened.

   time   panels stacked on one time axis, 0..t_end; samples as lines or steps, envelopes of
          long series as a light min..max band with the mean as a line; linear axes from 0, or
          log axes (values <= 0 left out, as gaps)
   cdf    one panel, the x axis (one-way delay) linear or log
   bars   grouped horizontal bars per WLAN member (MAC counters), counts written out
   sweep  one panel per value of the second parameter, mean with 95 % CI whiskers at the swept
          values, a shared y axis, one legend beside the panels

   Every plot has the same width and the same y-axis gutter, so the time axes of a page line up;
   legends are beside the plots, never on the data; axis numbers in engineering notation
   (12.2 Mb/s). Hovering a time panel shows the same moment in every time panel of the page. */
(function () {
  "use strict";
  var WIDTH = 780;       // a plot's width in CSS px, its axes included
  var Y_VALUES = 70;     // the y axis' numbers
  var Y_LABEL = 22;      // the y axis' label
  var PANEL = 150;       // a time panel's height
  var FONT = "11px sans-serif";
  var DASHES = [[], [6, 3], [1.5, 2.5], [8, 3, 2, 3]];
  var CSS_DASHES = ["solid", "dashed", "dotted", "double"];
  var PREFIX = {"-4": "p", "-3": "n", "-2": "\u00b5", "-1": "m", "0": "", "1": "k", "2": "M", "3": "G", "4": "T"};

  // `v` in engineering notation with 3 significant digits and `unit`: 12.2 Mb/s, 4.2 ms
  // (lasthop.report.text.eng, the tables' notation).
  function eng(v, unit) {
    if (v == null || isNaN(v)) return "\u2013";
    if (v === 0) return ("0 " + unit).trim();
    var e = Math.max(-4, Math.min(4, Math.floor(Math.log10(Math.abs(v)) / 3)));
    if (Math.abs(Number((v / Math.pow(1000, e)).toPrecision(3))) >= 1000 && e < 4) e += 1;
    return (String(Number((v / Math.pow(1000, e)).toPrecision(3))) + " " + PREFIX[e] + unit).trim();
  }

  function count(v) {  // 72 690, thin spaces between thousands
    return String(Math.round(v)).replace(/\B(?=(\d{3})+(?!\d))/g, "\u2009");
  }

  function rgba(hex, alpha) {
    var n = parseInt(hex.slice(1), 16);
    return "rgba(" + (n >> 16) + "," + ((n >> 8) & 255) + "," + (n & 255) + "," + alpha + ")";
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  // A legend beside a plot: a title, then per entry a line (or box) in its colour and style.
  function legend(title, entries, box) {
    var div = el("div", "legend");
    if (title) title.split("\n").forEach(function (t) { div.appendChild(el("div", "head", t)); });
    entries.forEach(function (e) {
      var row = el("div", "entry");
      var sw = el("span", box ? "box" : "swatch");
      if (box) sw.style.background = e.color;
      else { sw.style.borderTopColor = e.color; sw.style.borderTopStyle = CSS_DASHES[e.dash || 0]; }
      row.appendChild(sw);
      row.appendChild(el("span", null, e.name));
      e.value = row.appendChild(el("span", "value", ""));  // what the cursor points at, if anything
      div.appendChild(row);
    });
    return div;
  }

  // Log axes leave out values <= 0 (a gap, not a drop to the edge).
  function positive(values, log) {
    return log ? values.map(function (v) { return v != null && v > 0 ? v : null; }) : values;
  }

  function maxOf(arrays) {
    var m = -Infinity;
    arrays.forEach(function (a) { a.forEach(function (v) { if (v != null && v > m) m = v; }); });
    return m;
  }

  // Numbers of an axis: engineering notation with the unit, plain numbers without one.
  function axisValues(unit) {
    return function (u, splits) {
      return splits.map(function (v) {
        if (v == null) return "";
        if (unit === "%") return Number(v.toPrecision(3)) + " %";
        return unit ? eng(v, unit) : String(Number(v.toPrecision(3)));
      });
    };
  }

  // The ticks of a log axis: 1 x 10^k, and 2 and 5 x 10^k when the axis spans at most 2.5
  // decades (uPlot's 1..9 x 10^k would grey the panel with grid lines).
  function logTicks(scaleKey) {
    return function (u, splits) {
      var s = u.scales[scaleKey];
      var decades = s.min > 0 ? Math.log10(s.max / s.min) : 0;
      return splits.map(function (v) {
        var x = v / Math.pow(10, Math.floor(Math.log10(v) + 1e-9)), m = Math.round(x);
        if (Math.abs(x - m) > 1e-6 * m) return null;  // the axis' own end (10.2 us), not a round value
        return m === 1 || (decades <= 2.5 && (m === 2 || m === 5)) ? v : null;
      });
    };
  }

  var INTEGER_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7, 1e8, 1e9];

  function yAxis(label, unit, log, integer) {
    var a = {label: label, size: Y_VALUES, labelSize: Y_LABEL, font: FONT, labelFont: FONT, values: axisValues(unit),
             space: 28};
    if (integer) a.incrs = INTEGER_INCRS;
    if (log) {
      a.filter = logTicks("y");
      a.grid = {filter: a.filter};
      a.ticks = {filter: a.filter};
    }
    return a;
  }

  function yScale(log, top) {
    if (log) return {distr: 3, log: 10};
    return {range: function () { return [0, top > 0 ? top * 1.08 : 1]; }};
  }

  // The panels of a time figure, one uPlot each.
  function timeFigure(fig, body) {
    var n = fig.panels.length;
    fig.panels.forEach(function (p, pi) {
      var last = pi === n - 1;
      var tables = [], series = [{label: "time (s)"}], bands = [], entries = [], ys = [];
      p.series.forEach(function (s) {
        // The series whose value the legend shows under the cursor: the line (an envelope's mean).
        entries.push({name: s.name, color: s.color, index: series.length + (s.y ? 0 : 2)});
        var path = s.step ? uPlot.paths.stepped({align: 1}) : undefined;
        if (s.y) {
          var y = positive(s.y, p.log);
          ys.push(y);
          tables.push([s.t, y]);
          series.push({label: s.name, stroke: s.color, width: 1.2, paths: path, points: {show: false}});
        } else {
          var hi = positive(s.hi, p.log), lo = positive(s.lo, p.log), mean = positive(s.mean, p.log);
          ys.push(hi);
          tables.push([s.t, hi, lo, mean]);
          var at = series.length;
          series.push({label: s.name + " (max)", stroke: "rgba(0,0,0,0)", width: 1, points: {show: false}});
          series.push({label: s.name + " (min)", stroke: "rgba(0,0,0,0)", width: 1, points: {show: false}});
          series.push({label: s.name, stroke: s.color, width: 1.2, points: {show: false}});
          bands.push({series: [at, at + 1], fill: rgba(s.color, 0.25)});
        }
      });
      var data = tables.length === 1 ? tables[0] : uPlot.join(tables);
      var xAxis = {font: FONT, labelFont: FONT, size: last ? 34 : 6, label: last ? "time (s)" : null, labelSize: last ? 18 : 0};
      if (!last) xAxis.values = function (u, splits) { return splits.map(function () { return ""; }); };
      var opts = {
        width: WIDTH, height: PANEL + (last ? 52 : 6), legend: {show: false},
        cursor: {sync: {key: "lasthop-time"}, drag: {x: true, y: false}},
        scales: {x: {time: false, range: [0, fig.t_end]}, y: yScale(p.log, maxOf(ys))},
        axes: [xAxis, yAxis(p.ylabel, p.unit, p.log, p.integer)],
        series: series, bands: bands
      };
      var row = el("div", "panel");
      body.appendChild(row);
      var plot = el("div");
      row.appendChild(plot);
      var box = row.appendChild(legend(p.legend_title, entries));
      var at = box.insertBefore(el("div", "head value", ""), box.firstChild);
      opts.hooks = {setCursor: [function (u) { readout(u, entries, at, p.unit); }]};
      new uPlot(opts, data, plot);
    });
  }

  // The legend under the cursor: the time, and each line's value there (hovering one time panel
  // moves the cursor of all of them).
  function readout(u, entries, at, unit) {
    var i = u.cursor.idx;
    at.textContent = i == null ? "" : "t = " + Number(u.data[0][i].toPrecision(6)) + " s";
    entries.forEach(function (e) {
      var v = i == null ? null : u.data[e.index][i];
      e.value.textContent = v == null ? "" : (unit ? eng(v, unit) : String(Number(v.toPrecision(3))));
    });
  }

  function cdfFigure(fig, body) {
    var series = [{label: fig.xlabel}], entries = [], data = [positive(fig.x, fig.log)];
    fig.series.forEach(function (s) {
      series.push({label: s.name, stroke: s.color, width: 1.2, points: {show: false}, paths: uPlot.paths.stepped({align: 1})});
      entries.push({name: s.name, color: s.color});
      data.push(s.y);
    });
    // A little room either side, so a step at the smallest or largest delay is seen.
    var xs = fig.x.filter(function (v) { return v != null; }), lo = xs[0], hi = xs[xs.length - 1];
    var xScale = fig.log ? {time: false, distr: 3, log: 10, range: [lo / 1.3, hi * 1.3]}
                         : {time: false, range: [lo - 0.03 * (hi - lo) - 1e-9, hi + 0.03 * (hi - lo) + 1e-9]};
    var opts = {
      width: WIDTH, height: PANEL + 110, legend: {show: false}, cursor: {drag: {x: true, y: false}},
      scales: {x: xScale, y: {range: [0, 1]}},
      axes: [{label: fig.xlabel, font: FONT, labelFont: FONT, size: 34, labelSize: 18, values: axisValues(fig.xunit),
              filter: fig.log ? logTicks("x") : undefined, grid: fig.log ? {filter: logTicks("x")} : undefined,
              ticks: fig.log ? {filter: logTicks("x")} : undefined},
             yAxis(fig.ylabel, "", false, false)],
      series: series
    };
    var row = el("div", "panel");
    body.appendChild(row);
    var plot = el("div");
    row.appendChild(plot);
    row.appendChild(legend(null, entries));
    new uPlot(opts, data, plot);
  }

  // Grouped bars as an HTML table: per member one bar per counter, its count written after it.
  function barsFigure(fig, body) {
    var top = maxOf(fig.counters.map(function (c) { return c.values; }));
    var width = WIDTH - 220;
    var table = el("table", "bars");
    fig.members.forEach(function (m, mi) {
      fig.counters.forEach(function (c, ci) {
        var tr = el("tr");
        if (ci === 0) {
          var th = el("th", null, m);
          th.rowSpan = fig.counters.length;
          tr.appendChild(th);
        }
        var td = el("td");
        var bar = el("span", "bar");
        bar.style.width = (top > 0 ? Math.max(c.values[mi] / top * width, c.values[mi] > 0 ? 1 : 0) : 0) + "px";
        bar.style.background = c.color;
        bar.title = c.name;
        td.appendChild(bar);
        td.appendChild(el("span", "num", count(c.values[mi])));
        tr.appendChild(td);
        table.appendChild(tr);
      });
    });
    var row = el("div", "panel");
    var left = el("div");
    left.style.width = WIDTH + "px";
    left.appendChild(table);
    left.appendChild(el("div", "facet-title", fig.unit));
    row.appendChild(left);
    row.appendChild(legend(null, fig.counters.map(function (c) { return {name: c.name, color: c.color}; }), true));
    body.appendChild(row);
  }

  // Whiskers of the 95 % CI, drawn after the lines.
  function whiskers(lines, log, floor) {
    return function (u) {
      var ctx = u.ctx, dpr = window.devicePixelRatio || 1, xs = u.data[0];
      ctx.save();
      ctx.beginPath();  // a whisker beyond the axis' range is cut at its edge, as the line would be
      ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
      ctx.clip();
      ctx.lineWidth = dpr;
      lines.forEach(function (line, li) {
        ctx.strokeStyle = line.color;
        line.mean.forEach(function (m, i) {
          var ci = line.ci[i];
          if (m == null || ci == null || !(ci > 0)) return;
          var below = log ? Math.min(ci, m - floor) : ci;
          var x = u.valToPos(xs[i], "x", true);
          var y0 = u.valToPos(Math.max(m - below, log ? floor : -Infinity), "y", true), y1 = u.valToPos(m + ci, "y", true);
          ctx.beginPath();
          ctx.moveTo(x, y0); ctx.lineTo(x, y1);
          ctx.moveTo(x - 3 * dpr, y0); ctx.lineTo(x + 3 * dpr, y0);
          ctx.moveTo(x - 3 * dpr, y1); ctx.lineTo(x + 3 * dpr, y1);
          ctx.stroke();
        });
      });
      ctx.restore();
    };
  }

  // x ticks of a sweep: at the swept values when their labels fit side by side (always for
  // categories), else uPlot's own, in engineering notation (integers for integer parameters).
  function sweepXAxis(x, plotWidth, showLabel) {
    var a = {font: FONT, labelFont: FONT, size: 34, label: showLabel ? x.label : null, labelSize: showLabel ? 18 : 0};
    var span = x.range[1] - x.range[0], fit = true;
    for (var i = 1; i < x.positions.length; i++) {
      var px = (x.positions[i] - x.positions[i - 1]) / span * plotWidth;
      if (px < 6.5 * (x.labels[i].length + x.labels[i - 1].length) / 2 + 8) fit = false;
    }
    if (!x.numeric || fit) {
      a.splits = function () { return x.positions; };
      a.values = function () { return x.labels; };
    } else {
      if (x.integer) a.incrs = INTEGER_INCRS;
      a.values = function (u, splits) {
        return splits.map(function (v) { return x.unit ? eng(v, x.unit) : String(Number(v.toPrecision(4))); });
      };
    }
    return a;
  }

  function sweepFigure(fig, body) {
    var ncols = Math.min(fig.facets.length, 3), gap = 14;
    var width = Math.floor((WIDTH - gap * (ncols - 1)) / ncols);
    var top = -Infinity;
    fig.facets.forEach(function (f) {
      f.lines.forEach(function (l) {
        l.mean.forEach(function (m, i) { if (m != null) top = Math.max(top, m + (l.ci[i] || 0)); });
      });
    });
    var yScaleOpts = fig.y.log ? {distr: 3, log: 10, range: [fig.y.floor, top > 0 ? top * 1.5 : 1]}
                               : {range: [0, top > 0 ? top * 1.08 : 1]};
    var row = el("div", "panel");
    var grid = el("div", "facets");
    grid.style.width = WIDTH + "px";
    grid.style.columnGap = gap + "px";
    row.appendChild(grid);
    fig.facets.forEach(function (f, fi) {
      var cell = el("div");
      if (f.title != null) cell.appendChild(el("div", "facet-title", f.title));
      grid.appendChild(cell);
      var lastRow = fi + ncols >= fig.facets.length;
      var series = [{label: fig.x.label}], data = [fig.x.positions], colored = [];
      f.lines.forEach(function (l, li) {
        var e = fig.legend.entries[li];
        series.push({label: e.name, stroke: e.color, width: 1.4, dash: DASHES[e.dash || 0], spanGaps: true,
                     points: {show: true, size: 6, fill: e.color, stroke: e.color}});
        data.push(positive(l.mean, fig.y.log));
        colored.push({mean: l.mean, ci: l.ci, color: e.color});
      });
      var opts = {
        width: width, height: 200 + (lastRow ? 18 : 0), legend: {show: false}, cursor: {drag: {x: false, y: false}},
        scales: {x: {time: false, range: x_range(fig.x)}, y: yScaleOpts},
        axes: [sweepXAxis(fig.x, width - Y_VALUES - Y_LABEL, lastRow),
               yAxis(fi % ncols === 0 ? fig.y.label : null, fig.y.unit, fig.y.log, false)],
        series: series, hooks: {draw: [whiskers(colored, fig.y.log, fig.y.floor)]}
      };
      new uPlot(opts, data, cell);
    });
    row.appendChild(legend(fig.legend.title, fig.legend.entries));
    body.appendChild(row);
  }

  function x_range(x) { return [x.range[0], x.range[1]]; }

  var DRAW = {time: timeFigure, cdf: cdfFigure, bars: barsFigure, sweep: sweepFigure};

  function drawAll() {
    var charts = JSON.parse(document.getElementById("lasthop-charts").textContent);
    document.querySelectorAll("figure[data-chart]").forEach(function (figure) {
      var fig = charts[Number(figure.getAttribute("data-chart"))];
      var body = figure.querySelector(".chart-body");
      try {
        DRAW[fig.kind](fig, body);
      } catch (err) {  // one broken figure does not hide the others
        body.appendChild(el("p", "missing", "This figure could not be drawn: " + err));
      }
    });
    document.documentElement.setAttribute("data-charts-drawn", String(charts.length));
  }

  window.lasthopCharts = {eng: eng, count: count};  // for tests (tests/test_report.py runs them)
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", drawAll);
  else drawAll();
})();
